"""The typed settings: defaults equal the YAML view, and every bad value is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loralay_build import registry
from loralay_build.conf import ConfigError, load_settings
from loralay_build.conf.load import check_contact

from .conftest import SAMPLE, config, loralay

CONFIGS = Path(__file__).resolve().parent.parent / "loralay_build" / "configs"


@pytest.mark.parametrize("source", sorted(registry.names()))
def test_yaml_files_are_the_models_defaults(source):
    common = yaml.safe_load((CONFIGS / "common.yaml").read_text())
    own = yaml.safe_load((CONFIGS / f"{source}.yaml").read_text())
    assert load_settings(source).user_view() == {**common, **own}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BAD = [
    ("rows_per_shard: 0", "rows_per_shard: 0 is not valid: input should be greater than or "
                          "equal to 1"),
    ("row_group_bytes: 0", "row_group_bytes: 0 is not valid"),
    ("max_pages_percentile: 150", "max_pages_percentile: 150 is not valid: input should be "
                                  "less than 100"),
    ("max_pages_percentile: high", "max_pages_percentile: 'high' is not valid: input should "
                                   "be a valid number"),
    ("split_proportions: [0.5, 0.5]", "split_proportions: [0.5, 0.5] is not valid: three "
                                      "shares"),
    ("undated: maybe", "undated: 'maybe' is not valid: input should be 'train' or 'drop'"),
    ("extract_timeout_s: .inf", "extract_timeout_s: inf is not valid: input should be a "
                                "finite number"),
    ("split_mode: bogus", "split_mode: 'bogus' is not valid"),
    ("requests_per_second: 0", "requests_per_second: 0 is not valid: input should be greater "
                               "than 0"),
    ("user_agent: [a, b]", "user_agent: ['a', 'b'] is not valid: input should be a valid "
                           "string"),
    ("max_edit_rato: 0.2", "unknown key 'max_edit_rato' (did you mean `max_edit_ratio`?)"),
    ("extract_timeout_s: -3", "extract_timeout_s: -3 is not valid"),
    ("leak_ngram: '8'", "leak_ngram: '8' is not valid: input should be a valid integer"),
]


@pytest.mark.parametrize("text,expected", BAD)
def test_a_bad_value_is_one_line_naming_key_value_and_expectation(tmp_path, text, expected):
    path = write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings("local", path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_an_alias_bomb_is_refused_before_it_grows(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi")) + "extra_filters: [*i]\n"
    path = write(tmp_path, bomb)
    with pytest.raises(ConfigError, match="aliases"):
        load_settings("hal", path)


def test_hal_keys_belong_to_hal_only(tmp_path):
    path = write(tmp_path, "rows: 100\n")
    assert load_settings("hal", path).rows == 100
    hint = r"unknown key 'rows' for --source local \(a key of hal\)"
    with pytest.raises(ConfigError, match=hint):
        load_settings("local", path)


def test_a_renamed_key_keeps_working_under_its_old_name(tmp_path):
    """HAL's `page_attempts` is now the sources' one `attempts`: an old config file still
    works; both spelled with different values is one line naming the new key."""
    assert load_settings("hal", write(tmp_path, "page_attempts: 5\n")).attempts == 5
    assert load_settings("hal", write(tmp_path, "attempts: 4\n")).attempts == 4
    assert load_settings("hal", write(tmp_path, "attempts: 4\npage_attempts: 4\n")).attempts == 4
    assert "page_attempts" not in load_settings("hal").user_view()
    path = write(tmp_path, "attempts: 4\npage_attempts: 2\n")
    with pytest.raises(ConfigError) as err:
        load_settings("hal", path)
    assert "\n" not in str(err.value)
    assert "`page_attempts` is the old name of `attempts`: set only `attempts`" in str(err.value)
    assert load_settings("pubmed", write(tmp_path, "attempts: 2\n")).attempts == 2


def test_source_is_chosen_on_the_command_line(tmp_path):
    with pytest.raises(ConfigError, match="--source"):
        load_settings("local", write(tmp_path, "source: hal\n"))


def test_overrides_win_and_are_validated():
    s = load_settings("local", None, {"manifest": "m.jsonl"})
    assert s.manifest == "m.jsonl"
    with pytest.raises(ConfigError, match="manifest"):
        load_settings("local", None, {"manifest": 3})


def test_groups_hold_exactly_what_their_stage_reads():
    s = load_settings("hal")
    assert s.document().max_edit_ratio == 0.15
    assert s.corpus().split_proportions == [0.94, 0.03, 0.03]
    assert "api_url" not in type(s.document()).model_fields


def test_network_sources_need_a_real_contact(tmp_path):
    with pytest.raises(ConfigError, match="contact"):
        check_contact(load_settings("hal"))
    check_contact(load_settings("hal", write(tmp_path, "contact: me@lab.example\n")))
    check_contact(load_settings("local"))  # no service, no contact needed


def test_a_non_mapping_or_missing_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="top level must map"):
        load_settings("local", write(tmp_path, "- a\n- b\n"))
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings("local", tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML at line 3"):
        load_settings("local", write(tmp_path, "a: 1\nb: [\n"))


def test_limits_are_their_own_group_and_out_of_the_document_settings():
    """What a result's fingerprint hashes (`document()`) holds no limit; the limits are
    read apart (`limits()`), and every key of the settings is in exactly one group."""
    from loralay_build.conf import CorpusSettings, DocumentSettings, LimitSettings

    s = load_settings("local")
    limits = set(s.limits().model_dump())
    assert limits == {"extract_timeout_s", "extract_memory_mb", "document_timeout_s",
                      "worker_memory_mb"}
    assert not limits & set(s.document().model_dump())
    groups = [DocumentSettings, LimitSettings, CorpusSettings]
    owned = [k for g in groups for k in g.model_fields]
    assert len(owned) == len(set(owned))


def test_every_registered_source_has_settings_and_the_network_ones_need_a_contact():
    for name, spec in registry.SOURCES.items():
        s = load_settings(name)
        assert s.source == name
        if spec.network:
            with pytest.raises(ConfigError, match="contact"):
                check_contact(s)
        else:
            check_contact(s)


@pytest.mark.parametrize("entry,hint", [
    ("cc-by-4.0-fr", "did you mean cc-by-4.0? "),  # 4.0 has no ports: no document has it
    ("cc-by-2.0-igo", "did you mean cc-by-3.0-igo? "),  # IGO licences are 3.0
    ("CC-BY-4.0", "did you mean cc-by-4.0? "), ("cc0", "did you mean cc0-1.0? "),
    ("etalab-3.0", "did you mean etalab-2.0? "), ("gpl-3.0", "")])
def test_an_allow_list_entry_no_document_can_carry_is_refused_naming_the_forms(
        tmp_path, entry, hint):
    """Before: `licenses: [cc-by-4.0-fr]` passed (a port was taken with any version) and
    the build dropped every document as license_excluded. Now one line, exit 2, no --out."""
    from loralay_build.licenses import ID_FORMS, SHORTHANDS

    with pytest.raises(ConfigError) as e:
        load_settings("local", None, {"licenses": ["cc-by-4.0", entry]})
    assert f"'{entry}' is no licence id a document can carry ({hint}ids: {ID_FORMS}; " \
           f"shorthands: {', '.join(SHORTHANDS)})" in str(e.value)
    assert "\n" not in str(e.value)


def test_an_allow_list_of_unknown_ids_writes_nothing(tmp_path):
    out = tmp_path / "out"
    proc = loralay("build", "--source", "local", "--manifest", str(SAMPLE), "--out", str(out),
                   "--config", str(config(tmp_path, licenses=["cc-by-4.0-fr"])), timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"loralay: {tmp_path}/config-0.yaml: licenses: "
                                  f"['cc-by-4.0-fr'] is not valid: 'cc-by-4.0-fr' is no licence")
    assert not out.exists()


def test_every_id_the_normaliser_makes_is_allowed() -> None:
    from loralay_build.licenses import KNOWN_IDS, SHORTHANDS, check_allow_list

    values = [*KNOWN_IDS, *SHORTHANDS, "cc-by-3.0-br", "cc-by-nc-sa-2.5-es"]
    assert check_allow_list(values) == values


@pytest.mark.parametrize("value", ["２０２０-01-01", "2020-٠١-01"])
def test_a_settings_date_is_in_ascii_digits(value):
    """`\\d` took any Unicode digit: SciELO's from_date "２０２０-01-01" was sent as typed."""
    with pytest.raises(ConfigError, match="from_date: .* is not valid: a date as YYYY-MM-DD"):
        load_settings("scielo-es", None, {"from_date": value})
    assert load_settings("scielo-es", None, {"from_date": "2020-01-01"}).from_date == "2020-01-01"


def test_a_settings_date_may_be_written_unquoted_in_yaml(tmp_path):
    """YAML reads `from_date: 2020-01-01` as a date, not a string: every date key takes it
    (SciELO's refused it; only the OAI source had a rule of its own)."""
    path = write(tmp_path, "from_date: 2020-01-01\nuntil_date: 2020-12-31\n")
    s = load_settings("scielo-es", path)
    assert (s.from_date, s.until_date) == ("2020-01-01", "2020-12-31")
    with pytest.raises(ConfigError, match="from_date: datetime.datetime.* is not valid"):
        load_settings("scielo-es", write(tmp_path, "from_date: 2020-01-01 10:00:00\n"))


@pytest.mark.parametrize("source,extra", [("oai", {"base_url": "http://127.0.0.1:9/oai"}),
                                          ("scielo-es", {}), ("pubmed", {})])
def test_a_date_range_that_runs_backwards_is_one_settings_error_for_every_source(source,
                                                                                 extra):
    """One check for every source with `from_date`/`until_date` (SciELO had none and asked
    ArticleMeta for an empty window; the OAI source said it only once fetching)."""
    with pytest.raises(ValueError, match="from_date 2021-01-01 is after until_date 2020-01-01"):
        load_settings(source, overrides={"from_date": "2021-01-01", "until_date": "2020-01-01",
                                         **extra})


@pytest.mark.parametrize("source", sorted(registry.names()))
def test_settings_prints_every_key_with_its_meaning_as_yaml_that_loads_back(source, tmp_path):
    """Issue 46, 9: `loralay settings` printed bare YAML, with `from_date` where the docs
    and the config files say `from:`."""
    proc = loralay("settings", "--source", source)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"# loralay settings --source {source}: every key")
    assert all("  # " in ln and ln.split("  # ", 1)[1].strip() for ln in lines[1:]), \
        [ln for ln in lines[1:] if "  # " not in ln]
    printed = yaml.safe_load(proc.stdout)
    settings = load_settings(source)
    view = settings.user_view()
    spelled = {v: k for k, v in settings.ALIASES.items()}
    assert list(printed) == [spelled.get(k, k) for k, _, _ in settings.described()]
    assert sorted(spelled.get(k, k) for k in view) == sorted(printed)
    assert {k: printed[spelled.get(k, k)] for k in view} == view
    if source in ("oai", "pubmed"):
        assert "from" in printed and "until" in printed and "from_date" not in printed
    again = tmp_path / "again.yaml"  # what it printed is a config file of the same settings
    again.write_text(proc.stdout, encoding="utf-8")
    assert load_settings(source, again).user_view() == view


def test_an_alias_and_its_field_set_apart_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="`from` is read as `from_date`: set only"):
        load_settings("oai", write(tmp_path, "from: 2020-01-01\nfrom_date: 2021-01-01\n"))
    s = load_settings("oai", write(tmp_path, "from: 2020-01-01\nuntil: 2020-02-01\n"))
    assert (str(s.from_date), str(s.until_date)) == ("2020-01-01", "2020-02-01")


def test_oai_has_the_percentile_defaults_of_local_and_every_source_a_minimum():
    """A repository (or a set of one) is often a handful of papers, as your own PDFs are:
    `oai` and `local` start without percentile filters; the corpus sources keep the
    paper's, applied only from `percentile_min_candidates` documents on."""
    off = {"local", "oai"}
    for name in registry.names():
        if registry.source(name).pipeline != "pdf":
            continue
        s = load_settings(name).corpus()
        pair = (s.max_pages_percentile, s.min_summary_percentile)
        assert (pair == (None, None)) == (name in off), (name, pair)
        assert s.percentile_min_candidates == 200, name


def _date_keys() -> list[tuple[str, str]]:
    """Every date key of every source, read off the models (a new one is tested too)."""
    from loralay_build.conf.load import settings_class

    return [(source, key) for source in sorted(registry.names())
            for key, field in settings_class(source).model_fields.items()
            if "_iso_date" in repr(field.annotation)]  # the IsoDate type


def test_the_date_keys_are_found():
    assert {key for _, key in _date_keys()} == {"from_date", "until_date"}
    assert {source for source, _ in _date_keys()} >= {"arxiv", "oai", "pubmed", "scielo-es"}


REQUIRED = {"oai": "base_url: http://127.0.0.1:9/oai\n"}


@pytest.mark.parametrize("source,key", _date_keys())
@pytest.mark.parametrize("written", ["2024-13-45", "2024-02-30", "'2024-02-30'", '"2024-13-45"'])
def test_an_impossible_date_is_one_line_naming_the_key_for_every_date_key(tmp_path, source,
                                                                          key, written):
    """Issue 41 §12: unquoted, YAML's date constructor raised a traceback; quoted, the
    pattern passed February 30th to the repository (the build then said "rerun")."""
    path = write(tmp_path, f"{REQUIRED.get(source, '')}{key}: {written}\n")
    with pytest.raises(ConfigError) as e:
        load_settings(source, path)
    value = written.strip("'\"")
    assert str(e.value).startswith(f"{path}: {key}: '{value}' is not valid: no such day "
                                   f"(a date as YYYY-MM-DD)"), str(e.value)
    assert "\n" not in str(e.value)


def test_the_oai_from_and_until_keys_name_the_key_written(tmp_path):
    """`from:`/`until:` are read as `from_date`/`until_date`: the line says which key that is."""
    path = write(tmp_path, f"{REQUIRED['oai']}from: 2024-01-01\nuntil: 2024-02-30\n")
    with pytest.raises(ConfigError, match=r"until_date: '2024-02-30' is not valid: no such day "
                                          r"\(a date as YYYY-MM-DD\) \(last datestamp "
                                          r"\(YYYY-MM-DD; `until`\)\)"):
        load_settings("oai", path)
    real = write(tmp_path, f"{REQUIRED['oai']}from: 2024-02-29\nuntil: '2024-03-01'\n")
    s = load_settings("oai", real)
    assert (s.from_date, s.until_date) == ("2024-02-29", "2024-03-01")


@pytest.mark.e2e
@pytest.mark.parametrize("dry", [True, False])
def test_an_impossible_date_stops_build_and_dry_run_in_one_line(tmp_path, dry):
    cfg = write(tmp_path, "base_url: http://127.0.0.1:9/oai\ncontact: t@example.org\n"
                          "from: 2024-13-45\n")
    out = tmp_path / "out"
    proc = loralay("build", "--source", "oai", "--config", str(cfg), "--out", str(out),
                   *(["--dry-run"] if dry else []), timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1, proc.stderr[-2000:]
    assert proc.stderr.startswith(f"loralay: {cfg}: from_date: '2024-13-45' is not valid: "
                                  f"no such day"), proc.stderr
    assert not out.exists()


def test_each_source_and_option_names_the_extra_it_needs():
    """Issue 42, 9: what `plan` checks before any work (loralay_build/extras.py)."""
    from loralay_build.conf import load_settings
    from loralay_build.extras import EXTRAS

    needs = {s: load_settings(s, None, {}).extras() for s in
             ("local", "hal", "oai", "pubmed", "scielo-es", "koreascience", "citesum")}
    assert needs == {"local": [], "hal": [], "oai": [("oai", "--source oai")],
                     "pubmed": [("oai", "--source pubmed")],
                     "scielo-es": [("crawl", "--source scielo-es")],
                     "koreascience": [("crawl", "--source koreascience")],
                     "citesum": [("citesum", "--source citesum")]}
    assert load_settings("local", None, {"images": True}).extras() == [
        ("images", "`images: true`")]
    assert load_settings("local", None, {"ocr": "auto"}).extras() == [("ocr", "`ocr: auto`")]
    assert {extra for pairs in needs.values() for extra, _ in pairs} <= set(EXTRAS)

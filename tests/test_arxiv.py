"""arXiv fetcher against a local bucket: real snapshot lines, real PDFs, injected faults.

Real inputs (read in place): the eight Kaggle snapshot lines in
../shared/fixtures/arxiv (PROVENANCE.md) and PDFs from ../shared/corpus. SYNTHETIC
inputs, built here: the Cohan et al. id files (no verbatim line of them is public, see
sources.md §2.4), one old-style snapshot line (`synthetic_old_style_line`), and the
bucket's JSON listings (the storage API's documented shape, no recording available).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from pylatexenc.latex2text import LatexNodes2Text

from loralay_build.conf import load_settings
from loralay_build.http import forbidden_host
from loralay_build.records import Candidate
from loralay_build.sources import FetchContext, HarvestStopped
from loralay_build.sources.arxiv import (
    abstract_text,
    bucket_prefix,
    canonical_id,
    fetch,
    latest_version,
    publication_date,
)
from loralay_build.sources.cohan import CohanId, read_ids
from loralay_build.sources.kit.jsonl import BadLine
from loralay_build.store.fetch import FetchState

from .fakeserver import FakeServer, Reply
from .helpers.arxiv import (
    API,
    FAST,
    PDF_TYPE,
    Bucket,
    corpus_pdf,
    harvest,
    make_config,
    manifest_entry,
    prefixes_asked,
    snapshot_lines,
    snapshot_paper,
    synthetic_old_style_line,
    write_cohan,
    write_snapshot,
)


@pytest.fixture
def setup(tmp_path: Path, fake_server: FakeServer) -> dict[str, Any]:
    """Five real snapshot ids and one old-style id, in three splits, plus two bad ids."""
    metadata = tmp_path / "snapshot.jsonl"
    lines = list(snapshot_lines().values()) + [synthetic_old_style_line()]
    metadata.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    ids = write_cohan(tmp_path / "ids", {
        "train": ["0704.0001", "0704.0002", "0704.0006"],
        "val": ["0704.0004", "hep-th9608091", "0704.0002"],  # a repeat: the first split wins
        "test": ["0704.0005", "math.GT0309136", "9999.99999"],
    })
    bucket = Bucket(fake_server, {
        "arxiv/arxiv/pdf/0704/0704.0001v1.pdf": b"%PDF-1.4 old version\n",
        "arxiv/arxiv/pdf/0704/0704.0001v2.pdf": corpus_pdf("en_arxiv_beyond_summ"),
        "arxiv/arxiv/pdf/0704/0704.0001v2.pdf.txt": b"not a version",
        "arxiv/arxiv/pdf/0704/0704.0002v1.pdf": corpus_pdf("en_acl_s2orc"),
        "arxiv/arxiv/pdf/0704/0704.0004v1.pdf": corpus_pdf("en_ieee_reqprio"),
        "arxiv/arxiv/pdf/0704/0704.0006v1.pdf": corpus_pdf("en_bmc_trauma"),
        "arxiv/hep-th/pdf/9608/9608091v3.pdf": corpus_pdf("en_truncated_jcap"),
        # 0704.0005 has no PDF in the bucket
    })
    return {"cfg": make_config(tmp_path, fake_server, ids, metadata), "bucket": bucket,
            "server": fake_server, "out": tmp_path / "out", "tmp": tmp_path}


# --- ids, versions, abstracts, dates ------------------------------------------------------
def test_id_forms_map_to_bucket_prefixes() -> None:
    assert bucket_prefix("0704.0001") == "arxiv/arxiv/pdf/0704/0704.0001v"
    assert bucket_prefix("1501.00001") == "arxiv/arxiv/pdf/1501/1501.00001v"
    assert bucket_prefix("hep-th9608091") == "arxiv/hep-th/pdf/9608/9608091v"
    assert bucket_prefix("hep-th/9608091") == "arxiv/hep-th/pdf/9608/9608091v"
    assert bucket_prefix("cond-mat0001001") == "arxiv/cond-mat/pdf/0001/0001001v"
    for bad in ("math.GT0309136", "0704.001", "", "../../etc9608091", "hep-th960809"):
        assert bucket_prefix(bad) is None, bad
    assert canonical_id("solv-int9901001") == "solv-int/9901001"
    assert canonical_id("0704.0001") == "0704.0001"


def test_latest_version_is_numeric_not_lexical() -> None:
    p = "arxiv/arxiv/pdf/0704/0704.0001v"
    names = [f"{p}2.pdf", f"{p}10.pdf", f"{p}9.pdf", f"{p}11.pdf.bak", "other"]
    assert latest_version(names, p) == (10, f"{p}10.pdf")
    assert latest_version(["other"], p) is None


def test_percent_survives_where_plain_pylatexenc_truncates() -> None:
    raw = snapshot_lines()["0704.0006"]["abstract"]
    assert "90%" in raw
    text, converted = abstract_text(raw)
    assert converted
    assert "more than 90% of the atoms occupy the corresponding molecular condensates" in text
    assert text.endswith(" ".join(raw.split()[-6:]))  # nothing lost after the `%`
    # what the original did: everything after the % is gone
    plain = LatexNodes2Text().latex_to_text(raw.replace("\n", " "))
    assert "of the atoms occupy" not in plain


def test_latex_becomes_text_and_plain_text_is_unchanged() -> None:
    lines = snapshot_lines()
    raw = lines["0704.0004"]["abstract"]  # no LaTeX: only the line breaks are joined
    assert abstract_text(raw) == (" ".join(raw.split()), True)
    text, _ = abstract_text(lines["0704.0002"]["abstract"])
    assert "the (k,ℓ)-pebble game with colors" in text and "$" not in text
    text, _ = abstract_text(synthetic_old_style_line()["abstract"])
    assert text == "We find a 5% shift and Schrödinger's α at 25% of the scale."
    assert abstract_text(r"costs of \$100 and \'etude")[0] == "costs of $100 and étude"


def test_publication_date_is_v1_then_update_date() -> None:
    lines = snapshot_lines()
    assert publication_date(lines["0704.0001"]) == "2007-04-02"
    assert publication_date(lines["0704.0008"]) == "2007-03-31"
    assert publication_date(synthetic_old_style_line()) == "1996-08-14"
    assert publication_date({"versions": [{"version": "v1", "created": "garbage"}]}) is None


def test_cohan_ids_keep_split_and_first_occurrence(tmp_path: Path) -> None:
    folder = write_cohan(tmp_path, {"train": ["a1", "b2"], "val": ["b2", "c3"]})
    with (folder / "test.txt").open("w") as fh:
        fh.write('{"article_id": "d4"}\nnot json\n{"no_id": 1}\n')
    read = list(read_ids(folder))
    got = [(c.article_id, c.split) for c in read if isinstance(c, CohanId)]
    assert got == [("a1", "train"), ("b2", "train"), ("c3", "validation"), ("d4", "test")]
    # the lines naming no id are bad input records now (they were logged and skipped)
    bad = [b for b in read if isinstance(b, BadLine)]
    assert [(b.where, b.reason) for b in bad] == [
        ("test.txt:2", "not JSON (Expecting value)"), ("test.txt:3", "no 'article_id'")]


# --- the harvest -------------------------------------------------------------------------
def test_fetch_joins_snapshot_lists_versions_and_downloads(setup: dict[str, Any]) -> None:
    lines = snapshot_lines()
    with FetchState(setup["tmp"] / "state.sqlite") as state:
        items = harvest(setup["cfg"], state, setup["out"])
    by_id = {i.id: i for i in items}
    assert len(items) == len(by_id) == 8
    ok = {i.id: i for i in items if isinstance(i, Candidate)}
    assert set(ok) == {"0704.0001", "0704.0002", "0704.0006", "0704.0004", "hep-th9608091"}
    c = ok["0704.0001"]
    assert (c.split, c.publication_date, c.extra["version"]) == ("train", "2007-04-02", 2)
    assert c.abstracts == {"en": abstract_text(lines["0704.0001"]["abstract"])[0]}
    assert Path(c.pdf_path).read_bytes() == corpus_pdf("en_arxiv_beyond_summ")
    assert c.pdf_url.endswith("/arxiv-dataset/arxiv/arxiv/pdf/0704/0704.0001v2.pdf")
    assert ok["0704.0002"].split == "train" and ok["0704.0004"].split == "validation"
    old = ok["hep-th9608091"]
    assert old.extra["arxiv_id"] == "hep-th/9608091" and old.extra["version"] == 3
    assert old.abstracts["en"] == "We find a 5% shift and Schrödinger's α at 25% of the scale."
    assert by_id["0704.0005"].cls == "unavailable"  # listed nothing
    assert by_id["0704.0005"].candidate.split == "test"
    assert by_id["math.GT0309136"].cls == "bad_metadata"
    assert by_id["9999.99999"].cls == "no_abstract"


def test_faults_end_in_retries_or_classed_failures(setup: dict[str, Any]) -> None:
    b = setup["bucket"]
    json_type = {"Content-Type": "application/json"}
    b.listing_faults = {
        "arxiv/arxiv/pdf/0704/0704.0001v": [Reply(429, b"slow down", {"Retry-After": "1"})],
        "arxiv/arxiv/pdf/0704/0704.0002v": [Reply(500)] * 5,
        "arxiv/arxiv/pdf/0704/0704.0004v": [Reply(200, b"<html>login</html>", json_type)],
        "arxiv/arxiv/pdf/0704/0704.0006v": [Reply(200, b'{"error": {"code": 400}}', json_type)],
        "arxiv/hep-th/pdf/9608/9608091v": [Reply(200, b'{"items": [', json_type)],
    }
    with FetchState(setup["tmp"] / "state.sqlite") as state:
        items = {i.id: i for i in harvest(setup["cfg"], state, setup["out"])}
    assert isinstance(items["0704.0001"], Candidate)  # 429 + Retry-After, then served
    for doc_id in ("0704.0004", "0704.0006", "hep-th9608091"):
        assert items[doc_id].cls == "unavailable", doc_id
    assert items["0704.0002"].cls == "unreachable"
    assert "HTTP 500 after retries" in items["0704.0002"].message
    assert "HTML" in items["0704.0004"].message
    assert "service error" in items["0704.0006"].message
    assert "malformed JSON" in items["hep-th9608091"].message
    # the service is back: a rerun retries the unreachable paper, and only that one
    b.listing_faults = {}
    with FetchState(setup["tmp"] / "state.sqlite") as state:
        again = harvest(setup["cfg"], state, setup["out"])
        assert [i.id for i in again] == ["0704.0002"] and isinstance(again[0], Candidate)
        assert state.status("0704.0002", "fetch") == "ok"


def test_download_faults(setup: dict[str, Any]) -> None:
    b = setup["bucket"]
    v2 = "arxiv/arxiv/pdf/0704/0704.0001v2.pdf"
    good = b.objects[v2]
    b.object_faults = {
        v2: [Reply(200, good, PDF_TYPE, truncate_to=1000)],  # cut short once, then whole
        "arxiv/arxiv/pdf/0704/0704.0002v1.pdf": [Reply(200, b"<html>captcha</html>",
                                                       PDF_TYPE)] * 3,
        "arxiv/arxiv/pdf/0704/0704.0004v1.pdf": [Reply(200, b"%PDF-1.4", PDF_TYPE, delay=1.5)],
        "arxiv/arxiv/pdf/0704/0704.0006v1.pdf": [Reply(200, b"%PDF", PDF_TYPE, delay=1.5)] * 5,
    }
    with FetchState(setup["tmp"] / "state.sqlite") as state:
        items = {i.id: i for i in harvest(setup["cfg"], state, setup["out"])}
    assert Path(items["0704.0001"].pdf_path).read_bytes() == good
    assert items["0704.0002"].cls == "unavailable" and "not a PDF" in items["0704.0002"].message
    # one read timeout, then the object
    assert Path(items["0704.0004"].pdf_path).read_bytes() == corpus_pdf("en_ieee_reqprio")
    assert items["0704.0006"].cls == "unreachable"  # timeouts past the retries
    assert not list(setup["out"].glob("pdfs/.part-*"))


def test_pdf_403_records_forbidden_and_goes_on(setup: dict[str, Any]) -> None:
    b, srv, state_path = setup["bucket"], setup["server"], setup["tmp"] / "state.sqlite"
    denied = "arxiv/arxiv/pdf/0704/0704.0002v1.pdf"
    b.object_faults = {denied: [Reply(403, b"<Error>AccessDenied</Error>")]}
    with FetchState(state_path) as state:
        items = {i.id: i for i in harvest(setup["cfg"], state, setup["out"])}
        assert len(items) == 8  # every id recorded: the harvest went on
        refused = {k for k, v in items.items() if getattr(v, "cls", None) == "forbidden"}
        assert "0704.0002" in refused and len(refused) > 1  # later ids on the bucket too
        host = urlsplit(srv.url("")).netloc
        assert all(forbidden_host(items[k].message) == host for k in refused)
        assert srv.requests[-1].path.endswith(denied)  # nothing sent to the bucket after
        assert harvest(setup["cfg"], state, setup["out"]) == []  # a rerun leaves them
        again = list(fetch(FetchContext("arxiv", setup["cfg"], state, setup["out"],
                                        retry=frozenset({"forbidden"}))))
    assert {i.id for i in again} == refused
    assert isinstance({i.id: i for i in again}["0704.0002"], Candidate)


def test_listing_403_stops_and_a_rerun_continues(setup: dict[str, Any]) -> None:
    b, state_path = setup["bucket"], setup["tmp"] / "state.sqlite"
    b.listing_faults = {"arxiv/arxiv/pdf/0704/0704.0002v": [Reply(403, b"Access denied")]}
    with FetchState(state_path) as state:
        with pytest.raises(HarvestStopped, match="403"):
            harvest(setup["cfg"], state, setup["out"])
        assert state.status("0704.0002", "fetch") is None  # not recorded: retried later
        first = {r.doc_id for r in state.results("fetch")}
        items = harvest(setup["cfg"], state, setup["out"])  # a new run, a new client
        assert "0704.0002" in {i.id for i in items}
        assert not first & {i.id for i in items}
        assert len(list(state.results("fetch"))) == 8


def test_resume_after_abandon_has_no_duplicates_and_loses_nothing(setup: dict[str, Any]
                                                                  ) -> None:
    state_path, srv = setup["tmp"] / "state.sqlite", setup["server"]
    with FetchState(state_path) as state:
        first = harvest(setup["cfg"], state, setup["out"], abandon_after=4)
    downloads = sum(1 for r in srv.requests if r.path.endswith(".pdf"))
    with FetchState(state_path) as state:
        second = harvest(setup["cfg"], state, setup["out"])
        ids = [i.id for i in first + second]
        assert len(ids) == len(set(ids)) == 8
        assert {r.doc_id for r in state.results("fetch")} == set(ids)
        assert state.count_candidates() == 6  # two rejections carry no candidate
    fetched_first = {i.pdf_url.split("/arxiv-dataset")[1] for i in first
                     if isinstance(i, Candidate)}
    second_paths = [r.path for r in srv.requests if r.path.endswith(".pdf")][downloads:]
    assert fetched_first and not fetched_first & {p.split("/arxiv-dataset")[1]
                                                  for p in second_paths}


def test_limit_counts_items(setup: dict[str, Any]) -> None:
    with FetchState(setup["tmp"] / "state.sqlite") as state:
        assert len(harvest(setup["cfg"], state, setup["out"], limit=3)) == 3
        assert len(list(state.results("fetch"))) == 3


def test_bad_lines_of_the_id_files_and_the_snapshot_are_bad_input_records(
        setup: dict[str, Any]) -> None:
    """A Cohan line naming no id and a snapshot line that is no JSON object are counted among
    the report's bad input records (they were logged, or skipped without a word), the ids
    and the snapshot gzipped; a rerun counts them anew (the inputs are read whole again),
    not on top of the first run's count."""
    import gzip

    from loralay_build.pdf.driver import fetch_phase
    from loralay_build.runfolder import RunFolder

    cfg, tmp = setup["cfg"], setup["tmp"]
    ids = Path(cfg.ids_dir)
    test_ids = (ids / "test.txt").read_bytes() + b'not json\n{"no_id": 1}\n'
    (ids / "test.txt").unlink()
    (ids / "test.txt.gz").write_bytes(gzip.compress(test_ids))
    snapshot = Path(cfg.metadata_path).read_bytes()
    n = snapshot.count(b"\n")
    snapshot += b"[1, 2]\n{\"id\": \"0704.00\n"
    gz = tmp / "snapshot.jsonl.gz"
    gz.write_bytes(gzip.compress(snapshot))
    cfg = cfg.replace(metadata_path=str(gz))
    layout = RunFolder(setup["out"])
    layout.state_dir.mkdir(parents=True)
    for _ in range(2):
        fetch_phase(cfg, layout, None)
        with FetchState(layout.fetch_db) as state:
            bad = state.bad_records()
        assert bad.counts == {"bad_metadata": 4}
        examples = " | ".join(e for ex in bad.examples.values() for e in ex)
        assert "test.txt.gz:4: not JSON" in examples and "test.txt.gz:5: no 'article_id'" \
            in examples
        assert f"snapshot.jsonl.gz:{n + 1}: not a JSON object" in examples
        assert f"snapshot.jsonl.gz:{n + 2}: not JSON" in examples
    with FetchState(layout.fetch_db) as state:  # every id was still fetched once
        assert len(list(state.results("fetch"))) == 8


def test_a_licence_outside_the_list_is_excluded_before_the_bucket_is_asked(
        setup: dict[str, Any]) -> None:
    """The snapshot states the licence (a null one is arXiv's default): with
    `licenses: [open]` every paper is `license_excluded` before its listing and its PDF."""
    srv = setup["server"]
    cfg = setup["cfg"].replace(licenses=["open"])
    with FetchState(setup["tmp"] / "state.sqlite") as state:
        items = {i.id: i for i in harvest(cfg, state, setup["out"])}
    excluded = {i for i, item in items.items() if item.cls == "license_excluded"}
    assert excluded == {"0704.0001", "0704.0002", "0704.0004", "0704.0005", "0704.0006",
                        "hep-th9608091"}
    assert items["0704.0002"].message == ("licence arxiv-nonexclusive-distrib-1.0 is not in "
                                          "licenses: open")
    assert not [r for r in srv.requests if r.path == API or r.path.endswith(".pdf")]


def test_missing_inputs_are_a_clear_error(tmp_path: Path, fake_server: FakeServer) -> None:
    cfg = load_settings("arxiv")
    with FetchState(tmp_path / "s.sqlite") as state, pytest.raises(ValueError, match="ids_dir"):
        list(fetch(FetchContext("arxiv", cfg, state, tmp_path)))


@pytest.fixture
def chosen(tmp_path: Path, fake_server: FakeServer) -> dict[str, Any]:
    """The eight recorded lines as they are (math.CO cs.CG 2008-12-13, math.CO 2007-05-23,
    math.CA math.FA 2013-10-15, and five of physics), an old-style math paper, a
    mathematical-physics one (`math-ph` is no `math.` category), a line that is no JSON
    object; Cohan's files list 0704.0005. Chosen: categories math. and cs., update_date
    2007-06-01 to 2013-12-31, Cohan's ids left out."""
    lines = [*snapshot_lines().values(),
             snapshot_paper("0704.0004", "math/0612345", "2010-01-01"),
             snapshot_paper("0704.0007", "0705.0107", "2011-01-01", categories="math-ph gr-qc")]
    metadata = write_snapshot(tmp_path / "snapshot.jsonl", lines, b"[1, 2]\n")
    ids = write_cohan(tmp_path / "ids", {"train": ["0704.0005"], "val": [], "test": []})
    bucket = Bucket(fake_server, {
        "arxiv/arxiv/pdf/0704/0704.0002v2.pdf": corpus_pdf("en_acl_s2orc"),
        "arxiv/math/pdf/0612/0612345v1.pdf": corpus_pdf("en_ieee_reqprio"),
        "arxiv/arxiv/pdf/0704/0704.0005v1.pdf": corpus_pdf("en_bmc_trauma")})
    cfg = make_config(tmp_path, fake_server, ids, metadata, select="snapshot",
                      categories=["math.", "cs."], from_date="2007-06-01",
                      until_date="2013-12-31", split_mode="chronological")
    return {"cfg": cfg, "bucket": bucket, "server": fake_server, "out": tmp_path / "out",
            "state": tmp_path / "state.sqlite"}


def test_select_snapshot_chooses_by_category_and_update_date(chosen: dict[str, Any]) -> None:
    """Only the lines of a math./cs. category updated in the window, not in Cohan's files,
    are fetched (listing and PDF), under arXiv-Lay's record ids (old style without the
    slash), with no split of their own and the snapshot's licence; the bad line is a bad
    record; the high-water mark is the newest update_date chosen."""
    srv = chosen["server"]
    with FetchState(chosen["state"]) as state:
        items = {i.id: i for i in harvest(chosen["cfg"], state, chosen["out"])}
        mark = state.get_checkpoint("arxiv.high_water")
    assert set(items) == {"0704.0002", "math0612345", "snapshot.jsonl:11"}
    assert items["snapshot.jsonl:11"].bad_record
    assert items["snapshot.jsonl:11"].cls == "bad_metadata"
    assert prefixes_asked(srv) == ["arxiv/arxiv/pdf/0704/0704.0002v",
                                   "arxiv/math/pdf/0612/0612345v"]
    old, new = items["math0612345"], items["0704.0002"]
    assert isinstance(old, Candidate) and isinstance(new, Candidate)
    assert (old.extra["arxiv_id"], old.record_url) == ("math/0612345",
                                                       "https://arxiv.org/abs/math/0612345")
    assert Path(old.pdf_path).read_bytes() == corpus_pdf("en_ieee_reqprio")
    assert (new.split, new.license, new.extra["update_date"]) == (
        None, "http://arxiv.org/licenses/nonexclusive-distrib/1.0/", "2008-12-13")
    assert mark == "2010-01-01"


@pytest.mark.parametrize("over,message", [
    ({"categories": ["cs."]}, "categories choose papers of the snapshot: set `select: "
                              "snapshot`"),
    ({"select": "snapshot"}, "the snapshot's papers have no split of their own: set "
                             "`split_mode: chronological`"),
    ({"select": "snapshot", "split_mode": "chronological", "from_date": "2021-01-01",
      "until_date": "2020-12-31"}, "from_date 2021-01-01 is after until_date 2020-12-31"),
    ({"select": "snapshot", "split_mode": "chronological", "categories": ["cs. AI"]},
     "categories: ['cs. AI'] is not valid: 'cs. AI' is not a category prefix"),
])
def test_the_selection_keys_are_one_line_errors(over: dict[str, Any], message: str) -> None:
    from loralay_build.conf import ConfigError

    with pytest.raises(ConfigError) as err:
        load_settings("arxiv", None, over)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_select_snapshot_needs_no_ids_and_reads_yaml_dates(tmp_path: Path) -> None:
    from loralay_build.sources.arxiv import require_inputs

    metadata = write_snapshot(tmp_path / "s.jsonl", list(snapshot_lines().values()))
    path = tmp_path / "cfg.yaml"
    path.write_text(f"select: snapshot\nsplit_mode: chronological\nmetadata_path: {metadata}\n"
                    "from_date: 2020-01-01\n", encoding="utf-8")
    s = load_settings("arxiv", path)
    assert require_inputs(s).from_date == "2020-01-01"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="set ids_dir"):
        require_inputs(s.replace(select="ids", from_date=None, split_mode="given"))


def test_a_run_cut_short_by_the_limit_keeps_no_mark(chosen: dict[str, Any]) -> None:
    """The snapshot is in no order: a mark saved after the first paper (2008-12-13) would
    make a refresh pass over a paper of an earlier date that the run never reached."""
    with FetchState(chosen["state"]) as state:
        first = harvest(chosen["cfg"], state, chosen["out"], limit=1)
        assert [i.id for i in first] == ["0704.0002"]
        assert state.get_checkpoint("arxiv.high_water") is None
        rest = harvest(chosen["cfg"], state, chosen["out"])
        assert [i.id for i in rest] == ["math0612345", "snapshot.jsonl:11"]
        assert state.get_checkpoint("arxiv.high_water") == "2010-01-01"


def test_a_refresh_asks_from_the_mark_and_retries_an_older_paper_it_could_not_fetch(
        chosen: dict[str, Any]) -> None:
    """v1: 0704.0002 (2008-12-13) is unreachable, the mark is 2010-01-01. The snapshot then
    gains a paper updated 2012-05-05 and an unseen one updated 2009-06-01, before the mark
    less the overlap (2009-12-31): the refresh asks the bucket for the new paper and, its
    bucket back, for 0704.0002 again, whatever its date, and for nothing else."""
    from loralay_build.sources import record_fetch_item

    srv, cfg, b = chosen["server"], chosen["cfg"], chosen["bucket"]
    b.listing_faults = {"arxiv/arxiv/pdf/0704/0704.0002v": [Reply(503)] * 10}
    with FetchState(chosen["state"]) as state:
        first = {i.id: i for i in harvest(cfg, state, chosen["out"])}
        assert first["0704.0002"].cls == "unreachable"
        assert state.get_checkpoint("arxiv.high_water") == "2010-01-01"
    b.listing_faults = {}
    path = Path(cfg.metadata_path)
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.startswith("{")]
    write_snapshot(path, [*lines, snapshot_paper("0704.0004", "1205.00021", "2012-05-05"),
                          snapshot_paper("0704.0004", "0906.00022", "2009-06-01")])
    b.objects["arxiv/arxiv/pdf/1205/1205.00021v1.pdf"] = corpus_pdf("en_bmc_trauma")
    b.objects["arxiv/arxiv/pdf/0906/0906.00022v1.pdf"] = corpus_pdf("en_hal_reaim")
    sent = len(srv.requests)
    with FetchState(chosen["state"]) as state:
        items = []
        for item in fetch(FetchContext("arxiv", cfg, state, chosen["out"], refresh=True)):
            record_fetch_item(state, item)
            items.append(item)
        assert state.get_checkpoint("arxiv.high_water") == "2012-05-05"
    assert [(i.id, type(i).__name__) for i in items] == [("0704.0002", "Candidate"),
                                                         ("1205.00021", "Candidate")]
    assert prefixes_asked(srv, sent) == ["arxiv/arxiv/pdf/0704/0704.0002v",
                                         "arxiv/arxiv/pdf/1205/1205.00021v"]


@pytest.mark.e2e
def test_build_keeps_the_given_split(tmp_path: Path, fake_server: FakeServer) -> None:
    """`loralay build --source arxiv`: a real arXiv PDF whose abstract is found and cut.

    The snapshot line for 2304.02623 is SYNTHETIC around the paper's real abstract (the
    corpus manifest's), with `license: null` as in most real snapshot lines (0704.0001,
    0704.0003-0007): arXiv's default licence; 0807.3577's PDF is the corpus's truncated
    file."""
    import hashlib
    import re
    import subprocess
    import sys

    from datasets import load_dataset

    from .conftest import REPO

    beyond = manifest_entry("en_arxiv_beyond_summ")
    lines = [{"id": "2304.02623", "abstract": beyond["abstracts"]["en"], "title": "t",
              "license": None,
              "versions": [{"version": "v1", "created": "Wed, 5 Apr 2023 17:47:46 GMT"}]},
             {"id": "0807.3577", "abstract": manifest_entry("en_truncated_jcap")["abstracts"]
              ["en"], "versions": [], "update_date": "2008-10-03"}]
    metadata = tmp_path / "snapshot.jsonl"
    metadata.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ids = write_cohan(tmp_path / "ids", {"val": ["2304.02623"], "test": ["0807.3577"]})
    pdf = corpus_pdf("en_arxiv_beyond_summ")
    Bucket(fake_server, {"arxiv/arxiv/pdf/2304/2304.02623v1.pdf": pdf,
                         "arxiv/arxiv/pdf/0807/0807.3577v1.pdf": corpus_pdf(
                             "en_truncated_jcap")})
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({
        "ids_dir": str(ids), "metadata_path": str(metadata),
        "bucket_api_url": fake_server.url(API), "bucket_download_url":
        fake_server.url("/arxiv-dataset"), **FAST, "max_pages_percentile": None,
        "min_summary_percentile": None}))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                           "arxiv", "--config", str(cfg), "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert docs["0807.3577"]["status"] == "dropped" and docs["0807.3577"]["class"] == "corrupted"
    ds = load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert list(ds) == ["validation"]
    row = ds["validation"][0]
    assert row["article_id"] == "2304.02623"
    assert row["abstract"] == " ".join(beyond["abstracts"]["en"].split())
    # a null `license` is arXiv's default non-exclusive licence (no URL, no words given)
    assert (row["license"], row["license_url"], row["license_text"]) == (
        "arxiv-nonexclusive-distrib-1.0", None, None)
    assert row["record_url"] == "https://arxiv.org/abs/2304.02623"
    assert row["pdf_sha256"] == hashlib.sha256(pdf).hexdigest()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["retrieved_at"])
    assert len(ds["validation"]) == 1  # the only row
    report = json.loads((out / "report.json").read_text())
    assert report["licenses"] == {"arxiv-nonexclusive-distrib-1.0": 1}
    card = (out / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("\n---\n", 1)[0].removeprefix("---\n"))
    # not a licence the Hub knows: `other`, named after it; nobody else may redistribute
    assert (front["license"], front["license_name"]) == ("other",
                                                         "arxiv-nonexclusive-distrib-1.0")
    assert re.search(r"^\| `arxiv-nonexclusive-distrib-1\.0` \| 1 \| .+ \| no \|$", card,
                     re.M)

"""The run report: numbers checked against numpy, outcomes for every input, valid PNGs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from loralay_build.write import DocTable, Outcome, RunFacts, build_report, write_report
from loralay_build.write import plots as plots_mod

ARTICLE = {"train": [1200, 3400, 560, 8000, 2500], "validation": [900, 4100], "test": [7000]}
SUMMARY = {"train": [150, 210, 95, 300, 180], "validation": [120, 260], "test": [199]}
SHARES = {"train": [0.9, 0.8, None, 0.95, 0.7], "validation": [0.99, 0.5], "test": [0.85]}


def table(*rows: tuple) -> DocTable:
    """(id, split, article words, summary words, pages, share, leak) rows as a DocTable."""
    t = DocTable()
    for doc_id, split, a, s, pages, share, leak in rows:
        t.add(doc_id, split=split, article_words=a, summary_words=s, pages=pages,
              language_share=share, leak=leak.items())
    return t


def kept_docs() -> DocTable:
    rows, k = [], 0
    for split in ARTICLE:
        for a, s, sh in zip(ARTICLE[split], SUMMARY[split], SHARES[split], strict=True):
            leak = {"fr": 0.0, "en": 0.31 if k == 3 else 0.005 * k}
            rows.append((f"doc-{k}", split, a, s, 3 + k, sh, leak))
            k += 1
    return table(*rows)


def run_facts(docs: DocTable) -> RunFacts:
    outcomes = {i: Outcome.kept(s or "") for i, s in zip(docs.ids, docs.splits, strict=True)}
    for i in range(7):
        outcomes[f"slow-{i}"] = Outcome.dropped("timeout", "extract", f"Poppler ran {60 + i}s")
    outcomes["en-paper"] = Outcome.dropped("wrong_language", "language", "body is 80% en")
    return RunFacts(
        name="hal-fr-test", source="HAL", language="fr",
        funnel=[("candidates", 16), ("fetched", 16), ("extracted", 9), ("language", 8),
                ("written", 8)],
        thresholds={"max_pages": 31.0, "min_summary_words": 52.5},
        outcomes=outcomes, leak_threshold=0.05, leak_ngram=8,
        split_rule="chronological 80/10/10", extra={"poppler": "24.02.0", "elapsed_s": 12.5},
    )


@pytest.fixture
def report(tmp_path):
    docs = kept_docs()
    data = write_report(tmp_path, run_facts(docs), docs)
    return tmp_path, data


def test_json_figures_match_numpy(report):
    out, _ = report
    data = json.loads((out / "report.json").read_text())
    for split, values in ARTICLE.items():
        s = data["splits"][split]
        assert s["count"] == len(values)
        assert s["article_words"]["mean"] == pytest.approx(np.mean(values))
        assert s["article_words"]["median"] == pytest.approx(np.median(values))
        assert s["article_words"]["p90"] == pytest.approx(np.percentile(values, 90))
        assert s["summary_words"]["p90"] == pytest.approx(np.percentile(SUMMARY[split], 90))
        assert s["summary_words"]["median"] == pytest.approx(np.median(SUMMARY[split]))
        shares = [x for x in SHARES[split] if x is not None]
        assert s["language_share_mean"] == pytest.approx(np.mean(shares))
    # by hand: sorted 560, 1200, 2500, 3400, 8000 -> 3400 + 0.6 * (8000 - 3400)
    assert data["splits"]["train"]["article_words"]["p90"] == pytest.approx(6160.0)


def test_json_outcomes_drops_and_leakage(report):
    out, _ = report
    data = json.loads((out / "report.json").read_text())
    assert data["verdict"] == ("CHECK: 8 kept of 16; 1 leaks; 8 dropped "
                               "(timeout 7, wrong_language 1)")
    docs = data["documents"]
    assert len(docs) == 16
    assert docs["doc-6"] == {"status": "kept", "split": "validation"}
    assert docs["en-paper"] == {"status": "dropped", "class": "wrong_language",
                                "stage": "language", "message": "body is 80% en"}
    timeout = data["drops"][0]
    assert (timeout["class"], timeout["count"], timeout["stages"]) == ("timeout", 7, ["extract"])
    assert [e["id"] for e in timeout["examples"]] == [f"slow-{i}" for i in range(5)]
    assert timeout["share"] == pytest.approx(7 / 16)
    lk = data["leakage"]
    assert (lk["checked"], lk["above_threshold"], lk["ngram"]) == (16, 1, 8)
    assert lk["leaks"] == [{"id": "doc-3", "language": "en", "share": 0.31}]
    assert sum(lk["histogram"]["counts"]) == 16 and len(lk["histogram"]["edges"]) == 21
    assert lk["by_language"] == {"en": 1, "fr": 0}
    assert data["thresholds"] == {"max_pages": 31.0, "min_summary_words": 52.5}
    assert [f["count"] for f in data["funnel"]] == [16, 16, 9, 8, 8]
    assert data["warnings"] == ["small evaluation splits (validation 2, test 1 documents): a "
                                "score on fewer than 100 papers says little"]


def test_markdown_verdict_first_and_tables(report):
    out, _ = report
    md = (out / "report.md").read_text()
    body = [ln for ln in md.splitlines() if ln and not ln.startswith("#")]
    assert body[0] == "**CHECK: 8 kept of 16; 1 leaks; 8 dropped (timeout 7, wrong_language 1)**"
    assert "| extracted | 9 | 7 | 56.2% |" in md
    assert "| timeout | extract | 7 | 43.8% |" in md
    assert "`slow-4` (extract: Poppler ran 64s)" in md and "slow-5" not in md
    assert "| max_pages | 31.0 |" in md
    assert "| train | 5 | 3,132.0 | 2,500.0 | 6,160.0 |" in md
    assert "| doc-3 | en | 0.310 |" in md
    assert "**1 above 0.05**" in md
    for key in ("funnel", "article_words", "summary_words", "language_share", "leakage"):
        assert f"![{key}](report/{key}.png)" in md


def test_pngs_exist_and_are_valid(report):
    out, data = report
    assert data["plots"]["error"] is None
    assert len(data["plots"]["files"]) == 5
    for rel in data["plots"]["files"].values():
        with Image.open(out / rel) as im:
            im.verify()
        with Image.open(out / rel) as im:
            assert im.format == "PNG" and im.size[0] > 100 and im.size[1] > 100


def test_clean_run_says_ok_and_plot_failure_is_reported_not_raised(tmp_path, monkeypatch):
    docs = table(("a", "train", 100, 10, 2, 0.9, {"fr": 0.0}))
    run = RunFacts("x", "HAL", [("candidates", 1), ("written", 1)], {},
                   {"a": Outcome.kept("train")}, 0.05, 8)

    def broken(data, docs):
        raise RuntimeError("no fonts")

    monkeypatch.setitem(plots_mod.PLOTS, "leakage", broken)
    data = write_report(tmp_path, run, docs)
    assert data["verdict"] == "OK: 1 kept of 1; 0 leaks; 0 dropped"
    assert "leakage: RuntimeError: no fonts" in data["plots"]["error"]
    assert "leakage" not in data["plots"]["files"] and "funnel" in data["plots"]["files"]
    md = (tmp_path / "report.md").read_text()
    assert "Plots were not drawn: leakage: RuntimeError: no fonts" in md
    assert "No document was dropped." in md
    assert data["splits"]["validation"]["count"] == 0
    assert data["splits"]["validation"]["article_words"] is None


def test_inconsistent_inputs_are_flagged():
    docs = table(("hal-00007", "test", 120, 6, 2, 0.9, {"fr": 0.0, "en": 0.01}))
    run = RunFacts("x", "HAL", [("candidates", 2)], {},
                   {"hal-00007": Outcome.kept("test"), "other": Outcome.kept("train")}, 0.05, 8)
    data = build_report(run, docs)
    assert data["warnings"] and "disagree" in data["warnings"][0]


def test_unreachable_drops_tell_the_user_to_rerun(tmp_path):
    docs = table(("a", "train", 100, 10, 2, 0.9, {"fr": 0.0}))
    outcomes = {"a": Outcome.kept("train"),
                "b": Outcome.dropped("unreachable", "fetch", "http://x/b.pdf: HTTP 503 after "
                                     "retries"),
                "c": Outcome.dropped("unavailable", "fetch", "http://x/c.pdf: HTTP 404")}
    run = RunFacts("x", "HAL", [("candidates", 3), ("written", 1)], {}, outcomes, 0.05, 8)
    data = write_report(tmp_path, run, docs)
    assert data["warnings"] == ["1 documents could not be fetched for now (network errors, "
                                "timeouts, 429/5xx after retries): rerun the same command to "
                                "try them again", "validation and test are empty (1 documents "
                                "in train): nothing to evaluate on"]
    assert "> warning: 1 documents could not be fetched for now" in \
        (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("outcomes", ["all", "none"])
def test_streamed_report_json_is_byte_for_byte_json_dumps(tmp_path, outcomes):
    """report.json is written one outcome at a time (a 200k-document run must not hold a
    second copy of them); its bytes are those of json.dumps over the whole report."""
    docs = kept_docs()
    run = run_facts(docs)
    run.outcomes["ü-id"] = Outcome.dropped("timeout", "extract", 'é "x"\nline')
    if outcomes == "none":
        run = RunFacts(run.name, run.source, run.funnel, run.thresholds, {}, 0.05, 8,
                       extra={"note": "ünïcode \"quoted\"\nline"})
        docs = DocTable()
    data = write_report(tmp_path, run, docs, plots=False)
    whole = {**build_report(run, docs), "plots": data["plots"]}
    want = json.dumps(whole, indent=1, ensure_ascii=False) + "\n"
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == want
    assert "documents" not in data  # the returned figures leave the outcomes to the file


def languages_table(*rows: tuple[str, str, str]) -> DocTable:
    """(id, split, language) rows as a DocTable."""
    t = DocTable()
    for doc_id, split, language in rows:
        t.add(doc_id, split=split, article_words=100, summary_words=10, pages=2,
              language_share=0.9, leak=(), language=language)
    return t


def test_tiny_and_one_language_evaluation_splits_are_warned():
    """Issue 46, 11: three papers split 90/5/5 gave 1/1/1, one undated paper 3/0/0, a test
    split of one Korean paper, and nothing said so."""
    from loralay_build.write.report import split_warnings  # noqa: PLC0415

    three = languages_table(("a", "train", "en"), ("b", "validation", "fr"), ("c", "test", "ko"))
    assert split_warnings(three) == [
        "small evaluation splits (validation 1, test 1 documents): a score on fewer than 100 "
        "papers says little",
        "validation holds only fr papers of the dataset's 3 languages (en, fr, ko): "
        "`split_mode: chronological_by_language` splits each language alike",
        "test holds only ko papers of the dataset's 3 languages (en, fr, ko): "
        "`split_mode: chronological_by_language` splits each language alike"]
    undated = languages_table(*((i, "train", "en") for i in "abc"))
    assert split_warnings(undated) == ["validation and test are empty (3 documents in train): "
                                       "nothing to evaluate on"]
    rows = [(f"{lang}{k}", split, lang) for lang in ("en", "ko")
            for k, split in enumerate(["train"] * 180 + ["validation"] * 110 + ["test"] * 100)]
    assert split_warnings(languages_table(*rows)) == []


@pytest.mark.e2e
def test_the_report_names_the_slowest_documents_with_their_pages(built_sample):
    """Issue 46, 8: nothing said which paper was slow (one extract_ms_per_page)."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    out = built_sample[0]
    data = json.loads((out / "report.json").read_text())
    slowest = data["run"]["slowest_documents"]
    assert len(slowest) == 10  # of the 11 inputs, each of which took its steps' time
    assert [s["seconds"] for s in slowest] == sorted((s["seconds"] for s in slowest),
                                                     reverse=True)
    assert set(data["documents"]) >= {s["id"] for s in slowest}
    pages = {}
    for path in sorted((out / "data").glob("*.parquet")):
        for row in pq.read_table(path, columns=["article_id", "page_sizes"]).to_pylist():
            pages[row["article_id"]] = len(row["page_sizes"])
    for s in slowest:  # a kept paper's pages as the dataset has them; a failed one: None
        assert s["pages"] == pages.get(s["id"]), s
        assert s["slowest_step"] in ("extract", "group", "strip", "language", "leakage",
                                     "print")
    md = (out / "report.md").read_text()
    assert "## Slowest documents\n\n| id | seconds | pages | seconds per page | slowest step |" \
        in md
    assert f"| {slowest[0]['id']} | {slowest[0]['seconds']:.2f} |" in md


def test_the_progress_line_gives_an_eta(monkeypatch):
    from loralay_build.machinery import progress  # noqa: PLC0415

    now = [1000.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    p = progress.Progress("process", total=100, every_s=1e9)
    now[0] += 50
    for _ in range(25):
        p.counts["ok"] += 1
        p.done += 1
    assert p.line() == "process: 25/100 (ok 25) 0.50 docs/s, ETA 2m 30s"
    p.done = 100
    assert p.line().endswith("docs/s")  # nothing left: no ETA
    assert progress.Progress("fetch", total=None).eta(3.0) == ""

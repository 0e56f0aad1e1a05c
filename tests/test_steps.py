"""The one ordered list of per-document steps (pdf/steps.py): the workers and `loralay show`
run the same steps, and a failure is recorded under the step that raised it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from loralay_build.corpus.prints import DocPrint, doc_print
from loralay_build.failures import FailureClass
from loralay_build.pdf import steps
from loralay_build.pdf.steps import STEP_NAMES, process_candidate, run_document_steps
from loralay_build.records import Candidate
from loralay_build.sources.manifest import read_manifest

from .conftest import SAMPLE
from .helpers.glyphs import FIXTURES, ligature_words
from .helpers.steps import job

DOC = "fr_hal_cover_glaciers"


def sample_candidate(doc_id: str = DOC) -> Candidate:
    return next(line.item for line in read_manifest(SAMPLE)
                if isinstance(line.item, Candidate) and line.item.id == doc_id)


def test_the_steps_in_order_and_render_only_with_images():
    assert STEP_NAMES == ("extract", "group", "strip", "language", "render", "leakage",
                          "print")
    _, plain = run_document_steps(sample_candidate(), job())
    assert [s for s, _, _ in plain.stages] == ["extract", "group", "strip", "language",
                                              "leakage", "print"]
    assert all(fail is None and seconds >= 0 for _, fail, seconds in plain.stages)


def test_the_print_is_made_from_the_bodys_keys_as_from_its_words():
    """The print step reuses the strip step's word keys (half the print's cost); they
    must be the keys of the body as written, in its order (the words are regrouped). The
    abstract printed with it is the summary, the main language's abstract."""
    c = sample_candidate()
    work, _ = run_document_steps(c, job())
    assert work.stripped is not None and work.text_print is not None
    body = work.stripped.body.words
    summary = work.processed().summary
    assert summary and summary == c.abstracts[c.language]
    assert work.text_print == doc_print(body, abstract=summary.split())
    assert work.text_print.abstract_words == len(summary.split())
    # above MIN_WORDS: the signature is made (545 before the headings "Résumé" and
    # "Abstract" went with their abstracts)
    assert work.text_print.words == 543
    stored = process_candidate(sample_candidate(), job()).stored
    assert stored is not None and DocPrint.from_str(stored[0].print) == work.text_print


@pytest.mark.parametrize("step,target", [("extract", "extract_document"),
                                         ("group", "group_and_label"),
                                         ("strip", "strip_document"),
                                         ("language", "detect"),
                                         ("leakage", "leakage")])
def test_an_exception_is_recorded_under_the_step_that_raised_it(monkeypatch, step, target):
    """A bug in the leakage audit was recorded under `render`, a step that never ran (the
    list of names and the order of the calls disagreed)."""
    def boom(*args, **kwargs):
        raise RuntimeError(f"bug in {target}")

    monkeypatch.setattr(steps, target, boom)
    out = process_candidate(sample_candidate(), job())
    assert out.failure is not None
    stage, fail = out.failure
    assert (stage, fail.cls) == (step, FailureClass.INTERNAL_ERROR)
    assert fail.message == f"RuntimeError: bug in {target}"
    assert [s for s, _, _ in out.stages][-1] == step and out.stored is None


def test_a_failure_ends_the_document_at_its_step():
    cand = Candidate("gone", "local", "en", {"en": "x" * 50}, pdf_path="/nonexistent.pdf")
    out = process_candidate(cand, job())
    assert [s for s, _, _ in out.stages] == ["extract"]
    assert out.failure[1].cls is FailureClass.UNAVAILABLE


@pytest.mark.e2e
def test_show_recuts_a_document_with_the_builds_glyph_repair(tmp_path):
    """`show` re-cut a document without the glyph repair that takes the source's abstracts
    as evidence, so it pictured a document the dataset does not hold: here every word of the
    T1 Type 3 fixture whose ligature only the abstract decodes."""
    from loralay_build.api import build
    from loralay_build.dataset import find_row
    from loralay_build.preview import recut, run_settings

    pdf = FIXTURES / "ligatures-t1-bare.pdf"
    truth = ligature_words()[:ligature_words().index("Keywords:")]
    start, end = truth.index("Abstract.") + 1, truth.index("1")
    entry = {"id": "bare", "file": str(pdf), "language": "en", "title": "Ligatures",
             "abstracts": {"en": " ".join(truth[start:end])}, "publication_date": "2020"}
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps(entry) + "\n")
    out = tmp_path / "ds"
    build("local", out, manifest=str(manifest))
    _, row = find_row(out, "bare")
    cand = sample_free_candidate(manifest)
    cuts = recut(pdf, cand, run_settings(out, "local"), row["article_words"])
    assert cuts.differs == 0
    # the abstract's words and its heading ("Abstract." run in), nothing else
    assert len(cuts.words) == end - start + 1
    assert {lang for _, _, lang in cuts.words} == {"en"}
    assert sum("\ufffd" in w for w in row["article_words"]) < 10


def sample_free_candidate(manifest: Path) -> Candidate:
    return next(line.item for line in read_manifest(manifest) if isinstance(line.item, Candidate))


# --- the body checks the source's main language (issue 41 item 4) --------------------------
def stated_english(languages: tuple[str, ...] | None) -> Candidate:
    """The sample's Spanish paper (Spanish body, es and en abstracts) as a record stating
    English would give it: English first and main."""
    c = sample_candidate("es_scielo_suelos")
    c = replace(c, language="en", abstracts={"en": c.abstracts["en"], "es": c.abstracts["es"]})
    return c if languages is None else replace(c, languages=languages)


@pytest.mark.parametrize("languages", [None, ("es", "en"), ("en", "es")])
def test_a_body_sure_of_its_language_makes_that_abstract_the_summary(languages):
    c = stated_english(languages)
    work, results = run_document_steps(c, job())
    assert all(fail is None for _, fail, _ in results.stages)
    done = work.processed()
    assert done.candidate.language == "es" and done.summary == c.abstracts["es"]
    assert next(iter(done.candidate.abstracts)) == "es"
    assert done.candidate.extra["stated_language"] == "en"
    assert done.detected_language == "es" and (done.language_share or 0) > 0.5


def test_a_body_in_a_language_the_run_does_not_keep_drops_the_paper():
    out = process_candidate(stated_english(("en",)), job())
    assert out.failure is not None and out.stored is None
    stage, fail = out.failure
    assert (stage, fail.cls) == ("language", FailureClass.WRONG_LANGUAGE)
    assert fail.message == ("the paper is in es (its body reads as es, one of its abstracts' "
                            "languages), not in languages: en")


def test_a_paper_whose_body_confirms_a_language_not_kept_is_dropped():
    """An English record fetched by a run keeping Spanish (oai: a label can be wrong, so it
    is fetched): the body says English too."""
    c = replace(sample_candidate("en_twocol_graphs"), languages=("es",))
    out = process_candidate(c, job())
    assert out.failure is not None and out.failure[0] == "language"
    assert out.failure[1].message == ("the paper is in en (as its record says; the body does "
                                      "not say otherwise), not in languages: es")


def test_a_body_in_a_language_without_an_abstract_keeps_the_sources_pick():
    c = sample_candidate("es_scielo_suelos")
    c = replace(c, language="en", abstracts={"en": c.abstracts["en"]}, languages=("en",))
    work, results = run_document_steps(c, job())
    assert all(fail is None for _, fail, _ in results.stages)
    assert work.processed().candidate.language == "en"


def test_main_language_the_one_rule():
    from loralay_build.language import LanguageGuess, main_language

    sure_es = LanguageGuess("es", {"es": 0.9, "en": 0.1}, True)
    unsure_es = LanguageGuess("es", {"es": 0.6}, False)
    both = {"pt": "resumo", "en": "abstract", "es": "resumen"}
    assert main_language(both, ["en"]) == "en"  # the stated language, whatever the order
    assert main_language(both, ["de", "es"]) == "es"  # the first stated with an abstract
    assert main_language(both, ["en"], sure_es) == "es"  # the body outweighs the record
    assert main_language(both, ["en"], unsure_es) == "en"  # unless cld2 is unsure
    assert main_language(both, [], None, kept=["es", "en"]) == "en"  # record order, kept
    assert main_language(both, [], None, kept=["de"]) == "pt"  # none kept: the first
    assert main_language({}, ["en"], sure_es) is None

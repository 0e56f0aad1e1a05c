"""The one ordered list of per-document steps (pdf/steps.py): the workers and `loralay show`
run the same steps, and a failure is recorded under the step that raised it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loralay_build.corpus.prints import DocPrint, doc_print
from loralay_build.failures import FailureClass
from loralay_build.pdf import steps
from loralay_build.pdf.steps import STEP_NAMES, DocumentJob, process_candidate, run_steps
from loralay_build.records import Candidate
from loralay_build.settings import DocumentSettings, LimitSettings
from loralay_build.sources.manifest import read_manifest

from .conftest import SAMPLE
from .test_glyphs import FIXTURES, _truth

DOC = "fr_hal_cover_glaciers"


def sample_candidate(doc_id: str = DOC) -> Candidate:
    return next(line.item for line in read_manifest(SAMPLE)
                if isinstance(line.item, Candidate) and line.item.id == doc_id)


def job(**settings: object) -> DocumentJob:
    return DocumentJob(DocumentSettings(**settings), LimitSettings())


def test_the_steps_in_order_and_render_only_with_images():
    assert STEP_NAMES == ("extract", "group", "strip", "language", "render", "leakage",
                          "print")
    _, plain = run_steps(sample_candidate(), job())
    assert [s for s, _, _ in plain.stages] == ["extract", "group", "strip", "language",
                                              "leakage", "print"]
    assert all(fail is None and seconds >= 0 for _, fail, seconds in plain.stages)


def test_the_print_is_made_from_the_bodys_keys_as_from_its_words():
    """The print step reuses the strip step's word keys (half the print's cost); they
    must be the keys of the body as written, in its order (the words are regrouped). The
    abstract printed with it is the summary, the main language's abstract."""
    c = sample_candidate()
    work, _ = run_steps(c, job())
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
    assert stored is not None and DocPrint.from_str(stored[0]["print"]) == work.text_print


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
    from loralay_build.show import recut, run_settings

    pdf = FIXTURES / "ligatures-t1-bare.pdf"
    truth = _truth()[:_truth().index("Keywords:")]
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

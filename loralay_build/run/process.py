"""The per-document stages, as plain functions that know nothing of executors or state.

extract -> strip abstracts -> language (-> render, with `images: true`). Each stage
either passes a record on or returns a Failure; the first failure ends the document.
Exceptions are bugs: they are caught at this edge and classed `internal_error` with their
last line, so one bad document never takes a run down.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from ..extract import ExtractLimits, extract_document
from ..extract.glyphs import repair_glyphs
from ..failures import Failure, FailureClass
from ..images.render import RenderedPages
from ..language import detect
from ..records import Candidate, Document, ProcessedDoc
from ..settings import DocumentSettings
from .codec import summarize
from .columns_payload import encode  # word columns as Arrow: the finish reads no objects


@dataclass
class StageResults:
    """Each stage's failure (or None) and duration for one document, and the processed
    document when every stage passed (a document's final fate is `write.Outcome`)."""

    doc_id: str
    stages: list[tuple[str, Failure | None, float]] = field(default_factory=list)
    processed: ProcessedDoc | None = None
    rendered: RenderedPages | None = None  # staged page images, with `images: true`
    # (summary, payload): `processed` as the run state stores it, made in the worker
    # (`seal`), so what crosses the pipe is ~2 MB of bytes, not a pickled Document
    stored: tuple[dict[str, Any], bytes] | None = None

    @property
    def passed(self) -> bool:
        return self.processed is not None or self.stored is not None

    def stored_form(self) -> tuple[dict[str, Any], bytes] | None:
        """The summary and payload to store, sealed already or made now."""
        if self.stored is None and self.processed is not None:
            return summarize(self.processed), encode(self.processed)
        return self.stored

    @property
    def failure(self) -> tuple[str, Failure] | None:
        for stage, fail, _ in self.stages:
            if fail is not None:
                return stage, fail
        return None


def extract_limits(s: DocumentSettings) -> ExtractLimits:
    return ExtractLimits(timeout_s=s.extract_timeout_s, memory_mb=s.extract_memory_mb,
                         max_pages=s.max_pages_hard,
                         scanned_min_words_per_page=s.scanned_min_words_per_page,
                         max_words=s.max_words_per_document)


STAGES = ("extract", "strip", "language", "render")


def process_candidate(c: Candidate, settings: DocumentSettings,
                      staging: str | None = None, seal: bool = False) -> StageResults:
    """`staging`: the folder the render stage leaves page files in (`images: true`).
    `seal`: hand back the processed document encoded for the run state (`stored`) instead
    of as records: a worker then pays the encoding, and the parent neither unpickles a
    Document (~10 ms a paper, measured) nor encodes it."""
    out = StageResults(c.id)
    try:
        _run_stages(c, settings, out, staging)
        if seal and out.processed is not None:
            out.stored, out.processed = out.stored_form(), None
    except Exception as e:  # noqa: BLE001 - the edge where bugs become a class
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        stage = STAGES[min(len(out.stages), len(STAGES) - 1)]
        out.stages.append((stage, Failure(FailureClass.INTERNAL_ERROR, last[:300]), 0.0))
        out.processed = out.rendered = out.stored = None
    return out


def _timed(out: StageResults, stage: str, fn: Any, *args: Any) -> Any:
    t = time.perf_counter()
    result = fn(*args)
    fail = result if isinstance(result, Failure) else None
    out.stages.append((stage, fail, time.perf_counter() - t))
    return result


def _run_stages(c: Candidate, s: DocumentSettings, out: StageResults,
                staging: str | None) -> None:
    from ..strip import leakage, strip_document

    if not c.pdf_path:
        out.stages.append(("extract", Failure(FailureClass.UNAVAILABLE, "no PDF"), 0.0))
        return
    doc = _timed(out, "extract", extract_document, c.pdf_path, c.id, extract_limits(s))
    if isinstance(doc, Failure):
        return
    if doc.raw_broken:  # the document alone was no evidence for its ligature codes
        repair_glyphs(doc, c.abstracts.values())
    stripped = _timed(out, "strip", strip_document, doc, c, s)
    if isinstance(stripped, Failure):
        return
    body, matches = stripped.body, stripped.matches
    lang = _timed(out, "language", check_language, body, c, s)
    if isinstance(lang, Failure):
        return
    share, top = lang
    if s.images:
        rendered = _timed(out, "render", render_document, c.pdf_path, doc, body, s, staging)
        if isinstance(rendered, Failure):
            return
        out.rendered = rendered
    leaks = leakage(body, c.abstracts, s.leak_ngram, stripped.body_keys)
    out.processed = ProcessedDoc(c, body, matches, share, top, leaks)


def render_document(pdf_path: str, doc: Document, body: Document, s: DocumentSettings,
                    staging: str | None) -> RenderedPages | Failure:
    """Every kept page at `image_dpi`, each word the body lost painted white."""
    from ..images.redact import plan_redaction
    from ..images.render import render_pages

    if staging is None:
        raise ValueError("images: true needs a staging folder for the rendered pages")
    plan = plan_redaction(doc, body, s.drop_cover_page)
    return render_pages(pdf_path, doc.id, plan.pages, plan.boxes, s.image_dpi,
                        s.image_quality, staging)


def check_language(body: Document, c: Candidate, s: DocumentSettings
                   ) -> tuple[float | None, str | None] | Failure:
    """The body's share of the main language; optional floor; optional summary check."""
    guess = detect(" ".join(body.words))
    share = guess.share(c.language) if guess.top else None
    floor = s.min_language_share
    if floor is not None and (share or 0.0) < floor:
        return Failure(FailureClass.WRONG_LANGUAGE,
                       f"body is {100 * (share or 0):.0f}% {c.language} (< {100 * floor:.0f}%); "
                       f"mostly {guess.top or 'unknown'}")
    if s.check_summary_language:
        summary = detect(c.abstracts.get(c.language, ""))
        if summary.reliable and summary.top and summary.top != c.language:
            return Failure(FailureClass.WRONG_LANGUAGE,
                           f"the {c.language} abstract reads as {summary.top}")
    return share, guess.top

"""The per-document steps, as one ordered list: what a worker runs for each document and
what `loralay show` re-runs to picture one.

extract (with glyph repair) -> group (lines and blocks) -> strip abstracts -> language ->
render (`images: true`) -> leakage -> print (for finding duplicates). Each step reads the
`DocWork` the steps before it filled and adds its part, or returns a `Failure`; the first
failure ends the document. An exception is a bug: it is caught here and classed
`internal_error` under the name of the step that raised it, so one bad document never
takes a run down and the report points at the right step.
Steps know nothing of executors or state (`driver.py` records what they return).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import compress

import numpy as np

from ..conf import DocumentSettings, LimitSettings
from ..corpus.prints import DocPrint, doc_print, prepare_prints
from ..failures import Failure, FailureClass, internal_error
from ..group.labels import group_and_label, known_abstract
from ..group.sections import outline_of
from ..images.detector import detect_labels
from ..images.render import RenderedPages
from ..labels import CODE
from ..language import detect, main_language
from ..pdftext import ExtractLimits, extract_document
from ..pdftext.glyphs import repair_glyphs
from ..records import Candidate, DocSummary, Document, OutlineEntry, ProcessedDoc
from ..strip import Stripped, leakage, strip_document
from .payload import encode, summarize


@dataclass(frozen=True, slots=True)
class DocumentJob:
    """What every document of a run is processed with (sent once to each worker)."""

    settings: DocumentSettings
    limits: LimitSettings
    staging: str | None = None  # where the render step leaves page files (`images: true`)


@dataclass
class DocWork:
    """One document on its way through the steps; each step fills its field."""

    candidate: Candidate
    job: DocumentJob
    doc: Document | None = None  # the extraction, ligature codes repaired
    stripped: Stripped | None = None  # the body without its abstracts, and where they were
    language: tuple[float | None, str | None] | None = None  # main-language share, top
    rendered: RenderedPages | None = None
    leaks: dict[str, float] | None = None
    text_print: DocPrint | None = None  # the body's print, for finding duplicates
    ocr_pages: list[int] = field(default_factory=list)  # 1-based pages Tesseract read
    outline: tuple[OutlineEntry, ...] = ()  # the PDF's bookmarks (group/sections.py)

    def processed(self) -> ProcessedDoc:
        assert self.stripped is not None and self.language is not None
        assert self.leaks is not None
        share, top = self.language
        return ProcessedDoc(self.candidate, self.stripped.body, self.stripped.matches, share,
                            top, self.leaks, outline=self.outline)


StepFn = Callable[[DocWork], Failure | None]


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    run: StepFn
    applies: Callable[[DocumentSettings], bool] = lambda s: True


@dataclass
class StepResults:
    """Each step's failure (or None) and duration for one document; what a passed
    document is stored as (made in the worker, so what crosses the pipe is bytes)."""

    doc_id: str
    stages: list[tuple[str, Failure | None, float]] = field(default_factory=list)
    rendered: RenderedPages | None = None  # staged page images, with `images: true`
    stored: tuple[DocSummary, bytes] | None = None  # (summary, payload)
    # a step ran out of memory: the worker's heap is suspect, the pool starts a new one
    worker_spent: bool = False

    @property
    def passed(self) -> bool:
        return self.stored is not None

    @property
    def failure(self) -> tuple[str, Failure] | None:
        for stage, fail, _ in self.stages:
            if fail is not None:
                return stage, fail
        return None


def extract_limits(s: DocumentSettings, limits: LimitSettings) -> ExtractLimits:
    return ExtractLimits(timeout_s=limits.extract_timeout_s, memory_mb=limits.extract_memory_mb,
                         max_pages=s.max_pages_hard,
                         scanned_min_words_per_page=s.scanned_min_words_per_page,
                         max_words=s.max_words_per_document)


def extract(w: DocWork) -> Failure | None:
    """Poppler's words; ligature codes the document alone could not decode are decoded
    with the source's abstracts as evidence (`pdftext/glyphs.py`)."""
    c = w.candidate
    if not c.pdf_path:
        return Failure(FailureClass.UNAVAILABLE, "no PDF")
    doc = extract_document(c.pdf_path, c.id, extract_limits(w.job.settings, w.job.limits))
    mode = w.job.settings.ocr
    if isinstance(doc, Failure):
        if mode == "off" or doc.cls != FailureClass.SCANNED:
            if doc.cls == FailureClass.SCANNED:
                return Failure(doc.cls, f"{doc.message}; --ocr auto would read it")
            return doc
        _read_outline(w)
        return _ocr(w, None, mode)
    _read_outline(w)
    if doc.raw_broken:
        repair_glyphs(doc, c.abstracts.values())
    if mode != "off":
        return _ocr(w, doc, mode)
    w.doc = doc
    return None


def _read_outline(w: DocWork) -> None:
    """The bookmarks, read while the PDF is at hand (the row's `sections` use them), of a
    PDF the extraction could read: a missing or broken file fails as extraction says."""
    assert w.candidate.pdf_path is not None
    w.outline = tuple(OutlineEntry(t, lv) for t, lv in outline_of(w.candidate.pdf_path))


def _ocr(w: DocWork, doc: Document | None, mode: str) -> Failure | None:
    """The pages routed to Tesseract read by it (`extract/ocr.py`); a scanned document
    none of whose pages can be read stays `scanned`."""
    from ..pdftext import ocr

    c = w.candidate
    assert c.pdf_path
    n_pages = len(doc.pages) if doc is not None else len(ocr.page_boxes(c.pdf_path))
    pages = ocr.pages_to_ocr(mode, c.pdf_path, doc, n_pages)
    if not pages:
        if doc is None:
            return Failure(FailureClass.SCANNED, "no text layer and no page an image covers")
        w.doc = doc
        return None
    started = time.perf_counter()
    read = ocr.apply_ocr(c.pdf_path, c.id, doc, pages, c.language)
    if not read.words:
        return Failure(FailureClass.SCANNED, f"OCR read no words on pages {pages}")
    read.ocr_pages = list(pages)
    read.ocr_seconds = round(time.perf_counter() - started, 3)
    w.doc = read
    w.ocr_pages = pages
    return None


def group(w: DocWork) -> Failure | None:
    """Each word's visual line and block, words ordered block by block (`group/`), or
    Poppler's own groups (`groups: poppler`); then each block's label (`group/labels.py`)."""
    assert w.doc is not None
    pdf = w.candidate.pdf_path
    detect = None
    if w.job.settings.labels == "rules+detector" and pdf:
        def detect(d: Document, codes: np.ndarray) -> np.ndarray:
            return detect_labels(d, codes, pdf)
    w.doc = group_and_label(w.doc, w.job.settings.groups, detect)
    return None


def strip(w: DocWork) -> Failure | None:
    assert w.doc is not None
    stripped = strip_document(w.doc, w.candidate, w.job.settings)
    if isinstance(stripped, Failure):
        return stripped
    stripped = replace(stripped, body=known_abstract(w.doc, stripped.body))
    if w.job.settings.drop_labels:
        stripped = drop_labelled(stripped, w.job.settings.drop_labels)
    w.stripped = stripped
    return None


def drop_labelled(stripped: Stripped, names: list[str]) -> Stripped:
    """The body without the words whose label is one of `names` (the `drop_labels`
    setting), counted in the body's `dropped_by_label`."""
    body = stripped.body
    labels = np.asarray(body.labels, dtype=np.int64)
    keep = ~np.isin(labels, [CODE[n] for n in names])
    if keep.all():
        return stripped
    mask = keep.tolist()
    kept = body.keep(mask)
    kept.dropped_by_label = body.dropped_by_label + int((~keep).sum())
    return replace(stripped, body=kept, body_keys=list(compress(stripped.body_keys, mask)))


def check_language(w: DocWork) -> Failure | None:
    """The source's main language checked against the body (`main_language`: a body cld2
    is sure of, with an abstract in its language, is the paper's language, and that
    abstract the summary; a language the run does not keep drops the paper); then the
    body's share of it, an optional floor, an optional check that the summary reads as it."""
    assert w.stripped is not None
    c, s = w.candidate, w.job.settings
    guess = detect(" ".join(w.stripped.body.words))
    main = main_language(c.abstracts, (c.language,), guess, c.languages) or c.language
    if c.languages is not None and main not in c.languages:
        why = (f"its body reads as {main}, one of its abstracts' languages"
               if main != c.language else "as its record says; the body does not say otherwise")
        return Failure(FailureClass.WRONG_LANGUAGE, f"the paper is in {main} ({why}), not in "
                       f"languages: {', '.join(c.languages)}")
    if main != c.language:
        c = w.candidate = replace(c, language=main,
                                  abstracts={main: c.abstracts[main], **c.abstracts},
                                  extra={**c.extra, "stated_language": c.language})
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
    w.language = (share, guess.top)
    return None


def render(w: DocWork) -> Failure | None:
    """Every kept page at `image_dpi`, each word the body lost painted white."""
    from ..images.redact import plan_redaction
    from ..images.render import render_pages

    assert w.doc is not None and w.stripped is not None and w.candidate.pdf_path
    s = w.job.settings
    if w.job.staging is None:
        raise ValueError("images: true needs a staging folder for the rendered pages")
    plan = plan_redaction(w.doc, w.stripped.body, s.drop_cover_page)
    rendered = render_pages(w.candidate.pdf_path, w.doc.id, plan.pages, plan.boxes,
                            s.image_dpi, s.image_quality, w.job.staging)
    if isinstance(rendered, Failure):
        return rendered
    w.rendered = rendered
    return None


def audit_leakage(w: DocWork) -> Failure | None:
    """The share of each abstract's n-grams still in the body (the report's audit)."""
    assert w.stripped is not None
    w.leaks = leakage(w.stripped.body, w.candidate.abstracts, w.job.settings.leak_ngram,
                      w.stripped.body_keys)
    return None


def print_text(w: DocWork) -> Failure | None:
    """The print of the body and of the summary (an exact key and a MinHash signature of
    the word shingles of each), which the finish compares across the run to find the same
    paper under two ids."""
    assert w.stripped is not None  # its body's word keys are the print's words
    summary = w.candidate.abstracts.get(w.candidate.language, "")  # ProcessedDoc.summary
    w.text_print = doc_print(w.stripped.body.words, w.stripped.body_keys, summary.split())
    return None


STEPS: tuple[Step, ...] = (
    Step("extract", extract),
    Step("group", group),
    Step("strip", strip),
    Step("language", check_language),
    Step("render", render, applies=lambda s: s.images),
    Step("leakage", audit_leakage),
    Step("print", print_text),
)
STEP_NAMES = tuple(s.name for s in STEPS)


def run_document_steps(c: Candidate, job: DocumentJob, until: str | None = None,
              skip: frozenset[str] = frozenset(),
              observe: Callable[[str, DocWork], None] | None = None
              ) -> tuple[DocWork, StepResults]:
    """The steps that apply, in order, up to and including `until`, but those in `skip`
    (`show` pictures a document without rendering its images); an exception in a step is
    that step's `internal_error`, running out of memory that step's `memory`. `observe`
    sees the work after each step that passed (the golden digests of each step's output,
    scripts/golden.py), so nothing but this loop runs the steps."""
    work, out = DocWork(c, job), StepResults(c.id)
    for step in STEPS:
        if not step.applies(job.settings) or step.name in skip:
            continue
        t = time.perf_counter()
        try:
            fail = step.run(work)
        except MemoryError:  # the worker's memory cap (worker_memory_mb): a limit, not a bug
            fail = Failure(FailureClass.MEMORY, f"ran out of memory (worker_memory_mb "
                           f"{job.limits.worker_memory_mb} MB)")
            out.worker_spent = True
        except Exception as e:  # noqa: BLE001 - the edge where bugs become a class
            fail = internal_error(e)
        out.stages.append((step.name, fail, time.perf_counter() - t))
        if fail is None and observe is not None:
            observe(step.name, work)
        if fail is not None or step.name == until:
            break
    return work, out


def prepare_worker(job: DocumentJob) -> None:
    """What a worker loads once for every document, before the pool caps its memory."""
    prepare_prints()


def process_candidate(c: Candidate, job: DocumentJob) -> StepResults:
    """Every step; a passed document comes back encoded for the run state (`stored`):
    the worker pays the encoding, and the parent neither unpickles a Document (~10 ms a
    paper, measured) nor encodes it."""
    work, out = run_document_steps(c, job)
    if out.failure is None:
        try:
            processed = work.processed()
            assert work.text_print is not None
            out.stored = summarize(processed, work.text_print), encode(processed)
            out.rendered = work.rendered
        except Exception as e:  # noqa: BLE001 - an encoding bug is this document's
            out.stages.append(("store", internal_error(e), 0.0))
    return out

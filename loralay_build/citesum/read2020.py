"""The 2020 S2ORC release: `pdf_parses` (citing papers) and `metadata` (cited papers).

A `pdf_parses` record: `paper_id`, `body_text` paragraphs {`section`, `text`, `cite_spans`
[{`start`, `end`, `text`, `ref_id`}]}, `bib_entries` {`BIBREFn`: {..., `link`}} where `link` is
the cited `paper_id` or null. The release's example file nests the same under `grobid_parse`
(and doc2json output under `pdf_parse`), so those are read too.
"""

from __future__ import annotations

from typing import Any

from .records import CitedPaper, CitingPaper, Paragraph, Span, text_or_none


class NotARecord(ValueError):
    """A JSON object that is not a record of the expected kind."""


def _parse(record: dict[str, Any]) -> dict[str, Any]:
    for nested in ("grobid_parse", "pdf_parse"):
        if isinstance(record.get(nested), dict):
            return record[nested]
    return record


def _link(bib: dict[str, Any], ref: str | None) -> str | None:
    entry = bib.get(ref) if ref else None
    if not isinstance(entry, dict):
        return None
    link = entry.get("link") or entry.get("links")  # `links`: the release's example file
    return str(link) if link not in (None, "") else None


def _spans(raw: Any, text: str, bib: dict[str, Any]) -> tuple[Span, ...]:
    spans = []
    for s in raw or ():
        start, end = s.get("start"), s.get("end")
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
            continue  # an offset outside the paragraph cannot be placed in a sentence
        ref = s.get("ref_id") or None
        spans.append(Span(start, end, ref, _link(bib, ref)))
    return tuple(sorted(spans, key=lambda sp: (sp.start, sp.end)))


def citing_paper(record: dict[str, Any]) -> CitingPaper:
    """Body paragraphs with their section (the innermost header, the only one given)."""
    paper_id = record.get("paper_id")
    if paper_id in (None, ""):
        raise NotARecord("no paper_id")
    parse = _parse(record)
    body = parse.get("body_text")
    if not isinstance(body, list):
        raise NotARecord("no body_text list")
    bib = parse.get("bib_entries") or {}
    paragraphs = []
    for p in body:
        text = p.get("text") if isinstance(p, dict) else None
        if not isinstance(text, str):
            continue
        section = (p.get("section") or "").strip()
        paragraphs.append(Paragraph((section,) if section else (), text,
                                    _spans(p.get("cite_spans"), text, bib)))
    return CitingPaper(str(paper_id), tuple(paragraphs))


def cited_paper(record: dict[str, Any]) -> CitedPaper:
    """A `metadata` record: abstract, title and the released `discipline` fields."""
    paper_id = record.get("paper_id")
    if paper_id in (None, ""):
        raise NotARecord("no paper_id")
    fields = record.get("mag_field_of_study") or []
    return CitedPaper(str(paper_id), text_or_none(record.get("abstract")),
                      text_or_none(record.get("title")), text_or_none(record.get("venue")),
                      text_or_none(record.get("journal")),
                      [f for f in fields if isinstance(f, str)])


def record_id(record: dict[str, Any]) -> str | None:
    value = record.get("paper_id")
    return None if value in (None, "") else str(value)

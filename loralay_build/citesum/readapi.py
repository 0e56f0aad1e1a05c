"""The Semantic Scholar Datasets API: `s2orc` (citing papers), `abstracts`, `papers`.

An `s2orc` record holds `corpusid` and `content.text` with `content.annotations`, whose values
are JSON-encoded span lists over the text. Paragraphs carry no section: a paragraph belongs to
the nearest preceding `sectionheader`, and its `attributes.n` ("2", "2.1") says which headers
enclose it. A `bibref`'s `attributes.ref_id` names a `bibentry`'s `attributes.id`, whose
`matched_paper_id` is the cited `corpusid` (or absent).
"""

from __future__ import annotations

import bisect
import json
from typing import Any

from .read2020 import NotARecord
from .records import CitedPaper, CitingPaper, Paragraph, Span, text_or_none


def _spans_of(annotations: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """One annotation kind decoded; a missing, null or broken value is no span."""
    raw = annotations.get(kind)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as e:
            raise NotARecord(f"annotations.{kind} is not JSON ({e.msg})") from None
    if not isinstance(raw, list):
        return []
    good = [s for s in raw if isinstance(s, dict) and isinstance(s.get("start"), int)
            and isinstance(s.get("end"), int) and s["start"] < s["end"]]
    return sorted(good, key=lambda s: (s["start"], s["end"]))


def _attr(span: dict[str, Any], name: str) -> Any:
    attrs = span.get("attributes")
    return attrs.get(name) if isinstance(attrs, dict) else None


def _level(n: Any) -> int | None:
    """Depth of a numbered header ("2" -> 1, "2.1" -> 2); None when it has no number."""
    if not isinstance(n, str) or not n.strip(" ."):
        return None
    return len([part for part in n.strip(" .").split(".") if part])


def _header_paths(headers: list[dict[str, Any]], text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(start, enclosing titles) per header: a numbered one sits under shallower numbered
    ones before it; an unnumbered one starts afresh (Appendix, Acknowledgments)."""
    stack: list[tuple[int, str]] = []
    out = []
    for h in headers:
        title = text[h["start"]:h["end"]].strip()
        level = _level(_attr(h, "n"))
        if level is None:
            stack = [(0, title)]
        else:
            stack = [(lv, t) for lv, t in stack if 0 < lv < level] + [(level, title)]
        out.append((h["start"], tuple(t for _, t in stack)))
    return out


def _citations(annotations: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    links = {}
    for entry in _spans_of(annotations, "bibentry"):
        bid, matched = _attr(entry, "id"), _attr(entry, "matched_paper_id")
        if bid is not None and matched not in (None, ""):
            links[str(bid)] = str(matched)
    return _spans_of(annotations, "bibref"), links


def citing_paper(record: dict[str, Any]) -> CitingPaper:
    corpusid = record.get("corpusid")
    content = record.get("content")
    if corpusid in (None, "") or not isinstance(content, dict):
        raise NotARecord("no corpusid or content")
    text, ann = content.get("text") or "", content.get("annotations") or {}
    if not isinstance(text, str) or not isinstance(ann, dict):
        raise NotARecord("content.text or content.annotations has the wrong type")
    paths = _header_paths(_spans_of(ann, "sectionheader"), text)
    starts = [s for s, _ in paths]
    refs, links = _citations(ann)
    ref_starts = [r["start"] for r in refs]
    paragraphs = []
    for p in _spans_of(ann, "paragraph"):
        i = bisect.bisect_right(starts, p["start"]) - 1
        sections = paths[i][1] if i >= 0 else ()
        lo = bisect.bisect_left(ref_starts, p["start"])
        spans = []
        for r in refs[lo:]:
            if r["start"] >= p["end"]:
                break
            if r["end"] <= p["end"]:
                ref = _attr(r, "ref_id")
                ref = str(ref) if ref not in (None, "") else None
                spans.append(Span(r["start"] - p["start"], r["end"] - p["start"], ref,
                                  links.get(ref) if ref else None))
        paragraphs.append(Paragraph(sections, text[p["start"]:p["end"]], tuple(spans)))
    return CitingPaper(str(corpusid), tuple(paragraphs))


def _journal(value: Any) -> str | None:
    return text_or_none(value.get("name") if isinstance(value, dict) else value)


def _fields(record: dict[str, Any]) -> list[str]:
    """`s2fieldsofstudy` [{category, source}] (or a plain `fieldsofstudy` list), deduplicated
    in order: the Datasets API's counterpart of the 2020 `mag_field_of_study`."""
    out: list[str] = []
    for f in record.get("s2fieldsofstudy") or record.get("fieldsofstudy") or []:
        name = f.get("category") if isinstance(f, dict) else f
        if isinstance(name, str) and name not in out:
            out.append(name)
    return out


def cited_abstract(record: dict[str, Any]) -> CitedPaper:
    """An `abstracts` record."""
    corpusid = record.get("corpusid")
    if corpusid in (None, ""):
        raise NotARecord("no corpusid")
    return CitedPaper(str(corpusid), abstract=text_or_none(record.get("abstract")))


def cited_metadata(record: dict[str, Any]) -> CitedPaper:
    """A `papers` record: title, venue, journal name, fields of study."""
    corpusid = record.get("corpusid")
    if corpusid in (None, ""):
        raise NotARecord("no corpusid")
    return CitedPaper(str(corpusid), title=text_or_none(record.get("title")),
                      venue=text_or_none(record.get("venue")),
                      journal=_journal(record.get("journal")), fields=_fields(record))


def record_id(record: dict[str, Any]) -> str | None:
    value = record.get("corpusid")
    return None if value in (None, "") else str(value)

"""HAL search records → `Candidate`s (no I/O here, so every rule is testable on plain dicts).

HAL's Solr returns multi-valued fields as lists and single-valued ones as strings, and
the same field can be either across records and years, so every read goes through
`as_list` / `first_text`. Abstracts are keyed by the language prefix of their field
(`fr_abstract_s` → `fr`); `abstract_s` (all abstracts, untagged) only fills gaps.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from dateutil import parser as dateparser

from ..failures import FailureClass
from ..records import Candidate, Rejection

SOURCE = "hal"
MAIN_LANGUAGE = "fr"
UNKNOWN_LANGUAGE = "und"  # BCP 47 "undetermined": an abstract_s entry with no tagged twin
_ABSTRACT_FIELD = re.compile(r"^([a-z]{2})_abstract_s$")
_ISO_DATE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?\s*$")
# order of trust: the free strings keep the precision HAL was given ("2014" stays a year),
# the *_tdate twins always look like full timestamps
DATE_FIELDS = ("producedDate_s", "producedDate_tdate", "publicationDate_s",
               "publicationDate_tdate")
MIN_YEAR = 1600
_LONE_YEAR = re.compile(r"(?<!\d)(1[6-9]\d\d|2\d\d\d)(?!\d)")


class _FrenchEnglishMonths(dateparser.parserinfo):
    """HAL's free date strings are often French ("mars 2014")."""

    MONTHS = [  # noqa: RUF012 (dateutil reads this class attribute)
        ("Jan", "January", "janvier", "janv"), ("Feb", "February", "février", "fevrier",
                                               "févr", "fevr"),
        ("Mar", "March", "mars"), ("Apr", "April", "avril", "avr"), ("May", "mai"),
        ("Jun", "June", "juin"), ("Jul", "July", "juillet", "juil"),
        ("Aug", "August", "août", "aout"), ("Sep", "Sept", "September", "septembre"),
        ("Oct", "October", "octobre"), ("Nov", "November", "novembre"),
        ("Dec", "December", "décembre", "decembre", "déc"),
    ]


_MONTHS = _FrenchEnglishMonths(dayfirst=True)


def as_list(value: Any) -> list[str]:
    """A field as a list of non-empty stripped strings, whatever shape it came in."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [str(v).strip() for v in items if v is not None and str(v).strip()]


def first_text(value: Any) -> str | None:
    items = as_list(value)
    return items[0] if items else None


# --- dates ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ParsedDate:
    iso: str | None  # YYYY-MM-DD, YYYY-MM or YYYY
    note: str | None  # why a value was not kept


def _iso(year: int, month: int | None, day: int | None) -> str:
    dt.date(year, month or 1, day or 1)  # raises ValueError on 2021-02-30 and the like
    if month is None:
        return f"{year:04d}"
    return f"{year:04d}-{month:02d}" if day is None else f"{year:04d}-{month:02d}-{day:02d}"


def _parse_free(text: str) -> tuple[int, int | None, int | None]:
    """Year, month, day of a free date; a part missing from the text stays None.

    dateutil fills gaps from a default date, so parsing with two different defaults
    shows which parts came from the text."""
    m = _ISO_DATE.match(text)
    if m:
        y, mo, d = m.groups()
        return int(y), int(mo) if mo else None, int(d) if d else None
    try:
        a = dateparser.parse(text, _MONTHS, default=dt.datetime(2000, 1, 1))
        b = dateparser.parse(text, _MONTHS, default=dt.datetime(2004, 2, 2))
    except (dateparser.ParserError, OverflowError):
        years = _LONE_YEAR.findall(text)  # "printemps 2012": the year is still worth having
        if len(years) == 1:
            return int(years[0]), None, None
        raise
    if a.year != b.year:
        raise ValueError("no year")
    month = a.month if a.month == b.month else None
    day = a.day if a.day == b.day and month is not None else None
    return a.year, month, day


def parse_hal_date(text: str | None, today: dt.date, max_future_years: int = 1) -> ParsedDate:
    """ISO date of a HAL date string, or None with the reason (unparseable, implausible year)."""
    if not text or not text.strip():
        return ParsedDate(None, None)
    try:
        year, month, day = _parse_free(text.strip())
        if month == 0:  # "2014-00-00" means "some time in 2014"
            month, day = None, None
        if day == 0:
            day = None
        iso = _iso(year, month, day)
    except (ValueError, OverflowError, dateparser.ParserError):
        return ParsedDate(None, f"unparseable date {text!r}")
    if year > today.year + max_future_years:
        return ParsedDate(None, f"date {text!r} is too far in the future")
    if year < MIN_YEAR:
        return ParsedDate(None, f"implausible year in {text!r}")
    return ParsedDate(iso, None)


def pick_date(doc: dict[str, Any], today: dt.date,
              max_future_years: int) -> tuple[str | None, dict[str, Any]]:
    """The first date field that parses; what was refused goes to `extra`."""
    notes: list[str] = []
    for name in DATE_FIELDS:
        parsed = parse_hal_date(first_text(doc.get(name)), today, max_future_years)
        if parsed.iso:
            return parsed.iso, {"date_field": name, "date_raw": first_text(doc.get(name)),
                                **({"date_notes": notes} if notes else {})}
        if parsed.note:
            notes.append(f"{name}: {parsed.note}")
    return None, ({"date_notes": notes} if notes else {})


# --- abstracts --------------------------------------------------------------------
def _tagged_abstracts(doc: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in doc.items():
        m = _ABSTRACT_FIELD.match(key)
        if m and as_list(value):
            out[m.group(1)] = as_list(value)
    return out


def collect_abstracts(doc: dict[str, Any], language: str = MAIN_LANGUAGE
                      ) -> tuple[dict[str, str], dict[str, Any]]:
    """Every abstract of a record keyed by language, the main one first, plus notes for `extra`.

    An `abstract_s` entry that no `<lang>_abstract_s` field holds is still an abstract
    printed in the paper: it becomes the main one when the record is in the main language
    and lacks `<main>_abstract_s` (the language stage checks it with a detector), else it
    is kept as `und` so the removal stage cuts it as well."""
    tagged = _tagged_abstracts(doc)
    known = {text for texts in tagged.values() for text in texts}
    untagged = [a for a in as_list(doc.get("abstract_s")) if a not in known]
    notes: dict[str, Any] = {}
    if language not in tagged and untagged and language in as_list(doc.get("language_s")):
        tagged[language] = [untagged.pop(0)]
        notes["main_abstract_from"] = "abstract_s"
    if untagged:
        tagged.setdefault(UNKNOWN_LANGUAGE, []).extend(untagged)
    extra_copies = {lang: len(texts) - 1 for lang, texts in tagged.items() if len(texts) > 1}
    if extra_copies:
        notes["abstracts_dropped"] = extra_copies  # only one abstract per language is kept
    ordered = sorted(tagged, key=lambda lang: (lang != language, lang))
    return {lang: tagged[lang][0] for lang in ordered}, notes


# --- records ----------------------------------------------------------------------
def record_id(doc: dict[str, Any]) -> str:
    """halId_s (public, stable across versions), else the docid, else a hash of the record."""
    hal_id = first_text(doc.get("halId_s"))
    if hal_id:
        return hal_id
    docid = first_text(doc.get("docid"))
    if docid:
        return f"hal-docid-{docid}"
    digest = hashlib.sha1(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()[:12]
    return f"hal-record-{digest}"


def pdf_url_of(doc: dict[str, Any]) -> str | None:
    return first_text(doc.get("fileMain_s")) or first_text(doc.get("files_s"))


def _extra(doc: dict[str, Any]) -> dict[str, Any]:
    fields = {"docid": "docid", "halId_s": "hal_id", "uri_s": "uri", "docType_s": "doc_type"}
    out: dict[str, Any] = {name: first_text(doc.get(f)) for f, name in fields.items()
                           if first_text(doc.get(f))}
    if as_list(doc.get("language_s")):
        out["languages"] = as_list(doc.get("language_s"))
    return out


def record_url_of(doc: dict[str, Any], api_url: str | None = None) -> str | None:
    """`uri_s` (the record's page, `https://hal.science/<halId>v<N>`), else the search
    API's URL of this one record (by halId_s, else docid) when the API is known."""
    uri = first_text(doc.get("uri_s"))
    if uri or not api_url:
        return uri
    hal_id, docid = first_text(doc.get("halId_s")), first_text(doc.get("docid"))
    if hal_id:
        query = f'halId_s:"{hal_id}"'
    elif docid:
        query = f"docid:{docid}"
    else:
        return None
    return f"{api_url}?{urlencode({'q': query, 'wt': 'json'}, safe=':')}"


def to_candidate(doc: dict[str, Any], today: dt.date, max_future_years: int = 1,
                 language: str = MAIN_LANGUAGE, retrieved_at: str | None = None,
                 api_url: str | None = None) -> Candidate | Rejection:
    """A candidate still to download, or the reason the record cannot be used.

    Licence: `licence_s` as HAL gives it (a licence URL, e.g.
    `http://creativecommons.org/licenses/by/`); absent in many old deposits."""
    doc_id = record_id(doc)
    abstracts, abstract_notes = collect_abstracts(doc, language)
    date, date_notes = pick_date(doc, today, max_future_years)
    licence = first_text(doc.get("licence_s"))
    candidate = Candidate(
        id=doc_id, source=SOURCE, language=language, abstracts=abstracts,
        pdf_url=pdf_url_of(doc), publication_date=date, title=first_text(doc.get("title_s")),
        extra={**_extra(doc), **abstract_notes, **date_notes,
               **({"license_field": "licence_s"} if licence else {})},
        license=licence, record_url=record_url_of(doc, api_url), retrieved_at=retrieved_at,
        languages=(language,),
    )
    if language not in abstracts:
        return Rejection(doc_id, SOURCE, FailureClass.NO_ABSTRACT.value,
                         f"record has no {language!r} abstract", candidate)
    if candidate.pdf_url is None:
        return Rejection(doc_id, SOURCE, FailureClass.UNAVAILABLE.value,
                         "record has neither fileMain_s nor files_s", candidate)
    return candidate

"""Any OAI-PMH repository: `ListRecords` in date windows, one page at a time, through the
sources' one OAI-PMH client (`kit/oaipmh.py`) and the kit's paged harvest (`kit/harvest.py`:
checkpoint, retry rule, skip-known, download).

- Windows (the kit's `OaiListing`): `from_date`..`until_date` (until: today) cut into
  `window_days`; the position is the window and the resumption token within it, saved
  once every record of a page has been recorded, so a killed harvest resumes at its page
  and no record is lost or doubled at a page boundary. Without `from_date` the whole
  repository is one window.
- An expired token (`badResumptionToken`) restarts its window (records already recorded
  are skipped), at most `MAX_RESTARTS` times in a row; `noRecordsMatch` is an empty window,
  also behind a token or HTTP 422; a record whose XML is broken is one `bad_metadata`
  record and the rest of its page goes on.
- A deleted record already recorded is withdrawn (`ctx.withdraw`: a refresh lists it as
  missing upstream and keeps its row); one never seen is skipped.
- Each record becomes a candidate through its format's parser (`oai_formats.py`): its
  abstracts by language (labelled, else detected); the summary is the abstract in the
  paper's own language (`language.main_language`: the first the record states that has an
  abstract, else its first abstract in one of `languages`; the body step checks it against
  the body and drops a paper in no language of `languages` as `wrong_language`, so a record
  with no abstract in one is not fetched; the order of `languages` never picks the
  summary); its issue date; its licence (a statement naming one first,
  else the first stated); the PDF link the format gives, else the landing page's
  `citation_pdf_url`.
- The newest datestamp seen is the kit's `HighWater` (`oai.high_water`), raised as PubMed's
  is (`ListedMark`: records come in no date order within a window, so a window's newest
  datestamp counts once the window is all recorded): `build --refresh` asks from its day
  less `refresh_overlap_days` (OAI-PMH's day granularity, which every repository accepts)
  unless `from_date` is later, never past `until_date`. The refresh's windows are cut
  from that day, so its query (fingerprint) is its own and a killed refresh resumes it; a
  plain rerun asks as configured.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode, urljoin

from ..conf import OaiSettings
from ..failures import FailureClass, StageError
from ..http import HostDown, HostForbidden, PoliteClient
from ..language import detect, main_language
from ..licenses import UNKNOWN, normalise_license
from ..records import Candidate, Rejection
from . import BadRunInput, FetchContext, HarvestStopped, forbidden
from .hal_records import parse_hal_date
from .kit.harvest import Checkpoint, HighWater, Page, PagedHarvest, fingerprint
from .kit.oaipmh import (
    BrokenRecord,
    ListedMark,
    ListPage,
    OaiClient,
    OaiListing,
    OaiRecord,
    Window,
    date_windows,
    formats_offered,
    position,
    refusal,
)
from .oai_formats import FORMATS, Fields, is_access_term, parser_for

SOURCE = "oai"
CHECKPOINT = "oai.position"
HIGH_WATER = "oai.high_water"
WINDOW_NEWEST = "oai.window_newest"  # ListedMark's: the window's newest datestamp so far
UNKNOWN_LANGUAGE = "und"
LANDING_CAP = 5 * 2**20  # bytes of a landing page read for its citation_pdf_url
_META_PDF = re.compile(r"""<meta\s+[^>]*?name\s*=\s*["']citation_pdf_url["'][^>]*>""",
                       re.IGNORECASE)
_CONTENT = re.compile(r"""content\s*=\s*["']([^"']+)["']""", re.IGNORECASE)

Item = OaiRecord | BrokenRecord


# --- windows ---------------------------------------------------------------------------------
def windows(s: OaiSettings, today: dt.date) -> list[Window]:
    """`from_date`..`until_date` cut into windows of `window_days` (both ends inclusive)."""
    return date_windows(s.from_date, s.until_date, s.window_days, today)


def query_fingerprint(s: OaiSettings, today: dt.date) -> str:
    """What decides the records walked over; the windows' end moves with `today` only when
    `until_date` is open, and a saved position stays valid then (the last window grows)."""
    return fingerprint({"base_url": s.base_url, "metadata_prefix": s.metadata_prefix,
                        "set": s.set, "from": s.from_date, "until": s.until_date,
                        "window_days": s.window_days})


# --- records to candidates ----------------------------------------------------------------
def record_url(s: OaiSettings, identifier: str) -> str:
    query = urlencode({"verb": "GetRecord", "metadataPrefix": s.metadata_prefix,
                       "identifier": identifier}, safe=":/")
    assert s.base_url is not None
    return f"{s.base_url}{'&' if '?' in s.base_url else '?'}{query}"


def abstracts_by_language(fields: Fields, wanted: list[str]
                          ) -> tuple[dict[str, str], dict[str, Any]]:
    """Every abstract keyed by its language: the record's label (`xml:lang`, `lang`, ISO
    639-2), else the detector's reliable guess, else the record's only language, else `und`;
    one abstract per language (the first). The summary comes first, `main_language` over
    the record's own order; then the first of `wanted` found (the order they are cut in)."""
    record_langs = fields.record_languages()
    out: dict[str, str] = {}
    how: dict[str, str] = {}
    for ab in fields.abstracts:
        lang = ab.language
        source = "label"
        if lang is None:
            guess = detect(ab.text)
            if guess.top and guess.reliable:
                lang, source = guess.top, "detected"
            elif len(record_langs) == 1:
                lang, source = record_langs[0], "record"
            else:
                lang, source = UNKNOWN_LANGUAGE, "unknown"
        if lang not in out:
            out[lang] = ab.text
            how[lang] = source
    main = main_language(out, record_langs, kept=wanted)
    order = sorted(out, key=lambda k: (k != main, k not in wanted,
                                       wanted.index(k) if k in wanted else 0, k))
    return {k: out[k] for k in order}, {"abstract_language_from": {k: how[k] for k in order}}


def pick_date(fields: Fields, today: dt.date, max_future_years: int
              ) -> tuple[str | None, list[str]]:
    notes: list[str] = []
    for raw in fields.dates:
        parsed = parse_hal_date(raw, today, max_future_years)
        if parsed.iso:
            return parsed.iso, notes
        if parsed.note:
            notes.append(parsed.note)
    return None, notes


def pick_license(rights: list[str]) -> str | None:
    """A statement naming a licence first; else free text (kept); else an access term."""
    values = [r.strip() for r in rights if r and r.strip()]
    for value in values:
        if normalise_license(value).id != UNKNOWN:
            return value
    for value in values:
        if not is_access_term(value):
            return value
    return values[0] if values else None


def to_candidate(record: OaiRecord, s: OaiSettings, today: dt.date,
                 retrieved_at: str | None) -> Candidate | Rejection:
    identifier = record.identifier or ""
    meta = record.metadata
    if meta is None:
        return Rejection(identifier, SOURCE, FailureClass.BAD_METADATA.value,
                         "OAI record without metadata")
    fields = parser_for(s.metadata_prefix)(meta)
    wanted = list(s.languages)
    abstracts, notes = abstracts_by_language(fields, wanted)
    date, date_notes = pick_date(fields, today, s.max_future_years)
    stated = fields.record_languages()
    main = next(iter(abstracts), None)
    extra: dict[str, Any] = {"oai_identifier": identifier, "datestamp": record.datestamp,
                             **notes, **({"date_notes": date_notes} if date_notes else {}),
                             **({"record_languages": stated} if stated else {})}
    if fields.landing_urls:
        extra["landing_url"] = fields.landing_urls[0]
    cand = Candidate(
        id=identifier, source=SOURCE, language=main or wanted[0], abstracts=abstracts,
        pdf_url=fields.pdf_urls[0] if fields.pdf_urls else None, publication_date=date,
        title=fields.title, extra=extra, license=pick_license(fields.rights),
        record_url=record_url(s, identifier), retrieved_at=retrieved_at,
        languages=tuple(wanted))
    if not abstracts:
        return Rejection(identifier, SOURCE, FailureClass.NO_ABSTRACT.value,
                         "record has no abstract", cand)
    if not any(lang in wanted for lang in abstracts):
        return Rejection(identifier, SOURCE, FailureClass.WRONG_LANGUAGE.value,
                         f"record has no abstract in {', '.join(wanted)} (found: "
                         f"{', '.join(abstracts)})", cand)
    return cand  # in a language not kept, perhaps: the body step decides (a label can be wrong)


def citation_pdf_url(page: str, base: str) -> str | None:
    """The landing page's `<meta name="citation_pdf_url" content=...>`, made absolute."""
    for tag in _META_PDF.findall(page):
        m = _CONTENT.search(tag)
        if m:
            return urljoin(base, html.unescape(m.group(1).strip()))
    return None


# --- the harvest ------------------------------------------------------------------------------
class OaiHarvest(PagedHarvest[Item]):
    def __init__(self, ctx: FetchContext, settings: OaiSettings, client: PoliteClient,
                 today: dt.date | None = None) -> None:
        super().__init__(ctx)
        high_water = HighWater(ctx, HIGH_WATER)
        self.mark = ListedMark(ctx, high_water, WINDOW_NEWEST)
        start = high_water.start(settings.from_date)
        if settings.until_date is not None and start is not None:
            start = min(start, settings.until_date)  # a mark of a wider query: never past until
        if start != settings.from_date:  # a refresh: its own query, windows from `start`
            settings = settings.replace(from_date=start)
        assert settings.base_url is not None
        self.settings = settings
        self.client = client
        self.oai = OaiClient(settings.base_url, client)
        self.today = today or dt.date.today()
        self.windows = windows(settings, self.today)
        self.attempts = settings.attempts
        self.backoff_factor = settings.backoff_factor
        self.pdf_attempts = settings.pdf_attempts
        self.checkpoint = Checkpoint(ctx, CHECKPOINT, query_fingerprint(settings, self.today),
                                     position(0, None), key="position")
        self.listing = OaiListing(self.oai, settings.metadata_prefix, settings.set,
                                  self.windows, SOURCE, ctx.log, readable=FORMATS)

    def page_what(self, pos: str) -> str:
        return self.listing.describe(pos)

    def fetch_page(self, pos: str) -> Page[Item]:
        self.mark.at(pos)
        return self.listing.page(pos)

    def process(self, record: Item, page: Page[Item]) -> Candidate | Rejection | None:
        if isinstance(record, OaiRecord):
            self.mark.seen(record.datestamp)  # a deletion is news of the repository too
            if record.deleted:
                if record.identifier and self.ctx.withdraw(record.identifier):
                    self.ctx.log.info("oai: %s was deleted upstream; withdrawn",
                                      record.identifier)
                return None
            if not record.identifier:
                return None
        return super().process(record, page)

    def page_recorded(self, page: Page[Item]) -> None:
        assert isinstance(page, ListPage)
        self.mark.recorded(page)

    def to_item(self, record: Item, page: Page[Item]) -> Candidate | Rejection:
        if isinstance(record, BrokenRecord):
            if record.identifier:
                return Rejection(record.identifier, SOURCE, FailureClass.BAD_METADATA.value,
                                 record.reason)
            return Rejection(f"{page.position}#{record.index}", SOURCE,
                             FailureClass.BAD_METADATA.value, record.reason, bad_record=True)
        return to_candidate(record, self.settings, self.today, page.retrieved_at)

    def download(self, cand: Candidate) -> Candidate | Rejection:
        if cand.pdf_url is None:
            found = self.landing_pdf(cand)
            if isinstance(found, Rejection):
                return found
            cand = found
        return super().download(cand)

    def can_retry(self, cand: Candidate) -> bool:
        """A record whose landing page could not be read is tried again from it."""
        return bool(cand.pdf_url or (cand.extra.get("landing_url")
                                     and self.settings.landing_page_pdf))

    def landing_pdf(self, cand: Candidate) -> Candidate | Rejection:
        """The landing page's `citation_pdf_url`, when the format gave no PDF link; a landing
        URL that answers with a PDF (an identifier serving the file) is the link itself."""
        landing = cand.extra.get("landing_url")
        if not landing or not self.settings.landing_page_pdf:
            return Rejection(cand.id, SOURCE, FailureClass.UNAVAILABLE.value,
                             "record names no PDF (nor a landing page to look on)", cand)
        excluded = self.ctx.license_excluded(cand)
        if excluded is not None:
            return excluded
        landing = str(landing)
        try:
            resp = self.client.get(landing, stream=True)
            if "pdf" in resp.headers.get("Content-Type", "").lower():
                resp.close()  # the identifier serves the PDF itself: downloaded as one
                return replace(cand, pdf_url=landing, extra={**cand.extra,
                                                             "pdf_from": "landing_url"})
            body = b"".join(self.client.iter_body(resp, landing, LANDING_CAP, "landing page"))
        except HostDown as e:
            raise HarvestStopped(f"oai: {e}") from e
        except HostForbidden as e:
            return forbidden(self.ctx, cand, e)
        except StageError as e:
            return Rejection(cand.id, SOURCE, e.failure.cls.value,
                             f"landing page {landing}: {e.failure.message}", cand)
        page = body.decode(resp.encoding or "utf-8", "replace")
        url = citation_pdf_url(page, landing)
        if url is None:
            return Rejection(cand.id, SOURCE, FailureClass.UNAVAILABLE.value,
                             f"record names no PDF and its landing page {landing} has no "
                             "citation_pdf_url", cand)
        return replace(cand, pdf_url=url, extra={**cand.extra, "pdf_from": "citation_pdf_url"})



def require_inputs(s: OaiSettings) -> OaiSettings:
    if not s.base_url:
        raise BadRunInput("oai: set base_url (the repository's OAI-PMH endpoint) with "
                          "--config FILE")
    return s


def check_repository(s: OaiSettings, echo: Callable[[str], None]) -> bool:
    """`build --dry-run`: `Identify` and `ListMetadataFormats`, once each, so a base URL
    that is no endpoint or a format the repository does not offer is found before a build
    (the set is not asked: `ListSets` may run to thousands of pages). True: no problem."""
    s = require_inputs(s)
    assert s.base_url is not None
    oai = OaiClient(s.base_url, PoliteClient(s.http_fields()))
    try:
        info = oai.identify()
        offered = oai.metadata_formats()
    except (StageError, OSError) as e:
        why = refusal(oai, e, s.metadata_prefix, s.set) if isinstance(e, StageError) else None
        echo(f"{SOURCE}: {why or f'base_url {s.base_url}: {e}'}")
        return False
    echo(f"{SOURCE}: {s.base_url}: {info.get('repositoryName') or 'an OAI-PMH repository'} "
         f"(granularity {info.get('granularity') or '?'}, deleted records: "
         f"{info.get('deletedRecord') or '?'})")
    if s.metadata_prefix not in offered:
        echo(f"{SOURCE}: the repository at {s.base_url} does not offer metadata_prefix "
             f"{s.metadata_prefix!r}; {formats_offered(offered, FORMATS)}")
        return False
    echo(f"{SOURCE}: metadata_prefix {s.metadata_prefix!r} is offered"
         + (f"; set {s.set!r} is asked for as it is (not checked)" if s.set else ""))
    return True


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    """The fetch contract of `loralay_build.sources` for any OAI-PMH repository."""
    assert isinstance(ctx.settings, OaiSettings)
    settings = require_inputs(ctx.settings)
    client = PoliteClient(settings.http_fields())
    yield from OaiHarvest(ctx, settings, client).run()

"""PubMed-Lay: Cohan et al. PMC ids, abstracts from PMC's OAI-PMH service, PDFs from the PMC cloud.

Which papers (`harvest`): `ids`, Cohan et al.'s, each asked for by `GetRecord`; or
`list_records`, what the service lists from `from_date` (`PubmedListHarvest`: the kit's
`OaiListing` in date windows, `PagedHarvest` and `Checkpoint`), so papers outside Cohan's
lists can join. Either way an OAI record becomes a candidate through the same steps
(`PubmedHarvest.from_record`): a listed record gives the candidate its `GetRecord` gives.
A refresh lists from the last listing's newest datestamp (`HighWater`
`pubmed.high_water`) less `refresh_overlap_days`; the mark is raised once a window is all
recorded (the kit's `ListedMark`: PMC lists by identifier, not by date, so a mark raised
after a page could pass records a kill left unlisted). A deleted record of a recorded id
withdraws it (`missing_upstream` in diff.json).

Abstracts: `GetRecord` (`metadataPrefix` pmc_fm by default) through the sources' one
OAI-PMH client (`kit/oaipmh.py`: OAI error codes, strict XML, an error body behind an HTTP
4xx) over our PoliteClient (rate limit, UA, retries, a 403 from the OAI service stops
the harvest), tried under the kit's one retry rule (`attempts`). A 403 from the cloud
bucket costs only the paper asked for and the later ones (`forbidden`, no request
sent): the harvest goes on.

PDFs: PMC retired the OA web service (`oa.fcgi`) and the FTP tree the original used in
August 2026. The cloud dataset has, per article version, a metadata JSON
(`metadata/PMC<id>.<ver>.json`) whose `pdf_url` names the PDF (`s3://...?md5=...`),
fetched over HTTPS and checked against the md5. The version comes from the OAI
record's `pmcid-ver` (version 1 when the record has none).

Licence (`choose_license`): the JATS `<license>` of the OAI record (its `ali:license_ref`,
`xlink:href`, `license-type`, `license-p`), the cloud metadata's `license_code`, then the
`pmc-license-ref` custom-meta: the first that names a licence, else the first stated.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

from lxml import etree

from ..atomic import file_digest
from ..conf import PubmedSettings
from ..failures import FailureClass, StageError
from ..http import HostBlocked, HostForbidden, PoliteClient
from ..licenses import UNKNOWN, normalise_license
from ..records import Candidate, Rejection
from . import (
    BadRunInput,
    FetchContext,
    HarvestStopped,
    download_candidate,
    forbidden,
    jats,
    retrieved_now,
)
from .cohan import read_ids
from .kit.harvest import Checkpoint, HighWater, Page, PagedHarvest, fingerprint, with_attempts
from .kit.jsonl import BadLine, bad_record
from .kit.oaipmh import (
    BrokenRecord,
    Listed,
    ListedMark,
    ListPage,
    OaiClient,
    OaiListing,
    date_windows,
    position,
)

SOURCE = "pubmed"
CHECKPOINT = "pubmed.position"
HIGH_WATER = "pubmed.high_water"
WINDOW_NEWEST = "pubmed.window_newest"
OAI_ID = "oai:pubmedcentral.nih.gov:"
PMC_ID = re.compile(r"^(?:PMC)?(\d+)$", re.IGNORECASE)
T = TypeVar("T")


def require_inputs(s: PubmedSettings) -> PubmedSettings:
    if s.harvest == "ids" and not s.ids_dir:
        raise BadRunInput("pubmed: set ids_dir (the Cohan et al. PubMed files) with "
                         "--config FILE")
    return s


def oai_extra(s: PubmedSettings) -> dict[str, str]:
    """NCBI asks every client to name itself with `tool` and `email` (default: contact)."""
    if not s.send_tool_email:
        return {}
    email = s.email or s.contact
    return {k: v for k, v in (("tool", s.tool), ("email", email)) if v}


def _eastern() -> dt.tzinfo:
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo("America/New_York")
    except Exception:  # noqa: BLE001 - no tz database: standard time is close enough
        return dt.timezone(dt.timedelta(hours=-5))


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def in_ncbi_peak(moment: dt.datetime) -> bool:
    """NCBI's peak: Monday to Friday, 05:00 to 21:00 US Eastern."""
    local = moment.astimezone(_eastern())
    return local.weekday() < 5 and 5 <= local.hour < 21


def pmc_digits(article_id: str) -> str | None:
    m = PMC_ID.match(article_id.strip())
    return m.group(1) if m else None


def listed_id(identifier: str | None) -> str | None:
    """The article id (`PMC<digits>`, as Cohan et al.'s files write it) of an OAI identifier
    `oai:pubmedcentral.nih.gov:<digits>`; None for any other."""
    if not identifier or not identifier.startswith(OAI_ID):
        return None
    digits = pmc_digits(identifier[len(OAI_ID):])
    return f"PMC{digits}" if digits else None


def s3_to_https(url: str, template: str) -> tuple[str, str | None]:
    """`s3://bucket/key?md5=...` -> (HTTPS URL, md5); an http(s) URL is kept as it is."""
    parts = urlsplit(url)
    md5 = next((v for k, _, v in (q.partition("=") for q in parts.query.split("&"))
                if k == "md5" and v), None)
    if parts.scheme == "s3":
        base = template.format(bucket=parts.netloc).rstrip("/")
        return f"{base}{parts.path}", md5
    return url, md5


def _md5(path: Path) -> str:
    return file_digest(path, "md5")


def choose_license(statements: list[tuple[str, str]], cloud_code: str | None = None,
                   pmc_ref: str | None = None) -> tuple[str | None, str | None]:
    """(value, where it was read) of an article's licence: of the JATS statements
    (`jats.license_statements`, most precise first), the cloud's `license_code` and the
    `pmc-license-ref` custom-meta, the first that names a licence; else the first stated
    at all (kept as the source's words; `license-type` alone, such as `open-access`, is
    not a statement of a licence); (None, None) when PMC states none."""
    every = [*statements, ("cloud:license_code", cloud_code or ""),
             ("custom-meta:pmc-license-ref", pmc_ref or "")]
    every = [(where, value.strip()) for where, value in every if value and value.strip()]
    for where, value in every:
        if normalise_license(value).id != UNKNOWN:
            return value, where
    for where, value in every:
        if where != "license/@license-type":
            return value, where
    return None, None


def licence_is_final(item: Candidate) -> bool:
    """Whether the OAI record's licence is the one the candidate keeps: a JATS statement
    naming a licence comes before the cloud's `license_code` (`choose_license`), so the
    allow-list can be applied before the cloud is asked."""
    where = item.extra.get("license_field")
    return bool(where) and not str(where).startswith(("cloud:", "custom-meta:")) \
        and normalise_license(item.license).id != UNKNOWN


def oai_record_url(s: PubmedSettings, digits: str) -> str:
    """The GetRecord URL of an article (without `tool`/`email`: they name the user)."""
    query = urlencode({"verb": "GetRecord", "identifier": f"oai:pubmedcentral.nih.gov:{digits}",
                       "metadataPrefix": s.metadata_prefix}, safe=":")
    return f"{s.oai_url}{'&' if '?' in s.oai_url else '?'}{query}"


def record_to_candidate(article_id: str, split: str | None, root: etree._Element,
                        record_url: str | None = None, retrieved_at: str | None = None
                        ) -> Candidate | Rejection:
    """The candidate an OAI record describes (no PDF yet), or why it cannot be one."""
    meta = jats.article_meta(root)
    if meta is None:
        return Rejection(article_id, SOURCE, FailureClass.BAD_METADATA.value,
                         "OAI record without JATS article-meta")
    found = jats.all_abstracts(root, meta, jats.article_language(root) or "en")
    keyed = jats.keyed_abstracts(found, "en")
    if keyed is None:
        kinds = sorted({f"{a.language}/{a.kind or 'plain'}" for a in found})
        return Rejection(article_id, SOURCE, FailureClass.NO_ABSTRACT.value,
                         f"no plain English abstract (found: {', '.join(kinds) or 'none'})")
    ids = jats.article_ids(meta)
    flags = jats.custom_meta(meta)
    licence, where = choose_license(jats.license_statements(meta),
                                    pmc_ref=flags.get("pmc-license-ref"))
    extra: dict[str, Any] = {"pmcid_ver": ids.get("pmcid-ver"), "pmid": ids.get("pmid"),
                             "doi": ids.get("doi"),
                             "has_pdf": flags.get("pmc-prop-has-pdf"),
                             "license_field": where,
                             "abstract_types": [a.kind or "plain" for a in found]}
    return Candidate(id=article_id, source=SOURCE, language="en", abstracts=keyed,
                     publication_date=jats.publication_date(meta), split=split,
                     title=jats.title(meta),
                     extra={k: v for k, v in extra.items() if v is not None},
                     license=licence, record_url=record_url, retrieved_at=retrieved_at,
                     languages=("en",))


def with_cloud_license(item: Candidate, root: etree._Element, code: str | None
                       ) -> Candidate:
    """The candidate's licence chosen again with the cloud metadata's `license_code`."""
    if not code:
        return item
    meta = jats.article_meta(root)
    if meta is None:
        return item
    licence, where = choose_license(jats.license_statements(meta), code,
                                    jats.custom_meta(meta).get("pmc-license-ref"))
    return replace(item, license=licence,
                   extra={**item.extra, "license_field": where, "license_code": code})


class PubmedHarvest:
    def __init__(self, ctx: FetchContext, settings: PubmedSettings, oai_client: PoliteClient,
                 cloud_client: PoliteClient) -> None:
        self.ctx = ctx
        self.settings = settings
        self.client = cloud_client
        self.oai = OaiClient(settings.oai_url, oai_client, oai_extra(settings))
        self.yielded = 0
        self.oai_requests = 0

    def check_peak(self) -> None:
        """Stop a large run in NCBI's peak hours; a rerun off-peak continues."""
        limit = self.settings.peak_oai_requests
        if limit is not None and self.oai_requests >= limit and in_ncbi_peak(now_utc()):
            raise HarvestStopped(f"pubmed: NCBI asks that runs of over {limit} requests go "
                                 "outside Mon-Fri 05:00-21:00 US Eastern; rerun off-peak to "
                                 "continue (or set peak_oai_requests: null)")
        self.oai_requests += 1

    def retrying(self, what: str, fn: Callable[[], T]) -> T:
        """`fn` under the kit's one retry rule (`attempts`); a blocked host or a final
        answer (an OAI error code) is not retried (the caller decides what it costs)."""
        def told(attempt: int, attempts: int, e: StageError) -> None:
            self.ctx.log.warning("pubmed: %s, attempt %d/%d: %s", what, attempt, attempts, e)

        return with_attempts(fn, self.settings.attempts, self.settings.backoff_factor, told)

    def get_record(self, digits: str) -> etree._Element:
        """The OAI `record` element; OAI error codes are classed StageErrors (`OaiError`)."""
        self.check_peak()
        record = self.oai.get_record(f"oai:pubmedcentral.nih.gov:{digits}",
                                     self.settings.metadata_prefix)
        return record.element

    def pdf_location(self, cand: Candidate) -> tuple[str, str | None, str | None]:
        """(HTTPS URL, md5, license_code) of the PDF from the cloud metadata JSON."""
        digits = pmc_digits(cand.id)
        version = cand.extra.get("pmcid_ver") or f"PMC{digits}.1"
        url = self.settings.pdf_metadata_url.format(pmcid_ver=version, pmcid=f"PMC{digits}")
        data = self.client.get_json(url)
        pdf_url = data.get("pdf_url") if isinstance(data, dict) else None
        if not isinstance(pdf_url, str) or not pdf_url:
            raise StageError(FailureClass.UNAVAILABLE, f"no pdf_url in the PMC cloud for "
                             f"{version}")
        code = data.get("license_code")
        return (*s3_to_https(pdf_url, self.settings.s3_https_url),
                code if isinstance(code, str) and code.strip() else None)

    def process(self, article_id: str, split: str | None) -> Candidate | Rejection:
        """The id's record asked for by `GetRecord`, then `from_record`."""
        digits = pmc_digits(article_id)
        if digits is None:
            return Rejection(article_id, SOURCE, FailureClass.BAD_METADATA.value,
                             "not a PMC id")
        try:
            root = self.retrying(f"{article_id} OAI", lambda: self.get_record(digits))
        except HostBlocked as e:  # NCBI's OAI service refused us or is down
            raise HarvestStopped(f"pubmed: {e}") from e
        except StageError as e:
            return Rejection(article_id, SOURCE, e.failure.cls.value, e.failure.message)
        return self.from_record(article_id, split, root, retrieved_now())

    def from_record(self, article_id: str, split: str | None, root: etree._Element,
                    retrieved_at: str | None) -> Candidate | Rejection:
        """An OAI record (from `GetRecord` or a `ListRecords` page) to a candidate with its
        PDF: the JATS read, the licence decided as early as it can be, the cloud's PDF."""
        digits = pmc_digits(article_id)
        assert digits is not None
        found = record_to_candidate(article_id, split, root,
                                    oai_record_url(self.settings, digits), retrieved_at)
        if isinstance(found, Rejection):
            return found
        item: Candidate = found
        if licence_is_final(item):  # the cloud's code cannot change it: decide now
            excluded = self.ctx.license_excluded(item)
            if excluded is not None:
                return excluded
        try:
            url, md5, code = self.retrying(f"{article_id} PDF metadata",
                                           lambda: self.pdf_location(item))
        except HostForbidden as e:  # the cloud bucket holds the PDFs: a refusal costs this one
            return forbidden(self.ctx, item, e)
        except HostBlocked as e:
            raise HarvestStopped(f"pubmed: {e}") from e
        except StageError as e:
            return Rejection(article_id, SOURCE, e.failure.cls.value, e.failure.message, item)
        item = with_cloud_license(item, root, code)
        item = replace(item, pdf_url=url, extra={**item.extra, "pdf_md5": md5})
        return self.check_md5(download_candidate(self.ctx, self.client, item,
                                                 self.settings.pdf_attempts))

    def check_md5(self, item: Candidate | Rejection) -> Candidate | Rejection:
        if isinstance(item, Rejection) or not item.extra.get("pdf_md5") or not item.pdf_path:
            return item
        got = _md5(Path(item.pdf_path))
        if got == item.extra["pdf_md5"]:
            return item
        Path(item.pdf_path).unlink(missing_ok=True)
        return Rejection(item.id, SOURCE, FailureClass.UNAVAILABLE.value,
                         f"PDF md5 {got} is not the cloud's {item.extra['pdf_md5']}",
                         replace(item, pdf_path=None, pdf_sha256=None))

    def run(self) -> Iterator[Candidate | Rejection]:
        assert self.settings.ids_dir is not None  # require_inputs
        for cid in read_ids(self.settings.ids_dir):
            if self.ctx.limit_reached(self.yielded):
                return
            if isinstance(cid, BadLine):  # one of the report's bad input records
                yield bad_record(cid, SOURCE)
                continue
            if self.ctx.already_fetched(cid.article_id):
                continue
            self.yielded += 1
            yield self.process(cid.article_id, cid.split)


class PubmedListHarvest(PagedHarvest[Listed]):
    """`harvest: list_records`: PMC's `ListRecords` from `from_date` (a refresh: from the
    high-water mark less the overlap) in windows of `window_days`, each listed record
    through `PubmedHarvest.from_record`."""

    def __init__(self, ctx: FetchContext, records: PubmedHarvest,
                 today: dt.date | None = None) -> None:
        super().__init__(ctx)
        s = self.settings = records.settings
        self.records = records
        self.client = records.client
        self.attempts, self.backoff_factor = s.attempts, s.backoff_factor
        self.pdf_attempts = s.pdf_attempts
        high_water = HighWater(ctx, HIGH_WATER)
        self.mark = ListedMark(ctx, high_water, WINDOW_NEWEST)
        start = high_water.start(s.from_date)
        windows = date_windows(start, s.until_date, s.window_days, today or dt.date.today())
        self.listing = OaiListing(records.oai, s.metadata_prefix, s.set, windows, SOURCE,
                                  ctx.log, url_key="oai_url")
        # `from` is the start asked for: a refresh's moves with the mark, and a position
        # saved under another start is not resumed (its records are skipped as recorded)
        query = fingerprint({"oai_url": s.oai_url, "metadata_prefix": s.metadata_prefix,
                             "set": s.set, "from": start, "until": s.until_date,
                             "window_days": s.window_days})
        self.checkpoint = Checkpoint(ctx, CHECKPOINT, query, position(0, None), key="position")
        # a refresh whose mark is past a fixed until_date: nothing is left to list
        self.past_until = bool(start and s.until_date and start > s.until_date)

    def run(self) -> Iterator[Candidate | Rejection]:
        if self.past_until:
            self.ctx.log.info("pubmed: nothing to list: the high-water mark is past "
                              "until_date %s (set until_date: null to list what is new)",
                              self.settings.until_date)
            yield from self.retry_recorded()
            return
        yield from super().run()

    def page_what(self, pos: str) -> str:
        return self.listing.describe(pos)

    def fetch_page(self, pos: str) -> Page[Listed]:
        self.records.check_peak()  # NCBI counts every request, a listing's pages too
        self.mark.at(pos)
        return self.listing.page(pos)

    def first_page(self, page: Page[Listed]) -> None:
        if page.total is not None:
            self.ctx.log.info("pubmed: %s records listed in %s", f"{page.total:,}",
                              self.listing.describe(page.position))

    def process(self, record: Listed, page: Page[Listed]) -> Candidate | Rejection | None:
        if isinstance(record, BrokenRecord):
            return self.broken(record, page)
        self.mark.seen(record.datestamp)
        article_id = listed_id(record.identifier)
        if article_id is None:
            self.ctx.log.warning("pubmed: %s: a record of no PMC identifier (%r) skipped",
                                 self.listing.describe(page.position), record.identifier)
            return None
        if record.deleted:  # PMC no longer offers it: a recorded paper leaves the dataset
            if self.ctx.withdraw(article_id):
                self.ctx.log.info("pubmed: %s is deleted upstream: withdrawn", article_id)
            return None
        if article_id in self.retried_now or self.ctx.already_fetched(article_id):
            return None
        return self.records.from_record(article_id, None, record.element, page.retrieved_at)

    def broken(self, record: BrokenRecord, page: Page[Listed]) -> Rejection | None:
        """A record whose XML does not parse: its id's `bad_metadata`, or a bad record."""
        article_id = listed_id(record.identifier)
        if article_id is None:
            return Rejection(f"{page.position}#{record.index}", SOURCE,
                             FailureClass.BAD_METADATA.value, record.reason, bad_record=True)
        if article_id in self.retried_now or self.ctx.already_fetched(article_id):
            return None
        return Rejection(article_id, SOURCE, FailureClass.BAD_METADATA.value, record.reason)

    def page_recorded(self, page: Page[Listed]) -> None:
        assert isinstance(page, ListPage)
        self.mark.recorded(page)

    def retry_recorded(self) -> Iterator[Candidate | Rejection]:
        """Ids an earlier run gave up for a reason this run retries, asked for again by
        `GetRecord` (the listing has moved past them), in the split they were given."""
        wanted = self.ctx.to_retry()
        if not wanted:
            return
        splits = {c.id: c.split for c in self.ctx.state.candidates(keep=wanted.__contains__)}
        self.ctx.log.info("pubmed: %d recorded failures to retry (%s)", len(wanted),
                          ", ".join(sorted(self.ctx.retried_classes)))
        for article_id in sorted(wanted):
            if self.limit_reached():
                return
            self.retried_now.add(article_id)
            self.yielded += 1
            yield self.records.process(article_id, splits.get(article_id))


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    assert isinstance(ctx.settings, PubmedSettings)
    settings = require_inputs(ctx.settings)
    oai_client = PoliteClient(settings.http_fields())
    cloud_client = PoliteClient(settings.http_fields().replace(
        requests_per_second=settings.cloud_requests_per_second))
    records = PubmedHarvest(ctx, settings, oai_client, cloud_client)
    if settings.harvest == "list_records":
        yield from PubmedListHarvest(ctx, records).run()
    else:
        yield from records.run()

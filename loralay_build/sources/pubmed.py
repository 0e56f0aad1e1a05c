"""PubMed-Lay: Cohan et al. PMC ids, abstracts from PMC's OAI-PMH service, PDFs from the PMC cloud.

Abstracts: `GetRecord` (`metadataPrefix` pmc_fm by default) through the sources' one
OAI-PMH client (`kit/oai.py`: OAI error codes, strict XML, an error body behind an HTTP
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
from ..failures import FailureClass, StageError
from ..http import HostBlocked, HostForbidden, PoliteClient
from ..licenses import UNKNOWN, normalise_license
from ..records import Candidate, Rejection
from ..settings import PubmedSettings
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
from .kit.harvest import with_attempts
from .kit.jsonl import BadLine, bad_record
from .kit.oai import OaiClient

SOURCE = "pubmed"
PMC_ID = re.compile(r"^(?:PMC)?(\d+)$", re.IGNORECASE)
T = TypeVar("T")


def require_inputs(s: PubmedSettings) -> PubmedSettings:
    if not s.ids_dir:
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


def record_to_candidate(article_id: str, split: str, root: etree._Element,
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
                     license=licence, record_url=record_url, retrieved_at=retrieved_at)


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

    def process(self, article_id: str, split: str) -> Candidate | Rejection:
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
        found = record_to_candidate(article_id, split, root,
                                    oai_record_url(self.settings, digits), retrieved_now())
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


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    assert isinstance(ctx.settings, PubmedSettings)
    settings = require_inputs(ctx.settings)
    oai_client = PoliteClient(settings.http_fields())
    cloud_client = PoliteClient(settings.http_fields().replace(
        requests_per_second=settings.cloud_requests_per_second))
    yield from PubmedHarvest(ctx, settings, oai_client, cloud_client).run()

"""One OAI-PMH client over the project's polite HTTP client: `GetRecord`, and `ListRecords`
one page at a time so a harvest can checkpoint the resumption token after each page.

Why not sickle's (or oaipmh-scythe's) iterators: they hide page boundaries (no place to
checkpoint a token), raise on `noRecordsMatch` (an empty list, not a failure), fail a
whole page on one broken record, send requests through their own HTTP stack (no rate
limit, no 403 rule, no body cap: scythe's is httpx), and read an HTTP 422 as a failure
before looking at its OAI error body (Zenodo answers `noRecordsMatch` and
`badResumptionToken` so). What the protocol itself defines is taken from sickle, already a
dependency: its error vocabulary (`sickle.oaiexceptions`, one class per OAI error code)
and its `Header` model (identifier, datestamp, setSpecs, deleted). The XML is parsed
strictly: no entity expansion, no network, no silent repair of a body cut short.

- An OAI error code is an `OaiError`, a *final* answer (the harvest kit's retry rule does
  not ask again): `idDoesNotExist` is `unavailable`, any other code `bad_metadata`.
- `noRecordsMatch` to a `ListRecords` is an empty last page, whether it answers the first
  request or a resumption token, with HTTP 200 or 422.
- An HTTP 400/404/422 whose body is an OAI-PMH document is read as that document; any other
  such body fails as the status (`<url>: HTTP 404`), as every other request does.
- A listing's first request refused for good (`cannotDisseminateFormat`, `noSetHierarchy`,
  `badArgument`, a 404 or 410 that is no OAI-PMH answer) is `HarvestRefused`, its message
  what to change (`refusal`: for a format, the ones `ListMetadataFormats` offers): a rerun
  of the same query would be refused again.
- A `ListRecords` page whose XML does not parse is read again record by record: a record
  whose own XML is broken is a `BrokenRecord` (one bad record) and the rest of its page goes
  on; an envelope that does not parse is the page's failure (`unavailable`, retried).
- Deleted records are returned with `deleted` set (a harvest skips them); `GetRecord` of a
  deleted record is `unavailable`.
- 503 with Retry-After, 429, 5xx: the HTTP client's retries (`http.py`), then `unreachable`.

`OaiListing` is a `ListRecords` harvest's walk for the kit's `PagedHarvest` (every OAI source
lists so): `from`..`until` cut into windows of `window_days` (a resumption token lives
minutes to hours; a window restarted after `badResumptionToken` costs only that window), the
position is the window and the token within it, and an expired token restarts its window
(records already recorded are skipped) at most `MAX_RESTARTS` times in a row. A token the
repository gives again within a window (the same one back, `a -> b -> a`) would make the
list endless: that window stops there with one line, the next goes on, and its datestamps
do not raise the mark (it is not known to be all listed). `ListedMark`
is its `HighWater` rule: a listing comes in no date order, so a window's datestamps raise
the mark only once the whole window is recorded.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import requests
from lxml import etree
from sickle import oaiexceptions
from sickle.models import Header

from ...failures import FailureClass, StageError
from ...http import PoliteClient
from .. import FetchContext, HarvestRefused, retrieved_now
from .harvest import HighWater, Page

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
_NS = f"{{{OAI_NS}}}"
# statuses whose body may be an OAI-PMH error document (Zenodo: 422)
OAI_BODY_STATUSES = frozenset({400, 404, 422})
NO_RECORDS = "noRecordsMatch"
BAD_TOKEN = "badResumptionToken"
# the query itself refused: every rerun of it would be
REFUSED = frozenset({"cannotDisseminateFormat", "noSetHierarchy", "badArgument"})
NOT_FOUND = frozenset({404, 410})  # a base URL that is no endpoint
MAX_RESTARTS = 3  # restarts of one window after an expired token, in a row
# a record element's start and end tags, any prefix; `record` elements nested in the
# metadata (MARCXML's) are counted so a page splits at the OAI records only
_RECORD_TAG = re.compile(rb"<(/?)((?:[A-Za-z_][\w.-]*:)?record)(?=[\s/>])[^>]*?(/?)>")
_IDENTIFIER = re.compile(rb"<(?:[\w.-]+:)?identifier[^>]*>\s*([^<\s]+)\s*</")


def strict_parser() -> etree.XMLParser:
    """No entity expansion, no network, no silent repair of a body cut short."""
    return etree.XMLParser(resolve_entities=False, no_network=True, recover=False,
                           huge_tree=False)


def parse_xml(data: bytes) -> etree._Element:
    return etree.fromstring(data.lstrip(), strict_parser())


class NotXml(StageError):
    """An answer that does not parse as XML (`unavailable`, retried): a `ListRecords` page
    so answered is read again record by record."""

    def __init__(self, e: etree.XMLSyntaxError) -> None:
        super().__init__(FailureClass.UNAVAILABLE, f"OAI response is not XML ({e})")


class StatusError(StageError):
    """An HTTP error status whose body is no OAI-PMH document (`unavailable`, retried)."""

    def __init__(self, endpoint: str, status: int) -> None:
        self.status = status
        super().__init__(FailureClass.UNAVAILABLE, f"{endpoint}: HTTP {status}")


class OaiError(StageError):
    """The service answered with an OAI error code: a definite answer, never retried."""

    final = True

    def __init__(self, code: str, text: str = "") -> None:
        self.code = code
        self.text = text
        if code == "idDoesNotExist":
            super().__init__(FailureClass.UNAVAILABLE, "OAI: idDoesNotExist")
        else:
            super().__init__(FailureClass.BAD_METADATA,
                             f"OAI error {exception_name(code)}: {text}")


def exception_name(code: str) -> str:
    """sickle's class of an OAI error code (`cannotDisseminateFormat` ->
    `CannotDisseminateFormat`; an unknown code is `OAIError`)."""
    name = code[:1].upper() + code[1:]
    known = getattr(oaiexceptions, name, None)
    return name if isinstance(known, type) and issubclass(known, Exception) else "OAIError"


@dataclass(frozen=True)
class OaiRecord:
    """One `record` of an answer: its header and the element itself (metadata inside)."""

    element: etree._Element
    header: Header

    @property
    def identifier(self) -> str | None:
        return self.header.identifier

    @property
    def datestamp(self) -> str | None:
        return self.header.datestamp

    @property
    def deleted(self) -> bool:
        return bool(self.header.deleted)

    @property
    def metadata(self) -> etree._Element | None:
        """The metadata format's root element (`oai_dc:dc`, JATS `article`, ...)."""
        meta = self.element.find(f"{_NS}metadata")
        if meta is None:
            return None
        return next((c for c in meta if isinstance(c.tag, str)), None)


@dataclass(frozen=True)
class BrokenRecord:
    """A record of a page whose own XML does not parse: one bad record."""

    index: int  # its place in the page, from 0
    identifier: str | None  # as far as it can be read
    reason: str


@dataclass
class OaiPage:
    """One `ListRecords` answer."""

    records: list[OaiRecord | BrokenRecord]
    token: str | None  # the resumption token to ask for next; None: the list is complete
    cursor: int | None = None
    complete_list_size: int | None = None
    expiration: str | None = None
    no_records: bool = False  # the service said noRecordsMatch

    @property
    def is_last(self) -> bool:
        return not self.token


@dataclass
class OaiClient:
    """An OAI-PMH endpoint; `extra` goes with every request (NCBI's `tool` and `email`)."""

    endpoint: str
    client: PoliteClient
    extra: Mapping[str, str] = field(default_factory=dict)

    # --- requests -------------------------------------------------------------------
    def request(self, **params: str) -> etree._Element:
        """The parsed `OAI-PMH` root of one answer; an OAI error code raises `OaiError`."""
        return self._check_error(self._root(self._get(params)))

    def _get(self, params: Mapping[str, str]) -> requests.Response:
        return self.client.get(self.endpoint, params={**params, **self.extra},
                               body_statuses=OAI_BODY_STATUSES)

    def _root(self, resp: requests.Response, body: bytes | None = None) -> etree._Element:
        """The OAI-PMH root of a body; a 4xx whose body is none fails as its status."""
        data = resp.content if body is None else body
        try:
            root = parse_xml(data)
        except etree.XMLSyntaxError as e:
            raise self._status_error(resp) or NotXml(e) from e
        if etree.QName(root).localname != "OAI-PMH":
            raise self._status_error(resp) or StageError(
                FailureClass.UNAVAILABLE,
                f"not an OAI-PMH response (root <{etree.QName(root).localname}>)")
        return root

    def _status_error(self, resp: requests.Response) -> StageError | None:
        if resp.status_code < 400:
            return None
        return StatusError(self.endpoint, resp.status_code)

    def _check_error(self, root: etree._Element) -> etree._Element:
        error = _find(root, "error")
        if error is not None:
            raise OaiError(error.get("code", "") or "OAIError", (error.text or "").strip())
        return root

    # --- verbs ------------------------------------------------------------------------
    def identify(self) -> dict[str, str]:
        """`Identify`'s plain fields (repositoryName, granularity, deletedRecord, ...)."""
        found = _find(self.request(verb="Identify"), "Identify")
        return {etree.QName(el).localname: (el.text or "").strip()
                for el in (found if found is not None else ()) if isinstance(el.tag, str)}

    def metadata_formats(self) -> list[str]:
        """The `metadataPrefix`es `ListMetadataFormats` names, in its order."""
        root = self.request(verb="ListMetadataFormats")
        return [p for el in root.iter(f"{_NS}metadataFormat")
                if (p := (el.findtext(f"{_NS}metadataPrefix") or "").strip())]

    def get_record(self, identifier: str, metadata_prefix: str) -> OaiRecord:
        """The record; a deleted one or an answer without one is `unavailable`."""
        root = self.request(verb="GetRecord", identifier=identifier,
                            metadataPrefix=metadata_prefix)
        element = next(root.iter(f"{_NS}record"), None)
        if element is None:
            raise StageError(FailureClass.UNAVAILABLE, "OAI response without a record")
        record = _record(element)
        if record.deleted:
            raise StageError(FailureClass.UNAVAILABLE, "OAI record is deleted")
        return record

    def list_records(self, metadata_prefix: str | None = None, token: str | None = None,
                     **selective: str | None) -> OaiPage:
        """One page: the first of a list (`metadata_prefix` and the selective arguments
        `from`, `until`, `set`; None ones are left out), or the one a resumption `token`
        names. `badResumptionToken` raises `OaiError` with that code (the caller restarts
        its window)."""
        if token is not None:
            params = {"verb": "ListRecords", "resumptionToken": token}
        else:
            assert metadata_prefix is not None
            params = {"verb": "ListRecords", "metadataPrefix": metadata_prefix,
                      **{k.rstrip("_"): v for k, v in selective.items() if v is not None}}
        resp = self._get(params)
        try:
            root = self._root(resp)
        except NotXml as whole:
            return self._page_by_record(resp, whole)
        return self._page(root)

    def _page(self, root: etree._Element) -> OaiPage:
        error = _find(root, "error")
        if error is not None and error.get("code") == NO_RECORDS:
            return OaiPage([], None, no_records=True)
        self._check_error(root)
        records: list[OaiRecord | BrokenRecord] = []
        listed = _find(root, "ListRecords")
        if listed is not None:
            records = [_record(r) for r in listed.iterchildren(f"{_NS}record")]
        return _with_token(OaiPage(records, None), listed)

    def _page_by_record(self, resp: requests.Response, whole: StageError) -> OaiPage:
        """A page whose XML does not parse, read record by record (see the module)."""
        body = resp.content
        spans = record_spans(body)
        if not spans:
            raise whole
        head, tail = body[:spans[0][0]], body[spans[-1][1]:]
        try:
            envelope = self._root(resp, head + tail)
        except StageError:
            raise whole from None
        page = self._page(envelope)
        for index, (start, end) in enumerate(spans):
            chunk = body[start:end]
            try:
                root = parse_xml(head + chunk + tail)
                element = next(root.iter(f"{_NS}record"))
                page.records.append(_record(element))
            except (etree.XMLSyntaxError, StopIteration) as e:
                found = _IDENTIFIER.search(chunk)
                ident = found.group(1).decode("utf-8", "replace") if found else None
                page.records.append(BrokenRecord(index, ident, f"record XML does not parse "
                                                 f"({e})"))
        return page


def refusal(oai: OaiClient, error: StageError, metadata_prefix: str, set_: str | None,
            url_key: str = "base_url", readable: Collection[str] = ()) -> str | None:
    """What to change when the repository refuses the query itself (a format or a set it
    does not have, a base URL that is no endpoint), so no rerun of the same command could
    succeed; None for any other failure. A refused format is told with the formats the
    repository offers (`ListMetadataFormats`), those this tool reads (`readable`) named."""
    where = f"the repository at {oai.endpoint}"
    if isinstance(error, StatusError) and error.status in NOT_FOUND:
        return (f"{url_key} {oai.endpoint} answers HTTP {error.status}: no OAI-PMH endpoint "
                f"there; check {url_key} (the address that answers `?verb=Identify`)")
    if not isinstance(error, OaiError) or error.code not in REFUSED:
        return None
    said = error.code + (f": {error.text}" if error.text else "")
    if error.code == "cannotDisseminateFormat":
        try:
            offer = formats_offered(oai.metadata_formats(), readable)
        except StageError as e:
            offer = f"ListMetadataFormats did not say which formats it offers ({e})"
        return f"{where} does not offer metadata_prefix {metadata_prefix!r} ({said}); {offer}"
    if error.code == "noSetHierarchy" and set_:
        return f"{where} has no sets ({said}): remove set {set_!r}"
    asked = ", ".join(f"{k} {v!r}" for k, v in (("metadata_prefix", metadata_prefix),
                                                ("set", set_)) if v)
    return (f"{where} refuses the request ({said}) for {asked}: change the one it names"
            + (f" (its sets: {oai.endpoint}?verb=ListSets)" if set_ else ""))


def formats_offered(offered: list[str], readable: Collection[str] = ()) -> str:
    """The formats a repository offers (`ListMetadataFormats`), as advice to set
    `metadata_prefix` to one this tool reads."""
    usable = [f for f in offered if f in readable]
    return (f"it offers {', '.join(offered) or 'none'}"
            + (f"; set metadata_prefix to one this tool reads: {', '.join(usable)}"
               if usable else (f"; none of them is one this tool reads "
                               f"({', '.join(sorted(readable))})" if readable else "")))


def record_spans(body: bytes) -> list[tuple[int, int]]:
    """Byte spans of the top-level `record` elements of a ListRecords body, found without
    parsing it (it does not parse); nested `record`s (MARCXML) stay inside their span."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for m in _RECORD_TAG.finditer(body):
        closing, self_closing = m.group(1) == b"/", m.group(3) == b"/"
        if self_closing:
            continue
        if not closing:
            if depth == 0:
                start = m.start()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((start, m.end()))
    return spans


def _find(root: etree._Element, name: str) -> etree._Element | None:
    return root.find(f"{_NS}{name}")


def _record(element: etree._Element) -> OaiRecord:
    header = element.find(f"{_NS}header")
    if header is None:  # sickle's Header reads an element: an empty one says nothing
        header = etree.SubElement(etree.Element(f"{_NS}record"), f"{_NS}header")
    return OaiRecord(element, Header(header))


def _with_token(page: OaiPage, listed: etree._Element | None) -> OaiPage:
    el = listed.find(f"{_NS}resumptionToken") if listed is not None else None
    if el is None:
        return page
    page.token = (el.text or "").strip() or None
    page.cursor = _int(el.get("cursor"))
    page.complete_list_size = _int(el.get("completeListSize"))
    page.expiration = el.get("expirationDate")
    return page


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# --- a ListRecords harvest in date windows ------------------------------------------------------
@dataclass(frozen=True)
class Window:
    start: str | None  # YYYY-MM-DD, or None: from the repository's first record
    end: str | None  # YYYY-MM-DD, or None: to its last


def date_windows(from_date: str | None, until_date: str | None, window_days: int,
                 today: dt.date) -> list[Window]:
    """`from_date`..`until_date` (None: today) cut into windows of `window_days`, both ends
    inclusive; without `from_date` the whole repository is one window."""
    if from_date is None:
        return [Window(None, until_date)]
    start = dt.date.fromisoformat(from_date)
    end = dt.date.fromisoformat(until_date) if until_date else today
    out: list[Window] = []
    while start <= end:
        stop = min(end, start + dt.timedelta(days=window_days - 1))
        out.append(Window(start.isoformat(), stop.isoformat()))
        start = stop + dt.timedelta(days=1)
    return out or [Window(from_date, until_date)]


def position(window: int, token: str | None) -> str:
    return json.dumps({"window": window, "token": token})


def parse_position(text: str) -> tuple[int, str | None]:
    data = json.loads(text)
    return int(data["window"]), data.get("token")


Listed = OaiRecord | BrokenRecord
Tokens = set[str]  # named here: inside `OaiListing`, `set` is its setSpec


@dataclass
class ListPage(Page[Listed]):
    """A page whose list may be empty (a window without records) without ending the
    harvest: only the last window's last page is the last. `ends_window`: no token follows,
    so with it every record of its window has been listed (in no promised order: PMC lists
    by identifier, a datestamp of 25 December before one of the 24th)."""

    ends_window: bool = False

    @property
    def is_last(self) -> bool:
        return self.next_position is None


@dataclass
class OaiListing:
    """`ListRecords` of one format (and `set`) over date windows, a page per `page(position)`;
    the first position is `position(0, None)`."""

    oai: OaiClient
    metadata_prefix: str
    set: str | None
    windows: list[Window]
    source: str  # in messages
    log: logging.Logger
    restarts: int = 0
    url_key: str = "base_url"  # the setting naming the endpoint, in messages
    readable: Collection[str] = ()  # the formats the source has a parser for
    # the tokens asked for in the window being listed: one given again is a cycle
    tokens: Tokens = field(default_factory=Tokens)

    def describe(self, pos: str) -> str:
        """A position in messages."""
        window, token = parse_position(pos)
        w = self.windows[window] if window < len(self.windows) else Window(None, None)
        return (f"window {window + 1}/{len(self.windows)} ({w.start or '…'}..{w.end or '…'})"
                + (f" token {token}" if token else ""))

    def refused(self, error: StageError) -> None:
        """A first request of a window refused for good stops the harvest with what to
        change (`HarvestRefused`): retried, or rerun, it would be refused again."""
        why = refusal(self.oai, error, self.metadata_prefix, self.set, self.url_key,
                      self.readable)
        if why is not None:
            raise HarvestRefused(f"{self.source}: {why}") from error

    def page(self, pos: str) -> ListPage:
        window, token = parse_position(pos)
        if window >= len(self.windows):  # a checkpoint past the last window: done
            return ListPage(pos, [], None)
        w = self.windows[window]
        if token is None:
            self.tokens.clear()
        else:
            self.tokens.add(token)
        try:
            if token is None:
                got = self.oai.list_records(self.metadata_prefix, from_=w.start, until=w.end,
                                            set=self.set)
            else:
                got = self.oai.list_records(token=token)
        except StageError as e:
            if token is None:
                self.refused(e)
            if not isinstance(e, OaiError) or e.code != BAD_TOKEN or token is None:
                raise
            self.restarts += 1
            if self.restarts > MAX_RESTARTS:
                raise StageError(FailureClass.UNAVAILABLE, f"the resumption token expired "
                                 f"{MAX_RESTARTS} times in a row in {self.describe(pos)}; "
                                 f"try a smaller window_days") from e
            self.log.warning("%s: %s: badResumptionToken; restarting the window (records "
                             "already fetched are skipped)", self.source, self.describe(pos))
            return self.page(position(window, None))
        self.restarts = 0
        cycle = bool(got.token) and got.token in self.tokens
        if cycle:
            self.log.warning("%s: %s: the repository gave again the resumption token %s, "
                             "already asked for in this window (a cycle: the list would "
                             "never end); this window stops here, the others go on",
                             self.source, self.describe(pos), got.token)
        if got.token and not cycle:
            nxt: str | None = position(window, got.token)
        elif window + 1 < len(self.windows):
            nxt = position(window + 1, None)
        else:
            nxt = None
        # a window cut short by a cycle is not known to be all listed: its datestamps do
        # not raise the high-water mark (a refresh lists it again)
        return ListPage(pos, list(got.records), nxt, retrieved_at=retrieved_now(),
                        total=got.complete_list_size, ends_window=not got.token)


@dataclass
class ListedMark:
    """The `HighWater` mark of a listing: records come in no date order (PMC lists by
    identifier), so a mark raised after a page could pass the older records of the window's
    later pages, never asked for again after a kill. A window's newest datestamp raises the
    mark once every record of the window is recorded; until then it is kept beside the next
    position (the checkpoint `name`), so a harvest resumed there still counts the pages
    listed before the kill."""

    ctx: FetchContext
    high_water: HighWater
    name: str
    newest: str | None = None  # of the window being listed, through the pages recorded

    def at(self, pos: str) -> None:
        """Told of each position asked for: a window starts afresh; a token resumes what
        was kept for it."""
        if parse_position(pos)[1] is None:
            self.newest = None
            return
        saved = self.ctx.state.get_checkpoint(self.name, None)
        if isinstance(saved, dict) and saved.get("position") == pos:
            kept = saved.get("newest")
            self.newest = kept if isinstance(kept, str) else None

    def seen(self, datestamp: str | None) -> None:
        if datestamp and (self.newest is None or datestamp > self.newest):
            self.newest = datestamp

    def recorded(self, page: ListPage) -> None:
        """Every record of `page` is recorded (`PagedHarvest.page_recorded`)."""
        if page.ends_window:
            self.high_water.seen(self.newest)
            self.high_water.save()
            self.newest = None
        elif page.next_position is not None:
            self.ctx.state.set_checkpoint(self.name, {"position": page.next_position,
                                                      "newest": self.newest})

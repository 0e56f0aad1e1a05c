"""The sources' one OAI-PMH client (`sources/kit/oaipmh.py`) and the kit's paged harvest over
it, against real recorded responses of many repositories (../shared/fixtures/oai, see its
PROVENANCE.md) served on 127.0.0.1, faults injected there: 503 + Retry-After, an OAI error
body behind HTTP 422, one record's XML broken, badResumptionToken, a kill between pages.

SYNTHETIC: only the faults (the broken record is a recorded page with one tag misspelt).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from loralay_build.conf import load_settings
from loralay_build.failures import FailureClass, StageError
from loralay_build.http import HttpSettings, PoliteClient
from loralay_build.records import Rejection
from loralay_build.sources import FetchContext, record_fetch_item
from loralay_build.sources.kit.harvest import Checkpoint, Page, PagedHarvest, with_attempts
from loralay_build.sources.kit.oaipmh import (
    BrokenRecord,
    OaiClient,
    OaiError,
    OaiPage,
    OaiRecord,
    record_spans,
)
from loralay_build.store.fetch import FetchState

from .conftest import shared_path
from .fakeserver import Reply, Request

XML = {"Content-Type": "text/xml; charset=utf-8"}
HACETTEPE = ("oai_dc_hacettepe-dspace_ListRecords_2013-06-01_page1_with_token_tr.xml",
             "oai_dc_hacettepe-dspace_ListRecords_2013-06-01_page2_last_tr.xml")
RCAAP = ("oai_dc_rcaap_ListRecords_2015-12-26_page1_with_token.xml",
         "oai_dc_rcaap_ListRecords_2015-12-26_page2_last.xml")
OPUS = ("xMetaDissPlus_opus4-demo-zib_ListRecords_2012-06-20_page1_with_token.xml",
        "xMetaDissPlus_opus4-demo-zib_ListRecords_2012-06-20_page2_last.xml")
HACETTEPE_TOKEN = "2013-06-01T00:00:00Z/2013-06-03T00:00:00Z//oai_dc/100"


def fixture(name: str) -> bytes:
    return shared_path("fixtures", "oai", name).read_bytes()


def client(fake_server, **over: Any) -> OaiClient:
    base: dict[str, Any] = dict(user_agent="loralay-build-test/0", contact="tests@example.org",
                                timeout_s=2, connect_timeout_s=1, requests_per_second=1000,
                                max_retries=2, backoff_factor=0.01, retry_after_max_s=1)
    base.update(over)
    return OaiClient(fake_server.url("/oai"), PoliteClient(HttpSettings(**base)))


def paged(first: bytes, by_token: dict[str, bytes | Reply]):
    """A ListRecords endpoint: the first request gets `first`, a token its page."""
    def handler(req: Request) -> Reply:
        token = req.query.get("resumptionToken", [None])[0]
        body = first if token is None else by_token.get(token)
        if body is None:
            return Reply(422, fixture("oai_dc_zenodo_error_badResumptionToken_http422.xml"), XML)
        return body if isinstance(body, Reply) else Reply(200, body, XML)
    return handler


# --- the client ---------------------------------------------------------------------------
@pytest.mark.parametrize("pages,sizes,token", [
    (HACETTEPE, (100, 3), HACETTEPE_TOKEN),
    (RCAAP, (100, 3), "2015-12-26T00:00:00Z/2015-12-28T23:59:59Z//oai_dc/100"),
    (OPUS, (100, 37), "134020791100000"),
])
def test_list_records_follows_the_token_to_an_empty_or_self_closing_one(fake_server, pages,
                                                                         sizes, token):
    first, last = (fixture(p) for p in pages)
    fake_server.add_handler("/oai", paged(first, {token: last}))
    oai = client(fake_server)
    one = oai.list_records("oai_dc", from_="2013-06-01")
    assert len(one.records) == sizes[0] and one.token == token and not one.is_last
    assert all(isinstance(r, OaiRecord) and r.identifier for r in one.records)
    two = oai.list_records(token=one.token)
    assert len(two.records) == sizes[1] and two.token is None and two.is_last
    first_request, second_request = fake_server.requests
    assert first_request.query["metadataPrefix"] == ["oai_dc"]
    assert first_request.query["from"] == ["2013-06-01"]
    assert second_request.query == {"verb": ["ListRecords"], "resumptionToken": [token]}


def test_token_attributes_and_deleted_records(fake_server):
    first, last = (fixture(p) for p in OPUS)
    fake_server.add_handler("/oai", paged(first, {"134020791100000": last}))
    oai = client(fake_server)
    one = oai.list_records("XMetaDissPlus")
    assert (one.cursor, one.complete_list_size) == (0, 137)
    two = oai.list_records(token=one.token)
    assert (two.cursor, two.complete_list_size, two.token) == (100, 137, None)
    deleted = [r for r in two.records if isinstance(r, OaiRecord) and r.deleted]
    assert len(deleted) == 1 and deleted[0].metadata is None
    live = [r for r in two.records if isinstance(r, OaiRecord) and not r.deleted]
    assert all(r.metadata is not None for r in live)


@pytest.mark.parametrize("name,status,via_token", [
    ("oai_dc_mit-dspace_error_noRecordsMatch_ListRecords.xml", 200, False),
    ("oai_dc_zenodo_error_noRecordsMatch_http422.xml", 422, False),
    ("oai_dc_mla-humcore_error_noRecordsMatch_on_resumptionToken.xml", 200, True),
])
def test_no_records_match_is_an_empty_last_page(fake_server, name, status, via_token):
    fake_server.add("/oai", Reply(status, fixture(name), XML))
    oai = client(fake_server)
    page = oai.list_records(token="t1") if via_token else oai.list_records("oai_dc")
    assert page == OaiPage([], None, no_records=True) and page.is_last


def test_bad_resumption_token_behind_422_is_a_final_oai_error(fake_server):
    fake_server.add("/oai", Reply(422, fixture(
        "oai_dc_zenodo_error_badResumptionToken_http422.xml"), XML))
    with pytest.raises(OaiError) as err:
        client(fake_server).list_records(token="XXX")
    assert err.value.code == "badResumptionToken" and err.value.final
    assert "invalid or expired" in err.value.text
    assert fake_server.hits("/oai") == 1  # an answer: the retry rule does not ask again
    with pytest.raises(OaiError):
        with_attempts(lambda: client(fake_server).list_records(token="XXX"), 3, 0.01)
    assert fake_server.hits("/oai") == 2


def test_a_422_or_404_without_an_oai_body_fails_as_its_status(fake_server):
    fake_server.add("/oai", Reply(404, b"<html>no</html>", {"Content-Type": "text/html"}))
    with pytest.raises(StageError) as err:
        client(fake_server).list_records("oai_dc")
    assert err.value.failure.cls is FailureClass.UNAVAILABLE
    assert err.value.failure.message == f"{fake_server.url('/oai')}: HTTP 404"
    assert not isinstance(err.value, OaiError)


@pytest.mark.parametrize("name,cls,message", [
    ("oai_dc_mit-dspace_error_idDoesNotExist_GetRecord.xml", FailureClass.UNAVAILABLE,
     "OAI: idDoesNotExist"),
    ("oai_dc_arxiv_error_cannotDisseminateFormat.xml", FailureClass.BAD_METADATA,
     "OAI error CannotDisseminateFormat: "),
])
def test_get_record_error_codes(fake_server, name, cls, message):
    fake_server.add("/oai", Reply(200, fixture(name), XML))
    with pytest.raises(OaiError) as err:
        client(fake_server).get_record("oai:x:1", "oai_dc")
    assert err.value.failure.cls is cls and err.value.failure.message.startswith(message)


def test_get_record_reads_the_record_and_its_metadata(fake_server):
    fake_server.add("/oai", Reply(200, fixture("oai_dc_hal_GetRecord_hal-00830421.xml"), XML))
    rec = client(fake_server).get_record("oai:hal.archives-ouvertes.fr:hal-00830421", "oai_dc")
    assert rec.identifier == "oai:HAL:hal-00830421v1" and not rec.deleted
    assert rec.metadata is not None and rec.metadata.tag.endswith("}dc")
    query = fake_server.requests[0].query
    assert query["verb"] == ["GetRecord"] and query["metadataPrefix"] == ["oai_dc"]


def test_503_with_retry_after_then_the_page(fake_server):
    first, last = (fixture(p) for p in HACETTEPE)
    replies = [Reply(503, b"busy", {"Retry-After": "1"}), Reply(200, first, XML)]
    fake_server.add("/oai", *replies)
    started = time.monotonic()
    page = client(fake_server).list_records("oai_dc")
    assert len(page.records) == 100 and fake_server.hits("/oai") == 2
    assert time.monotonic() - started >= 0.9  # the pause the server asked for


def test_one_broken_record_costs_only_itself(fake_server):
    body = fixture(HACETTEPE[0])
    spans = record_spans(body)
    assert len(spans) == 100
    start, end = spans[4]
    broken = body[start:end].replace(b"</dc:title>", b"</dc:titel>", 1)
    assert broken != body[start:end]
    fake_server.add("/oai", Reply(200, body[:start] + broken + body[end:], XML))
    page = client(fake_server).list_records("oai_dc")
    assert len(page.records) == 100 and page.token == HACETTEPE_TOKEN
    bad = [r for r in page.records if isinstance(r, BrokenRecord)]
    assert [(b.index, b.identifier) for b in bad] == [(4, "oai:localhost:2062/49")]
    good = [r.identifier for r in page.records if isinstance(r, OaiRecord)]
    assert len(good) == 99 and good[:4] == ["oai:localhost:2062/31", "oai:localhost:2062/39",
                                            "oai:localhost:2062/45", "oai:localhost:2062/40"]


def test_a_page_whose_envelope_is_broken_is_the_pages_failure(fake_server):
    body = fixture(HACETTEPE[0]).replace(b"</ListRecords>", b"</ListRecordz>")
    fake_server.add("/oai", Reply(200, body, XML))
    with pytest.raises(StageError) as err:
        client(fake_server).list_records("oai_dc")
    assert err.value.failure.cls is FailureClass.UNAVAILABLE
    assert "not XML" in err.value.failure.message and not getattr(err.value, "final", False)


# --- the kit's paged harvest over it ------------------------------------------------------
class ListHarvest(PagedHarvest[OaiRecord | BrokenRecord]):
    """What a generic OAI source will do, without PDFs: each live record is one item."""

    def __init__(self, ctx: FetchContext, oai: OaiClient) -> None:
        super().__init__(ctx)
        self.oai = oai
        self.client = oai.client
        self.attempts, self.backoff_factor, self.pdf_attempts = 2, 0.01, 1
        self.checkpoint = Checkpoint(ctx, "oai.token", "q1", "", key="token")

    def fetch_page(self, position: str) -> Page[OaiRecord | BrokenRecord]:
        page = self.oai.list_records("oai_dc", token=position or None)
        return Page(position, page.records, page.token)

    def process(self, record, page):
        if isinstance(record, OaiRecord) and record.deleted:
            return None  # deleted records are skipped
        return super().process(record, page)

    def to_item(self, record, page) -> Rejection:
        if isinstance(record, BrokenRecord):
            return Rejection(f"page {page.position or 'first'} record {record.index}", "oai",
                             FailureClass.BAD_METADATA.value, record.reason, bad_record=True)
        return Rejection(str(record.identifier), "oai", FailureClass.UNAVAILABLE.value,
                         "no PDF in this test")


def run_harvest(fake_server, db: Path, abandon_after: int | None = None) -> list[str]:
    cfg = load_settings("local", None, {"contact": "tests@example.org"})
    ids: list[str] = []
    with FetchState(db) as state:
        ctx = FetchContext("oai", cfg, state, db.parent)
        gen = ListHarvest(ctx, client(fake_server)).run()
        for item in gen:
            record_fetch_item(state, item)
            ids.append(item.id)
            if abandon_after is not None and len(ids) >= abandon_after:
                gen.close()
                break
    return ids


def test_a_kill_between_pages_resumes_without_loss_or_duplicates(fake_server, tmp_path):
    first, last = (fixture(p) for p in HACETTEPE)
    fake_server.add_handler("/oai", paged(first, {HACETTEPE_TOKEN: last}))
    db = tmp_path / "state.sqlite"
    before = run_harvest(fake_server, db, abandon_after=101)  # killed inside page 2
    with FetchState(db) as state:
        assert state.get_checkpoint("oai.token") == {"token": HACETTEPE_TOKEN, "query": "q1"}
    after = run_harvest(fake_server, db)
    assert len(before) == 101 and len(after) == 2
    assert len(set(before + after)) == len(before + after) == 103
    tokens = [r.query.get("resumptionToken", [None])[0] for r in fake_server.requests]
    assert tokens == [None, HACETTEPE_TOKEN, HACETTEPE_TOKEN]  # page 1 asked for once


def test_a_broken_record_is_one_bad_record_and_the_harvest_goes_on(fake_server, tmp_path):
    first, last = (fixture(p) for p in HACETTEPE)
    start, end = record_spans(first)[0]
    first = first[:start] + first[start:end].replace(b"<header>", b"<header", 1) + first[end:]
    fake_server.add_handler("/oai", paged(first, {HACETTEPE_TOKEN: last}))
    ids = run_harvest(fake_server, tmp_path / "state.sqlite")
    assert len(ids) == 103 and ids[0] == "page first record 0"


def test_bad_resumption_token_stops_the_harvest_with_the_token_kept(fake_server, tmp_path):
    """The token expired between runs: one line, the checkpoint left for the caller (a
    generic OAI source restarts its date window there)."""
    from loralay_build.sources import HarvestStopped

    first, _ = (fixture(p) for p in HACETTEPE)
    fake_server.add_handler("/oai", paged(first, {}))  # page 2's token is refused
    db = tmp_path / "state.sqlite"
    with pytest.raises(HarvestStopped, match="BadResumptionToken"):
        run_harvest(fake_server, db)
    assert sum(1 for r in fake_server.requests if "resumptionToken" in r.query) == 1
    with FetchState(db) as state:
        assert state.get_checkpoint("oai.token")["token"] == HACETTEPE_TOKEN

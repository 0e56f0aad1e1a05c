"""HAL fetcher against a local server: real recorded search responses, real PDFs, injected faults.

Real inputs: the two recorded HAL responses in ../shared/fixtures/hal (see PROVENANCE.md)
and PDFs with their true abstracts from ../shared/corpus. SYNTHETIC inputs, built here and
named `synthetic_*`: records shaped like the recordings but carrying `fr_abstract_s` and a
file (no recording requested both), the cursor pages after the first, and the faults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from loralay_build.http import forbidden_host
from loralay_build.records import Candidate, Rejection
from loralay_build.sources import FetchContext, HarvestStopped, record_fetch_item
from loralay_build.sources.hal import CHECKPOINT, fetch
from loralay_build.sources.hal_records import collect_abstracts, parse_hal_date, to_candidate
from loralay_build.store.fetch import FetchState

from .conftest import shared_path
from .fakeserver import FakeServer, Reply
from .helpers.hal import (
    ART_2020,
    PDF_TYPE,
    TODAY,
    PagedSearch,
    corpus_entry,
    corpus_pdf,
    harvest,
    json_reply,
    make_config,
    serve_pdfs,
    shared_json,
    synthetic_doc,
)

DROIT = ("fixtures", "hal", "hal_search_2026-10-04_domain_shs.droit_cursorMark_rows5.json")


@pytest.fixture
def pdf_host():
    """A second host for the PDFs, so a 403 there leaves the search API usable."""
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def state(tmp_path: Path):
    with FetchState(tmp_path / "state.sqlite") as st:
        yield st


# --- query and paging -------------------------------------------------------------
def test_query_parameters_and_two_cursor_pages(fake_server, tmp_path, state):
    search = PagedSearch([synthetic_doc(i, fake_server.url("")) for i in range(3)], rows=2)
    fake_server.add_handler("/search/", search)
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    items = harvest(make_config(tmp_path, fake_server.url("/search/"), rows=2), state, tmp_path)

    q = search.requests[0].query
    assert q["q"] == ["*:*"] and q["wt"] == ["json"] and q["sort"] == ["docid asc"]
    assert q["rows"] == ["2"] and "start" not in q
    assert q["fq"] == ["language_s:fr", "submitType_s:file", "docType_s:(ART OR COMM)"]
    assert {"docid", "halId_s", "fr_abstract_s", "en_abstract_s", "*_abstract_s", "abstract_s",
            "fileMain_s", "files_s", "producedDate_tdate", "publicationDate_tdate", "title_s",
            "uri_s", "language_s", "docType_s"} <= set(q["fl"][0].split(","))
    assert search.cursors == ["*", "c1", "c2"]  # stops when the mark comes back unchanged
    assert [i.id for i in items] == ["hal-09000000", "hal-09000001", "hal-09000002"]
    assert state.get_checkpoint(CHECKPOINT)["cursor"] == "c2"


def test_candidate_fields_and_downloaded_pdf(fake_server, tmp_path, state):
    entry = corpus_entry("fr_ahrf_censure")
    fake_server.add_handler("/search/", PagedSearch([synthetic_doc(1, fake_server.url(""))], 5))
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    (cand,) = harvest(make_config(tmp_path, fake_server.url("/search/")), state, tmp_path)

    assert isinstance(cand, Candidate)
    assert cand.source == "hal" and cand.language == "fr" and cand.title == entry["title"]
    assert list(cand.abstracts) == ["fr", "en"] and cand.abstracts == entry["abstracts"]
    assert cand.pdf_url == fake_server.url("/hal-09000001/document")
    assert cand.publication_date == "2006-03-15"
    assert Path(cand.pdf_path).read_bytes() == corpus_pdf("fr_ahrf_censure")
    assert Path(cand.pdf_path).parent == tmp_path / "pdfs"
    assert cand.pdf_sha256 == entry["sha256"] and "pdf_sha256" not in cand.extra
    assert cand.extra["docid"] == "9000001" and state.status(cand.id, "fetch") == "ok"
    ua = fake_server.requests[0].headers["User-Agent"]
    assert "loralay-build" in ua and "mailto:" in ua


def test_real_2026_recording_classifies_each_record(fake_server, tmp_path, state):
    """Real records: French `abstract_s` without `fr_abstract_s`, no `fileMain_s` at all."""
    page = shared_json(DROIT)
    mark = page["nextCursorMark"]
    end = {"response": {"numFound": 510, "docs": []}, "nextCursorMark": mark}
    fake_server.add("/search/", json_reply(page), json_reply(end))
    items = {i.id: i for i in harvest(make_config(tmp_path, fake_server.url("/search/")),
                                      state, tmp_path)}

    assert [r.query["cursorMark"][0] for r in fake_server.requests] == ["*", mark]
    with_abstract = {"hal-05362813", "hal-05751618"}
    assert {k for k, v in items.items() if v.cls == "unavailable"} == with_abstract
    assert {k for k, v in items.items() if v.cls == "no_abstract"} == \
        {"halshs-05753537", "halshs-05755328", "hal-05758182"}
    kept = items["hal-05362813"].candidate
    assert kept.abstracts["fr"].startswith("Notre démocratie représentative")
    assert kept.extra["main_abstract_from"] == "abstract_s"
    assert kept.publication_date == "2027"  # next year: a forthcoming issue, kept
    assert items["halshs-05753537"].candidate.publication_date == "2026-09-20"


def test_real_2020_recording_with_rewritten_file_urls(fake_server, tmp_path, state):
    """Real records (portal hosts, "2014"-style dates) whose `fileMain_s` now point here;
    the first two carry the true French abstract of a corpus PDF (SYNTHETIC addition)."""
    docs = shared_json(ART_2020)["response"]["docs"]
    fr = corpus_entry("fr_ahrf_censure")["abstracts"]["fr"]
    for i, doc in enumerate(docs):
        if doc.get("fileMain_s"):
            doc["fileMain_s"] = fake_server.url(urlsplit(doc["fileMain_s"]).path)
        if i < 2:
            doc["fr_abstract_s"] = [fr]
    fake_server.add_handler("/search/", PagedSearch(docs, rows=20))
    serve_pdfs(fake_server, corpus_pdf("en_hal_reaim"))
    items = harvest(make_config(tmp_path, fake_server.url("/search/"), rows=20), state, tmp_path)

    assert len(items) == len(docs) == 36
    got = [i for i in items if isinstance(i, Candidate)]
    assert [c.id for c in got] == ["hal-02001689", "hal-01500392"]
    assert got[0].publication_date == "2019-03-25" and got[0].abstracts["fr"] == fr
    assert all(i.cls == "no_abstract" for i in items[2:])
    assert fake_server.hits("/hal-02001689/document") == 1
    assert sum(r.path.endswith("/document") for r in fake_server.requests) == 2  # none wasted
    dated = {i.id: i.candidate.publication_date for i in items[2:]}
    assert dated["hal-01500391"] == "2011" and dated["hal-01499811"] == "2014-05"


# --- faults on the search API ---------------------------------------------------------
def test_search_faults_end_in_successful_retries(fake_server, tmp_path, state):
    faults = (Reply(429, "slow down", {"Retry-After": "1"}), Reply(500, "oops"),
              Reply(503, "busy"), Reply(200, "{}", delay=0.8))
    search = PagedSearch([synthetic_doc(1, fake_server.url(""))], 5, faults)
    fake_server.add_handler("/search/", search)
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    cfg = make_config(tmp_path, fake_server.url("/search/"), max_retries=4, timeout_s=0.4)
    items = harvest(cfg, state, tmp_path)
    assert [i.id for i in items] == ["hal-09000001"]
    assert len(search.requests) == 6  # four faults, then the page and the end page


@pytest.mark.parametrize("bad", [
    Reply(200, '{"error": {"msg": "undefined field foo", "code": 400}}'),
    Reply(200, "<html><body>Maintenance</body></html>", {"Content-Type": "text/html"}),
    Reply(200, '{"response": {"docs": [ {"docid": '),
    Reply(200, '{"responseHeader": {}}'),
], ids=["error-json", "html", "malformed", "no-docs"])
def test_bad_page_is_retried_then_stops_keeping_the_cursor(fake_server, tmp_path, state, bad):
    docs = [synthetic_doc(i, fake_server.url("")) for i in range(4)]
    search = PagedSearch(docs, rows=2)
    fake_server.add_handler("/search/", lambda req: bad if req.query["cursorMark"] == ["c1"]
                            else search(req))
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=2)
    gen = fetch(FetchContext("hal", cfg, state, tmp_path))
    first = [next(gen), next(gen)]
    for item in first:
        record_fetch_item(state, item)
    with pytest.raises(HarvestStopped, match="after 2 attempts at cursor c1") as err:
        next(gen)
    assert "\n" not in str(err.value)
    assert state.get_checkpoint(CHECKPOINT)["cursor"] == "c1"

    fake_server.add_handler("/search/", search)  # the service recovers: the rerun continues
    rest = harvest(cfg, state, tmp_path)
    assert [i.id for i in rest] == ["hal-09000002", "hal-09000003"]
    assert search.cursors == ["*", "c1", "c2"]  # the rerun started at c1, not at *


def test_error_json_once_is_retried(fake_server, tmp_path, state):
    search = PagedSearch([synthetic_doc(1, fake_server.url(""))], 5,
                         (Reply(200, '{"error": {"msg": "busy"}}'),))
    fake_server.add_handler("/search/", search)
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    assert len(harvest(make_config(tmp_path, fake_server.url("/search/")), state, tmp_path)) == 1


def test_search_403_stops_at_once(fake_server, tmp_path, state):
    fake_server.add("/search/", Reply(403, "forbidden"))
    with pytest.raises(HarvestStopped, match="403"):
        harvest(make_config(tmp_path, fake_server.url("/search/")), state, tmp_path)
    assert fake_server.hits("/search/") == 1
    assert state.get_checkpoint(CHECKPOINT) is None


def test_repeated_cursor_stops_after_the_page(fake_server, tmp_path, state):
    page = {"response": {"numFound": 1, "docs": [synthetic_doc(1, fake_server.url(""))]},
            "nextCursorMark": "*"}
    fake_server.add("/search/", json_reply(page))
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    items = harvest(make_config(tmp_path, fake_server.url("/search/")), state, tmp_path)
    assert len(items) == 1 and fake_server.hits("/search/") == 1


# --- faults on the PDFs -------------------------------------------------------------
def test_pdf_faults_end_in_retry_or_unavailable(fake_server, tmp_path, state):
    pdf = corpus_pdf("fr_ahrf_censure")
    docs = [synthetic_doc(i, fake_server.url("")) for i in range(7)]
    fake_server.add_handler("/search/", PagedSearch(docs, rows=10))
    cut = Reply(200, pdf, PDF_TYPE, truncate_to=len(pdf) // 3)
    fake_server.add("/hal-09000000/document", cut, Reply(200, pdf, PDF_TYPE))  # cut, then whole
    fake_server.add("/hal-09000001/document", cut)  # always cut short
    fake_server.add("/hal-09000002/document", Reply(200, "<!DOCTYPE html><html>login</html>",
                                                    {"Content-Type": "application/pdf"}))
    fake_server.add("/hal-09000003/document", Reply(404, "no such file"))
    fake_server.add("/hal-09000004/document", Reply(200, b"", PDF_TYPE))
    fake_server.add("/hal-09000005/document", Reply(500, "x"), Reply(502, "y"),
                    Reply(200, pdf, PDF_TYPE))
    fake_server.add("/hal-09000006/document", Reply(200, pdf, PDF_TYPE, delay=0.6),
                    Reply(200, pdf, PDF_TYPE))  # a read timeout, then the file
    cfg = make_config(tmp_path, fake_server.url("/search/"), timeout_s=0.3)
    items = {i.id[-1]: i for i in harvest(cfg, state, tmp_path)}

    assert {k for k, v in items.items() if isinstance(v, Candidate)} == {"0", "5", "6"}
    assert all(Path(items[k].pdf_path).read_bytes() == pdf for k in "056")
    for k, why in {"1": "cut short", "2": "not a PDF", "3": "HTTP 404", "4": "empty"}.items():
        assert items[k].cls == "unavailable" and why in items[k].message
        assert items[k].candidate.pdf_url.endswith(f"hal-0900000{k}/document")
    assert fake_server.hits("/hal-09000001/document") == 2  # pdf_attempts
    assert sorted(p.name for p in (tmp_path / "pdfs").iterdir()) == \
        sorted(Path(items[k].pdf_path).name for k in "056")  # nothing half-written stays


def test_unreachable_pdf_is_recorded_and_a_rerun_retries_it(fake_server, tmp_path, state):
    """500s past the retries say nothing about the paper: the cursor stays on its page."""
    pdf = corpus_pdf("fr_ahrf_censure")
    docs = [synthetic_doc(i, fake_server.url("")) for i in range(4)]
    search = PagedSearch(docs, rows=2)
    fake_server.add_handler("/search/", search)
    serve_pdfs(fake_server, pdf)
    fake_server.add("/hal-09000001/document", *[Reply(500, "busy")] * 4,
                    Reply(200, pdf, PDF_TYPE))  # the first try and 3 retries fail
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=2)
    first = {i.id: i for i in harvest(cfg, state, tmp_path)}
    assert first["hal-09000001"].cls == "unreachable"
    assert sum(isinstance(i, Candidate) for i in first.values()) == 3
    assert state.get_checkpoint(CHECKPOINT)["cursor"] == "c2"  # the cursor does not stall

    second = harvest(cfg, state, tmp_path)  # retried from its stored record
    assert [i.id for i in second] == ["hal-09000001"] and isinstance(second[0], Candidate)
    assert fake_server.hits("/hal-09000000/document") == 1  # the others are not fetched again
    assert state.get_checkpoint(CHECKPOINT)["cursor"] == "c2"
    assert search.cursors == ["*", "c1", "c2", "c2"]  # the rerun resumed at the saved cursor


def test_a_pdf_host_down_stops_the_harvest_without_recording_the_rest(fake_server, pdf_host,
                                                                       tmp_path, state):
    docs = [synthetic_doc(i, pdf_host.url("")) for i in range(8)]
    fake_server.add_handler("/search/", PagedSearch(docs, rows=4))
    pdf_host.add_handler("/hal-*", lambda req: Reply(503, "down"))
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=4, host_down_after=2)
    with pytest.raises(HarvestStopped, match="is down"):
        harvest(cfg, state, tmp_path)
    # one unreachable record; the second failure in a row takes the host down: the rest,
    # on this page and the next, is left for a rerun
    assert state.ids_with("fetch") == state.ids_with_class("fetch", ["unreachable"]) \
        == {"hal-09000000"}
    assert len({r.path for r in pdf_host.requests}) == 2
    serve_pdfs(pdf_host, corpus_pdf("fr_ahrf_censure"))
    assert len([i for i in harvest(cfg, state, tmp_path) if isinstance(i, Candidate)]) == 8


def harvest_retrying(cfg: dict[str, Any], state: FetchState, out: Path,
                     retry: frozenset[str]) -> list[Candidate | Rejection]:
    """A rerun with `--retry CLASS ...` (the driver passes the classes as `ctx.retry`)."""
    items = []
    for item in fetch(FetchContext("hal", cfg, state, out, retry=retry)):
        record_fetch_item(state, item)
        items.append(item)
    return items


def test_pdf_403_records_that_host_forbidden_and_goes_on(fake_server, pdf_host, tmp_path,
                                                         state):
    """Real portal hosts (2020 recording) mapped to two local hosts; one refuses."""
    pdf = corpus_pdf("fr_ahrf_censure")
    on_blocked = [synthetic_doc(i, pdf_host.url("")) for i in (0, 2, 4)]
    on_open = [synthetic_doc(i, fake_server.url("")) for i in (1, 3, 5)]
    docs = [on_blocked[0], on_open[0], on_blocked[1], on_open[1], on_blocked[2], on_open[2]]
    search = PagedSearch(docs, rows=2)
    fake_server.add_handler("/search/", search)
    serve_pdfs(fake_server, pdf)
    pdf_host.add_handler("/hal-*", lambda req: Reply(403, "forbidden"))
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=2)
    first = {i.id: i for i in harvest(cfg, state, tmp_path)}

    assert len(first) == 6 and search.cursors == ["*", "c1", "c2", "c3"]
    refused = {k for k, v in first.items() if isinstance(v, Rejection)}
    assert refused == {"hal-09000000", "hal-09000002", "hal-09000004"}
    host = urlsplit(pdf_host.url("")).netloc
    for k in refused:
        assert first[k].cls == "forbidden" and forbidden_host(first[k].message) == host
        assert first[k].message.startswith(f"host {host} answered 403 Forbidden")
    assert len(pdf_host.requests) == 1  # no request to the refusing host after its 403
    assert state.get_checkpoint(CHECKPOINT)["cursor"] == "c3"  # paged to the end

    serve_pdfs(pdf_host, pdf)  # the host lets us in again, but a plain rerun does not ask
    assert harvest(cfg, state, tmp_path) == [] and len(pdf_host.requests) == 1
    again = harvest_retrying(cfg, state, tmp_path, frozenset({"forbidden"}))
    assert sorted(i.id for i in again) == sorted(refused)
    assert all(isinstance(i, Candidate) and Path(i.pdf_path).read_bytes() == pdf
               for i in again)
    assert state.ids_with_class("fetch", ["forbidden"]) == set()
    assert search.cursors[-1] == "c3"  # the retry did not restart the search


def test_pdf_403_on_the_only_host_still_pages_to_the_end(fake_server, pdf_host, tmp_path,
                                                         state):
    docs = [synthetic_doc(i, pdf_host.url("")) for i in range(6)]
    search = PagedSearch(docs, rows=2)
    fake_server.add_handler("/search/", search)
    pdf_host.add("/hal-09000000/document", Reply(200, corpus_pdf("en_hal_reaim"), PDF_TYPE))
    pdf_host.add_handler("/hal-*", lambda req: Reply(403, "forbidden"))
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=2)
    items = harvest(cfg, state, tmp_path)
    assert search.cursors == ["*", "c1", "c2", "c3"]
    assert isinstance(items[0], Candidate) and [i.cls for i in items[1:]] == ["forbidden"] * 5
    assert [r.path for r in pdf_host.requests] == ["/hal-09000000/document",
                                                   "/hal-09000001/document"]
    assert state.get_checkpoint(CHECKPOINT)["cursor"] == "c3"
    assert harvest(cfg, state, tmp_path) == []  # a rerun does not stall on them


# --- resume and limit ---------------------------------------------------------------
def test_resume_after_a_kill_continues_without_duplicates(fake_server, tmp_path, state):
    docs = [synthetic_doc(i, fake_server.url("")) for i in range(7)]
    search = PagedSearch(docs, rows=2)
    fake_server.add_handler("/search/", search)
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=2)
    first = harvest(cfg, state, tmp_path, abandon_after=3)
    assert state.get_checkpoint(CHECKPOINT)["cursor"] == "c1"

    del search.requests[:]
    rest = harvest(cfg, state, tmp_path)
    ids = [i.id for i in first + rest]
    assert ids == [d["halId_s"] for d in docs] and len(set(ids)) == 7
    assert search.cursors[0] == "c1"
    assert fake_server.hits("/hal-09000002/document") == 1  # fetched before the kill only
    assert state.count_candidates() == 7


def test_item_yielded_but_not_recorded_is_fetched_again(fake_server, tmp_path, state):
    docs = [synthetic_doc(i, fake_server.url("")) for i in range(2)]
    fake_server.add_handler("/search/", PagedSearch(docs, rows=2))
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=2)
    gen = fetch(FetchContext("hal", cfg, state, tmp_path))
    record_fetch_item(state, next(gen))
    next(gen)  # killed before the driver recorded it
    gen.close()
    again = harvest(cfg, state, tmp_path)
    assert [i.id for i in again] == ["hal-09000001"]
    assert again[0].extra.get("pdf_reused") is True  # the file on disk was complete


def test_limit_then_a_full_run(fake_server, tmp_path, state):
    docs = [synthetic_doc(i, fake_server.url("")) for i in range(5)]
    del docs[1]["fr_abstract_s"], docs[1]["abstract_s"]  # only the English one is left
    search = PagedSearch(docs, rows=2)
    fake_server.add_handler("/search/", search)
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=2)
    limited = harvest(cfg, state, tmp_path, limit=3)
    assert [i.id for i in limited] == ["hal-09000000", "hal-09000001", "hal-09000002"]
    assert isinstance(limited[1], Rejection) and limited[1].cls == "no_abstract"
    assert search.cursors == ["*", "c1"] and fake_server.hits("/hal-09000003/document") == 0
    rest = harvest(cfg, state, tmp_path)
    assert [i.id for i in rest] == ["hal-09000003", "hal-09000004"]


def test_changed_query_starts_over(fake_server, tmp_path, state):
    docs = [synthetic_doc(i, fake_server.url("")) for i in range(3)]
    search = PagedSearch(docs, rows=2)
    fake_server.add_handler("/search/", search)
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    harvest(make_config(tmp_path, fake_server.url("/search/"), rows=2), state, tmp_path)
    del search.requests[:]
    cfg = make_config(tmp_path, fake_server.url("/search/"), rows=2, doc_types=["ART"])
    assert harvest(cfg, state, tmp_path) == []  # all already fetched
    assert search.cursors[0] == "*"
    assert search.requests[0].query["fq"][2] == "docType_s:(ART)"


@pytest.mark.parametrize("raw, iso", [
    ("2014", "2014"), ("2012-11", "2012-11"), ("2026-09-20", "2026-09-20"),
    ("2019-03-25T00:00:00Z", "2019-03-25"), ("2014-00-00", "2014"), ("2027", "2027"),
    ("mars 2014", "2014-03"), ("12 février 2019", "2019-02-12"), ("12/03/2014", "2014-03-12"),
    ("March 2014", "2014-03"), ("printemps 2012", "2012"),
    ("2035", None), ("2021-02-30", None), ("n.d.", None), ("2014/2015", None), ("1066", None),
    ("", None), (None, None),
])
def test_parse_hal_date(raw, iso):
    got = parse_hal_date(raw, TODAY)
    assert got.iso == iso
    assert (got.note is not None) == (iso is None and bool(raw))


def test_date_falls_back_and_notes_what_was_refused():
    doc = {"halId_s": "hal-1", "producedDate_s": "2099",
           "producedDate_tdate": "2099-01-01T00:00:00Z", "publicationDate_s": "sans date",
           "publicationDate_tdate": "2015-06-01T00:00:00Z",
           "fr_abstract_s": "Résumé.", "files_s": ["https://hal.science/hal-1/file/a.pdf"]}
    cand = to_candidate(doc, TODAY)
    assert cand.publication_date == "2015-06-01"
    assert cand.extra["date_field"] == "publicationDate_tdate"
    assert len(cand.extra["date_notes"]) == 3 and "future" in cand.extra["date_notes"][0]
    assert cand.pdf_url == "https://hal.science/hal-1/file/a.pdf"  # files_s[0] as given
    undated = to_candidate({**doc, "publicationDate_tdate": None}, TODAY)
    assert undated.publication_date is None and len(undated.extra["date_notes"]) == 3


def test_abstracts_lists_strings_and_untagged():
    doc = {"language_s": ["fr"], "en_abstract_s": "English one.",
           "es_abstract_s": ["Uno.", "Otro."],
           "abstract_s": ["Un résumé.", "English one.", "Uno.", "Otro.", "Ein Text."]}
    abstracts, notes = collect_abstracts(doc)
    assert abstracts == {"fr": "Un résumé.", "en": "English one.", "es": "Uno.",
                         "und": "Ein Text."}
    assert next(iter(abstracts)) == "fr" and notes["abstracts_dropped"] == {"es": 1}
    english = collect_abstracts({**doc, "language_s": ["en"]})[0]
    assert "fr" not in english and english["und"] == "Un résumé."


def test_records_without_file_or_id():
    no_file = to_candidate({"docid": 42, "fr_abstract_s": ["Résumé."]}, TODAY)
    assert isinstance(no_file, Rejection) and no_file.cls == "unavailable"
    assert no_file.id == "hal-docid-42"
    anonymous = to_candidate({"fr_abstract_s": ["Résumé."]}, TODAY)
    assert anonymous.id.startswith("hal-record-")
    assert anonymous.id == to_candidate({"fr_abstract_s": ["Résumé."]}, TODAY).id


def test_hostile_id_stays_inside_the_pdf_folder(fake_server, tmp_path, state):
    doc = synthetic_doc(1, fake_server.url(""))
    doc["halId_s"] = "../../etc/passwd"
    fake_server.add_handler("/search/", PagedSearch([doc], 5))
    serve_pdfs(fake_server, corpus_pdf("fr_ahrf_censure"))
    (cand,) = harvest(make_config(tmp_path, fake_server.url("/search/")), state, tmp_path)
    path = Path(cand.pdf_path)
    assert cand.id == "../../etc/passwd" and path.parent == tmp_path / "pdfs"
    assert path.name.startswith("etc_passwd-") and path.suffix == ".pdf"


# --- hostile bodies: bombs, deep JSON, slow drips ------------------------------------------
def test_search_gzip_bomb_and_deep_json_stop_in_one_line(fake_server, tmp_path, state):
    """The real recorded page padded to 40 MB and gzipped, then JSON nested 100,000 deep."""
    import gzip

    page = shared_path(*DROIT).read_bytes()
    bomb = gzip.compress(page + b" " * (40 << 20), compresslevel=9)
    fake_server.add("/search/", Reply(200, bomb, {"Content-Encoding": "gzip"}))
    cfg = make_config(tmp_path, fake_server.url("/search/"), max_body_mb=1)
    with pytest.raises(HarvestStopped, match=r"over the 1 MB cap \(max_body_mb\)") as err:
        harvest(cfg, state, tmp_path)
    assert "\n" not in str(err.value) and state.get_checkpoint(CHECKPOINT) is None

    fake_server.add("/search/", Reply(200, '{"a":[' * 50_000 + "]}" * 50_000))  # 400 kB
    with pytest.raises(HarvestStopped, match="nested too deep") as err:
        harvest(cfg, state, tmp_path)
    assert "\n" not in str(err.value)


def test_slow_drip_pdf_is_unreachable_and_leaves_no_part_file(fake_server, tmp_path, state):
    pdf = corpus_pdf("fr_ahrf_censure")
    docs = [synthetic_doc(i, fake_server.url("")) for i in range(2)]
    fake_server.add_handler("/search/", PagedSearch(docs, rows=5))
    fake_server.add("/hal-09000000/document", Reply(200, pdf, PDF_TYPE, drip_s=0.2))
    fake_server.add("/hal-09000001/document", Reply(200, pdf, PDF_TYPE))
    cfg = make_config(tmp_path, fake_server.url("/search/"), request_deadline_s=1.0)
    items = {i.id: i for i in harvest(cfg, state, tmp_path)}
    assert items["hal-09000000"].cls == "unreachable"
    assert "within the 1 s deadline" in items["hal-09000000"].message
    assert isinstance(items["hal-09000001"], Candidate)
    assert not list((tmp_path / "pdfs").glob(".part-*"))

"""PoliteClient against a local faulty server: retries, Retry-After, 403, PDF acceptance."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import stat
import time
from urllib.parse import urlsplit

import pytest

from loralay_build.atomic import write_atomic
from loralay_build.failures import FailureClass, StageError
from loralay_build.http import (
    HostBlocked,
    HostDown,
    HostForbidden,
    HttpSettings,
    PoliteClient,
    forbidden_host,
    retry_after_seconds,
)

from .conftest import shared_path
from .fakeserver import FakeServer, Reply


def client(**over) -> PoliteClient:
    base = dict(user_agent="loralay-build-test/0", contact="tests@example.org", timeout_s=1,
                connect_timeout_s=1, requests_per_second=1000, max_retries=3,
                backoff_factor=0.01, retry_after_max_s=1, max_pdf_mb=5)
    base.update(over)
    return PoliteClient(HttpSettings(**base))


@pytest.fixture(scope="module")
def pdf_bytes() -> bytes:
    return shared_path("corpus", "pdf", "en_bmc_trauma.pdf").read_bytes()


def test_user_agent_carries_contact(fake_server):
    fake_server.add("/j", Reply(200, '{"ok": 1}', {"Content-Type": "application/json"}))
    assert client().get_json(fake_server.url("/j")) == {"ok": 1}
    ua = fake_server.requests[0].headers["User-Agent"]
    assert "loralay-build-test" in ua and "tests@example.org" in ua


def test_429_with_retry_after_then_success_is_capped(fake_server):
    fake_server.add("/j", Reply(429, "slow down", {"Retry-After": "3600"}),
                    Reply(200, '{"n": 2}'))
    t = time.monotonic()
    assert client().get_json(fake_server.url("/j")) == {"n": 2}
    assert time.monotonic() - t < 3  # Retry-After 3600 s capped at retry_after_max_s=1
    assert fake_server.hits("/j") == 2


def test_one_retry_after_parser_for_the_client_and_the_crawls():
    """Delta-seconds and HTTP dates, capped; anything else is no pause (not an error)."""
    from datetime import datetime, timedelta, timezone
    from email.utils import format_datetime

    from loralay_build.sources.crawl import middlewares

    assert middlewares.retry_after_seconds is retry_after_seconds
    assert retry_after_seconds("3", 120) == 3.0
    assert retry_after_seconds(" 3600 ", 120) == 120.0
    soon = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_after_seconds(soon, 120) <= 30
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 120) == 0.0  # past
    for junk in (None, "", "soon", "²", "-5", "1.5"):
        assert retry_after_seconds(junk, 120) == 0.0, junk


def test_malformed_retry_after_is_no_pause_not_an_error(fake_server):
    """urllib3's own parser raised InvalidHeader on this; the project's reads it as 0."""
    fake_server.add("/j", Reply(503, "busy", {"Retry-After": "in a while"}),
                    Reply(200, '{"n": 3}'))
    assert client().get_json(fake_server.url("/j")) == {"n": 3}
    assert fake_server.hits("/j") == 2


def test_persistent_500_ends_unreachable(fake_server):
    fake_server.add("/j", Reply(500, "boom"))
    with pytest.raises(StageError) as e:
        client().get_json(fake_server.url("/j"))
    assert e.value.failure.cls is FailureClass.UNREACHABLE  # a rerun tries it again
    assert fake_server.hits("/j") == 4  # first try + 3 retries


def test_read_timeout_is_retried_then_classed(fake_server):
    fake_server.add("/slow", Reply(200, "{}", delay=1.5))
    with pytest.raises(StageError) as e:
        client(max_retries=1).get_json(fake_server.url("/slow"))
    assert e.value.failure.cls is FailureClass.UNREACHABLE
    assert fake_server.hits("/slow") == 2


def test_a_404_is_unavailable_not_unreachable(fake_server):
    fake_server.add("/gone", Reply(404, "no"))
    with pytest.raises(StageError) as e:
        client().get_json(fake_server.url("/gone"))
    assert e.value.failure.cls is FailureClass.UNAVAILABLE


def test_failures_in_a_row_take_the_host_down_and_an_answer_resets_the_count(fake_server):
    fake_server.add_handler("/bad*", lambda req: Reply(503, "down"))
    fake_server.add("/ok", Reply(200, "{}"))
    c = client(max_retries=0, host_down_after=3)
    for path in ("/bad1", "/bad2", "/ok", "/bad3", "/bad4"):  # the answer from /ok resets
        try:
            c.get_json(fake_server.url(path))
        except StageError as e:
            assert not isinstance(e, HostBlocked) and e.failure.cls is FailureClass.UNREACHABLE
    with pytest.raises(HostDown, match="is down .*HTTP 503"):
        c.get_json(fake_server.url("/bad5"))
    with pytest.raises(HostDown):  # no more requests to it this run
        c.get_json(fake_server.url("/ok"))
    assert fake_server.hits("/ok") == 1


def closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """The pauses asked for, none taken: a test of a 30-minute wait ends at once."""
    asked: list[float] = []
    monkeypatch.setattr(time, "sleep", asked.append)
    return asked


def test_a_closed_port_on_the_first_request_is_down_at_once_without_backoff(sleeps, caplog):
    """Issue 41 §2: nothing listens there, so no retries through the whole backoff."""
    port = closed_port()
    c = client(max_retries=5, backoff_factor=1, host_down_after=3)
    with pytest.raises(HostDown) as first:
        c.get(f"http://127.0.0.1:{port}/a")
    assert first.value.failure.cls is FailureClass.UNREACHABLE  # a rerun tries it again
    assert str(first.value) == (f"host 127.0.0.1:{port} is down (connection refused on the "
                                f"first request, nothing listens there: http://127.0.0.1:"
                                f"{port}/a); no more requests to it this run")
    assert sleeps == []
    with pytest.raises(HostDown, match="connection refused"):  # no more requests this run
        c.get(f"http://127.0.0.1:{port}/b")
    assert c.stats == {"error/ConnectionError": 1, "refused/blocked-host": 1}


def test_a_host_that_answered_then_refuses_is_retried_as_before(sleeps):
    """A server restarting under a running harvest is not a host that was never there."""
    c = client(max_retries=2, host_down_after=2)
    with FakeServer() as server:
        server.add("/ok", Reply(200, "{}", {"Connection": "close"}))
        c.get_json(server.url("/ok"))
    with pytest.raises(StageError) as e:  # the same address, nothing listening any more
        c.get(server.url("/a"))
    assert not isinstance(e.value, HostBlocked) and "ConnectionError after retries" in str(e.value)
    assert len(sleeps) == 1  # urllib3 retries at once, then backs off: the retries were used
    with pytest.raises(HostDown, match="requests failed in a row after retries"):
        c.get(server.url("/b"))


def test_a_retry_after_beyond_the_cap_is_capped_and_said_in_one_line(fake_server, sleeps,
                                                                     caplog):
    """Issue 41 §2: `Retry-After: 999999999` was waited out (as the cap) in silence."""
    fake_server.add("/j", Reply(503, "busy", {"Retry-After": "999999999"}),
                    Reply(200, '{"n": 1}'))
    with caplog.at_level(logging.INFO, logger="loralay_build.http"):
        assert client(retry_after_max_s=120, max_retries=5).get_json(
            fake_server.url("/j")) == {"n": 1}
    assert sleeps == [120.0]
    host = urlsplit(fake_server.url("/")).netloc
    assert [r.getMessage() for r in caplog.records] == [
        f"host {host}: HTTP 503 asks to wait 999999999 s (Retry-After); waiting the 120 s cap "
        f"(retry_after_max_s), then retry 1 of 5"]


def test_every_long_wait_says_host_status_and_seconds_and_short_ones_stay_quiet(
        fake_server, sleeps, caplog):
    fake_server.add("/ra", Reply(429, "slow", {"Retry-After": "30"}), Reply(200, "{}"))
    fake_server.add("/ra-short", Reply(429, "slow", {"Retry-After": "2"}), Reply(200, "{}"))
    fake_server.add("/b", Reply(500, "boom"))
    c = client(retry_after_max_s=120, backoff_factor=4, max_retries=3, host_down_after=10)
    with caplog.at_level(logging.INFO, logger="loralay_build.http"):
        c.get_json(fake_server.url("/ra"))
        c.get_json(fake_server.url("/ra-short"))
        with pytest.raises(StageError):
            c.get_json(fake_server.url("/b"))
    host = urlsplit(fake_server.url("/")).netloc
    assert sleeps[:2] == [30.0, 2.0]
    backoffs = sleeps[2:]  # urllib3: no pause before the first retry, then 4 * 2**(n-1)
    assert len(backoffs) == 2 and 8 <= backoffs[0] < 10 and 16 <= backoffs[1] < 18
    assert [r.getMessage() for r in caplog.records] == [
        f"host {host}: HTTP 429; waiting 30 s (Retry-After 30 s), then retry 1 of 3",
        f"host {host}: HTTP 500; waiting {backoffs[0]:.0f} s (backoff), then retry 2 of 3",
        f"host {host}: HTTP 500; waiting {backoffs[1]:.0f} s (backoff), then retry 3 of 3"]


def test_error_json_and_html_behind_200_are_errors(fake_server):
    fake_server.add("/err", Reply(200, '{"error": {"msg": "undefined field"}}'))
    fake_server.add("/html", Reply(200, "<html><body>maintenance</body></html>"))
    fake_server.add("/bad", Reply(200, '{"response": '))
    for path, words in (("/err", "service error"), ("/html", "HTML"), ("/bad", "malformed")):
        with pytest.raises(StageError, match=words):
            client().get_json(fake_server.url(path))


def test_403_blocks_the_host_for_the_run(fake_server):
    fake_server.add("/a", Reply(403, "forbidden"))
    fake_server.add("/b", Reply(200, "{}"))
    c = client()
    with pytest.raises(HostForbidden) as first:
        c.get_json(fake_server.url("/a"))
    with pytest.raises(HostForbidden) as later:
        c.get_json(fake_server.url("/b"))
    assert fake_server.hits("/b") == 0
    host = urlsplit(fake_server.url("/")).netloc
    for e in (first.value, later.value):
        assert e.failure.cls is FailureClass.FORBIDDEN and forbidden_host(str(e)) == host
        assert str(e).startswith(f"host {host} answered 403 Forbidden")
    assert first.value.refused_now and not later.value.refused_now


def test_forbidden_host_reads_only_forbidden_messages():
    assert forbidden_host("host files.example answered 403 Forbidden; no more requests to "
                          "it this run") == "files.example"
    assert forbidden_host("host files.example is down (requests failed in a row)") is None
    assert forbidden_host("http://x/a.pdf: HTTP 404") is None


def test_pdf_download_is_verified_and_atomic(fake_server, tmp_path, pdf_bytes):
    fake_server.add("/ok.pdf", Reply(200, pdf_bytes, {"Content-Type": "application/pdf"}))
    d = client().download_pdf(fake_server.url("/ok.pdf"), tmp_path / "ok.pdf")
    assert d.size == len(pdf_bytes) and d.sha256 == hashlib.sha256(pdf_bytes).hexdigest()
    assert (tmp_path / "ok.pdf").read_bytes() == pdf_bytes
    assert [p.name for p in tmp_path.iterdir()] == ["ok.pdf"]


def test_truncated_pdf_is_retried_then_succeeds(fake_server, tmp_path, pdf_bytes):
    fake_server.add("/t.pdf", Reply(200, pdf_bytes, truncate_to=len(pdf_bytes) // 2),
                    Reply(200, pdf_bytes))
    d = client().download_pdf(fake_server.url("/t.pdf"), tmp_path / "t.pdf")
    assert d.size == len(pdf_bytes)


@pytest.mark.parametrize("reply,reason", [
    (Reply(200, "<!DOCTYPE html><html>login</html>", {"Content-Type": "application/pdf"}),
     "not a PDF"),
    (Reply(200, b""), "empty body"),
    (Reply(404, "missing"), "HTTP 404"),
])
def test_unacceptable_bodies_are_unavailable_and_leave_nothing(fake_server, tmp_path, reply,
                                                                reason):
    fake_server.add("/x.pdf", reply)
    with pytest.raises(StageError, match=reason) as e:
        client().download_pdf(fake_server.url("/x.pdf"), tmp_path / "x.pdf")
    assert e.value.failure.cls is FailureClass.UNAVAILABLE
    assert list(tmp_path.iterdir()) == []


def test_always_truncated_ends_unavailable(fake_server, tmp_path, pdf_bytes):
    fake_server.add("/t.pdf", Reply(200, pdf_bytes, truncate_to=1000))
    with pytest.raises(StageError, match="cut short"):
        client().download_pdf(fake_server.url("/t.pdf"), tmp_path / "t.pdf", attempts=2)
    assert list(tmp_path.iterdir()) == []


def test_size_cap(fake_server, tmp_path, pdf_bytes):
    fake_server.add("/big.pdf", Reply(200, pdf_bytes))
    with pytest.raises(StageError, match="cap"):
        client(max_pdf_mb=0.01).download_pdf(fake_server.url("/big.pdf"), tmp_path / "b.pdf")


# --- bodies capped once decoded, deadlines, deep JSON, redirects, file modes -------------
HAL_PAGE = ("fixtures", "hal", "hal_search_2026-10-04_domain_shs.droit_cursorMark_rows5.json")
GZIP = {"Content-Encoding": "gzip"}


def bomb(real: bytes, padding_mb: int) -> bytes:
    """A real body followed by `padding_mb` MB of spaces, gzipped: tiny on the wire."""
    return gzip.compress(real + b" " * (padding_mb * 1024 * 1024), compresslevel=9)


def test_gzipped_api_body_is_decoded_and_a_bomb_is_capped(fake_server):
    page = shared_path(*HAL_PAGE).read_bytes()
    fake_server.add("/ok", Reply(200, gzip.compress(page), {**GZIP, "Content-Type":
                                                            "application/json"}))
    fake_server.add("/bomb", Reply(200, bomb(page, 40), {**GZIP, "Content-Type":
                                                         "application/json"}))
    c = client(max_body_mb=2)
    assert c.get_json(fake_server.url("/ok")) == json.loads(page)
    assert len(bomb(page, 40)) < 100_000  # what the server sends
    with pytest.raises(StageError, match=r"over the 2 MB cap \(max_body_mb\) once decoded") as e:
        c.get_json(fake_server.url("/bomb"))
    assert e.value.failure.cls is FailureClass.UNAVAILABLE and "\n" not in str(e.value)


def test_gzipped_pdf_is_accepted_and_a_pdf_bomb_is_capped(fake_server, tmp_path, pdf_bytes):
    fake_server.add("/z.pdf", Reply(200, gzip.compress(pdf_bytes), GZIP))
    fake_server.add("/bomb.pdf", Reply(200, bomb(pdf_bytes, 30), GZIP))
    c = client(max_pdf_mb=2)
    d = c.download_pdf(fake_server.url("/z.pdf"), tmp_path / "z.pdf")
    assert (tmp_path / "z.pdf").read_bytes() == pdf_bytes and d.size == len(pdf_bytes)
    with pytest.raises(StageError, match=r"over the 2 MB cap \(max_pdf_mb\)") as e:
        c.download_pdf(fake_server.url("/bomb.pdf"), tmp_path / "bomb.pdf")
    assert e.value.failure.cls is FailureClass.UNAVAILABLE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["z.pdf"]  # no .part-* left


def test_json_nested_100000_deep_is_one_line(fake_server):
    fake_server.add("/deep", Reply(200, "[" * 100_000 + "]" * 100_000))
    fake_server.add("/deep-object", Reply(200, '{"a":' * 100_000 + "1" + "}" * 100_000))
    for path in ("/deep", "/deep-object"):
        with pytest.raises(StageError, match="nested too deep") as e:
            client().get_json(fake_server.url(path))
        assert e.value.failure.cls is FailureClass.BAD_METADATA


def test_slow_drip_hits_the_total_deadline_and_leaves_no_part_file(fake_server, tmp_path,
                                                                   pdf_bytes):
    fake_server.add("/drip.pdf", Reply(200, pdf_bytes, drip_s=0.2))
    fake_server.add("/drip.json", Reply(200, json.dumps({"n": 1}) + " " * 1000, drip_s=0.2))
    c = client(timeout_s=1, request_deadline_s=1.5, host_down_after=10)
    t = time.monotonic()
    with pytest.raises(StageError, match=r"no complete answer within the 1.5 s deadline") as e:
        c.download_pdf(fake_server.url("/drip.pdf"), tmp_path / "drip.pdf")
    assert e.value.failure.cls is FailureClass.UNREACHABLE
    assert time.monotonic() - t < 4  # each byte came within the read timeout
    assert list(tmp_path.iterdir()) == []  # no .part-* file
    with pytest.raises(StageError, match="deadline") as e:
        c.get_json(fake_server.url("/drip.json"))
    assert e.value.failure.cls is FailureClass.UNREACHABLE


@pytest.mark.parametrize("path, words", [
    ("/to-file", "not http"), ("/loop", "too many redirects"),
])
def test_refused_redirects_are_unavailable_and_do_not_take_the_host_down(fake_server, path,
                                                                          words):
    fake_server.add("/to-file", Reply(302, "", {"Location": "file:///etc/passwd"}))
    fake_server.add("/loop", Reply(302, "", {"Location": "/loop"}))
    fake_server.add("/ok", Reply(200, '{"ok": 1}'))
    c = client(host_down_after=1)
    for _ in range(3):
        with pytest.raises(StageError, match=words) as e:
            c.get_json(fake_server.url(path))
        assert e.value.failure.cls is FailureClass.UNAVAILABLE
        assert not isinstance(e.value, HostBlocked)
    assert c.get_json(fake_server.url("/ok")) == {"ok": 1}  # the host is not taken for down


def test_written_files_follow_the_umask(fake_server, tmp_path, pdf_bytes):
    fake_server.add("/ok.pdf", Reply(200, pdf_bytes))
    old = os.umask(0o027)
    try:
        client().download_pdf(fake_server.url("/ok.pdf"), tmp_path / "a.pdf")
        write_atomic(tmp_path / "b.pdf", pdf_bytes)
    finally:
        os.umask(old)
    for name in ("a.pdf", "b.pdf"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o640, name


def test_the_crawls_say_a_capped_retry_after_in_the_clients_words(monkeypatch, caplog):
    """SciELO and KoreaScience pause in Scrapy's middleware: the same cap, the same line."""
    from scrapy import Spider
    from scrapy.http import Request, Response
    from scrapy.utils.test import get_crawler

    from loralay_build.sources.crawl import middlewares

    waits: list[float] = []
    monkeypatch.setattr(middlewares.task, "deferLater",
                        lambda reactor, wait, fn: waits.append(wait) or fn())
    crawler = get_crawler(Spider, {"RETRY_AFTER_MAX_S": 120, "RETRY_TIMES": 3,
                                   "RETRY_HTTP_CODES": [503]})
    crawler.spider = crawler._create_spider("t")
    mw = middlewares.RetryAfterMiddleware.from_crawler(crawler)
    url = "http://127.0.0.1:9/x"  # nothing is sent: the middleware only sees a response
    with caplog.at_level(logging.INFO, logger="loralay_build.http"):
        retry = mw.process_response(Request(url), Response(
            url, status=503, headers={"Retry-After": "999999999"}, request=Request(url)))
    assert retry.url == url and waits == [120.0]
    assert [r.getMessage() for r in caplog.records if r.name == "loralay_build.http"] == [
        "host 127.0.0.1:9: HTTP 503 asks to wait 999999999 s (Retry-After); waiting the 120 s "
        "cap (retry_after_max_s), then retry 1 of 3"]

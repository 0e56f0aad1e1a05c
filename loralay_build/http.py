"""Polite HTTP shared by every fetcher.

One `requests` session per host, an identifying User-Agent with a contact address,
connect/read timeouts, urllib3's Retry for 429/5xx/connection errors (exponential
backoff with jitter, Retry-After honoured but capped), a per-host rate limit, and a
403 that stops all further requests to that host for the run (`HostForbidden`: an API
host refusing stops the harvest, a PDF host refusing costs only its own records, class
`forbidden`). What retries could not fix is `unreachable` (a rerun tries it again), and
`host_down_after` such failures in a row take the host for down (`HostDown`): the
fetcher stops rather than burn through its whole list during an outage. urllib3 does
not retry a body cut short, and a 200 can carry an HTML page or an error JSON, so PDF
and JSON bodies are checked here and downloads are retried by hand for truncation.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import http.client
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.exceptions import DecodeError
from urllib3.util.retry import Retry

from .atomic import AtomicFile, Download
from .conf.common import HttpFields
from .failures import FailureClass, StageError
from .pdfmagic import HEAD, has_pdf_magic

log = logging.getLogger(__name__)

# the one list of statuses a request is tried again on (the crawls' Scrapy settings read it
# too): rate limits, server errors, and the timeouts some proxies and CDNs answer with
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 522, 524})
MB = 1024 * 1024
# a pause longer than this is said in the log (host, status, seconds): shorter ones are
# the everyday backoff, longer ones are where a run looks hung
LOUD_WAIT_S = 5.0
CHUNK = 64 * 1024
# a redirect we will not follow is the server's refusal, not a network failure: it is
# not retried by a rerun and does not count towards `host_down_after`
REFUSED_REDIRECTS = (requests.TooManyRedirects, requests.exceptions.InvalidSchema,
                     requests.exceptions.InvalidURL, requests.exceptions.MissingSchema)
# what reading a body can raise once the headers are in: the body was cut short
BODY_ERRORS = (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError,
               requests.RequestException)


# the manners every fetcher shares, declared once with the other settings
HttpSettings = HttpFields


class HostBlocked(StageError):
    """No more requests to this host this run."""

    def __init__(self, host: str, why: str, cls: FailureClass) -> None:
        super().__init__(cls, f"host {host} {why}; no more requests to it this run")
        self.host = host


class HostForbidden(HostBlocked):
    """The host answered 403. On an API the harvest stops; on a PDF host only that host's
    records are given up (`forbidden`, retried with `--retry forbidden`), as one refusing
    mirror says nothing about the papers on the others."""

    def __init__(self, host: str, refused_now: bool = True) -> None:
        super().__init__(host, FORBIDDEN_WHY, FailureClass.FORBIDDEN)
        # False when no request was sent because the host refused earlier this run: a
        # listing on the same host as the PDFs (a bucket) can then tell its own refusal
        # (stop the harvest) from a PDF's (record the paper `forbidden`)
        self.refused_now = refused_now


class HostDown(HostBlocked):
    """Requests to the host keep failing: the fetcher stops rather than burn its list."""

    def __init__(self, host: str, last: str, why: str = "requests failed in a row after "
                 "retries; last") -> None:
        super().__init__(host, f"is down ({why}: {last})", FailureClass.UNREACHABLE)


FORBIDDEN_WHY = "answered 403 Forbidden"
# a host that refuses before it ever answered this run: nothing listens, retries only delay
_REFUSED = "connection refused on the first request, nothing listens there"
_FORBIDDEN_MESSAGE = re.compile(r"\bhost (\S+) " + re.escape(FORBIDDEN_WHY))


def forbidden_message(host: str) -> str:
    """The one wording of a 403 (the Scrapy spiders use it too), read by `forbidden_host`."""
    return f"host {host} {FORBIDDEN_WHY}; no more requests to it this run"


def forbidden_host(message: str) -> str | None:
    """The host a `forbidden` failure message names, so a report can group by host."""
    m = _FORBIDDEN_MESSAGE.search(message or "")
    return m.group(1) if m else None


_DELTA_SECONDS = re.compile(r"^[0-9]+$")  # ASCII digits: "²".isdigit() is true


def retry_after_seconds(value: str | None, cap: float) -> float:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), within
    [0, cap]; a value that is neither is no pause (0). The one parser of the header: the
    polite client's retries (`_Retry`) and the crawls' middleware read it here."""
    text = (value or "").strip()
    if not text:
        return 0.0
    if _DELTA_SECONDS.match(text):
        return min(float(text), cap)
    try:
        when = email.utils.parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return 0.0
    return max(0.0, min(when - time.time(), cap))


class _Retry(Retry):
    """urllib3's retries with the project's Retry-After parser: a malformed header is no
    pause instead of urllib3's `InvalidHeader`, and the cap is the same everywhere.

    A pause is where a run goes quiet, so every one over `LOUD_WAIT_S` says its host,
    what it answers and how long (a Retry-After of 30 years waited out as the cap in
    silence looks like a hang); and a host that refuses the connection before it ever
    answered this run has nothing listening: backing off through every retry only
    delays the one line that says so (`answered` is the client's set of hosts that did)."""

    def __init__(self, *args: Any, host: str = "",
                 answered: frozenset[str] | set[str] = frozenset(), **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.host = host
        self.answered = answered

    def new(self, **kw: Any) -> _Retry:
        kw.setdefault("host", self.host)
        kw.setdefault("answered", self.answered)
        return super().new(**kw)

    def parse_retry_after(self, retry_after: str) -> float:
        return retry_after_seconds(retry_after, float(self.retry_after_max))

    def increment(self, method: str | None = None, url: str | None = None,
                  response: Any = None, error: Exception | None = None,
                  _pool: Any = None, _stacktrace: Any = None) -> _Retry:
        retry = self
        if error is not None and self.host not in self.answered and connection_refused(error):
            retry = self.new(total=0, connect=0)  # no retry left: urllib3 gives up at once
        return Retry.increment(retry, method, url, response, error, _pool, _stacktrace)

    def sleep_for_retry(self, response: Any) -> bool:
        wait = self.get_retry_after(response)
        if not wait:
            return False
        say_pause(self.host, f"HTTP {response.status}", wait, self._which_retry(),
                  asked=response.headers.get("Retry-After"))
        time.sleep(wait)
        return True

    def sleep(self, response: Any = None) -> None:
        """urllib3's order (the server's Retry-After, else the backoff), each wait said."""
        if self.respect_retry_after_header and response and self.sleep_for_retry(response):
            return
        wait = self.get_backoff_time()
        if wait > 0:
            last = self.history[-1] if self.history else None
            what = (f"HTTP {last.status}" if last is not None and last.status else
                    type(last.error).__name__ if last is not None and last.error else "a failure")
            say_pause(self.host, what, wait, self._which_retry())
            time.sleep(wait)

    def _which_retry(self) -> str:
        done = len(self.history)
        left = self.total if isinstance(self.total, int) else 0
        return f"then retry {done} of {done + left}"


def say_pause(host: str, what: str, wait: float, then: str, asked: str | None = None) -> None:
    """The one line a pause gets, from the client's retries and the crawls' middleware:
    a Retry-After (`asked`, the header) beyond the cap says both numbers as a warning; any
    other pause over `LOUD_WAIT_S` says its host, what it answers and how long."""
    if asked is not None:
        wanted = retry_after_seconds(asked, float("inf"))
        if wanted > wait:
            log.warning("host %s: %s asks to wait %.0f s (Retry-After); waiting the %g s cap "
                        "(retry_after_max_s), %s", host, what, wanted, wait, then)
            return
    if wait > LOUD_WAIT_S:
        why = "backoff" if asked is None else f"Retry-After {wait:.0f} s"
        log.info("host %s: %s; waiting %.0f s (%s), %s", host, what, wait, why, then)


def connection_refused(error: BaseException | None) -> bool:
    """Nothing listens at the address: the connection was refused (not a timeout, not DNS)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, ConnectionRefusedError):
            return True
        seen.add(id(error))
        nested = getattr(error, "reason", None)  # MaxRetryError keeps the cause there
        error = nested if isinstance(nested, BaseException) else (error.__cause__ or
                                                                  error.__context__)
    return False


class _RateLimiter:
    def __init__(self, per_second: float) -> None:
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.next_at = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        with self.lock:
            now = time.monotonic()
            delay = self.next_at - now
            self.next_at = max(now, self.next_at) + self.interval
        if delay > 0:
            time.sleep(delay)


class PoliteClient:
    """All of a fetcher's traffic goes through one of these."""

    def __init__(self, settings: HttpSettings) -> None:
        self.settings = settings
        self._sessions: dict[str, requests.Session] = {}
        self._limiters: dict[str, _RateLimiter] = {}
        self._blocked: dict[str, Callable[[], HostBlocked]] = {}  # host -> its error
        self._failing: dict[str, int] = {}  # host -> unreachable requests in a row
        self._answered: set[str] = set()  # hosts that sent a response this run
        self.stats: dict[str, int] = {}

    def _count(self, key: str) -> None:
        self.stats[key] = self.stats.get(key, 0) + 1

    def _session(self, host: str) -> requests.Session:
        if host not in self._sessions:
            s = self.settings
            retry = _Retry(
                total=s.max_retries, connect=s.max_retries, read=s.max_retries,
                status=s.max_retries, status_forcelist=RETRY_STATUSES,
                backoff_factor=s.backoff_factor, backoff_jitter=s.backoff_factor / 2,
                backoff_max=60, respect_retry_after_header=True,
                retry_after_max=int(s.retry_after_max_s), raise_on_status=False,
                allowed_methods=frozenset({"GET", "HEAD"}), host=host, answered=self._answered,
            )
            session = requests.Session()
            session.mount("http://", HTTPAdapter(max_retries=retry))
            session.mount("https://", HTTPAdapter(max_retries=retry))
            session.headers["User-Agent"] = s.full_user_agent
            self._sessions[host] = session
            self._limiters[host] = _RateLimiter(s.requests_per_second)
        return self._sessions[host]

    def get(self, url: str, params: Any = None, stream: bool = False,
            body_statuses: frozenset[int] = frozenset()) -> requests.Response:
        """GET with manners; raises a classed StageError for what retries could not fix.

        Without `stream` the body is read here, decoded, under `max_body_mb` and the
        request's deadline (`.content`, `.text` then work as usual); with `stream` the
        caller reads it with `iter_body`, which holds it to the same deadline.
        `body_statuses`: 4xx statuses (not 403) whose body the caller reads itself rather
        than failing on the status (an OAI-PMH error document behind an HTTP 422)."""
        started = time.monotonic()
        resp = self._open(url, params, body_statuses)
        resp.loralay_deadline = started + self.settings.request_deadline_s  # type: ignore
        if not stream:
            cap = int(self.settings.max_body_mb * MB)
            try:
                body = b"".join(self.iter_body(resp, url, cap, "max_body_mb"))
            except _Truncated as e:  # as a connection dropped before the headers
                raise self._unreachable(urlsplit(url).netloc, str(e)) from e
            resp._content = body  # what `requests` itself caches after a full read
            resp._content_consumed = True  # type: ignore[attr-defined]
        return resp

    def _open(self, url: str, params: Any,
              body_statuses: frozenset[int] = frozenset()) -> requests.Response:
        """The response with its headers read; a status that ends the request raises."""
        host = urlsplit(url).netloc
        self._check_blocked(host)
        session = self._session(host)
        self._limiters[host].wait()
        timeout = (self.settings.connect_timeout_s, self.settings.timeout_s)
        try:
            resp = session.get(url, params=params, stream=True, timeout=timeout)
        except REFUSED_REDIRECTS as e:
            self._count(f"refused/{e.__class__.__name__}")
            raise StageError(FailureClass.UNAVAILABLE, f"{url}: {_redirect_refusal(e)}") from e
        except requests.RequestException as e:
            self._count(f"error/{e.__class__.__name__}")
            if host not in self._answered and connection_refused(e):
                self._blocked[host] = functools.partial(HostDown, host, url, _REFUSED)
                raise HostDown(host, url, _REFUSED) from e
            raise self._unreachable(host, f"{url}: {e.__class__.__name__} after retries") from e
        self._count(f"status/{resp.status_code}")
        self._answered.add(host)
        self._check_status(host, url, resp, body_statuses)
        return resp

    def _check_status(self, host: str, url: str, resp: requests.Response,
                      body_statuses: frozenset[int] = frozenset()) -> None:
        if resp.status_code in RETRY_STATUSES:
            resp.close()
            raise self._unreachable(host, f"{url}: HTTP {resp.status_code} after retries")
        self._failing[host] = 0
        if resp.status_code == 403:
            resp.close()
            self._blocked[host] = functools.partial(HostForbidden, host, refused_now=False)
            raise HostForbidden(host)
        if resp.status_code >= 400 and resp.status_code not in body_statuses:
            resp.close()
            raise StageError(FailureClass.UNAVAILABLE, f"{url}: HTTP {resp.status_code}")

    def iter_body(self, resp: requests.Response, url: str, cap: int,
                  cap_name: str) -> Generator[bytes, None, None]:
        """The body in decoded chunks, stopped past `cap` decoded bytes (a gzip bomb is
        small on the wire) or past the request's deadline (a server dripping a byte
        every few seconds never trips the per-read timeout). `read1` returns whatever
        has arrived, so the deadline is checked between bytes, not after 64 KB."""
        deadline = getattr(resp, "loralay_deadline", None)
        host = urlsplit(url).netloc
        size = 0
        try:
            while True:
                if deadline is not None and time.monotonic() > deadline:
                    raise self._unreachable(host, f"{url}: no complete answer within the "
                                            f"{self.settings.request_deadline_s:g} s deadline")
                chunk = resp.raw.read1(CHUNK, decode_content=True)
                if not chunk:  # read to the end: the connection may serve the next request
                    resp._content_consumed = True  # type: ignore[attr-defined]
                    return
                size += len(chunk)
                if size > cap:
                    raise StageError(FailureClass.UNAVAILABLE, f"{url}: body over the "
                                     f"{cap / MB:g} MB cap ({cap_name}) once decoded")
                yield chunk
        except DecodeError as e:
            raise StageError(FailureClass.UNAVAILABLE, f"{url}: body cannot be decoded "
                             f"({resp.headers.get('Content-Encoding', 'no encoding')})") from e
        except BODY_ERRORS as e:
            raise _Truncated(f"{url}: body cut short ({e.__class__.__name__})") from e
        finally:
            resp.close()

    def _check_blocked(self, host: str) -> None:
        """A host that refused us or is down gets no request; a fresh error each time, so
        tracebacks do not pile up on one exception object."""
        blocked = self._blocked.get(host)
        if blocked is not None:
            self._count("refused/blocked-host")
            raise blocked()

    def _unreachable(self, host: str, message: str) -> StageError:
        """The error for a request retries could not save; the last straw takes the host down."""
        self._failing[host] = self._failing.get(host, 0) + 1
        if self._failing[host] >= max(1, self.settings.host_down_after):
            self._blocked[host] = functools.partial(HostDown, host, message)
            return HostDown(host, message)
        return StageError(FailureClass.UNREACHABLE, message)

    def get_json(self, url: str, params: Any = None) -> Any:
        """A JSON body; an HTML page or `{"error": ...}` behind a 200 is an error, not data."""
        text = self.get_text(url, params)
        if text.lstrip()[:1] == "<":
            raise StageError(FailureClass.UNAVAILABLE, f"{url}: HTML page instead of JSON")
        data = parse_json(text, url)
        if isinstance(data, dict) and "error" in data:
            raise StageError(FailureClass.UNAVAILABLE, f"{url}: service error: "
                             f"{str(data['error'])[:200]}")
        return data

    def get_text(self, url: str, params: Any = None) -> str:
        return self.get(url, params=params).text

    def download_pdf(self, url: str, dest: Path, attempts: int = 3) -> Download:
        """Fetch a PDF to `dest` atomically; a body cut short is tried again `attempts` times."""
        last: StageError | None = None
        for attempt in range(attempts):
            try:
                return self._download_once(url, dest)
            except _Truncated as e:
                last = StageError(FailureClass.UNAVAILABLE, str(e))
                self._count("download/truncated")
                time.sleep(min(self.settings.backoff_factor * 2 ** attempt, 10))
        assert last is not None
        raise last

    def _download_once(self, url: str, dest: Path) -> Download:
        resp = self.get(url, stream=True)
        cap = int(self.settings.max_pdf_mb * MB)
        declared = resp.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > cap:
            resp.close()
            raise StageError(FailureClass.UNAVAILABLE, f"{url}: {declared} bytes is over the "
                             f"{self.settings.max_pdf_mb} MB cap")
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip().lower()
        with AtomicFile(dest) as (fh, digest):
            size = self._write_pdf(resp, url, cap, ctype, fh, digest)
            encoded = resp.headers.get("Content-Encoding", "identity") != "identity"
            if declared and declared.isdigit() and size < int(declared) and not encoded:
                raise _Truncated(f"{url}: body cut short ({size} of {declared} bytes)")
        return Download(dest, digest.hexdigest(), size)

    def _write_pdf(self, resp: requests.Response, url: str, cap: int, ctype: str, fh: Any,
                   digest: Any) -> int:
        """The body into `fh`; its first KB must hold the PDF magic (a body may arrive a
        byte at a time, so the check waits for that KB or the end)."""
        head = b""
        with contextlib.closing(self.iter_body(resp, url, cap, "max_pdf_mb")) as body:
            for chunk in body:
                if len(head) < HEAD:
                    head += chunk[:HEAD - len(head)]
                    if len(head) == HEAD:
                        _check_pdf_head(head, url, ctype)
                fh.write(chunk)
                digest.update(chunk)
        if not head:
            raise StageError(FailureClass.UNAVAILABLE, f"{url}: empty body")
        if len(head) < HEAD:
            _check_pdf_head(head, url, ctype)
        return fh.tell()


def _check_pdf_head(head: bytes, url: str, ctype: str) -> None:
    """The magic bytes decide; a PDF content type with an HTML body is still not a PDF."""
    if not has_pdf_magic(head):
        raise StageError(FailureClass.UNAVAILABLE,
                         f"{url}: not a PDF (content type {ctype or 'none'})")


def parse_json(text: str, what: str) -> Any:
    """JSON text to data; malformed JSON is `unavailable`, JSON nested past Python's
    recursion limit (a hostile `[[[[...` 100,000 deep) `bad_metadata`, one line each."""
    try:
        return json.loads(text)
    except RecursionError as e:
        raise StageError(FailureClass.BAD_METADATA,
                         f"{what}: JSON nested too deep to parse") from e
    except ValueError as e:
        raise StageError(FailureClass.UNAVAILABLE, f"{what}: malformed JSON ({e})") from e


def _redirect_refusal(e: Exception) -> str:
    if isinstance(e, requests.TooManyRedirects):
        return "refused: too many redirects (a loop)"
    return f"refused: redirected to an address that is not http(s) ({e.__class__.__name__})"


class _Truncated(Exception):
    pass


def check_pdf_bytes(body: bytes, max_bytes: int) -> str | None:
    """The acceptance rule for a downloaded body (used by the Scrapy pipeline too).

    Returns None when acceptable, else the reason in a few words."""
    if not body:
        return "empty body"
    if len(body) > max_bytes:
        return f"body of {len(body)} bytes is over the cap"
    if not has_pdf_magic(body):
        return "not a PDF (no %PDF- magic)"
    return None

"""A local HTTP server on 127.0.0.1 that serves recorded responses and injects faults.

Tests register, per path, a sequence of `Reply`s (consumed in order, the last one
repeats) or a function of the request. Faults are plain replies: a status with
Retry-After, a delay longer than the client's read timeout, a body cut short
(`truncate_to`), a body dripped a byte at a time (`drip_s`), a gzip bomb (a gzipped body
with `Content-Encoding: gzip`), a redirect (`Location`), an HTML page served as a PDF,
and so on. Only loopback is used.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate_to: int | None = None  # send only this many bytes of the body, then close
    drip_s: float = 0.0  # send the body one byte at a time, this long apart (a slow drip)

    def data(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


@dataclass
class Request:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


Handler = Callable[[Request], Reply]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hung up on purpose (a capped body, a deadline) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeServer:
    def __init__(self) -> None:
        self._routes: dict[str, list[Reply] | Handler] = {}
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self._httpd = _QuietServer(("127.0.0.1", 0), self._make_handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)

    # --- set-up -----------------------------------------------------------------
    def add(self, path: str, *replies: Reply) -> None:
        self._routes[path] = list(replies)

    def add_handler(self, path: str, fn: Handler) -> None:
        """`path` ending in `*` matches every path with that prefix."""
        self._routes[path] = fn

    def url(self, path: str = "/") -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    def hits(self, path: str) -> int:
        return sum(1 for r in self.requests if r.path == path)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- serving ----------------------------------------------------------------
    def _pick(self, req: Request) -> Reply:
        with self._lock:
            self.requests.append(req)
            route = self._routes.get(req.path)
            if route is None:
                for key, value in self._routes.items():
                    if key.endswith("*") and req.path.startswith(key[:-1]):
                        route = value
                        break
            if route is None:
                return Reply(404, b"not found", {"Content-Type": "text/plain"})
            if callable(route):
                return route(req)
            return route.pop(0) if len(route) > 1 else route[0]

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                parts = urlsplit(self.path)
                req = Request(parts.path, parse_qs(parts.query), dict(self.headers))
                reply = server._pick(req)
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.data()
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(body)))
                    if reply.truncate_to is not None:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    sent = body if reply.truncate_to is None else body[: reply.truncate_to]
                    if reply.drip_s:
                        self._drip(sent, reply.drip_s)
                    else:
                        self.wfile.write(sent)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                if reply.truncate_to is not None:
                    self.close_connection = True

            def _drip(self, body: bytes, interval: float) -> None:
                """Until the client hangs up (the write then fails) or the body ends."""
                for i in range(len(body)):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(interval)

        return _H

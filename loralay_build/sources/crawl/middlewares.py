"""Retry-After: Scrapy's RetryMiddleware retries a 429/503 at once; servers asking for a
pause get it here, capped so a hostile value cannot stall the crawl for hours, and said
as the HTTP client says it (`say_pause`): a crawl waiting is never silent."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from scrapy.downloadermiddlewares.retry import RetryMiddleware
from twisted.internet import reactor, task

from ...http import retry_after_seconds, say_pause  # the HTTP client's parser and line

__all__ = ["RetryAfterMiddleware", "retry_after_seconds"]


class RetryAfterMiddleware(RetryMiddleware):
    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.cap = float(settings.getfloat("RETRY_AFTER_MAX_S", 120))

    def process_response(self, request: Any, response: Any, spider: Any = None) -> Any:
        result = super().process_response(request, response)
        wait = retry_after_seconds(response.headers.get(b"Retry-After", b"").decode("latin-1"),
                                   self.cap)
        if result is response or not wait:
            return result
        retries = result.meta.get("retry_times", 0)
        say_pause(urlsplit(response.url).netloc, f"HTTP {response.status}", wait,
                  f"then retry {retries} of {self.max_retry_times}",
                  asked=response.headers.get(b"Retry-After", b"").decode("latin-1"))
        # hand the retry back only after the pause, without blocking the reactor
        return task.deferLater(reactor, wait, lambda: result)

"""Retry-After: Scrapy's RetryMiddleware retries a 429/503 at once; servers asking for a
pause get it here, capped so a hostile value cannot stall the crawl for hours."""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from typing import Any

from scrapy.downloadermiddlewares.retry import RetryMiddleware
from twisted.internet import reactor, task


def retry_after_seconds(value: str | None, cap: float) -> float:
    """Seconds to wait from a Retry-After header (delta or HTTP date), within [0, cap]."""
    if not value:
        return 0.0
    value = value.strip()
    if value.isdigit():
        return min(float(value), cap)
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, min(when - time.time(), cap))


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
        # hand the retry back only after the pause, without blocking the reactor
        return task.deferLater(reactor, wait, lambda: result)

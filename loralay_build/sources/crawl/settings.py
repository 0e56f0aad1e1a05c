"""Scrapy settings from the source's config: manners first, then resumability."""

from __future__ import annotations

from typing import Any

from ...conf import CommonSettings
from ...http import RETRY_STATUSES

_HERE = "loralay_build.sources.crawl"


def scrapy_settings(s: CommonSettings, jobdir: str, feed: str, clean_mark: str,
                    log_file: str) -> dict[str, Any]:
    """One request at a time per domain, a floor on the delay, an honest User-Agent."""
    http = s.http_fields()
    delay = float(getattr(s, "download_delay_s", 1.0))
    return {
        "BOT_NAME": "loralay-build",
        "USER_AGENT": http.full_user_agent,
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": 4,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": delay,
        "RANDOMIZE_DOWNLOAD_DELAY": delay > 0,
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_START_DELAY": max(delay, 0.01),
        "AUTOTHROTTLE_MAX_DELAY": max(60.0, delay),
        "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0,
        "DOWNLOAD_TIMEOUT": http.timeout_s,
        "DOWNLOAD_MAXSIZE": int(http.max_pdf_mb * 1024 * 1024),
        "DOWNLOAD_WARNSIZE": 0,
        "DOWNLOAD_FAIL_ON_DATALOSS": True,
        "REDIRECT_ENABLED": True,
        "RETRY_ENABLED": True,
        "RETRY_TIMES": http.max_retries,
        "RETRY_HTTP_CODES": sorted(RETRY_STATUSES),
        "RETRY_AFTER_MAX_S": http.retry_after_max_s,
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
            f"{_HERE}.middlewares.RetryAfterMiddleware": 550,
        },
        "ITEM_PIPELINES": {f"{_HERE}.pipelines.FeedLinePipeline": 900},
        "LORALAY_FEED": feed,
        "LORALAY_CLEAN_MARK": clean_mark,
        "LORALAY_MAX_PDF_BYTES": int(http.max_pdf_mb * 1024 * 1024),
        "JOBDIR": jobdir,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_FILE": log_file,
        "LOG_LEVEL": getattr(s, "crawl_log_level", "INFO"),
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

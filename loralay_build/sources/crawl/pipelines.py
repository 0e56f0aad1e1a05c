"""The item feed: one JSON line per item, flushed and fsynced before the next, so a kill
loses at most the item being written and the parent never sees half an item."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from scrapy import signals

from ...atomic import refuse_link, write_text_atomic


class FeedLinePipeline:
    def __init__(self, feed: str, clean_mark: str) -> None:
        self.path = Path(feed)
        self.clean_mark = Path(clean_mark)
        self.fh: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> FeedLinePipeline:
        pipe = cls(crawler.settings["LORALAY_FEED"], crawler.settings["LORALAY_CLEAN_MARK"])
        crawler.signals.connect(pipe.spider_closed, signal=signals.spider_closed)
        return pipe

    def open_spider(self, spider: Any = None) -> None:
        refuse_link(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = self.path.open("a", encoding="utf-8")

    def process_item(self, item: dict[str, Any], spider: Any = None) -> dict[str, Any]:
        self.fh.write(json.dumps(dict(item), ensure_ascii=False) + "\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())
        return item

    def close_spider(self, spider: Any = None) -> None:
        if self.fh is not None:
            self.fh.close()

    def spider_closed(self, spider: Any, reason: str) -> None:
        """Only a finished or gracefully shut down crawl leaves a JOBDIR worth resuming."""
        if reason in ("finished", "shutdown", "closespider_itemcount"):
            write_text_atomic(self.clean_mark, reason)

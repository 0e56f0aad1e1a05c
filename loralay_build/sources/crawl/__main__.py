"""The child process: `python -m loralay_build.sources.crawl JOB.json` runs one spider."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from scrapy.crawler import CrawlerProcess

from ...atomic import write_text_atomic
from ...conf import settings_class
from .settings import scrapy_settings
from .spiders import SPIDERS


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    skip = set(json.loads(Path(job["skip"]).read_text()))
    typed = settings_class(job["source"]).model_validate(job["settings"])
    settings = scrapy_settings(typed, jobdir=job["jobdir"], feed=job["feed"],
                               clean_mark=job["clean_mark"], log_file=job["log"])
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SPIDERS[job["spider"]])
    process.crawl(crawler, skip_ids=skip, licenses=typed.licenses, **job["args"])
    process.start()
    write_stats(crawler.stats.get_stats(), Path(job["stats"]))
    return 0


def write_stats(stats: dict[str, Any], path: Path) -> None:
    """Scrapy's counters for the parent, which judges from them whether the crawl reached
    its server at all (a DNS failure otherwise looks like an empty harvest)."""
    plain = {k: (v if isinstance(v, int | float | str) else str(v)) for k, v in stats.items()}
    write_text_atomic(path, json.dumps(plain, indent=1, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""The child process: `python -m loralay_build.sources.crawl JOB.json` runs one spider."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scrapy.crawler import CrawlerProcess

from .settings import scrapy_settings
from .spiders import SPIDERS


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    skip = set(json.loads(Path(job["skip"]).read_text()))
    settings = scrapy_settings(job["settings"], jobdir=job["jobdir"], feed=job["feed"],
                               clean_mark=job["clean_mark"], log_file=job["log"])
    process = CrawlerProcess(settings)
    process.crawl(SPIDERS[job["spider"]], skip_ids=skip, **job["args"])
    process.start()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

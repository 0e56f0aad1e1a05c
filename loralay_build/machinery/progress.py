"""Progress a user can read: a bar on a terminal, a periodic one-line summary in a log.

On a terminal tqdm draws a bar; when output goes to a file (Slurm, nohup), bars are
noise, so a line in the spirit of Scrapy's LogStats is logged every `every_s` seconds.
"""

from __future__ import annotations

import logging
import sys
import time
from collections import Counter

from tqdm import tqdm

log = logging.getLogger("loralay.progress")


class Progress:
    def __init__(self, label: str, total: int | None, every_s: float = 30.0) -> None:
        self.label = label
        self.total = total
        self.every_s = every_s
        self.counts: Counter[str] = Counter()
        self.done = 0
        self.start = time.monotonic()
        self.last_line = self.start
        self.bar = tqdm(total=total, desc=label, unit="doc", disable=not sys.stderr.isatty(),
                        dynamic_ncols=True)

    def update(self, outcome: str) -> None:
        self.done += 1
        self.counts[outcome] += 1
        self.bar.update(1)
        if self.bar.disable and time.monotonic() - self.last_line >= self.every_s:
            self.last_line = time.monotonic()
            log.info(self.line())

    def line(self) -> str:
        rate = self.done / max(time.monotonic() - self.start, 1e-9)
        total = f"/{self.total}" if self.total is not None else ""
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        return f"{self.label}: {self.done}{total} ({parts}) {rate:.2f} docs/s{self.eta(rate)}"

    def eta(self, rate: float) -> str:
        """`, ETA 1h 05m` at the rate so far, while work is left and a rate is known."""
        if self.total is None or self.done >= self.total or self.done == 0 or rate <= 0:
            return ""
        left = round((self.total - self.done) / rate)
        hours, rest = divmod(left, 3600)
        minutes, seconds = divmod(rest, 60)
        when = f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {seconds:02d}s" \
            if minutes else f"{seconds}s"
        return f", ETA {when}"

    def close(self) -> None:
        self.bar.close()
        log.info(self.line())

"""The finish's read-ahead (write/readahead.py): order, budget, errors, early exit."""

from __future__ import annotations

import threading
import time

import pytest

from loralay_build.write.readahead import ReadAhead


class Source:
    """Items 0..n-1 of size `size` each, counting how many were made."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.n, self.fail_at, self.made = n, fail_at, 0
        self.lock = threading.Lock()

    def __iter__(self):
        for i in range(self.n):
            if i == self.fail_at:
                raise ValueError(f"bad item {i}")
            with self.lock:
                self.made += 1
            yield i


def test_every_item_in_order():
    assert list(ReadAhead(Source(1000), budget=50, size=lambda _: 10)) == list(range(1000))


def test_what_waits_is_bounded_by_the_budget():
    src = Source(200)
    ahead = []
    for i in ReadAhead(src, budget=30, size=lambda _: 10):
        time.sleep(0.002)  # a slow taker: the maker runs ahead as far as it may
        with src.lock:
            ahead.append(src.made - (i + 1))
    # three items of 10 bytes fit the budget; one more may be made and waiting to enter
    assert max(ahead) <= 4 and max(ahead) >= 3


def test_an_item_above_the_budget_still_passes_alone():
    assert list(ReadAhead(Source(5), budget=1, size=lambda _: 100)) == [0, 1, 2, 3, 4]


def test_an_error_in_the_source_is_raised_where_its_item_would_come():
    got = []
    with pytest.raises(ValueError, match="bad item 7"):
        for i in ReadAhead(Source(20, fail_at=7), budget=1000, size=lambda _: 1):
            got.append(i)
    assert got == list(range(7))


def test_leaving_early_stops_the_maker():
    src = Source(10_000)
    for i in ReadAhead(src, budget=5, size=lambda _: 1):
        if i == 3:
            break
    made = src.made
    time.sleep(0.05)
    assert src.made == made < 20
    assert not [t for t in threading.enumerate() if t.name == "loralay-readahead"]

"""Items of an iterator made ahead in a thread, up to a budget of bytes.

Why: the finish writes each row group in one Parquet call (~1 s for 100 MB) during which
the GIL is free, and then reads and builds the next ~400 documents (payload from
SQLite, Arrow IPC, the row's arrays), which holds the GIL most of the time. Made in a
thread while the previous row group is written, the two overlap on two cores. The budget
bounds what waits: one row group more in memory, never the corpus. Order is kept, so the
bytes written are the same as without it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class ReadAhead(Generic[T]):
    """Iterate `items` in a thread; hold at most `budget` bytes (by `size`) of made items
    not yet taken, and always at least one. An exception in `items` is raised to the
    taker where the item would have come; leaving the loop early stops the thread."""

    def __init__(self, items: Iterable[T], budget: int, size: Callable[[T], int]) -> None:
        self._items, self._budget, self._size = items, budget, size
        self._cond = threading.Condition()
        self._ready: deque[tuple[T, int]] = deque()
        self._held = 0
        self._finished = self._stopped = False
        self._error: BaseException | None = None

    def __iter__(self) -> Iterator[T]:
        thread = threading.Thread(target=self._make, name="loralay-readahead", daemon=True)
        thread.start()
        try:
            while True:
                item = self._take()
                if item is None:
                    return
                yield item[0]
        finally:
            with self._cond:
                self._stopped = True
                self._cond.notify_all()
            thread.join()

    def _take(self) -> tuple[T] | None:
        with self._cond:
            while not self._ready and not self._finished:
                self._cond.wait()
            if self._ready:
                item, n = self._ready.popleft()
                self._held -= n
                self._cond.notify_all()
                return (item,)
            if self._error is not None:
                raise self._error
            return None

    def _make(self) -> None:
        try:
            for item in self._items:
                n = self._size(item)
                with self._cond:
                    while self._ready and self._held + n > self._budget and not self._stopped:
                        self._cond.wait()
                    if self._stopped:
                        return
                    self._ready.append((item, n))
                    self._held += n
                    self._cond.notify_all()
        except BaseException as e:  # noqa: BLE001 - handed to the taker, raised there
            self._error = e
        finally:
            with self._cond:
                self._finished = True
                self._cond.notify_all()

"""How the processes that hold documents run Python's cycle collector.

Why: a document of 10k words becomes tens of thousands of container objects (a list per
box in `loralay extract`'s rows, dicts, key lists), and the default collector (a young
collection every 700 new containers, each older one walking every object the imports
left) spent a third of `jsonl_bytes` and ~3 % of the per-document stage finding no
cycles: the records are acyclic and reference counting frees them. After the imports,
`gc.freeze()` takes what is alive out of every collection, and a young collection every
50,000 containers leaves a real cycle (rare here) collected a little later
(docs/performance.md, round 5).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000


def settle_heap() -> None:
    """Call once a process has imported what it works with."""
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)

"""The finish's part for page images: the kept documents' pages into the `images`
config, and the cost per page.

Pages come from each shard's image store (beside the shard state it belongs to), in the
split order the dataset uses, each document's only if they were rendered for the result
the ledger now holds (`StaleImages` otherwise: the dataset is left as it was). A refresh
renders only its new documents: the old ones' files are carried as they are (`carry`), as
their Parquet files are in `data/`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..images.store import ImageStore
from ..machinery.ledger import DOCUMENT, Ledger
from ..runfolder import RunFolder
from ..splits import SPLITS
from ..store.shard import ShardState


class KeptRows(Protocol):
    """What the finish decided (`pdf.finish.CorpusDecisions`): per split, the rows of its kept
    documents in dataset order; `rows` holds their `ids`, `shard` and `pages` columns."""

    rows: Any

    def kept_rows(self, split: str) -> Iterator[int]: ...

    def new_rows(self, split: str) -> Iterator[int]: ...


def _page_rows(split: str, d: KeptRows, states: Sequence[ShardState],
               stores: Sequence[ImageStore]) -> Iterator[Any]:
    from ..write.images import PageRow

    ledgers = [Ledger(st, DOCUMENT) for st in states]
    for j in d.new_rows(split):
        doc_id, i = d.rows.ids[j], d.rows.shard[j]
        entry = ledgers[i].get(doc_id)
        key = entry.fingerprint.digest() if entry else ""
        for page in stores[i].pages_for(doc_id, key):
            yield PageRow(doc_id, page)


def write_images_config(out: Path, enabled: bool, d: KeptRows, states: Sequence[ShardState],
                        carry: Mapping[str, Sequence[str]] | None = None
                        ) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Write (or, images off, remove) `DIR/images/`; the cost per page for the report, and
    the files the card names. `carry`: a refresh's files of the old documents' pages (per
    split), kept as they are; only the splits that grow are written."""
    from ..write.images import remove_image_shards, write_image_shards

    if not enabled:
        remove_image_shards(out)
        return page_costs(d, states, {}), {}
    layout = RunFolder(out)
    grow = [s for s in SPLITS if carry is None or next(d.new_rows(s), None) is not None]
    stores = [ImageStore(layout.images_db(*RunFolder.shard_numbers(st.path))) for st in states]
    carried = _carried_pages(out, carry or {})  # before the write renames them
    try:
        counts, files = write_image_shards(out, {s: _page_rows(s, d, states, stores)
                                                 for s in grow}, carry)
    finally:
        for store in stores:
            store.close()
    pages = Counter(counts)
    pages.update(carried)
    return page_costs(d, states, pages), files


def _carried_pages(out: Path, carry: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Pages per split in the carried files (their footers only): the report's cost per
    page is over every page of the kept documents, as the extraction's is."""
    import pyarrow.parquet as pq

    from ..write.shards import resolve_carried

    return {s: sum(pq.read_metadata(out / resolve_carried(out, rel)).num_rows for rel in files)
            for s, files in carry.items()}


def _seconds(states: Sequence[ShardState], stages: Sequence[str], ids: set[str]
             ) -> dict[str, float]:
    """Seconds recorded per stage for `ids`, in one pass over the ledgers; each stage's
    sum adds the same terms in the same order as a pass of its own."""
    terms: dict[str, list[float]] = {stage: [] for stage in stages}
    for st in states:
        for key, durations in Ledger(st, DOCUMENT).durations():
            if key in ids:
                for stage in stages:
                    terms[stage].append(durations.get(stage, 0.0))
    return {stage: sum(terms[stage]) for stage in stages}


SLOWEST = 10  # documents the report names as the slowest


def slowest_documents(d: KeptRows, states: Sequence[ShardState], n: int = SLOWEST
                      ) -> list[dict[str, Any]]:
    """The `n` documents whose steps took longest (every document processed, kept or
    not), each with its pages where it was read and its slowest step; held as a heap of
    `n`, so a run of a million documents costs no more memory than one of ten."""
    import heapq

    top: list[tuple[float, str, dict[str, float]]] = []
    for st in states:
        for key, durations in Ledger(st, DOCUMENT).durations():
            item = (sum(durations.values()), key, durations)
            if len(top) < n:
                heapq.heappush(top, item)
            elif item[:2] > top[0][:2]:
                heapq.heapreplace(top, item)
    wanted = {key for _, key, _ in top}
    pages = {i: p for i, p in zip(d.rows.ids, d.rows.pages, strict=True) if i in wanted}
    out = []
    for seconds, key, durations in sorted(top, key=lambda t: (-t[0], t[1])):
        step = max(durations, key=lambda k: durations[k]) if durations else None
        out.append({"id": key, "seconds": round(seconds, 3), "pages": pages.get(key),
                    "slowest_step": step})
    return out


def page_costs(d: KeptRows, states: Sequence[ShardState], rendered: Mapping[str, int]
               ) -> dict[str, Any]:
    """Milliseconds per page of extraction (every page of the kept documents) and, with
    images, of rendering (every page rendered), as recorded by the per-document stage."""
    kept = [j for s in SPLITS for j in d.kept_rows(s)]
    ids = {d.rows.ids[j] for j in kept}
    pages = sum(d.rows.pages[j] for j in kept)
    out: dict[str, Any] = {}
    images = sum(rendered.values())
    stages = [stage for stage, n in (("extract", pages), ("render", images)) if n]
    seconds = _seconds(states, stages, ids) if stages else {}
    if pages:
        out["extract_ms_per_page"] = round(1000 * seconds["extract"] / pages, 2)
    if images:
        out["render_ms_per_page"] = round(1000 * seconds["render"] / images, 2)
        out["pages_rendered"] = images
    out["slowest_documents"] = slowest_documents(d, states)
    return out

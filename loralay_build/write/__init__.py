"""The last stage: Parquet shards + dataset card (`write_dataset`) and the run report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..records import Outcome, ProcessedDoc
from ..splits import SPLITS
from .card import CardFacts, card_text, write_card
from .doctable import DocTable
from .features import (
    COLUMNS,
    COMPACT,
    FEATURE_SETS,
    FEATURES,
    PUBLISHED,
    PUBLISHED_FEATURES,
    SCHEMA,
    ColumnDoc,
    doc_to_batch,
    features_for,
)
from .parquet import (
    DEFAULT_ROW_GROUP_BYTES,
    DEFAULT_ROWS_PER_SHARD,
    DuplicateRowError,
    WriteResult,
    write_shards,
)
from .report import RunFacts, build_report, write_report


def write_dataset(out_dir: str | Path, splits: Mapping[str, Iterable[ProcessedDoc | ColumnDoc]],
                  facts: CardFacts, *, rows_per_shard: int = DEFAULT_ROWS_PER_SHARD,
                  row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES,
                  features: str = COMPACT, read_ahead: bool = False,
                  carry: Mapping[str, Sequence[str]] | None = None,
                  carried: Mapping[str, int] | None = None) -> WriteResult:
    """Shards first, card second: the card only ever describes data that is fully in place.

    `features`: "compact" (default) or "published" (the published LoRaLay columns).
    `read_ahead`, `carry`, `carried` (a refresh's files kept as they are): see
    `write_shards`.
    The card declares every language the rows carry, besides those in `facts`, so a run
    whose documents each bring their language (local manifests) still has language tags.
    """
    result = write_shards(out_dir, splits, rows_per_shard=rows_per_shard,
                          row_group_bytes=row_group_bytes, features=features,
                          read_ahead=read_ahead, carry=carry, carried=carried)
    facts = replace(facts, languages=sorted({*facts.languages, *result.languages}),
                    data_files=result.shards)
    if facts.counts is not None and dict(facts.counts) != dict(result.counts):
        raise RuntimeError(f"rows written per split {dict(result.counts)} differ from the "
                           f"decisions {dict(facts.counts)}")
    write_card(out_dir, facts, facts.counts or result.counts, features=features)
    return result


__all__ = [
    "COLUMNS", "COMPACT", "DEFAULT_ROWS_PER_SHARD", "DEFAULT_ROW_GROUP_BYTES", "FEATURES",
    "FEATURE_SETS", "PUBLISHED", "PUBLISHED_FEATURES", "SCHEMA", "SPLITS", "CardFacts",
    "DocTable", "DuplicateRowError", "Outcome", "RunFacts", "WriteResult",
    "build_report", "card_text", "doc_to_batch", "features_for", "write_card", "write_dataset",
    "write_report",
    "write_shards",
]

"""CiteSum rows into Parquet and a card, with the project's writer conventions.

Same conventions as `write/parquet.py` and `write/card.py`: features from one
`datasets.Features` (JSON in the Parquet schema, YAML in the card), `data/{split}-NNNNN-of-
NNNNN.parquet` written into a hidden folder and swapped in whole, zstd, a card whose
`configs` name the files so `load_dataset(DIR)` never guesses, written after the data.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features, List, Value
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from ..atomic import write_text_atomic
from ..write.card import CARD_NAME, type_name
from ..write.parquet import DATA_DIR, clean_stale, swap_in

FEATURES = Features({
    "id": Value("string"),
    "src": Value("string"),
    "tgt": Value("string"),
    "paper_id": Value("string"),
    "title": Value("string"),
    "discipline": {"venue": Value("string"), "journal": Value("string"),
                   "mag_field_of_study": List(Value("string"))},
    "citing_paper_id": Value("string"),
    "section": Value("string"),
    "sentence": Value("string"),
    "rouge1_recall": Value("float32"),
    "rouge2_recall": Value("float32"),
    "rougeL_recall": Value("float32"),
})
SCHEMA = FEATURES.arrow_schema
MEANING = {
    "id": "`{citing_paper_id}-{paragraph}-{sentence}`: the example's id (for --predictions).",
    "src": "The cited paper's abstract: the input.",
    "tgt": "The citation sentence with its citation replaced by `REF`: the summary.",
    "paper_id": "The cited paper's S2 id (S2ORC 2020 `paper_id` or Datasets API `corpusid`).",
    "title": "The cited paper's title (may be null).",
    "discipline": "The cited paper's venue, journal and fields of study (may be null/empty).",
    "citing_paper_id": "The S2 id of the paper whose Related Work holds the sentence.",
    "section": "The header the sentence's paragraph lies under.",
    "sentence": "The citation sentence as written, citation included.",
    "rouge1_recall": "ROUGE-1 recall of the sentence (citation removed) in `src`.",
    "rouge2_recall": "ROUGE-2 recall, likewise.",
    "rougeL_recall": "ROUGE-L recall, likewise.",
}


def _write_split(folder: Path, split: str, rows: Iterable[dict[str, Any]],
                 rows_per_shard: int) -> int:
    """One split's files; a shard holds `rows_per_shard` rows in row groups of 10,000."""
    paths: list[Path] = []
    writer: pq.ParquetWriter | None = None
    batch: list[dict[str, Any]] = []
    count = in_shard = 0

    def flush() -> None:
        if batch and writer is not None:
            writer.write_table(pa.Table.from_pylist(batch, schema=SCHEMA))
        batch.clear()
    for row in rows:
        if writer is None:
            paths.append(folder / f"{split}-{len(paths):05d}.partial")
            writer = pq.ParquetWriter(paths[-1], SCHEMA, compression="zstd")
        batch.append(row)
        count, in_shard = count + 1, in_shard + 1
        if len(batch) >= 10_000:
            flush()
        if in_shard >= rows_per_shard:
            flush()
            writer.close()
            writer, in_shard = None, 0
    flush()
    if writer is not None:
        writer.close()
    for i, path in enumerate(paths):
        os.replace(path, folder / f"{split}-{i:05d}-of-{len(paths):05d}.parquet")
    return count


def write_rows(out: Path, splits: Mapping[str, Iterable[dict[str, Any]]],
               rows_per_shard: int) -> dict[str, int]:
    """Every split into `DIR/data/`, replacing it only when all are written."""
    out.mkdir(parents=True, exist_ok=True)
    clean_stale(out)
    tmp = out / f".{DATA_DIR}-tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        counts = {s: _write_split(tmp, s, rows, rows_per_shard) for s, rows in splits.items()}
        swap_in(out, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return counts


def _front(name: str, config_name: str, license_: str, counts: Mapping[str, int]) -> str:
    data = DatasetCardData(pretty_name=name, language=["en"], license=license_,
                           task_categories=["summarization"],
                           tags=["scientific-papers", "citation-text", "tldr", "citesum"])
    files = [{"split": s, "path": f"{DATA_DIR}/{s}-*.parquet"} for s, n in counts.items() if n]
    MetadataConfigs({config_name: {"data_files": files, "default": True}}) \
        .to_dataset_card_data(data)
    DatasetInfosDict({config_name: DatasetInfo(features=FEATURES)}).to_dataset_card_data(data)
    return data.to_yaml()


def write_card(out: Path, settings: Any, counts: Mapping[str, int], body: list[str]) -> Path:
    """README.md: front matter, the caller's prose, splits, columns, every setting."""
    name = settings.dataset_name or "citesum-" + settings.s2orc_format
    lines = [f"# {name}", "", *body, "", "## Splits", "", "| split | examples |", "|---|---:|"]
    lines += [f"| {s} | {n:,} |" for s, n in counts.items()]
    lines += ["", "## Columns", "", "| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{c}` | {type_name(f)} | {MEANING[c]} |" for c, f in FEATURES.items()]
    lines += ["", "## Settings", "", "Every setting of the build (`loralay settings --source "
              "citesum` lists their meaning):", "", "```json",
              json.dumps(settings.user_view(), indent=1, sort_keys=True), "```", ""]
    text = f"---\n{_front(name, settings.config_name, settings.license, counts)}\n---\n\n"
    path = out / CARD_NAME
    write_text_atomic(path, str(DatasetCard(text + "\n".join(lines))))
    return path

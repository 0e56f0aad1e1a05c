"""CiteSum rows into Parquet and a card, with the project's writer conventions.

Same conventions as `write/parquet.py` and `write/card.py`: features from one
`datasets.Features` (JSON in the Parquet schema, YAML in the card), `data/{split}-NNNNN-of-
NNNNN.parquet` written into a hidden folder and swapped in whole, zstd, a card whose
`configs` name the files so `load_dataset(DIR)` never guesses, written after the data.
"""

from __future__ import annotations

import json
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
from ..write.parquet import DATA_DIR
from ..write.shards import ShardFolder

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


def _write_split(folder: ShardFolder, split: str, rows: Iterable[dict[str, Any]],
                 rows_per_shard: int) -> int:
    """One split's files; a shard holds `rows_per_shard` rows in row groups of 10,000."""
    writer: pq.ParquetWriter | None = None
    batch: list[dict[str, Any]] = []
    count = in_shard = 0

    def flush() -> None:
        if batch and writer is not None:
            writer.write_table(pa.Table.from_pylist(batch, schema=SCHEMA))
        batch.clear()
    for row in rows:
        if writer is None:
            writer = pq.ParquetWriter(folder.part(split), SCHEMA, compression="zstd")
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
    folder.seal(split)
    return count


def write_rows(out: Path, splits: Mapping[str, Iterable[dict[str, Any]]],
               rows_per_shard: int) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Every split into `DIR/data/`, replacing it only when all are written; the rows
    and the files of each split."""
    with ShardFolder(out, DATA_DIR) as folder:
        counts = {s: _write_split(folder, s, rows, rows_per_shard) for s, rows in splits.items()}
    return counts, folder.files


def _front(name: str, config_name: str, license_: str, files: Mapping[str, list[str]]) -> str:
    data = DatasetCardData(pretty_name=name, language=["en"], license=license_,
                           task_categories=["summarization"],
                           tags=["scientific-papers", "citation-text", "tldr", "citesum"])
    data_files = [{"split": s, "path": paths} for s, paths in files.items() if paths]
    MetadataConfigs({config_name: {"data_files": data_files, "default": True}}) \
        .to_dataset_card_data(data)
    DatasetInfosDict({config_name: DatasetInfo(features=FEATURES)}).to_dataset_card_data(data)
    return data.to_yaml()


def write_card(out: Path, settings: Any, counts: Mapping[str, int],
               files: Mapping[str, list[str]], body: list[str]) -> Path:
    """README.md: front matter, the caller's prose, splits, columns, every setting."""
    name = settings.dataset_name or "citesum-" + settings.s2orc_format
    lines = [f"# {name}", "", *body, "", "## Splits", "", "| split | examples |", "|---|---:|"]
    lines += [f"| {s} | {n:,} |" for s, n in counts.items()]
    lines += ["", "## Columns", "", "| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{c}` | {type_name(f)} | {MEANING[c]} |" for c, f in FEATURES.items()]
    lines += ["", "## Settings", "", "Every setting of the build (`loralay settings --source "
              "citesum` lists their meaning):", "", "```json",
              json.dumps(settings.user_view(), indent=1, sort_keys=True), "```", ""]
    text = (f"---\n{_front(name, settings.config_name, settings.license or 'other', files)}"
            "\n---\n\n")
    path = out / CARD_NAME
    write_text_atomic(path, str(DatasetCard(text + "\n".join(lines))))
    return path

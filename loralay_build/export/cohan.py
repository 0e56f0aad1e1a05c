"""`loralay export cohan`: a built dataset in the arXiv/PubMed layout of Cohan et al. 2018
(github.com/armancohan/long-summarization): one JSON object per line and paper, in
`train.txt`, `val.txt`, `test.txt`, with `article_id`, `article_text` (the body's
sentences), `abstract_text` (the abstract's sentences, each wrapped in "<S> ... </S>" as
theirs are), `labels` (null, as theirs), `section_names` and `sections` (each section's
sentences), so long-document summarization code that reads their files reads ours.

Why here and not in the dataset: their layout has no words' boxes; it is made from the
`article_words`, `article_section_ids`, `sections` and `abstract` columns (issue 45).
A section's body starts after its heading's words; the words before the first heading
(title block, front matter) are in `article_text` but in no section, as in theirs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from ..atomic import write_text_atomic
from ..dataset import Dataset
from ..errors import ConfigError
from ..extras import require
from ..locks import RunLock
from ..owned import EXPORT, claim_folder
from ..sentences import sentences_of

COHAN_COLUMNS = ("article_id", "article_words", "article_section_ids", "sections", "abstract",
                 "language")
COHAN_SPLIT = {"train": "train", "validation": "val", "test": "test"}
def cohan_record(row: dict[str, Any]) -> dict[str, Any]:
    """One paper in Cohan et al.'s layout, from a dataset row."""
    words: list[str] = row["article_words"] or []
    ids: list[int] = row["article_section_ids"] or []
    secs: list[dict[str, Any]] = row["sections"] or []
    lang = row.get("language") or "en"
    bodies: list[list[str]] = [[] for _ in secs]
    heads = [len(s["title"].split()) for s in secs]
    for w, k in zip(words, ids):
        if k < 0:
            continue
        if heads[k]:
            heads[k] -= 1  # the heading's own words
            continue
        bodies[k].append(w)
    return {
        "article_id": row["article_id"],
        "article_text": sentences_of(" ".join(words), lang),
        "abstract_text": [f"<S> {s} </S>" for s in sentences_of(row.get("abstract") or "", lang)],
        "labels": None,
        "section_names": [s["title"] for s in secs],
        "sections": [sentences_of(" ".join(b), lang) for b in bodies],
    }


def _write_split(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    tmp = path.with_name(path.name + ".part")
    with tmp.open("w", encoding="utf-8") as f:
        n = _write_rows(f, rows)
    tmp.replace(path)
    return n


def _write_rows(f: IO[str], rows: Iterable[dict[str, Any]]) -> int:
    n = 0
    for row in rows:
        f.write(json.dumps(cohan_record(row), ensure_ascii=False) + "\n")
        n += 1
    return n


def export_cohan(dataset_dir: str | Path, out_dir: str | Path) -> dict[str, int]:
    """Write every split of the dataset in DIR as Cohan et al.'s JSON lines into OUT
    (`train.txt`, `val.txt`, `test.txt`); the papers per file."""
    require("citesum", "`loralay export cohan`")  # its sentences are pysbd's
    ds = Dataset.open(Path(dataset_dir))
    ds.check_columns(COHAN_COLUMNS)
    out = Path(out_dir)
    if out.resolve() == ds.root.resolve():
        raise ConfigError(f"{out}: the dataset's own folder; give the export another --out")
    claim_folder(out, EXPORT)
    counts: dict[str, int] = {}
    with RunLock(out, what="another export"):
        for split in ds.splits:
            name = COHAN_SPLIT.get(split, split)
            counts[name] = _write_split(out / f"{name}.txt", ds.rows(split, COHAN_COLUMNS))
        write_text_atomic(out / "summary.json", json.dumps(counts, indent=2) + "\n")
    return counts

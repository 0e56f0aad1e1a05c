"""The Cohan et al. (2018) arXiv/PubMed files: where arXiv-Lay and PubMed-Lay take their ids.

Each of `train.txt`, `val.txt`, `test.txt` holds one JSON object per line with an
`article_id` (old-style arXiv ids without their slash, `hep-th9608091`; PMC ids for
PubMed). The published corpora keep Cohan's split, so the file an id comes from is its
split. Lines are parsed one at a time (`kit/jsonl.py`, plain or gzipped): the files hold
full article texts (GBs).

Also the pieces both id-list sources share: a stop that keeps the checkpoint, and the
PDF download step with its reuse of a file left by a kill.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import BadRunInput
from .kit.jsonl import BadLine, records

log = logging.getLogger(__name__)

# file stem -> split name the driver understands (split_mode: given)
SPLIT_FILES: tuple[tuple[str, str], ...] = (("train", "train"), ("val", "validation"),
                                            ("test", "test"))


class IdsError(BadRunInput):
    pass


@dataclass(frozen=True, slots=True)
class CohanId:
    article_id: str
    split: str
    line: int  # 1-based line in its file, for messages


def split_files(ids_dir: str | Path) -> list[tuple[Path, str]]:
    """The split files present in `ids_dir` (`train.txt` or `train.txt.gz`, ...)."""
    base = Path(ids_dir)
    found: list[tuple[Path, str]] = []
    for stem, split in SPLIT_FILES:
        for name in (f"{stem}.txt", f"{stem}.txt.gz", f"{stem}.jsonl"):
            if (base / name).exists():
                found.append((base / name, split))
                break
    if not found:
        raise IdsError(f"{base}: no train.txt / val.txt / test.txt (the Cohan et al. files)")
    return found


def read_ids(ids_dir: str | Path) -> Iterator[CohanId | BadLine]:
    """Every id once, in file order, read by the one JSON-lines reader; a line naming no
    id (not JSON, no `article_id`) is yielded as a `BadLine` (the fetcher makes it one of
    the report's bad input records), never fatal; an id listed again is logged."""
    seen: set[str] = set()
    for path, split in split_files(ids_dir):
        for n, rec in records(path):
            if isinstance(rec, BadLine):
                yield rec
                continue
            value = rec.get("article_id")
            article_id = str(value).strip() if isinstance(value, (str, int)) else ""
            if not article_id:
                yield BadLine(n, "no 'article_id'" if value is None else
                              f"'article_id' {json.dumps(value)[:40]} is not an id", path)
                continue
            if article_id in seen:
                log.warning("%s:%d: %s listed twice; the first split wins", path, n, article_id)
                continue
            seen.add(article_id)
            yield CohanId(article_id, split, n)

"""The Cohan et al. (2018) arXiv/PubMed files: where arXiv-Lay and PubMed-Lay take their ids.

Each of `train.txt`, `val.txt`, `test.txt` holds one JSON object per line with an
`article_id` (old-style arXiv ids without their slash, `hep-th9608091`; PMC ids for
PubMed). The published corpora keep Cohan's split, so the file an id comes from is its
split. Lines are parsed one at a time: the files hold full article texts (GBs).

Also the pieces both id-list sources share: a stop that keeps the checkpoint, and the
PDF download step with its reuse of a file left by a kill.
"""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from . import BadRunInput

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


def _open(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


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


def read_ids(ids_dir: str | Path) -> Iterator[CohanId]:
    """Every id once, in file order; a bad line is logged and skipped, never fatal."""
    seen: set[str] = set()
    for path, split in split_files(ids_dir):
        with _open(path) as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                    article_id = str(obj["article_id"]).strip()
                except (ValueError, KeyError, TypeError):
                    log.warning("%s:%d: not a JSON line with article_id; skipped", path, n)
                    continue
                if not article_id or article_id in seen:
                    if article_id:
                        log.warning("%s:%d: %s listed twice; the first split wins",
                                    path, n, article_id)
                    continue
                seen.add(article_id)
                yield CohanId(article_id, split, n)

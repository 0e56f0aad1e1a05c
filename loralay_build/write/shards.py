"""A dataset config's folder of Parquet shards (`data/`, `images/`), written whole or not at
all, each file named after its content.

Why a folder swap: the `-of-NNNNN` total is known only at the end, so shards are written in
a hidden temporary folder inside DIR and swapped in for the config's folder only once every
split is complete; a failed or killed run leaves the previous dataset untouched.

Why the content in the name (`train-00000-of-00001-<sha256:12>.parquet`): `datasets` keys
its cache on the folder's name and the card's `data_files`, not on the files' bytes, so a
folder rebuilt with other documents, or another corpus built into a folder of the same
name, loaded the old rows back from the cache. With the card naming these exact files, new
content is a new key; the same content (a rerun equal to a fresh build) the same names.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from ..atomic import clean_swaps, file_digest, refuse_link, swap_folder
from ..paths import SHARD_NAME as SHARD_NAME  # a shard's name, for existing importers

_SPLIT_NAME = re.compile(r"^\w+$")
_DIGEST = re.compile(r"-of-\d{5}-([0-9a-f]{12})\.parquet$")


def content_digest(path: Path) -> str:
    return file_digest(path)[:12]


class ShardFolder:
    """`with ShardFolder(out, "data") as f:` write each split's parts at `f.part(split)`,
    then `f.seal(split)`; on leaving without error the folder replaces `out/data`.

    `carry`: files of the folder to keep as they are (a refresh's earlier versions, paths
    relative to `out`, per split): hard-linked (else copied) into the new folder, listed
    first in `files`, and the split's new shards numbered after them."""

    def __init__(self, out: Path, name: str,
                 carry: Mapping[str, Sequence[str]] | None = None) -> None:
        self.out, self.name = Path(out), name
        self.tmp = self.out / f".{name}-tmp-{uuid.uuid4().hex[:8]}"
        self.carry = {s: [resolve_carried(self.out, rel) for rel in v]
                      for s, v in (carry or {}).items()}
        self.files: dict[str, list[str]] = dict(self.carry)  # split -> paths relative to `out`
        self._parts: dict[str, list[Path]] = {}

    def __enter__(self) -> ShardFolder:
        refuse_link(self.out / self.name)  # before any shard is written, not at the swap
        self.out.mkdir(parents=True, exist_ok=True)
        clean_swaps(self.out, self.name)
        self.tmp.mkdir()
        for paths in self.carry.values():
            for rel in paths:
                _carry_over(self.out / rel, self.tmp / Path(rel).name)
        return self

    def part(self, split: str) -> Path:
        """The path of the split's next shard, until it is sealed."""
        if not _SPLIT_NAME.match(split):
            raise ValueError(f"split name {split!r} is not a plain word")
        parts = self._parts.setdefault(split, [])
        parts.append(self.tmp / f"{split}-{len(parts):05d}.partial")
        return parts[-1]

    def seal(self, split: str) -> list[str]:
        """Give the split's parts, and the files carried into it, their final names (one
        total for all); the paths the card will name."""
        parts = self._parts.get(split, [])
        old = [self.tmp / Path(rel).name for rel in self.carry.get(split, [])]
        total = len(old) + len(parts)
        names = []
        for i, path in enumerate(old + parts):
            digest = _named_digest(path) if i < len(old) else None
            final = f"{split}-{i:05d}-of-{total:05d}-{digest or content_digest(path)}.parquet"
            os.replace(path, self.tmp / final)
            names.append(f"{self.name}/{final}")
        self.files[split] = names
        return self.files[split]

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            swap_folder(self.out, self.tmp, self.name)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def _named_digest(path: Path) -> str | None:
    """The content digest a shard's name holds (None: a name from before digests)."""
    m = _DIGEST.search(path.name)
    return m.group(1) if m else None


def resolve_carried(out: Path, rel: str) -> str:
    """A carried file's path relative to `out`: as recorded, or, when a refresh killed
    after its swap renamed it, the file of the same split and digest."""
    path = Path(out) / rel
    digest = _named_digest(path)
    if path.exists() or digest is None:
        return rel
    split = rel.rsplit("/", 1)[-1].split("-", 1)[0]
    found = sorted(path.parent.glob(f"{split}-*-of-*-{digest}.parquet"))
    return str(found[0].relative_to(out)) if found else rel


def _carry_over(src: Path, dest: Path) -> None:
    """The same bytes under the same name: a hard link, or a copy where links fail."""
    refuse_link(src)
    try:
        os.link(src, dest)
    except OSError:
        shutil.copy2(src, dest)


def remove_folder(out: Path, name: str) -> None:
    """A config the build no longer writes (images turned off) leaves with its leftovers."""
    clean_swaps(out, name)
    shutil.rmtree(out / name, ignore_errors=True)

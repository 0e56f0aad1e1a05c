"""Where a run keeps things inside its output folder.

Everything but `README.md` and `data/` is kept out of the dataset: `load_dataset(DIR)`
reads only the files the card names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunLayout:
    out: Path

    @property
    def state_dir(self) -> Path:
        return self.out / "state"

    @property
    def fetch_db(self) -> Path:
        return self.state_dir / "fetch.sqlite"

    def shard_db(self, shard: int, num_shards: int) -> Path:
        return self.state_dir / f"shard-{shard:05d}-of-{num_shards:05d}.sqlite"

    def shard_dbs(self, num_shards: int) -> list[Path]:
        """The states of a run processed in `num_shards` shards, and only those."""
        return [p for p, n in self.shard_files() if n == num_shards]

    def shard_files(self) -> list[tuple[Path, int]]:
        found = []
        for p in sorted(self.state_dir.glob("shard-*-of-*.sqlite")):
            count = p.stem.rsplit("-of-", 1)[-1]
            if count.isdigit():
                found.append((p, int(count)))
        return found

    @property
    def finish_db(self) -> Path:
        return self.state_dir / "finish.sqlite"

    @property
    def checksums_db(self) -> Path:
        """sha256 of the PDFs, kept by --fresh with the PDFs themselves."""
        return self.state_dir / "pdf-checksums.sqlite"

    @property
    def lock_file(self) -> Path:
        return self.out / ".lock"

    @property
    def pdf_dir(self) -> Path:
        return self.out / "pdfs"

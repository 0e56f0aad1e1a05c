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

    def shard_dbs(self) -> list[Path]:
        return sorted(self.state_dir.glob("shard-*-of-*.sqlite"))

    @property
    def finish_db(self) -> Path:
        return self.state_dir / "finish.sqlite"

    @property
    def pdf_dir(self) -> Path:
        return self.out / "pdfs"

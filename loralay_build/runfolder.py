"""Where a run keeps things inside its output folder, and the shard count it is done in.

Everything but `README.md` and `data/` is kept out of the dataset: `load_dataset(DIR)`
reads only the files the card names. A run records the number of shards it was processed
in, and refuses another (a sharded run mixed with a plain one wrote every document twice).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import RunMismatch
from .owned import LOCK_NAME
from .paths import CRAWL_DIR, PDFS_DIR, REPORT_DIR, SLURM_DIR, STATE_DIR, WORK_DIR
from .store.fetch import FetchState


@dataclass(frozen=True)
class RunFolder:
    out: Path

    @property
    def state_dir(self) -> Path:
        return self.out / STATE_DIR

    @property
    def fetch_db(self) -> Path:
        return self.state_dir / "fetch.sqlite"

    def shard_db(self, shard: int, num_shards: int) -> Path:
        return self.state_dir / f"shard-{shard:05d}-of-{num_shards:05d}.sqlite"

    @staticmethod
    def shard_numbers(shard_db: Path) -> tuple[int, int]:
        """(K, N) of a `shard-K-of-N.sqlite` path."""
        k, n = shard_db.stem.removeprefix("shard-").split("-of-")
        return int(k), int(n)

    def images_db(self, shard: int, num_shards: int) -> Path:
        """The page-image store of a shard, beside its state."""
        return self.state_dir / f"images-{shard:05d}-of-{num_shards:05d}.sqlite"

    def images_staging(self, shard: int, num_shards: int) -> Path:
        """Where a shard's workers leave pages for its driver (shards run concurrently)."""
        return self.state_dir / f"images-staging-{shard:05d}-of-{num_shards:05d}"

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
        return self.out / LOCK_NAME

    @property
    def pdf_dir(self) -> Path:
        return self.out / PDFS_DIR

    def crawl_dir(self, source: str) -> Path:
        return self.out / CRAWL_DIR / source

    @property
    def slurm_dir(self) -> Path:
        return self.out / SLURM_DIR

    @property
    def work_dir(self) -> Path:
        return self.out / WORK_DIR

    @property
    def config_file(self) -> Path:
        """The exact configuration of the build, as YAML a `--config` accepts."""
        return self.out / REPORT_DIR / "config.yaml"


def recorded_shards(layout: RunFolder) -> int | None:
    """The shard count this run folder was processed with (None: not processed yet)."""
    if layout.fetch_db.exists():
        with FetchState(layout.fetch_db) as st:
            value = st.num_shards()
        if value is not None:
            return value
    counts = sorted({n for _, n in layout.shard_files()})
    if len(counts) > 1:
        raise RunMismatch(f"{layout.state_dir}: states of different shard counts "
                          f"({', '.join(map(str, counts))}); start over with --fresh")
    return counts[0] if counts else None


def claim_shards(layout: RunFolder, num_shards: int) -> None:
    """Record the shard count, or refuse one that differs from what the run already used."""
    used = recorded_shards(layout)
    if used is not None and used != num_shards:
        how = "the plain command (no --shard)" if used == 1 else f"--num-shards {used}"
        asked = "no shards" if num_shards == 1 else f"--num-shards {num_shards}"
        raise RunMismatch(f"{layout.out}: this run was processed with {how}, not {asked}; "
                          f"go on with {how}, or start over with --fresh")
    with FetchState(layout.fetch_db) as st:
        st.set_num_shards(num_shards)

"""A dataset folder's files, shared by the images and Slurm tests."""

from __future__ import annotations

from pathlib import Path


def dataset_files(out: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file a build writes in the folder but the state: (inode, mtime_ns, bytes)."""
    paths = [p for folder in ("data", "images") if (out / folder).exists()
             for p in sorted((out / folder).iterdir())]
    paths += [out / n for n in ("README.md", "report.json", "report.md", "diff.json")
              if (out / n).exists()]
    return {str(p.relative_to(out)): (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
            for p in paths}

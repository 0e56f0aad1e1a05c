"""`--source local`: a folder of PDFs described by a manifest (JSON lines).

The format is that of the project's sample corpus and of ../shared/corpus (see
`manifest.py` for every rule). A bad line is rejected with its line number; the other
lines go on. The whole manifest is read on every run, so an edited line is seen.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..records import Candidate, Rejection
from . import BadRunInput, FetchContext
from .manifest import read_manifest


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    manifest = getattr(ctx.settings, "manifest", None)
    if not manifest:
        raise BadRunInput("--source local needs --manifest PATH (or `manifest:` in --config)")
    path = Path(manifest)
    if not path.is_file():
        raise BadRunInput(f"{path}: manifest not found")
    for count, line in enumerate(read_manifest(path, ctx.settings.split_mode)):
        if ctx.limit_reached(count):
            return
        yield line.item

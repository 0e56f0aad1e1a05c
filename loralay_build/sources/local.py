"""`--source local`: a folder of PDFs described by a manifest (JSON lines).

The format is that of the project's sample corpus and of ../shared/corpus:
`id`, `file` (relative to the manifest), `language`, `abstracts` {lang: text},
`title`, `publication_date`, optional `pdf_url` and `split`. A bad line is rejected
with its line number; the other lines go on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..failures import FailureClass
from ..records import Candidate, Rejection
from . import BadRunInput, FetchContext


class ManifestError(ValueError):
    pass


def candidate_from_line(obj: Any, base: Path) -> Candidate:
    if not isinstance(obj, dict):
        raise ManifestError("not a JSON object")
    for key in ("id", "file", "language", "abstracts"):
        if not obj.get(key):
            raise ManifestError(f"missing {key!r}")
    abstracts = obj["abstracts"]
    if not isinstance(abstracts, dict) or not all(isinstance(v, str) for v in abstracts.values()):
        raise ManifestError("'abstracts' must map a language to a text")
    lang = str(obj["language"])
    if not abstracts.get(lang, "").strip():
        raise ManifestError(f"no abstract in the document's language {lang!r}")
    ordered = {lang: abstracts[lang], **{k: v for k, v in abstracts.items() if k != lang}}
    return Candidate(
        id=str(obj["id"]), source="local", language=lang, abstracts=ordered,
        pdf_path=str((base / obj["file"]).resolve()), pdf_url=obj.get("pdf_url"),
        publication_date=obj.get("publication_date"), split=obj.get("split"),
        title=obj.get("title"),
    )


def read_manifest(path: Path) -> Iterator[Candidate | Rejection]:
    base = path.parent
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                yield _parse_line(line, n, path, base)


def _parse_line(line: str, n: int, path: Path, base: Path) -> Candidate | Rejection:
    obj: Any = None
    try:
        obj = json.loads(line)
        return candidate_from_line(obj, base)
    except (ValueError, ManifestError) as e:
        doc_id = obj.get("id") if isinstance(obj, dict) else None
        return Rejection(str(doc_id or f"{path.name}:{n}"), "local",
                         FailureClass.BAD_METADATA.value, f"{path}:{n}: {e}")


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    manifest = ctx.config.get("manifest")
    if not manifest:
        raise BadRunInput("--source local needs --manifest PATH (or `manifest:` in --config)")
    path = Path(manifest)
    if not path.is_file():
        raise BadRunInput(f"{path}: manifest not found")
    for count, item in enumerate(read_manifest(path)):
        if ctx.limit is not None and count >= ctx.limit:
            return
        yield item

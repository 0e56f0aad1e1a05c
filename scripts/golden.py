"""Golden digests: what each per-document step makes of the sample corpus (and of the
shared corpus where it is present), committed in tests/golden/, each file tagged with the
rule versions it was made under (`pdf/preflight.STEP_RULES`).

Why: "output identical" used to be a habit (a fingerprint file kept outside the
repository, compared by hand). Now `tests/test_golden.py` recomputes the digests and fails
when a step's output changed while its rule constants did not (bump the rule: a rerun must
redo what it changed), and when the rules changed but the digests were not regenerated.
The files are written only by this script's explicit `--write`.

usage: python scripts/golden.py            # compare with tests/golden/, exit 1 on a difference
       python scripts/golden.py --write    # regenerate them (after a deliberate change)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from loralay_build.conf import load_settings  # noqa: E402
from loralay_build.licenses import normalise_license  # noqa: E402
from loralay_build.pdf.preflight import STEP_RULES  # noqa: E402
from loralay_build.pdf.steps import DocumentJob, DocWork, run_document_steps  # noqa: E402
from loralay_build.pdftext.poppler import poppler_version  # noqa: E402
from loralay_build.records import Candidate, Document  # noqa: E402
from loralay_build.sources.manifest import read_manifest  # noqa: E402
from loralay_build.write.features import doc_to_batch  # noqa: E402

SCHEMA_VERSION = 1
GOLDEN = REPO / "tests" / "golden"
SHARED = Path(os.environ.get("LORALAY_SHARED", REPO.parent / "shared"))
# corpus name -> its manifest; the shared one only where ../shared is present
CORPORA = {"sample": REPO / "data" / "sample" / "manifest.jsonl",
           "shared-corpus": SHARED / "corpus" / "manifest.jsonl"}


class _Digest:
    """sha256 over typed parts, each framed by its kind and length (no two different
    outputs can serialise alike)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def part(self, kind: str, data: bytes) -> _Digest:
        self.h.update(f"{kind}:{len(data)}:".encode())
        self.h.update(data)
        return self

    def words(self, words: list[str]) -> _Digest:
        return self.part("words", "\x1f".join(words).encode("utf-8", "surrogatepass"))

    def numbers(self, kind: str, values: Any, dtype: str) -> _Digest:
        return self.part(kind, np.ascontiguousarray(np.asarray(values, dtype=dtype)).tobytes())

    def hex(self) -> str:
        return self.h.hexdigest()[:24]


def _words(doc: Document, d: _Digest) -> _Digest:
    return (d.words(doc.words).numbers("boxes", doc.boxes.reshape(-1, 4), "<f8")
            .numbers("pages", doc.word_pages, "<i4"))


def _layout(doc: Document, d: _Digest) -> _Digest:
    return (_words(doc, d).numbers("lines", doc.line_ids, "<i8")
            .numbers("blocks", doc.block_ids, "<i8").numbers("labels", doc.labels, "<i2"))


def step_digest(step: str, work: DocWork) -> str | None:
    """The digest of what `step` adds to the work; None for a step no rule decides (its
    output reaches the golden files through the steps after it)."""
    if step == "extract":
        assert work.doc is not None
        pages = [(p.number, p.width, p.height, p.rotation) for p in work.doc.pages]
        return _words(work.doc, _Digest()).numbers("page_sizes", pages, "<f8").hex()
    if step == "group":
        assert work.doc is not None
        return _layout(work.doc, _Digest()).hex()
    if step == "strip":
        assert work.stripped is not None
        matches = json.dumps([m.to_json() for m in work.stripped.matches]).encode()
        return _layout(work.stripped.body, _Digest()).part("matches", matches).hex()
    if step == "print":
        assert work.text_print is not None
        return _Digest().part("print", work.text_print.to_str().encode()).hex()
    return None


def document_digests(c: Candidate, job: DocumentJob) -> dict[str, str]:
    """Each ruled step's digest for one document, in step order; a document that fails
    ends with `failed: CLASS` at its step (a PDF nothing can read is golden too)."""
    out: dict[str, str] = {"license": normalise_license(c.license).id}

    def observe(step: str, work: DocWork) -> None:
        value = step_digest(step, work)
        if value is not None:
            out[step] = value

    work, results = run_document_steps(c, job, skip=frozenset({"render"}), observe=observe)
    failed = results.failure
    if failed is not None:
        out[failed[0]] = f"failed: {failed[1].cls.value}"
    else:
        out["sections"] = structure_digest(work)
    return out


def structure_digest(work: DocWork) -> str:
    """The row's structure columns (`sections`, `article_section_ids`, `references`), as
    the writer makes them from the body and the PDF's outline (SECTIONS_RULE)."""
    batch = doc_to_batch(work.processed())
    d = _Digest()
    for name in ("sections", "article_section_ids", "references"):
        value = batch.column(name)[0].as_py()
        d.part(name, json.dumps(value, ensure_ascii=False).encode())
    return d.hex()


def corpus_digests(manifest: Path) -> dict[str, Any]:
    """The golden record of one corpus: the rules and tools it was made under, and each
    document's digests, built with `--source local`'s default settings."""
    settings = load_settings("local", None, {"manifest": str(manifest)})
    job = DocumentJob(settings.document(), settings.limits())
    docs = {line.item.id: document_digests(line.item, job)
            for line in read_manifest(manifest) if isinstance(line.item, Candidate)}
    return {"schema_version": SCHEMA_VERSION, "poppler": poppler_version(),
            "rules": STEP_RULES, "documents": dict(sorted(docs.items()))}


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"


def differences(saved: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs, one line each, saying what to do: a step whose output changed under
    the same rules needs its rule bumped; rules changed need the files regenerated."""
    if saved.get("schema_version") != SCHEMA_VERSION:
        return [f"schema_version {saved.get('schema_version')} != {SCHEMA_VERSION}: "
                "regenerate with `python scripts/golden.py --write`"]
    lines = []
    rules_now, rules_then = now["rules"], saved["rules"]
    for doc_id in sorted(set(saved["documents"]) | set(now["documents"])):
        then, cur = saved["documents"].get(doc_id), now["documents"].get(doc_id)
        if then is None or cur is None:
            lines.append(f"{doc_id}: {'new' if then is None else 'gone'} (regenerate)")
            continue
        for step in dict.fromkeys([*then, *cur]):
            if then.get(step) == cur.get(step):
                continue
            same = rules_then.get(step) == rules_now.get(step)
            rules = ", ".join(rules_now.get(step, {})) or "its rule"
            lines.append(f"{doc_id}: {step} changed ({then.get(step)} -> {cur.get(step)}) "
                         + (f"while {rules} did not: bump it, then regenerate" if same else
                            "under new rules: regenerate with `python scripts/golden.py "
                            "--write`"))
            break  # the first step that changed; the later ones follow from it
    changed = [s for s in rules_now if rules_now[s] != rules_then.get(s)]
    if changed and not lines:
        lines.append(f"rules of {', '.join(changed)} changed but no output did: regenerate "
                     "with `python scripts/golden.py --write` (was the bump needed?)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="regenerate tests/golden/*.json")
    args = ap.parse_args(argv)
    status = 0
    for name, manifest in CORPORA.items():
        if not manifest.is_file():
            print(f"{name}: {manifest} not present, skipped")
            continue
        now = corpus_digests(manifest)
        path = golden_path(name)
        if args.write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n",
                            encoding="utf-8")
            print(f"{path}: {len(now['documents'])} documents written")
            continue
        diff = differences(json.loads(path.read_text(encoding="utf-8")), now)
        print(f"{name}: {len(now['documents'])} documents, {len(diff)} differ")
        for line in diff:
            print(f"  {line}")
        status |= bool(diff)
    return status


if __name__ == "__main__":
    sys.exit(main())

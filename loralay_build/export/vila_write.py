"""Write VILA's files for every split of a built dataset, streaming, and summarise them.

Per split NAME (`validation` is written as `dev`, VILA's name):
- `NAME-token.json`: `{"data": [...], "labels": {"Title": 0, ...}, "files": [...]}`, one page per
  `data` item with VILA's columns plus `ivila_text`. It is one JSON object, as VILA's
  scripts read it, but written item by item so memory holds one document, not the split.
- `NAME-groups.jsonl`: one line per page, in `data` order: `file` and its H-VILA `groups`.
  Kept out of the token file so that the training file stays VILA's shape and size.
- `NAME-docs.jsonl`: one line per document: `article_id`, its `files`, `ivila_text`.
Plus `labels.json` and `summary.json` (pages, words, blocks and lines per page, words per
block: a dataset built with `groups: poppler` can have hundreds of one-word blocks on a page
where VILA's datasets average 12-22, and that is what `--group line` is for; the geometric
blocks of the default `groups: geometry` average about 12).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from ..atomic import atomic_text, write_text_atomic
from ..dataset import LAYOUT_COLUMNS, Dataset
from ..errors import ConfigError
from ..labels import VILA_NAMES
from ..locks import RunLock
from ..owned import EXPORT, LOCK_NAME, MARKER, claim_folder, owned_entries, remove
from .vila import VilaOptions, document_text, page_records

# VILA's two maps: the token file's `labels` (name -> id), `labels.json` (id -> name)
LABEL_IDS = {name: k for k, name in enumerate(VILA_NAMES)}
LABELS = {str(k): name for k, name in enumerate(VILA_NAMES)}
VILA_SPLIT = {"validation": "dev"}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class _Tally:
    """Counts for the summary, as histograms so a million pages cost a few dicts."""

    def __init__(self) -> None:
        self.docs = self.pages = self.words = 0
        self.blocks_per_page: Counter[int] = Counter()
        self.lines_per_page: Counter[int] = Counter()
        self.words_per_block: Counter[int] = Counter()

    def add_page(self, rec: dict[str, Any]) -> None:
        self.pages += 1
        self.words += len(rec["words"])
        self.blocks_per_page[len(set(rec["block_ids"]))] += 1
        self.lines_per_page[len(set(rec["line_ids"]))] += 1
        self.words_per_block.update(Counter(rec["block_ids"]).values())


def _stats(hist: Counter[int]) -> dict[str, float]:
    """Mean, median, 95th percentile and max of a histogram (value -> count)."""
    n = sum(hist.values())
    if not n:
        return {"mean": 0.0, "median": 0.0, "p95": 0.0, "max": 0.0}
    values = sorted(hist.items())

    def quantile(q: float) -> float:
        seen, rank = 0, q * (n - 1)
        for v, c in values:
            seen += c
            if seen > rank:
                return float(v)
        return float(values[-1][0])

    mean = sum(v * c for v, c in values) / n
    return {"mean": round(mean, 2), "median": quantile(0.5), "p95": quantile(0.95),
            "max": float(values[-1][0])}


def _write_split(out: Path, name: str, rows: Iterable[dict[str, Any]], opts: VilaOptions
                 ) -> tuple[_Tally, list[Path]]:
    """The three files of one split, each written beside its final name then renamed;
    the tally and the three paths."""
    paths = {k: out / f"{name}-{k}" for k in ("token.json", "groups.jsonl", "docs.jsonl")}
    tally, files = _Tally(), []  # type: tuple[_Tally, list[str]]
    with contextlib.ExitStack() as stack:
        handles: dict[str, IO[str]] = {k: stack.enter_context(atomic_text(p))
                                       for k, p in paths.items()}
        handles["token.json"].write('{"data":[')
        for row in rows:
            tally.docs += 1
            doc_files = _write_document(row, opts, handles, files, tally)
            handles["docs.jsonl"].write(_dumps({"article_id": row["article_id"],
                                                "files": doc_files,
                                                "ivila_text": document_text(row, opts)}) + "\n")
        handles["token.json"].write(f'],"labels":{_dumps(LABEL_IDS)},"files":{_dumps(files)}}}')
    return tally, list(paths.values())


def _write_document(row: dict[str, Any], opts: VilaOptions, handles: dict[str, IO[str]],
                    files: list[str], tally: _Tally) -> list[str]:
    """A document's pages into the token and groups files; the file names it added."""
    added = []
    for rec in page_records(row, opts):
        file, groups = rec.pop("file"), rec.pop("groups")
        handles["token.json"].write(("," if files else "") + _dumps(rec))
        handles["groups.jsonl"].write(_dumps({"file": file, "groups": groups}) + "\n")
        files.append(file)
        added.append(file)
        tally.add_page(rec)
    return added


def _split_summary(t: _Tally) -> dict[str, Any]:
    one_word = t.words_per_block.get(1, 0)
    blocks = sum(t.words_per_block.values())
    return {"documents": t.docs, "pages": t.pages, "words": t.words,
            "blocks_per_page": _stats(t.blocks_per_page),
            "lines_per_page": _stats(t.lines_per_page),
            "words_per_block": _stats(t.words_per_block),
            "one_word_block_share": round(one_word / blocks, 4) if blocks else 0.0}


def export_vila(dataset_dir: str | Path, out_dir: str | Path,
                opts: VilaOptions | None = None) -> dict[str, Any]:
    """Write every split of the dataset in DIR as VILA token JSON into OUT; the summary
    (also written to OUT/summary.json). DIR is checked first (one ConfigError naming the
    file or folder at fault); OUT must be a new, empty or earlier export folder, and is
    held against a second export while this one writes."""
    opts = opts or VilaOptions()
    ds = Dataset.open(Path(dataset_dir))
    ds.check_columns(LAYOUT_COLUMNS)
    out = Path(out_dir)
    if out.resolve() == ds.root.resolve():
        raise ConfigError(f"{out}: the dataset's own folder; give the export another --out")
    claim_folder(out, EXPORT)
    with RunLock(out, what="another export"):
        summary: dict[str, Any] = {"options": {"group": opts.group, "bbox": opts.bbox,
                                               "indicator": opts.token}, "splits": {}}
        written = {out / "labels.json", out / "summary.json"}
        for split in ds.splits:
            name = VILA_SPLIT.get(split, split)
            tally, files = _write_split(out, name, ds.rows(split, LAYOUT_COLUMNS), opts)
            summary["splits"][name] = _split_summary(tally)
            written |= set(files)
        write_text_atomic(out / "labels.json", _dumps(LABELS) + "\n")
        write_text_atomic(out / "summary.json", json.dumps(summary, indent=2) + "\n")
        for stale in owned_entries(out, EXPORT, keep=(LOCK_NAME, MARKER)):
            if stale not in written:  # a split an earlier export had and this one has not
                remove(stale)
    return summary


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as the CLI prints it: one line per split."""
    lines = []
    for name, s in summary["splits"].items():
        bpp, wpb = s["blocks_per_page"], s["words_per_block"]
        lines.append(f"{name}: {s['documents']} documents, {s['pages']} pages, {s['words']} "
                     f"words; blocks/page mean {bpp['mean']} (median {bpp['median']}, max "
                     f"{bpp['max']:.0f}); words/block mean {wpb['mean']} (median "
                     f"{wpb['median']}); lines/page mean {s['lines_per_page']['mean']}; "
                     f"one-word blocks {100 * s['one_word_block_share']:.1f}%")
    return lines

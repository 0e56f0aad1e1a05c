#!/usr/bin/env python3
"""How each Parquet encoding of the word columns costs in time and bytes, on distinct papers.

The dataset's writer (write/parquet.py, `column_options`) chooses an encoding per word
column. That choice must be measured on a row group of *distinct* documents the size the
writer makes (~100 MB of Arrow): replicated documents (the shared corpus listed ten times)
repeat every value, so a dictionary never overflows and looks far better than it is on a
real corpus. Any folder of real PDFs will do; the numbers in docs/performance.md (round
5) come from the TeX Live documentation of Debian's texlive-publishers-doc and
texlive-science-doc packages (journal templates and package manuals):

    apt-get download texlive-publishers-doc texlive-science-doc
    for f in *.deb; do dpkg -x "$f" texdoc; done
    python scripts/bench_parquet.py texdoc --max 700

Each PDF is extracted with the project's extractor and made a compact row (as the finish
does, without an abstract to cut); then one row group of all of them is written with each
option, best of `--runs` CPU times, on one pinned CPU.

usage: python scripts/bench_parquet.py PDF_DIR [--max N] [--runs N] [--pin CPU]
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from loralay_build.write.features import SCHEMA  # noqa: E402
from loralay_build.write.parquet import column_options  # noqa: E402

MIN_WORDS = 1000
_VALUES = {"W": "article_words.list.element",
           "B": "article_bboxes.list.element.list.element",
           "N": "article_norm_bboxes.list.element.list.element",
           "L": "article_line_ids.list.element",
           "K": "article_block_ids.list.element"}


def row_of(pdf: str) -> bytes | None:
    """One compact row as an Arrow IPC stream (rows cross the process pool as bytes)."""
    from loralay_build.pdftext import ExtractLimits, extract_document
    from loralay_build.records import Candidate, ProcessedDoc
    from loralay_build.write.features import doc_to_batch

    doc = extract_document(pdf, pdf, ExtractLimits(timeout_s=60, max_pages=80))
    if not hasattr(doc, "words") or len(doc.words) < MIN_WORDS:
        return None
    cand = Candidate(Path(pdf).name, "local", "en", {"en": "-"}, publication_date="2020-01-01")
    batch = doc_to_batch(ProcessedDoc(cand, doc, [], None, None, {}))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def table_of(folder: Path, most: int) -> pa.Table:
    pdfs = sorted(str(p) for p in folder.rglob("*.pdf"))
    random.Random(0).shuffle(pdfs)
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        rows = [pa.ipc.open_stream(r).read_next_batch()
                for r in pool.map(row_of, pdfs[:most], chunksize=4) if r]
    return pa.Table.from_batches(rows, schema=SCHEMA).combine_chunks()


def options() -> dict[str, dict[str, object]]:
    paths = [p for f in SCHEMA for p in _all_paths(f.name, f.type)]

    def without_dict(*keys: str, **enc: str) -> dict[str, object]:
        off = {_VALUES[k] for k in keys}
        return {"use_dictionary": [p for p in paths if p not in off],
                "column_encoding": {_VALUES[k]: e for k, e in enc.items()}}

    return {
        "dictionary on every column (before)": {},
        "no dictionary on boxes, ids (plain)": without_dict("B", "N", "L", "K"),
        "float boxes byte streams, rest plain": without_dict(
            "B", "N", "L", "K", B="BYTE_STREAM_SPLIT"),
        "chosen (column_options)": column_options(SCHEMA),
        "chosen, no dictionary on words either": without_dict(
            "W", "B", "N", "L", "K", B="BYTE_STREAM_SPLIT", N="PLAIN",
            L="DELTA_BINARY_PACKED", K="DELTA_BINARY_PACKED"),
    }


def _all_paths(name: str, t: pa.DataType) -> list[str]:
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return _all_paths(f"{name}.list.element", t.value_type)
    if pa.types.is_struct(t):
        return [p for i in range(t.num_fields)
                for p in _all_paths(f"{name}.{t.field(i).name}", t.field(i).type)]
    return [name]


def measure(table: pa.Table, kw: dict[str, object], runs: int) -> tuple[float, int]:
    best, size = float("inf"), 0
    for _ in range(runs):
        buf = io.BytesIO()
        t = time.process_time()
        with pq.ParquetWriter(buf, table.schema, compression="zstd", write_page_index=True,
                              **kw) as w:  # type: ignore[arg-type]
            w.write_table(table, row_group_size=table.num_rows)
        best, size = min(best, time.process_time() - t), buf.tell()
    return best, size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pdf_dir", type=Path)
    ap.add_argument("--max", type=int, default=700, help="PDFs to try (shuffled, seed 0)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pin", type=int, default=None)
    a = ap.parse_args()
    table = table_of(a.pdf_dir, a.max)
    if a.pin is not None:
        os.sched_setaffinity(0, {a.pin})
    words = sum(len(w) for w in table.column("article_words").to_pylist())
    print(f"{table.num_rows} documents, {words:,} words, {table.nbytes / 2**20:.0f} MiB of "
          f"Arrow in one row group; CPU per 10k words (best of {a.runs}) and file size:")
    for name, kw in options().items():
        cpu, size = measure(table, kw, a.runs)
        print(f"  {name:40s} {cpu * 1e7 / words:5.2f} ms  {size / 1e6:7.2f} MB")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Duplicate detection's cost: the print per document, and the detector at 2k / 20k.

(a) `doc_print` CPU per document relative to `extract_document` of the same PDF (its
    own CPU and Poppler's, the child process), over ../shared/corpus/pdf and
    ../shared/bench/pdfs, the two interleaved document by document, `--rounds` times; the
    ratio of the sums, median over rounds, and per document (median, max).
(b) `DuplicateDetector` at each of `--sizes` documents, each size in a fresh subprocess:
    rows streamed into `add`, a tenth as many prints of "another dataset" streamed into
    `exclude`, then `decide`; peak memory (tracemalloc's peak of everything allocated
    from the first row to the decisions: Python objects and NumPy's buffers, which NumPy
    reports to tracemalloc) and CPU per document (a second, untraced run: tracemalloc
    slows every allocation).

The rows of (b) are replicated from the real documents' MinHash signatures. Identical
replicas would fall into one LSH bucket per real document (hundreds of members, every
pair a candidate), which no real corpus does, so each replica keeps its real document's
value at a random quarter of the 128 positions and draws the rest: replicas of one real
document then look like distinct papers of one field (estimated Jaccard ~0.06 between
them, enough to share LSH buckets now and then), and the planted duplicates are 1 % exact
copies (same PDF, same text) and 3 % near copies (a tenth of the positions redrawn:
Jaccard ~0.9, like a changed cover page) of earlier rows. The detector must find every
planted copy and nothing else; the script checks it.

Goals (issue 25): at 20k documents the detector adds <= 100 MB; print + detector
<= 5 % of the CPU of a document's build (measured here against its extraction alone,
which is most but not all of a build's CPU: a stricter test).

usage: python scripts/bench_duplicates.py [--rounds 3] [--sizes 2000,20000]
       [--shared DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from loralay_build.corpus import duplicates as dup  # noqa: E402
from loralay_build.corpus import prints  # noqa: E402
from loralay_build.dataset import exclude_datasets  # noqa: E402

MB_GOAL, CPU_GOAL = 100.0, 0.05
KEEP, NEAR_REDRAW = 0.25, 0.10  # share of a real signature a replica keeps; a near copy redraws
EXACT_SHARE, NEAR_SHARE = 0.01, 0.03
ABSTRACT_WORDS = 150  # a summary's length (the shared corpus's abstracts: median 140)


def cpu_with_children() -> float:
    """CPU seconds of this process and its waited-for children (Poppler)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def measure_prints(pdfs: list[Path], rounds: int, words_out: Path | None = None
                   ) -> tuple[dict, np.ndarray]:
    """(a): interleaved extraction and print; returns the figures and the real signatures.
    `words_out`: a built-dataset folder written with the last round's words (for (c))."""
    from loralay_build.pdftext import ExtractLimits, extract_document

    prints.doc_print(["warm", "up"] * 60)  # the permutations and caches, made once per process
    ratios, per_doc, sigs, bodies = [], [], {}, {}
    ex_total = pr_total = 0.0
    for r in range(rounds):
        ex_sum = pr_sum = 0.0
        order = pdfs if r % 2 == 0 else pdfs[::-1]
        for pdf in order:
            t = cpu_with_children()
            doc = extract_document(pdf, pdf.stem, ExtractLimits(timeout_s=600))
            ex = cpu_with_children() - t
            if not hasattr(doc, "words"):
                continue
            t = time.process_time()
            # as a build: the body and the summary (a stand-in of ABSTRACT_WORDS words)
            fingerprint = prints.doc_print(doc.words, abstract=doc.words[:ABSTRACT_WORDS])
            pr = time.process_time() - t
            ex_sum, pr_sum = ex_sum + ex, pr_sum + pr
            per_doc.append(pr / ex if ex > 0 else 0.0)
            if fingerprint.words >= prints.MIN_WORDS:
                sigs[pdf.name] = fingerprint.signature
            if words_out is not None and r == rounds - 1:
                bodies[pdf.stem] = doc.words
        ratios.append(pr_sum / ex_sum)
        ex_total, pr_total = ex_total + ex_sum, pr_total + pr_sum
        print(f"  round {r + 1}: extraction {ex_sum:.2f} s CPU, doc_print {pr_sum:.3f} s, "
              f"ratio {pr_sum / ex_sum:.4f}", flush=True)
    n_docs = len(per_doc) // rounds
    if words_out is not None:
        write_dataset(words_out, bodies, copies=5)
    return ({"ratio": statistics.median(ratios), "per_doc_median": statistics.median(per_doc),
             "per_doc_max": max(per_doc), "docs": n_docs,
             "extract_ms": 1000 * ex_total / (n_docs * rounds),
             "print_ms": 1000 * pr_total / (n_docs * rounds)},
            np.stack([sigs[k] for k in sorted(sigs)]))


def write_dataset(folder: Path, bodies: dict[str, list[str]], copies: int) -> None:
    """A built dataset's layout (data/*.parquet, article_id, article_words, abstract), each
    body `copies` times under other ids, row groups of 32 documents."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = [f"{k}~{c}" for c in range(copies) for k in bodies]
    words = [bodies[k] for c in range(copies) for k in bodies]
    (folder / "data").mkdir(parents=True, exist_ok=True)
    abstracts = [" ".join(w[:ABSTRACT_WORDS]) for w in words]
    pq.write_table(pa.table({"article_id": ids, "article_words": words,
                             "abstract": abstracts}),
                   folder / "data" / "train-00000-of-00001.parquet", row_group_size=32)


def exclusion_child(folder: str, trace: bool) -> None:
    """(c): `exclude_datasets` of a written dataset streamed into a detector of 2,000
    replicated rows: CPU per document read (untraced run) and the memory the streaming
    adds (traced run)."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(next(Path(folder, "data").glob("*.parquet"))).metadata
    n_words = sum(pq.read_table(Path(folder, "data"), columns=["article_words"])
                  .column(0).combine_chunks().value_lengths().to_numpy())
    bases = np.stack([prints.doc_print([f"w{i}" for i in range(200)]).signature])
    det = dup.DuplicateDetector()
    for r in range(2000):
        sig, key, sha, _ = replica(bases, r)
        det.add(f"doc{r:06d}", None, sha, prints.DocPrint(key, sig, 10_000))
    det._lsh_index()
    if trace:
        tracemalloc.start()
    t0 = time.process_time()
    n = det.exclude(exclude_datasets([folder]))
    t1 = time.process_time()
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    print(json.dumps({"docs": n, "words": int(n_words), "rows": meta.num_rows,
                      "cpu_s": t1 - t0, "tracemalloc_peak_mb": peak / 2**20}))


# -- (b), in a child process -------------------------------------------------------------

def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng([20261125, *key])


def redrawn(g: np.random.Generator, sig: np.ndarray, share: float) -> np.ndarray:
    """`sig` with about `share` of its positions drawn anew."""
    redraw = g.random(prints.NUM_PERM) < share
    return np.where(redraw, g.integers(0, 2**32, prints.NUM_PERM, dtype=np.uint32), sig)


def abstract_of(root: int) -> tuple[bytes, np.ndarray]:
    """The abstract (key, signature) of distinct paper `root`: its copies carry it too."""
    sig = _rng(2, root).integers(0, 2**32, prints.NUM_PERM, dtype=np.uint32)
    return hashlib.blake2b(f"abstract{root}".encode(), digest_size=16).digest(), sig


def replica_print(sig: np.ndarray, key: bytes, root: int) -> prints.DocPrint:
    abstract_key, abstract_sig = abstract_of(root)
    return prints.DocPrint(key, sig, 10_000, abstract_key, abstract_sig, 150)


def root_of(r: int) -> int:
    """The distinct paper row r is, or copies (a pure function of r)."""
    g = _rng(0, r)
    u = g.random()
    return root_of(int(g.integers(r))) if r and u < EXACT_SHARE + NEAR_SHARE else r


def replica(bases: np.ndarray, r: int) -> tuple[np.ndarray, bytes, str, int | None]:
    """Row r of the replicated run: (signature, key, sha256, the row it copies or None),
    a pure function of r, so copies are made again rather than kept. A copy has the
    abstract of the paper it copies (`root_of`), a distinct paper its own."""
    g = _rng(0, r)
    u = g.random()
    if r and u < EXACT_SHARE + NEAR_SHARE:
        src = int(g.integers(r))
        sig, key, sha, _ = replica(bases, src)
        if u < EXACT_SHARE:
            return sig, key, sha, src
        sig = redrawn(g, sig, NEAR_REDRAW)
    else:
        src = None
        sig = redrawn(g, bases[r % len(bases)], 1 - KEEP)
    key = hashlib.blake2b(f"key{r}".encode(), digest_size=16).digest()
    sha = hashlib.sha256(f"pdf{r}".encode()).hexdigest()
    return sig.astype(np.uint32), key, sha, src


def external(bases: np.ndarray, n_run: int, e: int) -> tuple[prints.ExternalPrint, int | None]:
    """Print e of the other dataset: 1 % near copies of a run row, the rest distinct."""
    g = _rng(1, e)
    if g.random() < 0.01:
        src = int(g.integers(n_run))
        sig = redrawn(g, replica(bases, src)[0], NEAR_REDRAW)
    else:
        src = None
        sig = redrawn(g, bases[e % len(bases)], 1 - KEEP)
    key = hashlib.blake2b(f"ext{e}".encode(), digest_size=16).digest()
    fp = replica_print(sig.astype(np.uint32), key, root_of(src) if src is not None
                       else 10**9 + e)
    return prints.ExternalPrint("other", f"ext{e:06d}", fp), src


def child(bases_file: str, n: int, trace: bool) -> None:
    """One size: the timed run (trace False: tracemalloc slows every allocation) or the
    traced one (its peak of everything allocated from the first row to the decisions).
    The rows and the other dataset's prints are made before measuring, as a run's
    workers make them; the detector only reads them."""
    bases = np.load(bases_file)
    made = [replica(bases, r) for r in range(n)]
    rows = [(f"doc{r:06d}", f"{1990 + r % 34:04d}-{1 + r % 12:02d}", sha,
             replica_print(sig, key, root_of(r))) for r, (sig, key, sha, _) in enumerate(made)]
    planted = {r: m[3] for r, m in enumerate(made) if m[3] is not None}
    del made
    exts = [external(bases, n, e) for e in range(n // 10)]
    ext_src = {e: s for e, (_, s) in enumerate(exts) if s is not None}
    ext_prints = [x for x, _ in exts]
    del exts
    if trace:
        tracemalloc.start()
    t0 = time.process_time()
    det = dup.DuplicateDetector()
    for row in rows:
        det.add(*row)
    t1 = time.process_time()
    det.exclude(iter(ext_prints))
    t2 = time.process_time()
    decisions = det.decide()
    t3 = time.process_time()
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    tracemalloc.stop()
    # the planted truth: every copy found (as a copy of its source's group), nothing else
    groups = {m: g for g in decisions.groups for m in g.members}
    missed = sum(1 for r, s in planted.items()
                 if groups.get(f"doc{r:06d}") is None
                 or f"doc{s:06d}" not in groups[f"doc{r:06d}"].members)
    ext_hit = {d.doc_id for d in decisions.duplicates.values() if d.dataset}
    ext_missed = sum(1 for s in ext_src.values() if f"doc{s:06d}" not in ext_hit)
    planted_ids = {f"doc{r:06d}" for r in planted} | {f"doc{s:06d}" for s in planted.values()} \
        | {f"doc{s:06d}" for s in ext_src.values()}
    extra = sum(1 for g in decisions.groups for m in g.members if m not in planted_ids)
    print(json.dumps({
        "n": n, "add_s": t1 - t0, "exclude_s": t2 - t1, "decide_s": t3 - t2,
        "tracemalloc_peak_mb": peak / 2**20,
        "planted": len(planted), "missed": missed, "external_planted": len(ext_src),
        "external_missed": ext_missed, "unplanted_in_groups": extra,
        "dropped": len(decisions.duplicates), "groups": len(decisions.groups)}))


def run_child(bases_file: Path, n: int) -> dict:
    """The timed run and the traced run of one size, each in a fresh process."""
    res = []
    for trace in (False, True):
        out = subprocess.run([sys.executable, __file__, "--child", str(n), "--bases",
                              str(bases_file)] + (["--trace"] if trace else []),
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            sys.exit(f"the {n}-document run failed:\n{out.stderr}")
        res.append(json.loads(out.stdout.strip().splitlines()[-1]))
    timed, traced = res
    timed["tracemalloc_peak_mb"] = traced["tracemalloc_peak_mb"]
    return timed


def measure_all(args: argparse.Namespace, pdfs: list[Path], work: Path
                ) -> tuple[dict, np.ndarray, list[dict], dict]:
    """(a), (b) at each size, (c); prints each as it comes."""
    print(f"(a) doc_print against extract_document, {len(pdfs)} PDFs, {args.rounds} rounds "
          "interleaved (CPU of the process and Poppler)")
    a, bases = measure_prints(pdfs, args.rounds, work / "other")
    print(f"  ratio of the sums (median of rounds) {a['ratio']:.4f}; per document: "
          f"median {a['per_doc_median']:.4f}, max {a['per_doc_max']:.4f}; "
          f"{a['print_ms']:.1f} ms against {a['extract_ms']:.1f} ms per document "
          f"({a['docs']} documents extracted)")
    print(f"(b) the detector, a fresh process per size; rows replicated from {len(bases)} "
          "real signatures")
    bases_file = work / "bases.npy"
    np.save(bases_file, bases)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        res = run_child(bases_file, n)
        results.append(res)
        per_doc = 1000 * (res["add_s"] + res["exclude_s"] + res["decide_s"]) / n
        print(f"  {n:>6} docs: add {res['add_s']:.2f} s, exclude {n // 10} prints "
              f"{res['exclude_s']:.2f} s, decide {res['decide_s']:.2f} s "
              f"({per_doc:.3f} ms/doc); peak memory {res['tracemalloc_peak_mb']:.1f} MB; "
              f"planted copies "
              f"{res['planted']} (missed {res['missed']}), external copies "
              f"{res['external_planted']} (missed {res['external_missed']}), unplanted "
              f"documents in groups {res['unplanted_in_groups']}", flush=True)
    runs = []
    for trace in ([], ["--trace"]):
        out = subprocess.run([sys.executable, __file__, "--exclusion", str(work / "other"),
                              *trace], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            sys.exit(f"the exclusion run failed:\n{out.stderr}")
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    c = {**runs[0], "tracemalloc_peak_mb": runs[1]["tracemalloc_peak_mb"]}
    print(f"(c) exclude_datasets: {c['docs']} documents ({c['words']:,} words) of a written "
          f"dataset streamed against 2,000 rows: {1000 * c['cpu_s'] / c['docs']:.1f} ms CPU "
          f"per document ({1000 * c['cpu_s'] / (c['words'] / 1000):.2f} ms per 1k words), "
          f"peak tracemalloc {c['tracemalloc_peak_mb']:.1f} MB")
    return a, bases, results, c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="2000,20000")
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get(
        "LORALAY_SHARED", REPO.parent / "shared")))
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--bases", help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--exclusion", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.bases, args.child, args.trace)
        return
    if args.exclusion:
        exclusion_child(args.exclusion, args.trace)
        return
    pdfs = sorted((args.shared / "corpus" / "pdf").glob("*.pdf")) \
        + sorted((args.shared / "bench" / "pdfs").glob("*.pdf"))
    if not pdfs:
        sys.exit(f"no PDFs under {args.shared}/corpus/pdf or {args.shared}/bench/pdfs")
    work = Path(tempfile.mkdtemp(prefix="bench-dup-"))
    try:
        a, _, results, _ = measure_all(args, pdfs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    big = results[-1]
    mb = big["tracemalloc_peak_mb"]
    detector_ms = 1000 * (big["add_s"] + big["exclude_s"] + big["decide_s"]) / big["n"]
    share = (a["print_ms"] + detector_ms) / a["extract_ms"]
    truth = all(r["missed"] == 0 and r["external_missed"] == 0
                and r["unplanted_in_groups"] == 0 for r in results)
    print("goals")
    print(f"  memory added at {big['n']} documents: {mb:.1f} MB (goal <= {MB_GOAL:.0f}) "
          f"{'PASS' if mb <= MB_GOAL else 'FAIL'}")
    print(f"  CPU per document, print {a['print_ms']:.2f} ms + detector {detector_ms:.3f} ms "
          f"against extraction {a['extract_ms']:.1f} ms: {share:.4f} (goal <= {CPU_GOAL}) "
          f"{'PASS' if share <= CPU_GOAL else 'FAIL'}")
    print(f"  planted duplicates found, nothing else: {'PASS' if truth else 'FAIL'}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The corpus-wide finish at scale: peak RSS and time per document on replicated runs.

Extracting 20k PDFs takes hours here, so a run built once (e.g. the shared corpus) is
replicated: every row of its fetch and shard states is copied under ids suffixed `~K`,
with real payloads and summaries and a publication date of its own (so the chronological
splits cut through all of them), to 2k / 10k / 20k documents. The real `loralay build
--finish` then runs on each in a fresh subprocess; its peak RSS comes from wait4 (the
kernel's high-water mark of that process) and its wall time from the clock.

Every replica is a distinct paper to the duplicate detector: its PDF hash is its own and
its print keeps a random quarter of its original's MinHash values (the others drawn), so
replicas of one document look like papers of one field (estimated Jaccard ~0.06), as in
scripts/bench_duplicates.py. Identical replicas would all be dropped as one paper's copies.

Goals (issue 15): peak RSS extrapolated to 200k documents <= 600 MB (the line through
the two largest runs, base + slope x 200k) and <= 3 ms per document: the wall time each
added document costs (the slopes between sizes), and the wall time per document at the
largest size. `--workers` as for a build (2: the next row group is made on a second core).

Goals (issue 25, duplicates): each size is finished twice, as is and with the duplicate
detector replaced by one that finds nothing (the reference, same process otherwise);
at the largest size the detector adds <= 100 MB to the peak RSS, and the print step (from
the base run's ledger: seconds per step per document) plus the finish's added CPU per
document is <= 5 % of a document's build: its per-document steps plus the finish's CPU
per document (fixed costs such as imports and start-up left out, which makes the share
larger than a whole build's, so the test is strict).

usage: python scripts/bench_finish.py BUILT_RUN_DIR MANIFEST [--sizes 2000,10000,20000]
       [--work DIR] [--keep] [--workers N] [--no-duplicates-reference]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from loralay_build.corpus.prints import NUM_PERM, DocPrint  # noqa: E402
from loralay_build.pdf import payload as cp  # noqa: E402

RSS_GOAL_MB, MS_GOAL, AT = 600.0, 3.0, 200_000
DUP_MB_GOAL, DUP_CPU_GOAL = 100.0, 0.05
KEEP = 0.25  # share of its original's MinHash values a replica's print keeps

# `loralay` with the duplicate detector replaced by one that finds nothing: the reference
NO_DUPLICATES = """
import sys
import loralay_build.pdf.corpus_steps as decide
class NoDuplicates:
    duplicates = {}
    def add(self, *row): pass
    def exclude(self, prints):
        for _ in prints: pass
    def decide(self): return self
decide.DuplicateDetector = NoDuplicates
decide.DocPrint = type("NoPrint", (), {"from_str": staticmethod(lambda text: None)})
from loralay_build.cli import main
sys.argv[0] = "loralay"
main()
"""


def replica_id(doc_id: str, k: int) -> str:
    return f"{doc_id}~{k:05d}"


def replica_date(date: str | None, serial: int) -> str | None:
    """A date of the same precision as the original, spread over 1990-2023; None stays."""
    if not date:
        return date
    year, month, day = 1990 + serial % 34, 1 + (serial // 34) % 12, 1 + (serial // 408) % 28
    parts = [f"{year:04d}", f"{month:02d}", f"{day:02d}"]
    return "-".join(parts[:len(date.split("-"))])


def replica_print(text: str, serial: int) -> str:
    """The print of a distinct paper of the same field (see the module's docstring)."""
    p = DocPrint.from_str(text)
    g = np.random.default_rng([20261125, serial])
    keep = g.random(NUM_PERM) < KEEP
    drawn = g.integers(0, 1 << 32, NUM_PERM, dtype=np.uint64).astype(np.uint32)
    key = hashlib.blake2b(f"replica {serial}".encode(), digest_size=16).digest()
    return DocPrint(key, np.where(keep, p.signature, drawn).astype(np.uint32),
                    p.words, p.abstract_key, p.abstract_signature, p.abstract_words).to_str()


def _columnar_replica(payload: bytes, new_id: str, date: str | None) -> bytes:
    """A columnar payload with the ids and date in its JSON metadata replaced; the word
    columns are copied as Arrow buffers."""
    reader = pa.ipc.open_stream(pa.py_buffer(payload)[len(cp.MAGIC):])
    batch = reader.read_next_batch()
    meta = json.loads(reader.schema.metadata[b"doc"])
    meta["candidate"]["id"], meta["candidate"]["publication_date"] = new_id, date
    meta["document"]["id"] = new_id
    schema = reader.schema.with_metadata({b"doc": json.dumps(meta, ensure_ascii=False)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema, options=cp._OPTIONS) as w:
        w.write_batch(batch)
    return cp.MAGIC + sink.getvalue().to_pybytes()


def replica_payload(payload: bytes, new_id: str, date: str | None) -> bytes:
    """The payload with its ids and date replaced (the run state's one format)."""
    if payload[:len(cp.MAGIC)] != cp.MAGIC:
        sys.exit("the base run's state holds payloads of another format: rebuild it")
    return _columnar_replica(payload, new_id, date)


@dataclass(frozen=True)
class Base:
    state: Path
    fetch: Path
    shard: Path
    count: int  # candidates per replica


def base_of(run: Path) -> Base:
    state = run / "state"
    shards = sorted(state.glob("shard-*-of-00001.sqlite"))
    if not shards:
        sys.exit(f"{run}: no one-shard state to replicate (build it with one shard first)")
    with sqlite3.connect(state / "fetch.sqlite") as db:
        n = db.execute("SELECT COUNT(*) FROM candidates").fetchone()[0]
    return Base(state, state / "fetch.sqlite", shards[0], n)


def make_cache(base: Base, replicas: int, cache: Path) -> None:
    """Fetch + shard rows of `replicas` copies, with a `rep` table (id -> copy number)."""
    if cache.exists():
        with sqlite3.connect(cache) as db:
            have = db.execute("SELECT COALESCE(MAX(k), -1) + 1 FROM rep").fetchone()[0]
        if have >= replicas:
            return
        cache.unlink()
    tmp = cache.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    db.executescript(f"""
        ATTACH '{base.fetch}' AS f; ATTACH '{base.shard}' AS s;
        CREATE TABLE rep (id TEXT PRIMARY KEY, k INTEGER);
        CREATE TABLE cand AS SELECT * FROM f.candidates WHERE 0;
        CREATE TABLE fres AS SELECT * FROM f.results WHERE 0;
        CREATE TABLE led AS SELECT * FROM s.ledger WHERE 0;
        CREATE TABLE docs AS SELECT * FROM s.documents WHERE 0;""")
    cands = db.execute("SELECT id, seq, body FROM f.candidates ORDER BY seq").fetchall()
    docs = {r[0]: (r[1], bytes(r[2])) for r in
            db.execute("SELECT id, summary, payload FROM s.documents")}
    for k in range(replicas):
        db.execute("BEGIN")
        for j, (cid, seq, body) in enumerate(cands):
            _copy_one(db, k, j, base.count, cid, seq, body, docs.get(cid))
        db.execute("COMMIT")
    db.close()
    os.replace(tmp, cache)


def _copy_one(db: sqlite3.Connection, k: int, j: int, per: int, cid: str, seq: int,
              body: str, doc: tuple[str, bytes] | None) -> None:
    new = replica_id(cid, k)
    c = json.loads(body)
    date = replica_date(c.get("publication_date"), k * per + j)
    c["id"], c["publication_date"] = new, date
    db.execute("INSERT INTO rep VALUES (?,?)", (new, k))
    db.execute("INSERT INTO cand VALUES (?,?,?)",
               (new, k * per + seq, json.dumps(c, ensure_ascii=False)))
    for table, src, key in (("fres", "f.results", "doc_id"), ("led", "s.ledger", "key")):
        cols = [r[1] for r in db.execute(f"PRAGMA {src.split('.')[0]}.table_info"
                                         f"({src.split('.')[1]})")]
        sel = ", ".join("?" if col == key else col for col in cols)
        db.execute(f"INSERT INTO {table} SELECT {sel} FROM {src} WHERE {key}=?", (new, cid))
    if doc is not None:
        s = json.loads(doc[0])
        s["id"], s["publication_date"] = new, date
        s["print"] = replica_print(s["print"], k * per + j)
        s["pdf_sha256"] = hashlib.sha256(new.encode()).hexdigest()
        db.execute("INSERT INTO docs VALUES (?,?,?)", (
            new, json.dumps(s, ensure_ascii=False), replica_payload(doc[1], new, date)))


def make_run(base: Base, cache: Path, replicas: int, out: Path) -> int:
    """A run folder holding the first `replicas` copies; returns its number of candidates."""
    if out.exists():
        shutil.rmtree(out)
    state = out / "state"
    state.mkdir(parents=True)
    shutil.copy(base.fetch, state / "fetch.sqlite")
    shutil.copy(base.shard, state / base.shard.name)
    key = {"cand": "id", "docs": "id", "fres": "doc_id", "led": "key"}
    pairs = ((state / "fetch.sqlite", ("candidates", "cand"), ("results", "fres")),
             (state / base.shard.name, ("ledger", "led"), ("documents", "docs")))
    for path, *tables in pairs:
        with sqlite3.connect(path) as db:
            db.execute(f"ATTACH '{cache}' AS c")
            for target, src in tables:
                db.execute(f"DELETE FROM {target}")
                db.execute(f"INSERT INTO {target} SELECT * FROM c.{src} WHERE {key[src]} IN "
                           f"(SELECT id FROM c.rep WHERE k < ?)", (replicas,))
    return replicas * base.count


def run_finish(out: Path, manifest: Path, workers: int, duplicates: bool = True
               ) -> tuple[float, float, float, int]:
    """(peak RSS MB, wall s, CPU s, exit status) of one `build --finish` in a fresh process.
    CPU time (user + system) is what the finish costs the cores it uses."""
    loralay = ["-m", "loralay_build.cli"] if duplicates else ["-c", NO_DUPLICATES]
    cmd = [sys.executable, *loralay, "build", "--source", "local",
           "--manifest", str(manifest), "--out", str(out), "--finish", "--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status:
        sys.stderr.write(proc.stderr.read().decode(errors="replace")[-2000:])
    cpu = usage.ru_utime + usage.ru_stime
    return usage.ru_maxrss / 1024, wall, cpu, os.waitstatus_to_exitcode(status)


def verdict(points: list[tuple[int, float, float, float]]) -> list[str]:
    """Memory: the line through the last two (documents, MB) points, extrapolated (the
    first thousands of documents also fill the row groups the writer buffers, a fixed
    cost). Time: wall seconds per added document between each two sizes (the curve's
    slopes: flat when they agree) and the fixed cost left at zero documents (start-up,
    imports, the report's plots), then the wall ms per document at the largest size."""
    n = [p[0] for p in points[-2:]]
    mb = [p[1] for p in points[-2:]]
    slope = (mb[-1] - mb[0]) / (n[-1] - n[0]) if len(n) > 1 else 0.0
    base = mb[0] - slope * n[0]
    at = base + max(slope, 0.0) * AT
    lines = [f"peak RSS line: {base:.0f} MB + {slope * 1024:.2f} KB/doc -> {at:.0f} MB at "
             f"{AT:,} documents: {'PASS' if at <= RSS_GOAL_MB else 'FAIL'} (goal "
             f"<= {RSS_GOAL_MB:.0f} MB)"]
    steps = [(b[2] - a[2]) * 1000 / (b[0] - a[0]) for a, b in zip(points, points[1:])]
    if steps:
        fixed = points[0][2] - steps[0] * points[0][0] / 1000
        lines.append("time per added document (wall): " + ", ".join(
            f"{a[0]:,}->{b[0]:,}: {ms:.2f} ms" for a, b, ms in zip(points, points[1:], steps))
            + f"; fixed {fixed:.1f} s: {'PASS' if max(steps) <= MS_GOAL else 'FAIL'} "
            f"(goal <= {MS_GOAL} ms)")
    last = points[-1]
    lines.append(f"at {last[0]:,} documents: {last[2] * 1000 / last[0]:.2f} ms wall, "
                 f"{last[3] * 1000 / last[0]:.2f} ms CPU per document: "
                 f"{'PASS' if last[2] * 1000 / last[0] <= MS_GOAL else 'FAIL'} "
                 f"(goal <= {MS_GOAL} ms)")
    return lines


def step_seconds(shard: Path) -> tuple[float, float, int]:
    """(all steps, the print step) in seconds per document, and how many documents, from
    the base run's ledger (documents that went through every step)."""
    with sqlite3.connect(shard) as db:
        rows = [json.loads(r[0]) for r in db.execute(
            "SELECT durations FROM ledger WHERE kind='document' AND failure_class IS NULL")]
    rows = [r for r in rows if "print" in r]
    if not rows:
        sys.exit(f"{shard}: no document with a `print` step: build the base run again")
    return (sum(sum(r.values()) for r in rows) / len(rows),
            sum(r["print"] for r in rows) / len(rows), len(rows))


def duplicates_verdict(base: Base, with_dup: tuple[int, float, float, float],
                       without: tuple[int, float, float, float]) -> list[str]:
    n, mb, _, cpu = with_dup
    added_mb, added_ms = mb - without[1], (cpu - without[3]) * 1000 / n
    steps, printing, docs = step_seconds(base.shard)
    build_ms = steps * 1000 + cpu * 1000 / n
    share = (printing * 1000 + max(added_ms, 0.0)) / build_ms
    return [
        f"duplicates at {n:,} documents: peak RSS {mb:.0f} MB against {without[1]:.0f} MB "
        f"without the detector: +{added_mb:.0f} MB: "
        f"{'PASS' if added_mb <= DUP_MB_GOAL else 'FAIL'} (goal <= {DUP_MB_GOAL:.0f} MB)",
        f"duplicates' CPU per document: print step {printing * 1000:.2f} ms (mean of {docs} "
        f"documents' steps, {steps * 1000:.1f} ms in all) + finish {added_ms:+.2f} ms, of "
        f"{build_ms:.1f} ms (steps + finish per document): {share:.1%}: "
        f"{'PASS' if share <= DUP_CPU_GOAL else 'FAIL'} (goal <= {DUP_CPU_GOAL:.0%})"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a built run folder (one shard)")
    ap.add_argument("manifest", type=Path, help="the manifest it was built from")
    ap.add_argument("--sizes", default="2000,10000,20000")
    ap.add_argument("--work", type=Path, default=Path("out/bench-finish"))
    ap.add_argument("--keep", action="store_true", help="keep each replicated run folder")
    ap.add_argument("--workers", type=int, default=2,
                    help="`build --finish --workers N` (2: a second core reads ahead)")
    ap.add_argument("--no-duplicates-reference", action="store_true",
                    help="skip the second finish of each size without the detector")
    a = ap.parse_args()
    base = base_of(a.run)
    sizes = [int(s) for s in a.sizes.split(",")]
    reps = [max(1, -(-s // base.count)) for s in sizes]
    a.work.mkdir(parents=True, exist_ok=True)
    cache = a.work / "replicas.sqlite"
    t0 = time.perf_counter()
    make_cache(base, max(reps), cache)
    print(f"replicas of {base.count} candidates ready in {time.perf_counter() - t0:.0f} s")
    points: list[tuple[int, float, float, float]] = []
    references: list[tuple[int, float, float, float]] = []
    print(f"--workers {a.workers}")
    print(f"{'documents':>10} {'detector':>9} {'peak RSS MB':>12} {'wall s':>8} {'CPU s':>8} "
          f"{'wall ms/doc':>11} {'CPU ms/doc':>10}")
    for r in reps:
        out = a.work / f"run-{r}"
        for duplicates in (True, False)[:1 if a.no_duplicates_reference else 2]:
            n = make_run(base, cache, r, out)
            mb, wall, cpu, code = run_finish(out, a.manifest, a.workers, duplicates)
            if code:
                sys.exit(f"finish on {n} documents exited {code}")
            (points if duplicates else references).append((n, mb, wall, cpu))
            print(f"{n:>10,} {'yes' if duplicates else 'none':>9} {mb:>12.0f} {wall:>8.1f} "
                  f"{cpu:>8.1f} {wall * 1000 / n:>11.2f} {cpu * 1000 / n:>10.2f}", flush=True)
        if not a.keep:
            shutil.rmtree(out)
    for line in verdict(points):
        print(line)
    if references:
        for line in duplicates_verdict(base, points[-1], references[-1]):
            print(line)


if __name__ == "__main__":
    main()

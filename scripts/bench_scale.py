#!/usr/bin/env python3
"""A whole build at scale: the shared corpus replicated to N documents, `--workers 2`.

Issue 15 asks for the finish's memory and time per document to hold in a whole build
too, not only in `build --finish` on a replicated run state (scripts/bench_finish.py).
Here the real PDFs are listed N times in a manifest (ids suffixed, so every line is a
document of its own) and `loralay build --source local --workers W` runs on it in a
fresh folder: every document is extracted, stripped and stored, then finished.

Measured per size: wall and CPU seconds of the whole process tree (wait4); the driver's
peak RSS (its kernel high-water mark, VmHWM, sampled until it exits: the finish runs in
the driver, the workers are bounded by `worker_memory_mb`); the finish's wall time per
candidate, from the log's "processed:" and "done:" lines.

usage: python scripts/bench_scale.py [--sizes 2000,10000] [--workers 2] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("LORALAY_SHARED", REPO.parent / "shared"))
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*loralay\.build: (processed|done):")


def replicated(src: Path, size: int, dst: Path) -> Path:
    """`size` manifest lines cycling over the corpus's, each with an id of its own."""
    base = [json.loads(raw) for raw in src.read_text().splitlines() if raw.strip()]
    with dst.open("w") as out:
        for k in range(size):
            obj = dict(base[k % len(base)])
            obj["id"] = f"{obj['id']}_r{k:06d}"
            obj["file"] = str((src.parent / obj["file"]).resolve())
            out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return dst


def driver_hwm_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def finish_seconds(log: str) -> float | None:
    stamps = {m.group(2): datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
              for m in map(_STAMP.match, log.splitlines()) if m}
    if "processed" in stamps and "done" in stamps:
        return (stamps["done"] - stamps["processed"]).total_seconds()
    return None


def build(manifest: Path, out: Path, workers: int) -> dict[str, float | str | None]:
    cmd = [sys.executable, "-m", "loralay_build.cli", "build", "--source", "local",
           "--manifest", str(manifest), "--out", str(out), "--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    log_path = out.parent / f"{out.name}.log"
    t0, peak = time.perf_counter(), 0.0
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, driver_hwm_mb(proc.pid) or 0.0)
            time.sleep(0.2)
    text = log_path.read_text(errors="replace")
    done = [ln for ln in text.splitlines() if "loralay.build: done:" in ln]
    return {"wall_s": time.perf_counter() - t0, "cpu_s": usage.ru_utime + usage.ru_stime,
            "driver_peak_mb": peak, "finish_s": finish_seconds(text),
            "exit": os.waitstatus_to_exitcode(status),
            "verdict": done[-1].split("done: ", 1)[-1] if done else text[-500:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="2000,10000")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", type=Path, default=REPO / "out" / "bench-scale")
    ap.add_argument("--keep", action="store_true", help="keep each run folder")
    args = ap.parse_args()
    src = SHARED / "corpus" / "manifest.jsonl"
    if not src.is_file():
        sys.exit(f"{src}: not found (set LORALAY_SHARED)")
    args.work.mkdir(parents=True, exist_ok=True)
    for size in (int(s) for s in args.sizes.split(",")):
        manifest = replicated(src, size, args.work / f"manifest-{size}.jsonl")
        out = args.work / f"run-{size}"
        shutil.rmtree(out, ignore_errors=True)
        r = build(manifest, out, args.workers)
        per_doc = f"{1000 * r['finish_s'] / size:.2f}" if r["finish_s"] is not None else "?"
        print(f"{size:>7,} docs, --workers {args.workers}: {r['wall_s']:.0f} s wall, "
              f"{r['cpu_s']:.0f} s CPU ({1000 * r['cpu_s'] / size:.0f} CPU ms/doc), "
              f"{size / r['wall_s']:.2f} docs/s; driver peak RSS {r['driver_peak_mb']:.0f} MB; "
              f"finish {r['finish_s']} s wall = {per_doc} ms/doc; exit {r['exit']}: "
              f"{r['verdict']}", flush=True)
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()

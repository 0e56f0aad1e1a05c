"""`python scripts/bench_citesum.py [--records N] [--workers 1 2]`: the per-record rates
of each CiteSum stage, which the README's "How long" extrapolates to the whole of S2ORC.

Why made shards: no real S2ORC shard is at hand, only single real records
(../shared/fixtures/s2orc). The shards timed here are MADE from those records with new ids:
citing papers are copies of a real parse (a share of them with one real section renamed
"Related Work", as in the release), abstracts/metadata copies of the real abstract record,
a share of them cited. Each stage is timed on its own (wall clock, fresh run state) with the
given worker counts; rates are per record and per MB of shard (uncompressed JSON lines).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from loralay_build.citesum.build import (  # noqa: E402
    Work,
    inputs,
    run_pass1,
    run_pass2,
    run_score,
)
from loralay_build.citesum.stages import StageRun  # noqa: E402
from loralay_build.conf import CiteSumSettings, load_settings  # noqa: E402
from loralay_build.machinery.pool import TaskLimits  # noqa: E402
from loralay_build.store.citesum import CiteSumState  # noqa: E402

REAL = Path(os.environ.get("LORALAY_SHARED", REPO.parent / "shared")) / "fixtures" / "s2orc"


def _real(name: str) -> dict[str, Any]:
    return json.loads((REAL / name).read_text(encoding="utf-8").splitlines()[0])


def _write_shards(folder: Path, lines: list[str], shards: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    n = len(lines)  # contiguous blocks: every shard gets its share of Related Work papers
    for k in range(shards):
        (folder / f"part_{k}.jsonl").write_text(
            "".join(lines[k * n // shards:(k + 1) * n // shards]), encoding="utf-8")


def made_2020(root: Path, records: int, rw_share: float, shards: int) -> dict[str, str]:
    """MADE pdf_parses (real paper 18980380; `rw_share` of them with its section "II.
    PRELIMINARIES" renamed Related Work) and metadata (the real record), one per cited id."""
    paper = json.loads((REAL / "s2orc_20200705_paper_18980380.json").read_text())
    meta = _real("s2orc_2020_metadata_18980380.jsonl")
    every = max(1, round(1 / rw_share)) if rw_share else 0
    parses, cited = [], []
    for k in range(records):
        body = paper["body_text"]
        if every and k % every == 0:
            body = [dict(p, section="Related Work") if p["section"] == "II. PRELIMINARIES"
                    else p for p in body]
        bib = {r: dict(e, link=e["link"] and f"{k}0{e['link']}")
               for r, e in paper["bib_entries"].items()}
        cited += [e["link"] for e in bib.values() if e["link"] and every and k % every == 0]
        parses.append(json.dumps({**paper, "paper_id": f"m{k}", "body_text": body,
                                  "bib_entries": bib}) + "\n")
    metas = [json.dumps({**meta, "paper_id": c}) + "\n" for c in cited]
    metas += [json.dumps({**meta, "paper_id": f"u{k}"}) + "\n"
              for k in range(max(0, 10 * records - len(metas)))]  # 10 metadata per parse
    _write_shards(root / "pdf_parses", parses, shards)
    _write_shards(root / "metadata", metas, shards)
    return {"s2orc_format": "2020", "pdf_parses": f"{root}/pdf_parses/*",
            "metadata": f"{root}/metadata/*"}


def made_api(root: Path, records: int, rw_share: float, shards: int) -> dict[str, str]:
    """MADE s2orc records (real 256868338; `rw_share` of them with the header
    "Preliminaries" renamed "Related Work " in place: same length, same offsets) and
    abstracts (the real record), ten per citing record, the matched ones cited."""
    rec = _real("s2ag_s2orc_256868338.jsonl")
    text = rec["content"]["text"]
    renamed = text.replace("Preliminaries", "Related Work ", 1)
    entries = json.loads(rec["content"]["annotations"]["bibentry"])
    every = max(1, round(1 / rw_share)) if rw_share else 0
    citing, cited = [], []
    for k in range(records):
        rw = bool(every and k % every == 0)
        bib = [dict(e, attributes={**e.get("attributes", {}), "matched_paper_id":
                                   e.get("attributes", {}).get("matched_paper_id") and
                                   int(f"{k + 1}0{e['attributes']['matched_paper_id']}")})
               for e in entries]
        cited += [e["attributes"]["matched_paper_id"] for e in bib
                  if rw and e["attributes"].get("matched_paper_id")]
        content = {**rec["content"], "text": renamed if rw else text,
                   "annotations": {**rec["content"]["annotations"],
                                   "bibentry": json.dumps(bib)}}
        citing.append(json.dumps({**rec, "corpusid": 10**9 + k, "content": content}) + "\n")
    abstract = _real("s2ag_abstracts_208605629.jsonl")
    rows = [json.dumps({**abstract, "corpusid": c}) + "\n" for c in cited]
    rows += [json.dumps({**abstract, "corpusid": 2 * 10**9 + k}) + "\n"
             for k in range(max(0, 10 * records - len(rows)))]
    _write_shards(root / "s2orc", citing, shards)
    _write_shards(root / "abstracts", rows, shards)
    return {"s2orc_format": "datasets-api", "s2orc": f"{root}/s2orc/*",
            "abstracts": f"{root}/abstracts/*"}


def _cpu() -> float:
    """CPU seconds of this process and its ended children (the pool's workers are waited
    for when a stage ends): unlike the wall clock, not inflated by other jobs' load."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def time_stages(keys: dict[str, str], out: Path, workers: int) -> dict[str, float]:
    """Wall clock and CPU time of pass 1, pass 2 and the scoring, from a fresh run state."""
    s = load_settings("citesum", overrides=keys)
    assert isinstance(s, CiteSumSettings)
    citing, cited = inputs(s)
    run = StageRun(workers, TaskLimits(s.shard_timeout_s, s.worker_memory_mb))
    work = Work(out / "work")
    with CiteSumState(out / "state.sqlite") as state:
        t0, c0 = time.perf_counter(), _cpu()
        p1 = run_pass1(s, work, state, citing, run)
        t1, c1 = time.perf_counter(), _cpu()
        p2, fp2 = run_pass2(work, state, cited, list(p1.values()), run)
        t2, c2 = time.perf_counter(), _cpu()
        run_score(s, work, state, p1, p2, fp2, run)
        t3, c3 = time.perf_counter(), _cpu()
        funnel = {k: 0 for k in ("papers_read", "with_related_work", "candidates")}
        for key in p1:
            for name in funnel:
                funnel[name] += state.task_tally("citesum-pass1", key)["counts"].get(name, 0)
    return {"pass1_s": t1 - t0, "pass2_s": t2 - t1, "score_s": t3 - t2, "pass1_cpu_s": c1 - c0,
            "pass2_cpu_s": c2 - c1, "score_cpu_s": c3 - c2, **funnel}


def _mb(pattern: str) -> float:
    return sum(p.stat().st_size for p in Path("/").glob(pattern.lstrip("/"))) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=50_000, help="citing records per format")
    ap.add_argument("--rw-share", type=float, default=0.024,
                    help="share of citing records with a Related Work section")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--formats", nargs="+", default=["2020", "datasets-api"])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="citesum-bench-") as tmp:
        for fmt in a.formats:
            make = made_2020 if fmt == "2020" else made_api
            keys = make(Path(tmp) / fmt, a.records, a.rw_share, a.shards)
            citing_glob = keys["pdf_parses" if fmt == "2020" else "s2orc"]
            cited_glob = keys["metadata" if fmt == "2020" else "abstracts"]
            sizes = {"citing_mb": _mb(citing_glob), "cited_mb": _mb(cited_glob),
                     "cited_records": 10 * a.records}
            for w in a.workers:
                load = os.getloadavg()[0]
                t = time_stages(keys, Path(tmp) / f"{fmt}-out-{w}", w)
                print(json.dumps({"format": fmt, "workers": w, "records": a.records,
                                  "load_before": load, **sizes,
                                  **{k: round(v, 2) for k, v in t.items()}}), flush=True)


if __name__ == "__main__":
    main()

"""The finish over thousands of documents: little memory per document for the decisions,
and the same ids, splits and order as the per-id rules of `corpus/`.

The sample (data/sample, 11 real PDFs) is built once; `scripts/bench_finish.py` then
replicates its run state to 3,003 documents (real payloads and summaries, ids suffixed
`~K`, dates of their own), which is what the finish of a large run reads. The page filter is
switched on (the summary filter would drop the one undated paper) and undated papers are
dropped, so every kind of decision occurs.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from loralay_build.conf import load_settings
from loralay_build.corpus.filters import check_document, compute_thresholds
from loralay_build.corpus.split import date_key, split_sizes
from loralay_build.pdf.finish import _doc_table, decide, finish_run, open_shard_states
from loralay_build.pdf.preflight import tool_versions
from loralay_build.runfolder import RunFolder
from loralay_build.splits import SPLITS
from loralay_build.write import RunFacts, write_report

from .conftest import REPO, SAMPLE

REPLICAS = 273  # x 11 candidates = 3,003 documents
OVERRIDES = {"manifest": str(SAMPLE), "max_pages_percentile": 80,
             "undated": "drop"}
# The goal is a finish under 600 MB at 200k documents. The interpreter with pyarrow,
# datasets and matplotlib, plus one Parquet row group (100 MB), take ~300 MB of it, which
# leaves 1.5 KB a document for everything that grows with the corpus (the writer's id
# check, the JSON being written). The decisions and the report's figures get 1 KB of that.
# Measured with tracemalloc on 10,010 replicated sample documents (decide, report without
# plots, recorded decisions): 431 bytes a document; the dict-of-dicts decisions and the
# report's DocFacts and documents dict they replace peaked at 3,388.
MAX_BYTES_PER_DOC = 1000
# The duplicate detector's signatures and LSH index (corpus/duplicates.py) live only while
# the decisions are made, and are freed before the report and the Parquet are written;
# issue 25 grants them 100 MB at 20k documents (5 KB a document); they take ~1.2 KB
# while deciding (signatures, hashes, keys, the LSH index).
DETECTOR_BYTES_PER_DOC = 2000

pytestmark = [pytest.mark.e2e, pytest.mark.stress]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_finish",
                                                  REPO / "scripts" / "bench_finish.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def replicated(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("scale")
    subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source", "local",
                    "--manifest", str(SAMPLE), "--out", str(tmp / "base")], cwd=REPO,
                   check=True, capture_output=True, timeout=900)
    bench = _bench()
    base = bench.base_of(tmp / "base")
    bench.make_cache(base, REPLICAS, tmp / "cache.sqlite")
    bench.make_run(base, tmp / "cache.sqlite", REPLICAS, tmp / "run")
    return tmp / "run"


def settings():
    return load_settings("local", None, OVERRIDES)


def test_decisions_and_report_hold_little_memory_per_document(replicated, tmp_path):
    from loralay_build import http  # noqa: F401  (the report imports it: not a per-doc cost)

    s = settings()
    cs, layout = s.corpus(), RunFolder(replicated)
    states = open_shard_states(layout, 1)
    try:
        tracemalloc.start()
        d = decide(cs, layout, states)
        decided, deciding = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        run = RunFacts(name="x", source="local", funnel=d.funnel,
                       thresholds=d.thresholds.to_json(), outcomes=d.outcomes,
                       leak_threshold=cs.leak_threshold, leak_ngram=s.leak_ngram)
        write_report(tmp_path, run, _doc_table(d), plots=False)
        reporting = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        for st in states:
            st.close()
    n = len(d.outcomes)
    print(f"bytes per document: kept {decided / n:.0f}, while deciding {deciding / n:.0f}, "
          f"reporting {reporting / n:.0f}")
    assert n == 11 * REPLICAS and not d.duplicates  # the replicas are distinct papers
    assert decided / n < MAX_BYTES_PER_DOC, f"{decided / n:.0f} bytes per document kept"
    assert reporting / n < MAX_BYTES_PER_DOC, f"{reporting / n:.0f} bytes per document"
    assert deciding / n < MAX_BYTES_PER_DOC + DETECTOR_BYTES_PER_DOC, \
        f"{deciding / n:.0f} bytes per document while deciding"


def expected_outcomes(run: Path) -> tuple[list[str], dict[str, str | None]]:
    """The per-id reference: every id in report order, and each survivor's split."""
    with sqlite3.connect(run / "state" / "shard-00000-of-00001.sqlite") as db:
        failed = [r[0] for r in db.execute("SELECT key FROM ledger WHERE kind='document' "
                                           "AND failure_class IS NOT NULL ORDER BY key")]
        summaries = [json.loads(r[0]) for r in
                     db.execute("SELECT summary FROM documents ORDER BY id")]
    t = compute_thresholds([x["pages"] for x in summaries],
                           [x["summary_words"] for x in summaries], 80, None,
                           min_candidates=load_settings("local", None, OVERRIDES)
                           .percentile_min_candidates)
    kept = [x for x in summaries if check_document(x["pages"], x["summary_words"], t) is None]
    kept_ids = {x["id"] for x in kept}
    filtered = [x["id"] for x in summaries if x["id"] not in kept_ids]
    order = [x["id"] for x in sorted(kept, key=lambda x: (date_key(x["publication_date"]),
                                                          x["id"]))]
    dated = [i for i in order if next(x for x in kept if x["id"] == i)["publication_date"]]
    n_train, n_val, _ = split_sizes(len(dated), [0.9, 0.05, 0.05])
    assignment: dict[str, str | None] = dict.fromkeys(order)  # undated: dropped
    for rank, doc_id in enumerate(dated):
        assignment[doc_id] = "train" if rank < n_train else \
            "validation" if rank < n_train + n_val else "test"
    assert filtered and None in assignment.values()  # every kind of decision is exercised
    return failed + filtered + order, assignment


def test_replicated_finish_equals_the_per_id_rules(replicated):
    ids, assignment = expected_outcomes(replicated)
    d = finish_run(settings(), RunFolder(replicated), 1, tool_versions())
    documents = json.loads((replicated / "report.json").read_text())["documents"]
    assert list(documents) == ids
    for doc_id, split in assignment.items():
        want = {"status": "kept", "split": split} if split else {
            "status": "dropped", "class": "undated", "stage": "split",
            "message": "no publication date (undated: drop)"}
        assert documents[doc_id] == want
    for split in SPLITS:
        want = [i for i in ids if assignment.get(i) == split]
        rows = [r for p in sorted((replicated / "data").glob(f"{split}-*.parquet"))
                for r in pq.read_table(p, columns=["article_id"]).column(0).to_pylist()]
        assert rows == want == d.kept[split]

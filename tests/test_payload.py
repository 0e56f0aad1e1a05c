"""The run state's document payload (pdf/payload.py) on the real sample build: it holds
every field of the document, the finish's rows built from its Arrow columns equal the rows
built from lists for both feature sets, a worker hands the document back already encoded,
and a run state written in another format is redone, never decoded."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import numpy as np
import pytest

from loralay_build.conf import load_settings
from loralay_build.pdf.driver import document_job, process_all
from loralay_build.pdf.payload import encode, read_columns, summarize
from loralay_build.pdf.steps import run_document_steps
from loralay_build.records import Candidate
from loralay_build.sources.manifest import read_manifest
from loralay_build.store.shard import ShardState
from loralay_build.write.features import COMPACT, PUBLISHED, doc_to_batch

from .conftest import SAMPLE, build_local, copy_run, rows_as_written
from .payloads import decode, fields

pytestmark = pytest.mark.e2e


def _payloads(run: Path) -> dict[str, bytes]:
    with ShardState(next((run / "state").glob("shard-*.sqlite"))) as st:
        return {s.id: st.document_payload(s.id) for s in st.document_summaries()}


def test_payload_keeps_every_field_and_reencodes_to_the_same_bytes(built_sample):
    payloads = _payloads(built_sample[0])
    assert len(payloads) >= 8
    for payload in payloads.values():
        p = decode(payload)
        assert encode(p) == payload
        boxes = p.document.boxes
        assert boxes.dtype == np.float64 and boxes.shape == (len(p.document.words), 4)


@pytest.mark.parametrize("features", [COMPACT, PUBLISHED])
def test_rows_from_arrow_columns_equal_rows_from_lists(built_sample, features):
    for payload in _payloads(built_sample[0]).values():
        from_columns = doc_to_batch(read_columns(payload), features)
        from_lists = doc_to_batch(decode(payload), features)
        assert from_columns.equals(from_lists, check_metadata=True)
        assert from_columns.num_rows == 1 and from_columns.schema.names[0] == "article_id"


def test_a_worker_hands_back_the_document_encoded_as_the_run_state_stores_it():
    """A worker encodes the document itself: what comes over the pipe is the summary and
    payload the parent would have made from the steps' result, and no Document."""
    settings = load_settings("local", None, {"manifest": str(SAMPLE)})
    cand = next(line.item for line in read_manifest(SAMPLE)
                if isinstance(line.item, Candidate) and line.item.id == "fr_hal_cover_glaciers")
    work, _ = run_document_steps(cand, document_job(settings))
    [(c, outcome)] = list(process_all([cand], document_job(settings), workers=1))
    assert c.id == cand.id and outcome.passed and outcome.failure is None
    summary, payload = outcome.stored
    assert work.text_print is not None
    assert summary == summarize(work.processed(), work.text_print)
    assert fields(decode(payload)) == fields(work.processed())


def _as_an_older_version_left_it(run: Path) -> int:
    """The shard state as the version before the ledger wrote it: payloads as zlib'd JSON,
    and no ledger; how many documents it holds."""
    db = sqlite3.connect(next((run / "state").glob("shard-*.sqlite")))
    rows = db.execute("SELECT id, payload FROM documents ORDER BY id").fetchall()
    for doc_id, payload in rows:
        old = zlib.compress(json.dumps(decode(bytes(payload)).to_json(),
                                       ensure_ascii=False).encode("utf-8"), 3)
        db.execute("UPDATE documents SET payload=? WHERE id=?", (old, doc_id))
    db.execute("DROP TABLE ledger")
    db.execute("PRAGMA user_version = 0")  # that version's files had none (store/base.py)
    db.commit()
    db.close()
    return len(rows)


def test_a_state_in_another_format_is_redone_not_decoded(built_sample, tmp_path):
    built, _ = built_sample
    old = copy_run(built, tmp_path / "old")
    assert _as_an_older_version_left_it(old) >= 8
    finish = build_local(SAMPLE, old, "--finish")
    assert finish.returncode == 2 and "have no result yet" in finish.stderr.splitlines()[-1]
    rerun = build_local(SAMPLE, old)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "starting: 11 documents to do" in rerun.stderr
    assert rows_as_written(old) == rows_as_written(built)
    assert (old / "README.md").read_bytes() == (built / "README.md").read_bytes()

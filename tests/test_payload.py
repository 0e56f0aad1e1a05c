"""The columnar document payload (run/columns_payload.py) on the real sample build: it holds
every field of the document, the finish's rows built from its Arrow columns equal the rows
built from the decoded lists for both feature sets, and a run state whose payloads were
written by the earlier encoders (zstd JSON, zlib JSON) finishes to the same bytes."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from loralay_build.run import columns_payload as cp
from loralay_build.run.codec import decode
from loralay_build.run.codec import encode as encode_json
from loralay_build.run.columns_payload import encode
from loralay_build.state import RunState
from loralay_build.write.features import COMPACT, PUBLISHED, doc_to_batch

from .conftest import REPO

SAMPLE = REPO / "data" / "sample" / "manifest.jsonl"


def _cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source", "local",
                    "--manifest", str(SAMPLE), *args], cwd=REPO, check=True,
                   capture_output=True, timeout=900)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("payload") / "run"
    _cli("--out", str(out))
    return out


def _payloads(run: Path) -> dict[str, bytes]:
    with RunState(next((run / "state").glob("shard-*.sqlite"))) as st:
        return {s["id"]: st.document_payload(s["id"]) for s in st.document_summaries()}


def _fields(p) -> tuple:
    d = p.document
    return (p.candidate, d.id, d.pages, d.words, d.boxes.tolist(), d.word_pages, d.line_ids,
            d.block_ids, d.dropped_invisible, d.words_repaired, d.words_unrepaired,
            p.matches, p.language_share, p.detected_language, p.leakage)


def test_payload_keeps_every_field_and_reencodes_to_the_same_bytes(built):
    payloads = _payloads(built)
    assert len(payloads) >= 8
    for payload in payloads.values():
        assert cp.is_columnar(payload)
        p = decode(payload)
        assert encode(p) == payload
        assert _fields(decode(encode_json(p))) == _fields(p)  # the JSON path agrees
        boxes = p.document.boxes
        assert boxes.dtype == np.float64 and boxes.shape == (len(p.document.words), 4)


@pytest.mark.parametrize("features", [COMPACT, PUBLISHED])
def test_rows_from_arrow_columns_equal_rows_from_lists(built, features):
    for payload in _payloads(built).values():
        from_columns = doc_to_batch(cp.read_columns(payload), features)
        from_lists = doc_to_batch(decode(payload), features)
        assert from_columns.equals(from_lists, check_metadata=True)
        assert from_columns.num_rows == 1 and from_columns.schema.names[0] == "article_id"


def _rewrite_old(run: Path) -> int:
    """Every payload of the run's shard state in an earlier encoding (alternating the zstd
    JSON of the previous encoder and the zlib JSON before it); how many were rewritten."""
    db = sqlite3.connect(next((run / "state").glob("shard-*.sqlite")))
    rows = db.execute("SELECT id, payload FROM documents ORDER BY id").fetchall()
    for k, (doc_id, payload) in enumerate(rows):
        p = decode(bytes(payload))
        old = encode_json(p) if k % 2 else zlib.compress(
            json.dumps(p.to_json(), ensure_ascii=False).encode("utf-8"), 3)
        db.execute("UPDATE documents SET payload=? WHERE id=?", (old, doc_id))
    db.commit()
    db.close()
    return len(rows)


def _outputs(run: Path) -> dict[str, bytes]:
    files = {str(f.relative_to(run)): f.read_bytes() for f in sorted((run / "data").iterdir())}
    files["README.md"] = (run / "README.md").read_bytes()
    report = json.loads((run / "report.json").read_text())
    assert report["run"].pop("built_at")  # the one field a rerun may change
    files["report.json"] = json.dumps(report, sort_keys=True).encode()
    return files


@pytest.mark.parametrize("features", [COMPACT, PUBLISHED])
def test_a_run_state_written_by_earlier_encoders_finishes_to_the_same_bytes(
        built, tmp_path, features):
    new, old = tmp_path / "new", tmp_path / "old"
    shutil.copytree(built, new)
    shutil.copytree(built, old)
    assert _rewrite_old(old) >= 8
    for run in (new, old):
        _cli("--out", str(run), "--finish", "--features", features)
    a, b = _outputs(new), _outputs(old)
    assert any(k.endswith(".parquet") for k in a)
    assert a == b

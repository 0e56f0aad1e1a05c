"""The run state's document payload: a real processed document survives the round trip,
and a run state written by the earlier encoder (json + zlib level 3) still decodes, so a
resumed build keeps what an older version stored instead of crashing on it."""

from __future__ import annotations

import json
import zlib
from dataclasses import astuple

import numpy as np
import pyarrow as pa
import pytest

from loralay_build.records import Candidate, ProcessedDoc
from loralay_build.run.codec import MAGIC, decode, encode, summarize
from loralay_build.run.process import process_candidate
from loralay_build.settings import load_settings
from loralay_build.sources.manifest import read_manifest
from loralay_build.state import RunState

from .conftest import shared_path

SMALL = "pt_scielo_rsp_hindex"  # 8 pages, 4,755 words, Portuguese with an English abstract


@pytest.fixture(scope="module")
def processed() -> ProcessedDoc:
    manifest = shared_path("corpus", "manifest.jsonl")
    cand = next(line.item for line in read_manifest(manifest)
                if isinstance(line.item, Candidate) and line.item.id == SMALL)
    settings = load_settings("local", None, {"manifest": str(manifest)}).document()
    result = process_candidate(cand, settings)
    assert result.processed is not None, result.stages
    return result.processed


def _fields(p: ProcessedDoc) -> tuple:
    d = p.document
    return (p.candidate, d.id, d.pages, d.words, d.boxes.tolist(), d.word_pages, d.line_ids,
            d.block_ids, d.dropped_invisible, p.matches, p.language_share,
            p.detected_language, p.leakage)


def _old_encode(p: ProcessedDoc) -> bytes:
    """The encoder run states were written with before orjson (kept here as the format)."""
    return zlib.compress(json.dumps(p.to_json(), ensure_ascii=False).encode("utf-8"), 3)


def test_round_trip_keeps_every_field_of_a_real_document(processed):
    back = decode(encode(processed))
    assert _fields(back) == _fields(processed)
    boxes = back.document.boxes
    assert boxes.dtype == np.float64 and boxes.shape == (len(back.document.words), 4)
    assert len(processed.document.words) > 3000 and processed.matches


def test_run_state_written_by_the_earlier_encoder_still_decodes(tmp_path, processed):
    with RunState(tmp_path / "state.sqlite") as state:
        state.put_document(processed.candidate.id, summarize(processed), _old_encode(processed))
    with RunState(tmp_path / "state.sqlite") as state:  # the resumed run
        back = decode(state.document_payload(processed.candidate.id))
    assert _fields(back) == _fields(processed)
    # and the new payload holds the same JSON values as the old one
    new = encode(processed)
    assert new[:4] == MAGIC and len(new) < len(_old_encode(processed))
    size = int.from_bytes(new[4:12], "little")
    body = pa.Codec("zstd").decompress(new[12:], decompressed_size=size, asbytes=True)
    assert json.loads(body) == json.loads(zlib.decompress(_old_encode(processed)))
    assert astuple(back.document.pages[0]) == astuple(processed.document.pages[0])


def test_a_worker_hands_back_the_document_sealed_as_the_run_state_stores_it(processed):
    """process_all's workers encode the document themselves (`seal`): what comes over the
    pipe is the summary and payload the parent would have made, and no Document."""
    from loralay_build.run.driver import process_all

    manifest = shared_path("corpus", "manifest.jsonl")
    cand = processed.candidate
    settings = load_settings("local", None, {"manifest": str(manifest)}).document()
    [(c, outcome)] = list(process_all([cand], settings, workers=1))
    assert c.id == SMALL and outcome.processed is None and outcome.passed
    summary, payload = outcome.stored
    assert summary == summarize(processed)
    assert _fields(decode(payload)) == _fields(processed)
    assert outcome.stored_form() == outcome.stored

"""`loralay eval`: the baselines' numbers equal rouge-score called directly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pysbd
import pytest
from rouge_score import rouge_scorer

from loralay_build.citesum.write import write_rows
from loralay_build.evaluate import evaluate

from .conftest import REPO

ROWS = [
    ("a", "Deep nets are popular. We propose DeepFace for face verification. It works well.",
     "REF proposed DeepFace, a network for face verification."),
    ("b", "Summaries are short. Long documents are hard. In this paper we study attention.",
     "REF study sparse attention for long documents."),
    ("c", "Protein folding is slow. Yeast cells fold proteins in three states.",
     "REF found three folding states in yeast cells."),
]


def row(i: str, src: str, tgt: str) -> dict:
    return {"id": i, "src": src, "tgt": tgt, "paper_id": i, "title": None,
            "discipline": {"venue": None, "journal": None, "mag_field_of_study": []},
            "citing_paper_id": "0", "section": "Related Work", "sentence": tgt,
            "rouge1_recall": 1.0, "rouge2_recall": 1.0, "rougeL_recall": 1.0}


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    write_rows(tmp_path, {"test": [row(*r) for r in ROWS]}, 100)
    return tmp_path


def direct(pairs: list[tuple[str, str]]) -> dict[str, float]:
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    scores = [scorer.score(target=r, prediction=c) for r, c in pairs]
    return {k: 100 * sum(s[k].fmeasure for s in scores) / len(scores)
            for k in ("rouge1", "rouge2", "rougeL")}


def test_baselines_equal_rouge_score_called_directly(dataset):
    got = evaluate(dataset, "test")
    sents = [pysbd.Segmenter(language="en", clean=False).segment(src) for _, src, _ in ROWS]
    sents = [[s.strip() for s in ss] for ss in sents]
    refs = [tgt for *_, tgt in ROWS]
    assert got["examples"] == 3
    assert got["lead"] == pytest.approx(direct([(r, ss[0]) for r, ss in zip(refs, sents)]))
    heur = [sents[0][1], sents[1][2], sents[2][0]]  # "propose", "In this paper", LEAD
    assert got["heuristic"] == pytest.approx(direct(list(zip(refs, heur))))
    scorer = rouge_scorer.RougeScorer(["rouge2"], use_stemmer=True)
    best = [max(ss, key=lambda s, r=r: scorer.score(r, s)["rouge2"].fmeasure)
            for r, ss in zip(refs, sents)]
    assert got["oracle"] == pytest.approx(direct(list(zip(refs, best))))
    assert got["oracle"]["rouge2"] >= got["lead"]["rouge2"]


def test_cli_writes_json_and_table(dataset, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "eval", str(dataset)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((dataset / "eval-test.json").read_text())
    assert set(saved) == {"lead", "heuristic", "oracle", "examples"}
    assert "44.17/27.22/38.32" in proc.stdout and f"{saved['lead']['rouge1']:.2f}" in proc.stdout


def test_predictions_scored_and_ids_checked(dataset, tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "prediction": t}) + "\n"
                             for i, _, t in reversed(ROWS)))
    got = evaluate(dataset, "test", preds)
    assert got["predictions"] == pytest.approx({"rouge1": 100, "rouge2": 100, "rougeL": 100})
    preds.write_text(json.dumps({"id": "a", "prediction": "x"}) + "\n" +
                     json.dumps({"id": "z", "prediction": "x"}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "eval", str(dataset),
                           "--predictions", str(preds)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and "2 ids of the split missing" in proc.stderr
    assert "1 ids not in it ['z']" in proc.stderr


def test_predictions_on_a_loralay_dataset(tmp_path):
    (tmp_path / "data").mkdir()
    import pyarrow as pa

    pq.write_table(pa.table({"article_id": ["x1"], "abstract": ["a short abstract"]}),
                   tmp_path / "data" / "test-00000-of-00001.parquet")
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": "x1", "prediction": "a short abstract"}) + "\n")
    assert evaluate(tmp_path, "test", preds)["predictions"]["rouge1"] == pytest.approx(100)

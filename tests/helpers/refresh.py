"""Two versions of a manifest and what a refresh keeps between them, shared by the
refresh, images and Slurm tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..conftest import SAMPLE, shared_path

GONE = "es_scielo_suelos"  # kept in v1 (train), then no longer in the manifest
NEW = ["en_bmc_trauma", "es_scielo_malaga", "pt_scielo_rsp_hindex", "ko_kiit_voting",
       "en_truncated_jcap"]  # ../shared/corpus papers; the last one is cut short
V1_KEPT = {"train": ["en_onecol_timing_note", "es_scielo_suelos", "fr_hal_cover_glaciers",
                     "en_twocol_graphs", "pt_scielo_espera", "en_structured_trial"],
           "validation": ["fr_twocol_acoustique"], "test": ["ko_kci_wifi_parks"]}
DIFF = {
    "schema_version": 2, "version_before": 1, "version": 2,
    "added": {"train": ["en_bmc_trauma", "pt_scielo_rsp_hindex"],
              "validation": ["es_scielo_malaga"], "test": ["ko_kiit_voting"]},
    "duplicates": [
        {"id": "copy_acoustique", "kept": "fr_twocol_acoustique", "kind": "same_pdf",
         "similarity": 1.0, "via": None, "dataset": None},
        {"id": "resaved_graphs", "kept": "en_twocol_graphs", "kind": "same_text",
         "similarity": 1.0, "via": None, "dataset": None}],
    "missing_upstream": [GONE],
    "dropped": {"corrupted": 1},
    "pdf_changed": [], "split_moves_refused": [],
}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_manifests(tmp: Path) -> tuple[Path, Path]:
    """v1: the sample (absolute paths); v2: without GONE, en_structured_trial's title
    changed, with NEW, `resaved_graphs` (qpdf's
    re-save of en_twocol_graphs: other bytes, same text, dated 2001, before the original)
    and `copy_acoustique` (fr_twocol_acoustique's very file under a new id)."""
    old = _lines(SAMPLE)
    for d in old:
        d["file"] = str(SAMPLE.parent / d["file"])
    corpus = {d["id"]: d for d in _lines(shared_path("corpus", "manifest.jsonl"))}
    new = [dict(corpus[i], file=str(shared_path("corpus", corpus[i]["file"]))) for i in NEW]
    by_id = {d["id"]: d for d in old}
    resaved = tmp / "resaved.pdf"
    subprocess.run(["qpdf", by_id["en_twocol_graphs"]["file"], str(resaved)], check=True)
    assert resaved.read_bytes() != Path(by_id["en_twocol_graphs"]["file"]).read_bytes()
    new += [dict(by_id["en_twocol_graphs"], id="resaved_graphs", file=str(resaved),
                 publication_date="2001-01-01"),
            dict(by_id["fr_twocol_acoustique"], id="copy_acoustique")]
    v1, v2 = tmp / "v1.jsonl", tmp / "v2.jsonl"
    v1.write_text("".join(json.dumps(d) + "\n" for d in old))
    # an old paper's record changed upstream: a rebuild would extract it again, a refresh not
    changed = [dict(d, title=d["title"] + " (corrected)") if d["id"] == "en_structured_trial"
               else d for d in old]
    v2.write_text("".join(json.dumps(d) + "\n" for d in changed + new if d["id"] != GONE))
    return v1, v2

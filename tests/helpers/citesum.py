"""The CiteSum fixtures' configs and the citesum build, shared by its build and run tests."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

from ..conftest import REPO, loralay

FIX = REPO / "tests" / "fixtures" / "citesum"


def config(tmp: Path, **keys: str) -> Path:
    path = tmp / f"cfg-{len(list(tmp.glob('cfg-*')))}.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in keys.items()))
    return path


def cfg_2020(tmp: Path, root: Path = FIX / "2020") -> Path:
    return config(tmp, s2orc_format="2020", pdf_parses=f"{root}/pdf_parses/*",
                  metadata=f"{root}/metadata/*")


def build_citesum(cfg: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    proc = loralay("build", "--source", "citesum", "--config", str(cfg), "--out", str(out),
                   *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def synthetic_2020(root: Path, shards: int, papers: int, bad_line: bool = False) -> Path:
    """Made 2020 shards: each citing paper cites one cited paper in a sentence that copies
    the cited abstract's first sentence, so every candidate passes the gate."""
    meta = []
    for k in range(shards):
        lines = []
        for j in range(papers):
            pid, cited = f"{k}{j:04d}", f"9{k}{j:04d}"
            words = f"model {k} {j} learns sparse attention for long documents"
            text = f"Early work [1] shows that the {words} well."
            lines.append({"paper_id": pid, "body_text": [
                {"section": "Related Work", "text": text, "cite_spans": [
                    {"start": 11, "end": 14, "text": "[1]", "ref_id": "BIBREF1"}]}],
                "bib_entries": {"BIBREF1": {"link": cited}}})
            meta.append({"paper_id": cited, "title": f"T{cited}", "abstract":
                         f"We show that the {words} well. " + "More text here. " * 8})
        (root / "pdf_parses").mkdir(parents=True, exist_ok=True)
        body = "".join(json.dumps(x) + "\n" for x in lines)
        if bad_line and k == 0:
            body = "{not json\n" + body
        with gzip.open(root / "pdf_parses" / f"pdf_parses_{k}.jsonl.gz", "wt") as fh:
            fh.write(body)
    (root / "metadata").mkdir(exist_ok=True)
    (root / "metadata" / "metadata_0.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in meta))
    return root

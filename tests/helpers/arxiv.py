"""The fake arXiv (its snapshot, API and PDF bucket) and a Cohan et al. split, shared by
the arXiv, PubMed, licence and refresh tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from loralay_build.conf import load_settings
from loralay_build.records import Candidate, Rejection
from loralay_build.store.fetch import FetchState

from ..conftest import harvest_source, shared_path
from ..fakeserver import FakeServer, Reply, Request

SNAPSHOT = ("fixtures", "arxiv", "kaggle_arxiv_metadata_snapshot_lines_001-008.jsonl")
FAST = {"contact": "loralay-tests@example.org", "requests_per_second": 1000, "timeout_s": 1,
        "connect_timeout_s": 1,
        "backoff_factor": 0.01, "retry_after_max_s": 1, "max_retries": 2, "pdf_attempts": 2}
API = "/storage/v1/b/arxiv-dataset/o"
PDF_TYPE = {"Content-Type": "application/pdf"}


def snapshot_lines() -> dict[str, dict[str, Any]]:
    text = shared_path(*SNAPSHOT).read_text(encoding="utf-8")
    return {json.loads(x)["id"]: json.loads(x) for x in text.splitlines() if x.strip()}


def corpus_pdf(name: str) -> bytes:
    return shared_path("corpus", "pdf", f"{name}.pdf").read_bytes()


def synthetic_old_style_line() -> dict[str, Any]:
    return {"id": "hep-th/9608091", "title": "A synthetic\n  old-style record",
            "abstract": "  We find a 5% shift and Schr\\\"odinger's $\\alpha$ at 25%\nof the "
                        "scale.\n", "versions": [], "update_date": "1996-08-14"}


def write_cohan(folder: Path, splits: dict[str, list[str]]) -> Path:
    """Synthetic Cohan et al. files: the documented fields, texts shortened."""
    folder.mkdir(parents=True, exist_ok=True)
    for stem, ids in splits.items():
        lines = [json.dumps({"article_id": i, "abstract_text": ["<S> x </S>"],
                             "article_text": ["body"], "section_names": ["intro"],
                             "sections": [["body"]]}) for i in ids]
        (folder / f"{stem}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


class Bucket:
    """The storage JSON API's object listing (`?prefix=`) and the objects themselves."""

    def __init__(self, server: FakeServer, objects: dict[str, bytes]) -> None:
        self.objects = objects
        self.listing_faults: dict[str, list[Reply]] = {}
        server.add_handler(API, self.listing)
        server.add_handler("/arxiv-dataset/*", self.object)
        self.object_faults: dict[str, list[Reply]] = {}

    def listing(self, req: Request) -> Reply:
        prefix = req.query["prefix"][0]
        faults = self.listing_faults.get(prefix)
        if faults:
            return faults.pop(0)
        items = [{"name": n} for n in sorted(self.objects) if n.startswith(prefix)]
        return Reply(200, json.dumps({"items": items} if items else {}),
                     {"Content-Type": "application/json"})

    def object(self, req: Request) -> Reply:
        name = req.path[len("/arxiv-dataset/"):]
        faults = self.object_faults.get(name)
        if faults:
            return faults.pop(0)
        if name not in self.objects:
            return Reply(404, b"<Error>NoSuchKey</Error>", {"Content-Type": "application/xml"})
        return Reply(200, self.objects[name], PDF_TYPE)


def make_config(tmp_path: Path, server: FakeServer, ids_dir: Path, metadata: Path,
                **over: Any) -> dict[str, Any]:
    path = tmp_path / "arxiv-test.yaml"
    path.write_text(yaml.safe_dump({
        "ids_dir": str(ids_dir), "metadata_path": str(metadata),
        "bucket_api_url": server.url(API), "bucket_download_url": server.url("/arxiv-dataset"),
        **FAST, **over}), encoding="utf-8")
    return load_settings("arxiv", path)


def harvest(cfg: dict[str, Any], state: FetchState, out: Path, limit: int | None = None,
            abandon_after: int | None = None) -> list[Candidate | Rejection]:
    return harvest_source("arxiv", cfg, state, out, limit, abandon_after)


# --- select: snapshot -------------------------------------------------------------------
def snapshot_paper(recorded: str, new_id: str, update_date: str, **changes: Any
                   ) -> dict[str, Any]:
    """A recorded snapshot line (its categories, licence, versions, abstract...) under another
    id and `update_date`: the recorded eight are all from April 2007."""
    return {**snapshot_lines()[recorded], "id": new_id, "update_date": update_date, **changes}


def write_snapshot(path: Path, lines: list[dict[str, Any]], tail: bytes = b"") -> Path:
    path.write_bytes("".join(json.dumps(x) + "\n" for x in lines).encode() + tail)
    return path


def prefixes_asked(srv: FakeServer, since: int = 0) -> list[str]:
    return [r.query["prefix"][0] for r in srv.requests[since:] if r.path == API]


# --- end to end through the CLI -----------------------------------------------------------
def manifest_entry(doc_id: str) -> dict[str, Any]:
    for line in shared_path("corpus", "manifest.jsonl").read_text().splitlines():
        if line.strip() and json.loads(line)["id"] == doc_id:
            return json.loads(line)
    raise KeyError(doc_id)

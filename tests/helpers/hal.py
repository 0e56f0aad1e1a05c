"""The fake HAL search and the corpus PDFs it serves, shared by the HAL, OAI, licence and
refresh tests."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import yaml

from loralay_build.conf import load_settings
from loralay_build.records import Candidate, Rejection
from loralay_build.store.fetch import FetchState

from ..conftest import harvest_source, shared_path
from ..fakeserver import FakeServer, Reply, Request

ART_2020 = ("fixtures", "hal", "hal_search_authIdHal_docType_ART_omitHeader.json")
FAST = {"contact": "loralay-tests@example.org", "requests_per_second": 1000, "timeout_s": 1,
        "connect_timeout_s": 1,
        "backoff_factor": 0.01, "retry_after_max_s": 1, "max_retries": 3,
        "page_attempts": 2, "pdf_attempts": 2}
PDF_TYPE = {"Content-Type": "application/pdf"}


# --- helpers ------------------------------------------------------------------------
def shared_json(parts: tuple[str, ...]) -> dict[str, Any]:
    return json.loads(shared_path(*parts).read_text(encoding="utf-8"))


def corpus_entry(doc_id: str) -> dict[str, Any]:
    for line in shared_path("corpus", "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["id"] == doc_id:
            return json.loads(line)
    raise KeyError(doc_id)


def corpus_pdf(doc_id: str) -> bytes:
    return shared_path("corpus", "pdf", f"{doc_id}.pdf").read_bytes()


def make_config(tmp_path: Path, api_url: str, **over: Any) -> dict[str, Any]:
    """Through a user `--config` file, as a user would override the defaults."""
    path = tmp_path / "hal-test.yaml"
    path.write_text(yaml.safe_dump({"api_url": api_url, **FAST, **over}), encoding="utf-8")
    return load_settings("hal", path)


def harvest(cfg: dict[str, Any], state: FetchState, out: Path, limit: int | None = None,
            abandon_after: int | None = None) -> list[Candidate | Rejection]:
    return harvest_source("hal", cfg, state, out, limit, abandon_after)


def json_reply(obj: Any) -> Reply:
    return Reply(200, json.dumps(obj, ensure_ascii=False), {"Content-Type": "application/json"})


class PagedSearch:
    """Solr's cursor paging: `*` → page 0 → `c1` → page 1 ...; past the end, no docs and the
    same mark back. `faults` are served first, one per request."""

    def __init__(self, docs: list[dict[str, Any]], rows: int, faults: tuple[Reply, ...] = ()):
        self.pages = [docs[i:i + rows] for i in range(0, len(docs), rows)]
        self.total = len(docs)
        self.faults = list(faults)
        self.requests: list[Request] = []

    @property
    def cursors(self) -> list[str]:
        return [r.query["cursorMark"][0] for r in self.requests]

    def __call__(self, req: Request) -> Reply:
        self.requests.append(req)
        if self.faults:
            return self.faults.pop(0)
        cursor = req.query["cursorMark"][0]
        index = 0 if cursor == "*" else int(cursor[1:])
        docs = self.pages[index] if index < len(self.pages) else []
        return json_reply({"response": {"numFound": self.total, "start": 0, "docs": docs},
                           "nextCursorMark": f"c{index + 1}" if docs else cursor})


def synthetic_doc(n: int, base_url: str, corpus_id: str = "fr_ahrf_censure") -> dict[str, Any]:
    """SYNTHETIC record in the shape of the recordings, with the true abstracts of a corpus PDF."""
    entry = corpus_entry(corpus_id)
    hal_id = f"hal-0900{n:04d}"
    doc: dict[str, Any] = {
        "docid": str(9000000 + n), "halId_s": hal_id, "uri_s": f"https://hal.science/{hal_id}v1",
        "title_s": [entry["title"]], "language_s": ["fr"], "docType_s": "ART",
        "abstract_s": list(entry["abstracts"].values()),
        "fileMain_s": f"{base_url}/{hal_id}/document",
        "producedDate_s": entry["publication_date"] or "2015",
    }
    for lang, text in entry["abstracts"].items():
        doc[f"{lang}_abstract_s"] = [text]
    return doc


def serve_pdfs(srv: FakeServer, body: bytes) -> None:
    srv.add_handler("/hal-*", lambda req: Reply(200, body, PDF_TYPE))


# --- records, dates, names -----------------------------------------------------------
TODAY = dt.date(2026, 11, 22)


DOCS = ["fr_ahrf_censure", "fr_these_mucoviscidose", "fr_these_malware_long"]
# SYNTHETIC `licence_s` of each record in DOCS (no recording has the field)
COPYRIGHT = "http://hal.archives-ouvertes.fr/licences/copyright/"
CC_BY_4 = "https://creativecommons.org/licenses/by/4.0/"
LICENCE_S = [COPYRIGHT, CC_BY_4, CC_BY_4]


def records(base: str) -> list[dict]:
    docs = [synthetic_doc(i, base, corpus_id=c) for i, c in enumerate(DOCS)]
    for doc, licence in zip(docs, LICENCE_S):
        doc["licence_s"] = licence
    english = synthetic_doc(3, base, corpus_id="en_hal_reaim")  # its "French" abstract is English
    english["fr_abstract_s"] = english.pop("en_abstract_s")
    html = synthetic_doc(4, base)  # the PDF host answers with an HTML page
    return docs + [english, html]


def serve(srv) -> None:
    bodies = {f"/hal-0900{i:04d}/document": corpus_pdf(c) for i, c in enumerate(DOCS)}
    bodies["/hal-09000003/document"] = corpus_pdf("en_hal_reaim")

    def pdf(req):
        if req.path in bodies:
            return Reply(200, bodies[req.path], PDF_TYPE)
        return Reply(200, "<!DOCTYPE html><html><body>Embargo</body></html>", PDF_TYPE)

    srv.add_handler("/hal-*", pdf)


def write_config(tmp_path: Path, api_url: str, **over) -> Path:
    cfg = {"api_url": api_url, "contact": "loralay-tests@example.org", "rows": 2,
           "requests_per_second": 1000, "timeout_s": 2,
           "backoff_factor": 0.01, "retry_after_max_s": 1, "max_pages_percentile": None,
           "min_summary_percentile": None, "split_proportions": [0.34, 0.33, 0.33], **over}
    path = tmp_path / "test.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path

"""A fake OAI-PMH repository (its records in each metadata format and the PDFs they
link), shared by the OAI source, fault and refresh tests."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from lxml import etree

from ..conftest import shared_path
from ..fakeserver import Reply, Request
from .hal import corpus_entry, corpus_pdf

OAI = "http://www.openarchives.org/OAI/2.0/"
XML = {"Content-Type": "text/xml; charset=utf-8"}
PDF = {"Content-Type": "application/pdf"}
HTML = {"Content-Type": "text/html; charset=utf-8"}


DC = "http://purl.org/dc/elements/1.1/"


def fixture(name: str) -> bytes:
    return shared_path("fixtures", "oai", name).read_bytes()


def records_of(name: str) -> list[etree._Element]:
    root = etree.fromstring(fixture(name).lstrip())
    return list(root.iter(f"{{{OAI}}}record"))


# --- building responses ----------------------------------------------------------------------
_MOVABLE = {"identifier", "relation", "URI", "file", "transfer"}


def move_links(record: etree._Element, base: str) -> None:
    """Every link of a record (never a licence URL) moved to the fake server's host."""
    for el in record.iter():
        if not isinstance(el.tag, str):
            continue
        name = etree.QName(el).localname
        if name in _MOVABLE and el.text and re.match(r"\s*https?://", el.text):
            el.text = re.sub(r"^\s*https?://", f"{base}/ext/", el.text.strip())
        if name == "field" and el.get("element") == "identifier" and el.text \
                and el.text.startswith("http"):
            el.text = re.sub(r"^https?://", f"{base}/ext/", el.text)
        href = "{http://www.w3.org/1999/xlink}href"
        if el.get(href, "").startswith("http"):
            el.set(href, re.sub(r"^https?://", f"{base}/ext/", el.get(href)))


def envelope(records: list[etree._Element], token: str | None) -> bytes:
    root = etree.Element(f"{{{OAI}}}OAI-PMH", nsmap={None: OAI})
    etree.SubElement(root, f"{{{OAI}}}responseDate").text = "2026-11-27T00:00:00Z"
    etree.SubElement(root, f"{{{OAI}}}request", verb="ListRecords").text = "http://x/oai"
    listed = etree.SubElement(root, f"{{{OAI}}}ListRecords")
    for r in records:
        listed.append(copy.deepcopy(r))
    tok = etree.SubElement(listed, f"{{{OAI}}}resumptionToken")
    tok.text = token
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def set_identifier(record: etree._Element, ident: str) -> None:
    record.find(f"{{{OAI}}}header/{{{OAI}}}identifier").text = ident


@dataclass
class World:
    """A repository: its records (two pages), the PDFs, landing pages and faults."""

    records: list[etree._Element]
    split: int  # records on the first page
    pdfs: dict[str, bytes] = field(default_factory=dict)  # path -> body
    pages: dict[str, Reply] = field(default_factory=dict)  # other paths (landing, zip, html)
    first_faults: list[Reply] = field(default_factory=list)  # before the first page
    token_faults: list[Reply] = field(default_factory=list)  # answers to the first token
    requests: list[Request] = field(default_factory=list)

    def first(self) -> bytes:
        return envelope(self.records[:self.split], "tok-2")

    def second(self) -> bytes:
        return envelope(self.records[self.split:], None)

    def oai(self, req: Request) -> Reply:
        self.requests.append(req)
        token = req.query.get("resumptionToken", [None])[0]
        if token is None:
            if self.first_faults:
                return self.first_faults.pop(0)
            return Reply(200, self.first(), XML)
        if token == "tok-2":
            if self.token_faults:
                return self.token_faults.pop(0)
            return Reply(200, self.second(), XML)
        return Reply(422, fixture("oai_dc_zenodo_error_badResumptionToken_http422.xml"), XML)

    def serve(self, srv) -> None:
        srv.add_handler("/oai", self.oai)

        def other(req: Request) -> Reply:
            if req.path in self.pdfs:
                return Reply(200, self.pdfs[req.path], PDF)
            if req.path in self.pages:
                return self.pages[req.path]
            return Reply(404, b"not found", {"Content-Type": "text/plain"})

        srv.add_handler("/ext/*", other)
        srv.add_handler("/files/*", other)
        srv.add_handler("/landing/*", other)


def keep(world: World, base: str, record: etree._Element, corpus_id: str,
         put_abstracts: Callable[[etree._Element, dict[str, str]], None],
         put_link: Callable[[etree._Element, str], None], via_landing: bool = False,
         path: str | None = None) -> None:
    """Make `record` a paper of the corpus: its true abstracts, its PDF on the server (at
    `path`, which need not end in .pdf), linked or through a landing page."""
    entry = corpus_entry(corpus_id)
    put_abstracts(record.find(f"{{{OAI}}}metadata"), entry["abstracts"])
    path = path or f"/files/{corpus_id}.pdf"
    world.pdfs[path] = corpus_pdf(corpus_id)
    if via_landing:
        land = f"/landing/{corpus_id}"
        world.pages[land] = Reply(200, f'<html><head><meta name="citation_pdf_url" '
                                  f'content="{path}"></head><body>x</body></html>', HTML)
        put_link(record, base + land)
    else:
        put_link(record, base + path)


def write_config(tmp_path: Path, base_url: str, prefix: str, languages: list[str],
                 **over: Any) -> Path:
    cfg = {"base_url": base_url, "metadata_prefix": prefix, "languages": languages,
           "contact": "loralay-tests@example.org", "requests_per_second": 1000,
           "timeout_s": 2, "backoff_factor": 0.01, "retry_after_max_s": 1,
           # no percentile keys: oai's defaults have none (a few papers keep every good one)
           "split_proportions": [0.34, 0.33, 0.33], **over}
    path = tmp_path / "oai.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


# --- the five formats end to end -----------------------------------------------------------
def dc_abstracts(meta: etree._Element, abstracts: dict[str, str]) -> None:
    dc = next(c for c in meta if isinstance(c.tag, str))
    for d in dc.findall(f"{{{DC}}}description"):
        dc.remove(d)
    for text in abstracts.values():  # unlabelled, as RCAAP has them: detected
        etree.SubElement(dc, f"{{{DC}}}description").text = text


def dc_link(record: etree._Element, url: str) -> None:
    """The record's links replaced by `url` (a PDF, or its landing page)."""
    dc = next(c for c in record.find(f"{{{OAI}}}metadata") if isinstance(c.tag, str))
    for ident in dc.findall(f"{{{DC}}}identifier"):
        if (ident.text or "").startswith("http"):
            dc.remove(ident)
    etree.SubElement(dc, f"{{{DC}}}identifier").text = url

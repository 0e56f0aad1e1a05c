"""The fake PMC service and its records, shared by the PubMed, licence and refresh tests."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from loralay_build.records import Candidate, Rejection
from loralay_build.store.fetch import FetchState

from ..conftest import harvest_source, shared_path
from ..fakeserver import FakeServer, Reply, Request

GETRECORD = ("fixtures", "pmc", "pmc_oai_v1_GetRecord_pmc_PMC10858524_2026-09-14.xml")
NXML = ("fixtures", "pmc", "jats_PMC3460867_pone.0046493.nxml")
FAST = {"contact": "loralay-tests@example.org", "requests_per_second": 1000, "timeout_s": 1,
        "connect_timeout_s": 1,
        "backoff_factor": 0.01, "retry_after_max_s": 1, "max_retries": 2, "pdf_attempts": 2,
        "attempts": 2, "cloud_requests_per_second": 1000, "peak_oai_requests": None}
XML_TYPE = {"Content-Type": "text/xml"}
OAI_NS = "http://www.openarchives.org/OAI/2.0/"
JATS14 = "https://jats.nlm.nih.gov/ns/archiving/1.4/"

SYNTHETIC_MULTI = f"""<article xmlns="{JATS14}" xml:lang="en"><front><article-meta>
<article-id pub-id-type="pmcid-ver">PMC42.3</article-id>
<title-group><article-title>Synthetic</article-title></title-group>
<pub-date pub-type="collection"><year>2020</year></pub-date>
<pub-date pub-type="epub"><day>5</day><month>3</month><year>2019</year></pub-date>
<abstract abstract-type="summary"><p>Plain-language summary.</p></abstract>
<abstract><title>Abstract</title>
 <sec><title>Background</title><p>Costs fell 25% (from $100 &amp; up);
  x<sup>2</sup> &lt; 3.</p></sec>
 <sec><title>Results</title><p>p &lt; 0.05 in 12% of cases.</p><p>Second paragraph.</p></sec>
</abstract>
<abstract abstract-type="graphical"><graphic/></abstract>
<trans-abstract xml:lang="fr"><p>Résumé : 25 % de moins.</p></trans-abstract>
</article-meta></front></article>"""


def oai_envelope(article: bytes, digits: str) -> bytes:
    """A GetRecord response around an article, shaped like the 2026 recording."""
    body = re.sub(rb"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", b"", article)
    return (b"\n\n\n<OAI-PMH xmlns=\"" + OAI_NS.encode() + b"\"><responseDate>2026-09-14"
            b"</responseDate><request verb=\"GetRecord\">x</request><GetRecord><record><header>"
            b"<identifier>oai:pubmedcentral.nih.gov:" + digits.encode() + b"</identifier>"
            b"<datestamp>2024-02-10</datestamp></header><metadata>" + body +
            b"</metadata></record></GetRecord></OAI-PMH>")


def corpus_pdf(name: str) -> bytes:
    return shared_path("corpus", "pdf", f"{name}.pdf").read_bytes()


class Pmc:
    """OAI GetRecord by identifier, cloud metadata JSON and the PDF objects."""

    def __init__(self, server: FakeServer) -> None:
        self.records: dict[str, list[Reply]] = {}
        self.metadata: dict[str, list[Reply]] = {}
        self.objects: dict[str, list[Reply]] = {}
        server.add_handler("/oai", self.oai)
        server.add_handler("/cloud/metadata/*", lambda r: self.pop(self.metadata, r.path))
        server.add_handler("/s3/*", lambda r: self.pop(self.objects, r.path))

    @staticmethod
    def pop(table: dict[str, list[Reply]], key: str) -> Reply:
        replies = table.get(key)
        if not replies:
            return Reply(404, b"<Error>NoSuchKey</Error>", XML_TYPE)
        return replies.pop(0) if len(replies) > 1 else replies[0]

    def oai(self, req: Request) -> Reply:
        return self.pop(self.records, req.query["identifier"][0].rsplit(":", 1)[1])

    def article(self, digits: str, record: bytes, pdf: bytes, version: str,
                md5: str | None = None) -> None:
        key = f"PMC{digits}.{version}/PMC{digits}.{version}.pdf"
        self.records[digits] = [Reply(200, record, XML_TYPE)]
        self.metadata[f"/cloud/metadata/PMC{digits}.{version}.json"] = [Reply(
            200, json.dumps({"pmcid": f"PMC{digits}", "version": int(version),
                             "is_pmc_openaccess": True,
                             "pdf_url": f"s3://pmc-oa-opendata/{key}?md5="
                                        f"{md5 or hashlib.md5(pdf).hexdigest()}"}),
            {"Content-Type": "application/json"})]
        self.objects[f"/s3/pmc-oa-opendata/{key}"] = [Reply(200, pdf,
                                                            {"Content-Type": "application/pdf"})]


def harvest(cfg: dict[str, Any], state_path: Path, out: Path, limit: int | None = None,
            abandon_after: int | None = None) -> list[Candidate | Rejection]:
    with FetchState(state_path) as state:
        return harvest_source("pubmed", cfg, state, out, limit, abandon_after)

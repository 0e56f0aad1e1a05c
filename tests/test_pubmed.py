"""PubMed fetcher against a local OAI-PMH service and PMC cloud: real JATS, real PDFs, faults.

Real inputs (read in place): the 2026 GetRecord response for PMC10858524 (namespaced
JATS 1.4) and the un-namespaced `.nxml` files in ../shared/fixtures/pmc (PROVENANCE.md),
JATS abstracts with known renderings in ../shared/corpus/meta, PDFs from
../shared/corpus. SYNTHETIC inputs, built here: the Cohan et al. id files, the OAI
envelope around a `.nxml` article (`oai_envelope`), OAI error bodies, the cloud
metadata JSON (none was recorded, sources.md §3.6) and `SYNTHETIC_MULTI` (several
abstract types; no recording has them).
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from lxml import etree

from loralay_build.conf import load_settings
from loralay_build.http import forbidden_host
from loralay_build.records import Candidate, Rejection
from loralay_build.sources import FetchContext, HarvestStopped, jats, pubmed
from loralay_build.sources.pubmed import in_ncbi_peak, record_to_candidate, s3_to_https
from loralay_build.store.fetch import FetchState

from .conftest import shards_by_digest, shared_path
from .fakeserver import FakeServer, Reply, Request
from .helpers.arxiv import write_cohan
from .helpers.pubmed import (
    FAST,
    GETRECORD,
    JATS14,
    NXML,
    OAI_NS,
    SYNTHETIC_MULTI,
    XML_TYPE,
    Pmc,
    corpus_pdf,
    harvest,
    oai_envelope,
)


def oai_error(code: str) -> bytes:
    return (f'<OAI-PMH xmlns="{OAI_NS}"><responseDate>2026-09-14</responseDate>'
            f'<request verb="GetRecord">x</request><error code="{code}">no</error>'
            f"</OAI-PMH>").encode()


def meta_of(xml: bytes) -> tuple[etree._Element, etree._Element]:
    root = jats.parse_xml(xml)
    meta = jats.article_meta(root)
    assert meta is not None
    return root, meta


@pytest.fixture
def setup(tmp_path: Path, fake_server: FakeServer) -> dict[str, Any]:
    pmc = Pmc(fake_server)
    pmc.article("10858524", shared_path(*GETRECORD).read_bytes(), corpus_pdf("en_bmc_trauma"),
                "1")
    pmc.article("3460867", oai_envelope(shared_path(*NXML).read_bytes(), "3460867"),
                corpus_pdf("en_acl_s2orc"), "1")
    pmc.article("42", oai_envelope(SYNTHETIC_MULTI.encode(), "42"),
                corpus_pdf("en_ieee_reqprio"), "3")
    pmc.records["5828200"] = [Reply(200, oai_error("idDoesNotExist"), XML_TYPE)]
    ids = write_cohan(tmp_path / "ids", {"train": ["PMC10858524", "PMC3460867"],
                                         "val": ["PMC42", "PMC5828200"], "test": ["abc"]})
    path = tmp_path / "pubmed-test.yaml"
    path.write_text(yaml.safe_dump({
        "ids_dir": str(ids), "oai_url": fake_server.url("/oai"),
        "pdf_metadata_url": fake_server.url("/cloud/metadata/{pmcid_ver}.json"),
        "s3_https_url": fake_server.url("/s3/{bucket}"), "email": "team@example.org",
        **FAST}), encoding="utf-8")
    return {"cfg": load_settings("pubmed", path), "pmc": pmc, "server": fake_server,
            "out": tmp_path / "out", "state": tmp_path / "state.sqlite"}


# --- JATS --------------------------------------------------------------------------------
def test_namespaced_2026_record_matches_the_recording() -> None:
    xml = shared_path(*GETRECORD).read_bytes()
    root, meta = meta_of(xml)
    # an independent reading with the namespace spelled out
    ns = {"j": JATS14}
    expected = root.xpath("string(//j:article-meta/j:abstract/j:p)", namespaces=ns)
    item = record_to_candidate("PMC10858524", "train", root)
    assert isinstance(item, Candidate)
    assert item.abstracts == {"en": expected}
    assert "21.1%, 11.4%, and 9.3% among Female Sex Workers" in expected
    assert "Survey of 2022–2023" in expected
    assert item.publication_date == "2024-02-09"
    assert item.extra["pmcid_ver"] == "PMC10858524.1" and item.extra["has_pdf"] == "yes"
    assert item.title.endswith("Zanzibar’s key populations")


def test_same_article_with_and_without_namespace_reads_the_same() -> None:
    plain = shared_path(*NXML).read_bytes()
    root, meta = meta_of(plain)
    ns_root = etree.fromstring(re.sub(rb"<!DOCTYPE[^>]*>", b"", plain))
    for el in ns_root.iter():  # move every JATS element into the JATS 1.4 namespace
        if isinstance(el.tag, str) and not el.tag.startswith("{"):
            el.tag = f"{{{JATS14}}}{el.tag}"
    ns_meta = jats.article_meta(ns_root)
    a = jats.abstracts(meta, "en")
    assert a and a == jats.abstracts(ns_meta, "en")
    assert a[0].text.startswith("Lipid metabolism plays an important role during the lifetime "
                                "of Mycobacterium tuberculosis, the causative agent")
    assert jats.publication_date(meta) == jats.publication_date(ns_meta) == "2012-09-28"


@pytest.mark.parametrize("name,lang", [("pt_scielo_rsp_hindex", "pt"),
                                       ("es_scielo_malaga", "pt")])
def test_structured_and_translated_abstracts_match_the_corpus(name: str, lang: str) -> None:
    manifest = {json.loads(x)["id"]: json.loads(x) for x in
                shared_path("corpus", "manifest.jsonl").read_text().splitlines() if x.strip()}
    root, meta = meta_of(shared_path("corpus", "meta", f"{name}.xml").read_bytes())
    keyed = jats.keyed_abstracts(jats.all_abstracts(root, meta, lang), lang)
    assert keyed is not None
    assert keyed["en"] == manifest[name]["abstracts"]["en"]


def test_several_abstracts_are_all_kept_and_text_is_intact() -> None:
    root, _ = meta_of(SYNTHETIC_MULTI.encode())
    item = record_to_candidate("PMC42", "validation", root)
    assert isinstance(item, Candidate)
    assert list(item.abstracts) == ["en", "en-2", "fr"]
    assert item.abstracts["en"] == ("Background Costs fell 25% (from $100 & up); x2 < 3.\n"
                                    "Results p < 0.05 in 12% of cases.\nSecond paragraph.")
    assert item.abstracts["en-2"] == "Plain-language summary."
    assert item.abstracts["fr"] == "Résumé : 25 % de moins."
    assert item.publication_date == "2019-03-05"
    only_summary = SYNTHETIC_MULTI.replace("<abstract><title>", '<abstract abstract-type="x">'
                                           "<title>")
    rej = record_to_candidate("PMC42", "train", meta_of(only_summary.encode())[0])
    assert isinstance(rej, Rejection) and rej.cls == "no_abstract"


def test_entities_are_not_expanded_and_network_is_off(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    xml = (f'<!DOCTYPE article [<!ENTITY e SYSTEM "file://{secret}">]>'
           f"<article><front><article-meta><abstract><p>before &e; after</p></abstract>"
           f"</article-meta></front></article>").encode()
    root, meta = meta_of(xml)
    assert jats.abstracts(meta, "en")[0].text == "before after"
    with pytest.raises(etree.XMLSyntaxError):
        jats.parse_xml(shared_path(*GETRECORD).read_bytes()[:5000])  # cut short: no repair


def test_each_record_of_a_listing_page_reads_its_own_article() -> None:
    """A `ListRecords` page holding an .nxml article, then the recorded 2026 record: each
    `record` element reads as that record alone (an XPath from `//` would read the page's
    first article for both)."""
    page = jats.parse_xml(PmcRepository.page([
        (1, pmc_record(article_of(shared_path(*NXML).read_bytes()), "3460867", "2024-02-11")),
        (2, recorded_record())], None))
    first, second = page.iter(oai("record"))
    alone = jats.parse_xml(shared_path(*GETRECORD).read_bytes())
    want = record_to_candidate("PMC10858524", None, alone)
    got = record_to_candidate("PMC10858524", None, second)
    assert isinstance(got, Candidate) and got == want
    assert "21.1%, 11.4%, and 9.3% among Female Sex Workers" in got.abstracts["en"]
    other = record_to_candidate("PMC3460867", None, first)
    assert isinstance(other, Candidate) and other.abstracts["en"].startswith(
        "Lipid metabolism plays an important role")


def test_s3_urls() -> None:
    assert s3_to_https("s3://pmc-oa-opendata/PMC1.1/PMC1.1.pdf?md5=ab12",
                       "https://{bucket}.s3.amazonaws.com") == (
        "https://pmc-oa-opendata.s3.amazonaws.com/PMC1.1/PMC1.1.pdf", "ab12")
    assert s3_to_https("https://x.org/a.pdf", "unused") == ("https://x.org/a.pdf", None)


# --- the harvest -------------------------------------------------------------------------
def test_fetch_records_pdfs_and_manners(setup: dict[str, Any]) -> None:
    items = {i.id: i for i in harvest(setup["cfg"], setup["state"], setup["out"])}
    assert len(items) == 5
    c = items["PMC10858524"]
    assert isinstance(c, Candidate) and c.split == "train"
    assert Path(c.pdf_path).read_bytes() == corpus_pdf("en_bmc_trauma")
    assert c.pdf_url.endswith("/s3/pmc-oa-opendata/PMC10858524.1/PMC10858524.1.pdf")
    assert isinstance(items["PMC3460867"], Candidate)  # no pmcid-ver: version 1
    assert items["PMC42"].split == "validation" and items["PMC42"].extra["pmcid_ver"] == "PMC42.3"
    assert items["PMC5828200"].cls == "unavailable" and "idDoesNotExist" in \
        items["PMC5828200"].message
    assert items["abc"].cls == "bad_metadata"
    oai = [r for r in setup["server"].requests if r.path == "/oai"]
    assert oai[0].query["identifier"] == ["oai:pubmedcentral.nih.gov:10858524"]
    assert all(r.query["metadataPrefix"] == ["pmc_fm"] and r.query["tool"] == ["loralay-build"]
               and r.query["email"] == ["team@example.org"] for r in oai)
    assert "mailto:" in oai[0].headers["User-Agent"]


def test_a_licence_outside_the_list_is_excluded_before_the_cloud_and_the_pdf(
        setup: dict[str, Any]) -> None:
    """`licenses: [cc0-1.0]`: a record whose JATS names its licence (PMC10858524's
    ali:license_ref CC BY 4.0, PMC3460867's CC BY license-p) is `license_excluded` straight
    after the OAI record, before the cloud is asked; one whose JATS names none (PMC42) after
    the cloud metadata (its `license_code` could have named it), before the PDF. No PDF is
    requested; a rerun allowing them fetches them then."""
    srv = setup["server"]
    cfg = setup["cfg"].replace(licenses=["cc0-1.0"])
    items = {i.id: i for i in harvest(cfg, setup["state"], setup["out"])}
    for doc_id, licence in (("PMC10858524", "cc-by-4.0"), ("PMC3460867", "cc-by"),
                            ("PMC42", "unknown")):
        assert (items[doc_id].cls, items[doc_id].message) == (
            "license_excluded", f"licence {licence} is not in licenses: cc0-1.0"), doc_id
    assert items["PMC5828200"].cls == "unavailable"  # no licence known: as before
    cloud = [r.path for r in srv.requests if not r.path.startswith("/oai")]
    assert cloud == ["/cloud/metadata/PMC42.3.json"]
    again = {i.id: i for i in harvest(setup["cfg"].replace(licenses=["cc-by-4.0", "cc-by",
                                                                     "unknown"]),
                                      setup["state"], setup["out"])}
    assert sorted(again) == ["PMC10858524", "PMC3460867", "PMC42"]
    assert all(isinstance(i, Candidate) for i in again.values())


def test_faults_end_in_retries_or_classed_failures(setup: dict[str, Any]) -> None:
    pmc, rec = setup["pmc"], setup["pmc"].records
    good = rec["10858524"][0]
    rec["10858524"] = [Reply(429, b"", {"Retry-After": "1"}),
                       Reply(200, good.body, XML_TYPE, truncate_to=3000), good]
    rec["3460867"] = [Reply(200, b"<html><body>maintenance</body></html>", XML_TYPE)] * 3
    rec["42"] = [Reply(200, oai_error("cannotDisseminateFormat"), XML_TYPE)]
    rec["5828200"] = [Reply(200, b"<OAI-PMH><GetRecord><record>", XML_TYPE)]
    meta = "/cloud/metadata/PMC10858524.1.json"
    pmc.metadata[meta] = [Reply(500), Reply(500), Reply(500)] + pmc.metadata[meta]
    items = {i.id: i for i in harvest(setup["cfg"], setup["state"], setup["out"])}
    assert isinstance(items["PMC10858524"], Candidate)  # 429, a body cut short, 500s: retried
    assert items["PMC3460867"].cls == "unavailable" and "not an OAI-PMH" in \
        items["PMC3460867"].message
    assert items["PMC42"].cls == "bad_metadata"
    assert items["PMC5828200"].cls == "unavailable" and "not XML" in \
        items["PMC5828200"].message


def test_pdf_faults(setup: dict[str, Any]) -> None:
    pmc = setup["pmc"]
    pmc.metadata["/cloud/metadata/PMC10858524.1.json"] = [
        Reply(200, b'{"pmcid": "PMC10858524", "pdf_url": null}')]
    pmc.objects["/s3/pmc-oa-opendata/PMC3460867.1/PMC3460867.1.pdf"] = [
        Reply(200, b"<html>proof of work</html>", {"Content-Type": "application/pdf"})]
    pmc.article("42", pmc.records["42"][0].body, corpus_pdf("en_ieee_reqprio"), "3",
                md5="0" * 32)
    items = {i.id: i for i in harvest(setup["cfg"], setup["state"], setup["out"])}
    assert items["PMC10858524"].cls == "unavailable" and "pdf_url" in \
        items["PMC10858524"].message
    assert "not a PDF" in items["PMC3460867"].message
    assert "md5" in items["PMC42"].message
    assert not list((setup["out"] / "pdfs").glob("*PMC42*"))
    # the refused file is gone: its candidate keeps no path and no checksum of it
    assert items["PMC42"].candidate.pdf_path is None
    assert items["PMC42"].candidate.pdf_sha256 is None


def test_oai_403_stops_the_harvest_and_a_rerun_continues(setup: dict[str, Any]) -> None:
    setup["pmc"].records["3460867"].insert(0, Reply(403, b"denied"))
    with pytest.raises(HarvestStopped):
        harvest(setup["cfg"], setup["state"], setup["out"])
    items = harvest(setup["cfg"], setup["state"], setup["out"])
    assert [i.id for i in items] == ["PMC3460867", "PMC42", "PMC5828200", "abc"]


def test_cloud_403_records_forbidden_and_goes_on(setup: dict[str, Any]) -> None:
    pmc, srv = setup["pmc"], setup["server"]
    key = "/s3/pmc-oa-opendata/PMC10858524.1/PMC10858524.1.pdf"
    pmc.objects[key].insert(0, Reply(403, b"<Error>AccessDenied</Error>"))
    items = {i.id: i for i in harvest(setup["cfg"], setup["state"], setup["out"])}
    assert len(items) == 5  # the OAI part went on for every id
    host = urlsplit(srv.url("")).netloc
    for doc_id in ("PMC10858524", "PMC3460867", "PMC42"):  # the same bucket: no request
        assert items[doc_id].cls == "forbidden", doc_id
        assert forbidden_host(items[doc_id].message) == host
    cloud = [r.path for r in srv.requests if not r.path.startswith("/oai")]
    assert cloud[-1] == key  # nothing sent to the cloud host after its 403
    assert items["PMC5828200"].cls == "unavailable"
    assert harvest(setup["cfg"], setup["state"], setup["out"]) == []
    with FetchState(setup["state"]) as state:
        ctx = FetchContext("pubmed", setup["cfg"], state, setup["out"],
                           retry=frozenset({"forbidden"}))
        again = list(pubmed.fetch(ctx))
    assert sorted(i.id for i in again) == ["PMC10858524", "PMC3460867", "PMC42"]
    assert all(isinstance(i, Candidate) for i in again)


def test_resume_after_abandon_has_no_duplicates_and_loses_nothing(setup: dict[str, Any]
                                                                  ) -> None:
    first = harvest(setup["cfg"], setup["state"], setup["out"], abandon_after=2)
    second = harvest(setup["cfg"], setup["state"], setup["out"])
    ids = [i.id for i in first + second]
    assert len(ids) == len(set(ids)) == 5
    srv = setup["server"]
    assert sum(1 for r in srv.requests if r.path == "/oai"
               and r.query["identifier"][0].endswith(":10858524")) == 1
    assert len(harvest(setup["cfg"], setup["state"], setup["out"])) == 0


def test_limit(setup: dict[str, Any]) -> None:
    assert len(harvest(setup["cfg"], setup["state"], setup["out"], limit=2)) == 2


@pytest.mark.e2e
def test_build_cuts_the_oai_abstract_from_the_cloud_pdf(tmp_path: Path,
                                                        fake_server: FakeServer) -> None:
    """`loralay build --source pubmed`: a BMC article (a PMC journal) with its real JATS
    metadata in a SYNTHETIC OAI envelope, and its real PDF from the corpus."""
    import subprocess
    import sys

    from datasets import load_dataset

    from .conftest import REPO

    pmc = Pmc(fake_server)
    xml = shared_path("corpus", "meta", "en_bmc_trauma.xml").read_bytes()
    pdf = corpus_pdf("en_bmc_trauma")
    pmc.article("2817654", oai_envelope(xml, "2817654"), pdf, "1")
    # The article's JATS has no <permissions>, so the cloud metadata JSON (SYNTHETIC: none
    # was recorded) gets the `license_code` field sources.md §3.2 lists, in the form PMC
    # gives it (`CC BY`): the row's licence comes from there.
    meta_key = "/cloud/metadata/PMC2817654.1.json"
    cloud = json.loads(pmc.metadata[meta_key][0].body)
    pmc.metadata[meta_key] = [Reply(200, json.dumps({**cloud, "license_code": "CC BY"}),
                                    {"Content-Type": "application/json"})]
    ids = write_cohan(tmp_path / "ids", {"test": ["PMC2817654"]})
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({
        "ids_dir": str(ids), "oai_url": fake_server.url("/oai"),
        "pdf_metadata_url": fake_server.url("/cloud/metadata/{pmcid_ver}.json"),
        "s3_https_url": fake_server.url("/s3/{bucket}"), **FAST,
        "max_pages_percentile": None, "min_summary_percentile": None}))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                           "pubmed", "--config", str(cfg), "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ds = load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    row = ds["test"][0]
    truth = json.loads(next(x for x in shared_path("corpus", "manifest.jsonl").read_text()
                            .splitlines() if '"en_bmc_trauma"' in x))["abstracts"]["en"]
    assert (row["article_id"], row["abstract"]) == ("PMC2817654", truth)
    assert "thromboprophylaxis, the rate of venous" not in " ".join(row["article_words"])
    # `CC BY` names no version: `cc-by`, a bare code (no URL, no free text)
    assert (row["license"], row["license_url"], row["license_text"]) == ("cc-by", None, None)
    assert row["record_url"] == fake_server.url(
        "/oai?verb=GetRecord&identifier=oai:pubmedcentral.nih.gov:2817654&metadataPrefix=pmc_fm")
    assert row["pdf_sha256"] == hashlib.sha256(pdf).hexdigest()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["retrieved_at"])
    assert [len(ds[s]) for s in ds] == [1]  # the only row
    assert json.loads((out / "report.json").read_text())["licenses"] == {"cc-by": 1}
    card = (out / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("\n---\n", 1)[0].removeprefix("---\n"))
    # the one licence is not a Hub id: `other`, named after it
    assert (front["license"], front["license_name"]) == ("other", "cc-by")


def test_ncbi_peak_hours() -> None:
    utc = dt.timezone.utc
    assert in_ncbi_peak(dt.datetime(2026, 11, 18, 17, 0, tzinfo=utc))  # Wed 12:00 EST
    assert not in_ncbi_peak(dt.datetime(2026, 11, 18, 9, 59, tzinfo=utc))  # Wed 04:59 EST
    assert in_ncbi_peak(dt.datetime(2026, 11, 18, 10, 0, tzinfo=utc))  # Wed 05:00 EST
    assert not in_ncbi_peak(dt.datetime(2026, 11, 19, 2, 0, tzinfo=utc))  # Wed 21:00 EST
    assert in_ncbi_peak(dt.datetime(2026, 7, 15, 9, 0, tzinfo=utc))  # Wed 05:00 EDT
    assert not in_ncbi_peak(dt.datetime(2026, 11, 21, 17, 0, tzinfo=utc))  # Saturday


@pytest.mark.parametrize("moment,expected", [
    (dt.datetime(2026, 11, 18, 17, 0, tzinfo=dt.timezone.utc), 2),  # peak: stop after 2
    (dt.datetime(2026, 11, 21, 17, 0, tzinfo=dt.timezone.utc), 5),  # Saturday: all
])
def test_large_runs_stop_in_peak_hours(setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                       moment: dt.datetime, expected: int) -> None:
    monkeypatch.setattr(pubmed, "now_utc", lambda: moment)
    cfg = setup["cfg"].replace(peak_oai_requests=2)
    items: list[Candidate | Rejection] = []
    try:
        items = harvest(cfg, setup["state"], setup["out"])
    except HarvestStopped as e:
        assert "off-peak" in str(e)

    with FetchState(setup["state"]) as state:
        assert len(list(state.results("fetch"))) == expected
    if expected == 5:
        assert len(items) == 5


def test_oai_gzip_bomb_and_deep_cloud_json_are_one_line_failures(setup: dict[str, Any]
                                                                 ) -> None:
    """sickle's responses come through PoliteClient, so an OAI body is capped once decoded."""
    import gzip

    pmc = setup["pmc"]
    real = pmc.records["10858524"][0].body
    bomb = gzip.compress(real + b" " * (40 << 20), compresslevel=9)
    pmc.records["10858524"] = [Reply(200, bomb, {**XML_TYPE, "Content-Encoding": "gzip"})]
    pmc.metadata["/cloud/metadata/PMC3460867.1.json"] = [
        Reply(200, b"[" * 100_000 + b"]" * 100_000, {"Content-Type": "application/json"})]
    cfg = setup["cfg"].replace(max_body_mb=2)
    items = {i.id: i for i in harvest(cfg, setup["state"], setup["out"])}
    assert items["PMC10858524"].cls == "unavailable"
    assert "over the 2 MB cap (max_body_mb)" in items["PMC10858524"].message
    assert items["PMC3460867"].cls == "bad_metadata"
    assert "nested too deep" in items["PMC3460867"].message
    assert isinstance(items["PMC42"], Candidate)  # the harvest went on


# --- harvest: list_records (issue 36) ----------------------------------------------------------
# Real inputs adapted here: the 2015 ListRecords pages (page01's envelope and first header,
# page17's envelope without a token) around JATS records, the 2026 GetRecord record (its own
# header) and the .nxml articles; the e2e worlds give some records a corpus paper's true
# abstract so the build finds and cuts it in that paper's PDF.
LIST_FIRST = ("fixtures", "pmc",
              "pmc_oai_ListRecords_oai_dc_2014-12-24_page01_with_resumptionToken.xml")
LIST_LAST = ("fixtures", "pmc", "pmc_oai_ListRecords_oai_dc_2014-12-24_page17_last_no_token.xml")
NXML_2 = ("fixtures", "pmc", "jats_PMC5828200.nxml")
PMC_OAI_ID = "oai:pubmedcentral.nih.gov:"


def oai(name: str) -> str:
    return f"{{{OAI_NS}}}{name}"


def article_of(xml: bytes) -> etree._Element:
    """The JATS `article` of an .nxml file or of an OAI record."""
    root = jats.parse_xml(xml)
    return next(root.iter("{*}article")) if etree.QName(root).localname != "article" else root


def recorded_record() -> etree._Element:
    """The 2026 GetRecord's `record`, header and all (PMC10858524, datestamp 2024-02-10)."""
    return copy.deepcopy(next(jats.parse_xml(shared_path(*GETRECORD).read_bytes())
                              .iter(oai("record"))))


def pmc_record(article: etree._Element | None, digits: str, datestamp: str,
               sets: tuple[str, ...] = ("pmc-open",)) -> etree._Element:
    """A record of PMC's listing: page01's first recorded record, its header made this
    article's (identifier, datestamp, sets), `article` in its metadata (None: deleted)."""
    page = jats.parse_xml(shared_path(*LIST_FIRST).read_bytes())
    rec = copy.deepcopy(next(page.iter(oai("record"))))
    set_header(rec, digits, datestamp, sets)
    meta = rec.find(oai("metadata"))
    if article is None:
        rec.find(oai("header")).set("status", "deleted")
        rec.remove(meta)
    else:
        meta[:] = [copy.deepcopy(article)]
    return rec


def set_header(rec: etree._Element, digits: str, datestamp: str,
               sets: tuple[str, ...] | None = None) -> None:
    header = rec.find(oai("header"))
    header.find(oai("identifier")).text = PMC_OAI_ID + digits
    header.find(oai("datestamp")).text = datestamp
    if sets is not None:
        for el in header.findall(oai("setSpec")):
            header.remove(el)
        for name in sets:
            etree.SubElement(header, oai("setSpec")).text = name


def with_abstract(rec: etree._Element, corpus_id: str) -> etree._Element:
    """The record with its article's abstract made a corpus paper's true English one (a
    paragraph a line), as PMC would hold it for that paper."""
    rec = copy.deepcopy(rec)
    abstract = next(rec.iter("{*}abstract"))
    ns = etree.QName(abstract).namespace
    for child in list(abstract):
        abstract.remove(child)
    abstract.text = None
    truth = json.loads(next(x for x in shared_path("corpus", "manifest.jsonl").read_text()
                            .splitlines() if f'"{corpus_id}"' in x))["abstracts"]["en"]
    for line in truth.split("\n"):
        etree.SubElement(abstract, f"{{{ns}}}p" if ns else "p").text = line
    return rec


def renumbered(rec: etree._Element, digits: str, datestamp: str) -> etree._Element:
    """The record as another article's: its header and its JATS article ids."""
    rec = copy.deepcopy(rec)
    set_header(rec, digits, datestamp)
    for el in rec.iter("{*}article-id"):
        if el.get("pub-id-type") in ("pmcid", "pmcid-ver"):
            el.text = f"PMC{digits}" + (".1" if el.get("pub-id-type") == "pmcid-ver" else "")
    return rec


def datestamp_of(rec: etree._Element) -> str:
    return rec.find(oai("header")).find(oai("datestamp")).text


class PmcRepository(Pmc):
    """PMC's OAI service with a listing: `ListRecords` gives the records whose datestamp is
    in from..until and whose sets hold `set`, in identifier order (as PMC lists them, not by
    date), `page_size` a page, joined by tokens of the recorded form
    (`oai%3Apubmedcentral.nih.gov%3A<next id>!<from>!<until>!<prefix>!`, sent back as is);
    `GetRecord` of a listed record; the cloud's metadata and PDFs as `Pmc` serves them."""

    def __init__(self, server: FakeServer, page_size: int = 2) -> None:
        super().__init__(server)
        self.listed: dict[str, etree._Element] = {}
        self.page_size = page_size
        self.token_faults: list[Reply | None] = []  # the answers to the next tokens

    def put(self, rec: etree._Element, pdf: bytes | None = None) -> None:
        """A record listed (and its GetRecord, its cloud metadata and PDF when given)."""
        ident = rec.find(oai("header")).find(oai("identifier")).text
        digits = ident.rsplit(":", 1)[1]
        self.listed[digits] = rec
        if pdf is not None:
            self.article(digits, self.getrecord(rec), pdf, "1")

    @staticmethod
    def getrecord(rec: etree._Element) -> bytes:
        root = jats.parse_xml(shared_path(*GETRECORD).read_bytes())
        old = next(root.iter(oai("record")))
        old.getparent().replace(old, copy.deepcopy(rec))
        return etree.tostring(root)

    def oai(self, req: Request) -> Reply:
        if req.query.get("verb") == ["ListRecords"]:
            return self.list_records(req)
        return super().oai(req)

    def list_records(self, req: Request) -> Reply:
        token = req.query.get("resumptionToken", [None])[0]
        if token is not None:
            fault = self.token_faults.pop(0) if self.token_faults else None
            if fault is not None:  # None: this token is answered as usual
                return fault
            nxt, start, until, prefix, wanted = token.split("!")
            first = int(nxt.rsplit("%3A", 1)[1])
        else:
            def arg(k: str) -> str:
                return req.query.get(k, [""])[0]

            start, until, prefix, wanted, first = (arg("from"), arg("until"),
                                                   arg("metadataPrefix"), arg("set"), 0)
        match = sorted((int(d), r) for d, r in self.listed.items() if int(d) >= first
                       and (not start or datestamp_of(r) >= start)
                       and (not until or datestamp_of(r) <= until)
                       and (not wanted or wanted in [s.text for s in r.iter(oai("setSpec"))]))
        if not match:
            return Reply(200, oai_error("noRecordsMatch"), XML_TYPE)
        page, rest = match[:self.page_size], match[self.page_size:]
        more = (f"oai%3Apubmedcentral.nih.gov%3A{rest[0][0]}!{start}!{until}!{prefix}!{wanted}"
                if rest else None)
        return Reply(200, self.page(page, more), XML_TYPE)

    @staticmethod
    def page(records: list[tuple[int, etree._Element]], token: str | None) -> bytes:
        """A recorded listing page (page01 with a token, page17 without), its records ours."""
        root = jats.parse_xml(shared_path(*(LIST_FIRST if token else LIST_LAST)).read_bytes())
        listed = root.find(oai("ListRecords"))
        for child in list(listed):
            listed.remove(child)
        for _, rec in records:
            listed.append(copy.deepcopy(rec))
        if token:
            etree.SubElement(listed, oai("resumptionToken")).text = token
        return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def list_settings(tmp_path: Path, server: FakeServer, **over: Any) -> dict[str, Any]:
    return {"harvest": "list_records", "from": "2024-02-01", "until": "2024-12-31",
            "window_days": 3650, "split_mode": "chronological",
            "oai_url": server.url("/oai"),
            "pdf_metadata_url": server.url("/cloud/metadata/{pmcid_ver}.json"),
            "s3_https_url": server.url("/s3/{bucket}"), "email": "team@example.org",
            **FAST, **over}


def list_config(tmp_path: Path, server: FakeServer, **over: Any):
    path = tmp_path / "pubmed-list.yaml"
    path.write_text(yaml.safe_dump(list_settings(tmp_path, server, **over)), encoding="utf-8")
    return load_settings("pubmed", path)


def oai_requests(server: FakeServer, since: int = 0) -> list[dict[str, list[str]]]:
    return [r.query for r in server.requests[since:] if r.path == "/oai"]


def comparable(item: Candidate | Rejection) -> Candidate:
    """A candidate without what differs between two harvests of it (when, where, split)."""
    assert isinstance(item, Candidate), item
    return replace(item, split=None, retrieved_at=None, pdf_path=None)


def test_a_listed_record_gives_the_candidate_its_getrecord_gives(tmp_path: Path,
                                                                 fake_server: FakeServer
                                                                 ) -> None:
    """The recorded 2026 record (PMC10858524, header and all) listed after an .nxml article
    in one page reads as its GetRecord does: each record's own JATS, not the page's first."""
    repo = PmcRepository(fake_server, page_size=10)
    repo.put(recorded_record(), corpus_pdf("en_bmc_trauma"))
    repo.put(pmc_record(article_of(shared_path(*NXML).read_bytes()), "3460867", "2024-02-11"),
             corpus_pdf("en_acl_s2orc"))
    ids = write_cohan(tmp_path / "ids", {"train": ["PMC3460867", "PMC10858524"]})
    by_get = load_settings("pubmed", overrides={**list_settings(tmp_path, fake_server),
                                                "harvest": "ids", "ids_dir": str(ids),
                                                "split_mode": "given"})
    got = {i.id: i for i in harvest(by_get, tmp_path / "get.sqlite", tmp_path / "get")}
    sent = len(fake_server.requests)
    listed = {i.id: i for i in harvest(list_config(tmp_path, fake_server),
                                       tmp_path / "list.sqlite", tmp_path / "list")}
    assert sorted(listed) == sorted(got) == ["PMC10858524", "PMC3460867"]
    for doc_id in got:
        assert comparable(listed[doc_id]) == comparable(got[doc_id]), doc_id
        assert listed[doc_id].split is None and got[doc_id].split == "train"
    assert listed["PMC10858524"].extra["pmcid_ver"] == "PMC10858524.1"
    assert listed["PMC10858524"].record_url == fake_server.url(
        "/oai?verb=GetRecord&identifier=oai:pubmedcentral.nih.gov:10858524&metadataPrefix=pmc_fm")
    assert [q["verb"] for q in oai_requests(fake_server, sent)] == [["ListRecords"]]


def test_a_listing_follows_its_token_as_given_with_from_until_set_and_ncbi_manners(
        tmp_path: Path, fake_server: FakeServer) -> None:
    """Three records in the dates and the set, two a page: the first request names the
    format, the dates and the set, the second only the token, written as the recorded one
    is (percent-encoded inside the XML, sent as is); a record of another set or dated
    outside from..until is never listed."""
    repo = PmcRepository(fake_server)
    nxml = article_of(shared_path(*NXML).read_bytes())
    for digits, stamp in (("3460867", "2024-02-11"), ("3460868", "2024-02-03"),
                          ("3460869", "2024-02-20")):
        repo.put(pmc_record(nxml, digits, stamp), corpus_pdf("en_acl_s2orc"))
    repo.put(pmc_record(nxml, "3460870", "2024-02-12", sets=("nihpa",)))  # another set
    repo.put(pmc_record(nxml, "3460871", "2025-01-02"))  # after until
    items = harvest(list_config(tmp_path, fake_server), tmp_path / "s.sqlite", tmp_path / "o")
    assert [i.id for i in items] == ["PMC3460867", "PMC3460868", "PMC3460869"]
    assert all(isinstance(i, Candidate) for i in items)
    first, second = oai_requests(fake_server)[0], oai_requests(fake_server)[1]
    assert first == {"verb": ["ListRecords"], "metadataPrefix": ["pmc_fm"],
                     "from": ["2024-02-01"], "until": ["2024-12-31"], "set": ["pmc-open"],
                     "tool": ["loralay-build"], "email": ["team@example.org"]}
    assert second == {"verb": ["ListRecords"], "resumptionToken": [
        "oai%3Apubmedcentral.nih.gov%3A3460869!2024-02-01!2024-12-31!pmc_fm!pmc-open"],
        "tool": ["loralay-build"], "email": ["team@example.org"]}
    assert len(oai_requests(fake_server)) == 2  # no GetRecord: each record came listed


def high_water(state_path: Path) -> Any:
    with FetchState(state_path) as state:
        return state.get_checkpoint("pubmed.high_water", None)


def test_the_mark_is_the_newest_datestamp_saved_once_its_window_is_all_recorded(
        tmp_path: Path, fake_server: FakeServer) -> None:
    """PMC lists by identifier: the newest datestamp (2024-02-20) is on the first page. A
    harvest stopped on the second page has no mark yet (a refresh from it would pass the
    second page's older records); the same harvest again resumes at the token and, the
    window all recorded, saves it."""
    repo = PmcRepository(fake_server)
    nxml = article_of(shared_path(*NXML).read_bytes())
    for digits, stamp in (("3460867", "2024-02-11"), ("3460868", "2024-02-20"),
                          ("3460869", "2024-02-03"), ("3460870", "2024-02-04")):
        repo.put(pmc_record(nxml, digits, stamp), corpus_pdf("en_acl_s2orc"))
    cfg, state = list_config(tmp_path, fake_server), tmp_path / "s.sqlite"
    first = harvest(cfg, state, tmp_path / "o", abandon_after=3)
    assert [i.id for i in first] == ["PMC3460867", "PMC3460868", "PMC3460869"]
    assert high_water(state) is None
    sent = len(fake_server.requests)
    rest = harvest(cfg, state, tmp_path / "o")
    assert [i.id for i in rest] == ["PMC3460870"]
    assert "resumptionToken" in oai_requests(fake_server, sent)[0]
    assert high_water(state) == "2024-02-20"


def test_a_deleted_record_withdraws_a_recorded_id_only(tmp_path: Path,
                                                       fake_server: FakeServer) -> None:
    repo = PmcRepository(fake_server, page_size=10)
    nxml = article_of(shared_path(*NXML).read_bytes())
    repo.put(pmc_record(nxml, "3460867", "2024-02-11"), corpus_pdf("en_acl_s2orc"))
    repo.put(pmc_record(nxml, "3460868", "2024-02-12"), corpus_pdf("en_ieee_reqprio"))
    cfg, state = list_config(tmp_path, fake_server), tmp_path / "s.sqlite"
    assert len(harvest(cfg, state, tmp_path / "o")) == 2
    repo.put(pmc_record(None, "3460867", "2024-03-01"))  # deleted upstream since
    repo.put(pmc_record(None, "3460999", "2024-03-01"))  # never recorded
    assert harvest(cfg, state, tmp_path / "o") == []
    with FetchState(state) as st:
        assert st.candidate("PMC3460867") is None and st.candidate("PMC3460999") is None
        assert {r[0] for r in st.db.execute("SELECT doc_id FROM results")} == {"PMC3460868"}
    assert high_water(state) == "2024-03-01"  # deleted records are seen too


def test_a_record_unreachable_in_the_cloud_is_asked_for_again_by_getrecord(
        tmp_path: Path, fake_server: FakeServer) -> None:
    """The listing has moved past it, so the next run asks for it by its id, once."""
    repo = PmcRepository(fake_server, page_size=10)
    nxml = article_of(shared_path(*NXML).read_bytes())
    repo.put(pmc_record(nxml, "3460867", "2024-02-11"), corpus_pdf("en_acl_s2orc"))
    repo.put(pmc_record(nxml, "3460868", "2024-02-12"), corpus_pdf("en_ieee_reqprio"))
    meta = "/cloud/metadata/PMC3460868.1.json"
    repo.metadata[meta] = [Reply(500)] * 6 + repo.metadata[meta]
    cfg, state = list_config(tmp_path, fake_server), tmp_path / "s.sqlite"
    items = {i.id: i for i in harvest(cfg, state, tmp_path / "o")}
    assert items["PMC3460868"].cls == "unreachable"
    sent = len(fake_server.requests)
    again = harvest(cfg, state, tmp_path / "o")
    assert [i.id for i in again] == ["PMC3460868"] and isinstance(again[0], Candidate)
    asked = oai_requests(fake_server, sent)
    assert asked[0]["verb"] == ["GetRecord"]
    assert asked[0]["identifier"] == ["oai:pubmedcentral.nih.gov:3460868"]
    assert [q["verb"] for q in asked[1:]] == [["ListRecords"]]


def test_a_refresh_lists_from_the_mark_less_the_overlap_within_until(
        tmp_path: Path, fake_server: FakeServer) -> None:
    """Under `refresh` the listing starts at the mark (2024-02-20) less
    `refresh_overlap_days`; a mark past a fixed until_date leaves nothing to list."""
    repo = PmcRepository(fake_server, page_size=10)
    nxml = article_of(shared_path(*NXML).read_bytes())
    repo.put(pmc_record(nxml, "3460867", "2024-02-20"), corpus_pdf("en_acl_s2orc"))
    cfg, state = list_config(tmp_path, fake_server), tmp_path / "s.sqlite"
    harvest(cfg, state, tmp_path / "o")
    assert high_water(state) == "2024-02-20"

    def refresh(settings: Any) -> list[Candidate | Rejection]:
        with FetchState(state) as st:
            return list(pubmed.fetch(FetchContext("pubmed", settings, st, tmp_path / "o",
                                                  refresh=True)))

    sent = len(fake_server.requests)
    assert refresh(cfg.replace(refresh_overlap_days=3)) == []
    assert [q.get("from") for q in oai_requests(fake_server, sent)] == [["2024-02-17"]]
    sent = len(fake_server.requests)
    assert refresh(cfg.replace(until_date="2024-02-18")) == []
    assert oai_requests(fake_server, sent) == []


@pytest.mark.parametrize("keys,said", [
    ({"split_mode": "chronological"}, "harvest: list_records needs from_date (YYYY-MM-DD)"),
    ({"from": "2024-01-01"}, "harvest: list_records lists papers outside Cohan et al.'s split: "
                             "set split_mode: chronological"),
    ({"from": "2024-03-01", "until": "2024-02-01", "split_mode": "chronological"},
     "from_date 2024-03-01 is after until_date 2024-02-01"),
])
def test_list_records_settings_are_refused_in_one_line(tmp_path: Path, keys: dict[str, Any],
                                                       said: str) -> None:
    from loralay_build.errors import ConfigError

    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({"harvest": "list_records", **keys}))
    with pytest.raises(ConfigError) as e:
        load_settings("pubmed", path)
    assert str(e.value).startswith(f"{path}: {said}") and "\n" not in str(e.value)
    path.write_text("harvest: list_records\nfrom: 2024-01-01\nsplit_mode: chronological\n")
    assert load_settings("pubmed", path).from_date == "2024-01-01"  # a YAML date


# --- list_records end to end: a build, then refreshes through the CLI ---------------------------
V1_IDS = ["PMC10858524", "PMC2817654", "PMC3460867"]
REFRESH_DIFF = {"schema_version": 2, "version_before": 1, "version": 2,
                "added": {"train": ["PMC5828200", "PMC11000001"]},
                "duplicates": [], "missing_upstream": ["PMC10858524"], "dropped": {},
                "pdf_changed": [], "split_moves_refused": []}


def listing_world(server: FakeServer) -> PmcRepository:
    """Version 1's PMC, two records a page in identifier order: PMC2817654 (the BMC article
    of the corpus, dated 2024-02-11) and PMC3460867 (an .nxml article, 2024-02-12, the
    newest), then the recorded 2026 record PMC10858524 (2024-02-10), each with the abstract
    of the corpus PDF it is served with."""
    repo = PmcRepository(server)
    repo.put(with_abstract(recorded_record(), "en_hal_reaim"), corpus_pdf("en_hal_reaim"))
    repo.put(pmc_record(article_of(shared_path("corpus", "meta", "en_bmc_trauma.xml")
                                   .read_bytes()), "2817654", "2024-02-11"),
             corpus_pdf("en_bmc_trauma"))
    repo.put(with_abstract(pmc_record(article_of(shared_path(*NXML).read_bytes()), "3460867",
                                      "2024-02-12"), "en_ieee_reqprio"),
             corpus_pdf("en_ieee_reqprio"))
    return repo


def published_since(repo: PmcRepository) -> None:
    """What PMC holds at the refresh: PMC5828200 (2024-03-05) and PMC11000001 (2024-02-20,
    the recorded record renumbered) are new, PMC10858524 is deleted (2024-03-01). From the
    mark less a day (2024-02-11) the listing is three pages: the two records of 2024-02-11
    and -12 again, then 5828200 and the deletion, then 11000001."""
    repo.put(with_abstract(pmc_record(article_of(shared_path(*NXML_2).read_bytes()), "5828200",
                                      "2024-03-05"), "en_arxiv_beyond_summ"),
             corpus_pdf("en_arxiv_beyond_summ"))
    repo.put(with_abstract(renumbered(recorded_record(), "11000001", "2024-02-20"),
                           "en_acl_s2orc"), corpus_pdf("en_acl_s2orc"))
    repo.put(pmc_record(None, "10858524", "2024-03-01"))


def e2e_config(tmp_path: Path, server: FakeServer, name: str = "cfg.yaml", **over: Any
               ) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(list_settings(tmp_path, server, max_pages_percentile=None,
                                                 min_summary_percentile=None, **over)))
    return path


def pubmed_build(cfg: Path, out: Path, *more: str) -> None:
    from .conftest import loralay

    loralay("build", "--source", "pubmed", "--config", str(cfg), "--out", str(out), *more,
            check=True)


def fetch_state(out: Path, sql: str) -> list[tuple[Any, ...]]:
    import sqlite3

    with sqlite3.connect(out / "state" / "fetch.sqlite") as con:
        return con.execute(sql).fetchall()


def checkpoint(out: Path, name: str) -> Any:
    found = fetch_state(out, f"SELECT value FROM checkpoints WHERE name = '{name}'")
    return json.loads(found[0][0]) if found else None


def kept_ids(out: Path) -> list[str]:
    docs = json.loads((out / "report.json").read_text())["documents"]
    return sorted(i for i, d in docs.items() if d["status"] == "kept")


@pytest.mark.e2e
def test_a_listed_build_refreshed_asks_from_its_mark_and_adds_only_the_new_papers(
        tmp_path: Path, fake_server: FakeServer) -> None:
    """Version 1 lists from from_date across a token; the refresh lists from its mark
    (2024-02-12) less a day and never from the beginning, asks the cloud about the new
    papers only, adds them, withdraws the deleted one (missing upstream, its row kept) and
    leaves version 1's files as they were."""
    repo = listing_world(fake_server)
    cfg, out = e2e_config(tmp_path, fake_server), tmp_path / "out"
    pubmed_build(cfg, out)
    assert kept_ids(out) == V1_IDS
    first = oai_requests(fake_server)
    assert [(q.get("from"), q.get("resumptionToken")) for q in first] == [
        (["2024-02-01"], None),
        (None, ["oai%3Apubmedcentral.nih.gov%3A10858524!2024-02-01!2024-12-31!pmc_fm!pmc-open"])]
    assert checkpoint(out, "pubmed.high_water") == "2024-02-12"
    v1 = shards_by_digest(out)

    published_since(repo)
    sent = len(fake_server.requests)
    pubmed_build(cfg, out, "--refresh")
    asked = oai_requests(fake_server, sent)
    assert asked[0] == {"verb": ["ListRecords"], "metadataPrefix": ["pmc_fm"],
                        "from": ["2024-02-11"], "until": ["2024-12-31"], "set": ["pmc-open"],
                        "tool": ["loralay-build"], "email": ["team@example.org"]}
    assert [list(q) for q in asked[1:]] == [["verb", "resumptionToken", "tool", "email"]] * 2
    cloud = [r.path for r in fake_server.requests[sent:] if r.path != "/oai"]
    assert cloud == ["/cloud/metadata/PMC5828200.1.json", "/s3/pmc-oa-opendata/PMC5828200.1/"
                     "PMC5828200.1.pdf", "/cloud/metadata/PMC11000001.1.json",
                     "/s3/pmc-oa-opendata/PMC11000001.1/PMC11000001.1.pdf"]
    assert json.loads((out / "diff.json").read_text()) == REFRESH_DIFF
    assert checkpoint(out, "pubmed.high_water") == "2024-03-05"
    after = shards_by_digest(out)
    assert {k: after[k] for k in v1} == v1 and len(after) == len(v1) + 1
    assert kept_ids(out) == sorted(V1_IDS + ["PMC11000001", "PMC5828200"])


@pytest.mark.e2e
def test_a_refresh_killed_mid_listing_resumes_at_its_token_and_keeps_the_window_s_mark(
        tmp_path: Path, fake_server: FakeServer) -> None:
    """The refresh is killed while its third page is asked for: PMC5828200 (2024-03-05, the
    window's newest) recorded, the deletion withdrawn, the mark not yet raised. The same
    command resumes at that page's token (no listing from any date), adds PMC11000001 and
    ends as an unkilled refresh does, the mark raised to 2024-03-05 (listed before the
    kill), not to the last page's 2024-02-20."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from .conftest import REPO

    repo = listing_world(fake_server)
    cfg, out = e2e_config(tmp_path, fake_server), tmp_path / "out"
    pubmed_build(cfg, out)
    published_since(repo)
    repo.token_faults = [None, Reply(200, b"", XML_TYPE, delay=30)]  # the third page hangs
    slow = e2e_config(tmp_path, fake_server, "slow.yaml", timeout_s=60)
    sent = len(fake_server.requests)
    proc = subprocess.Popen([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                             "pubmed", "--config", str(slow), "--out", str(out), "--refresh"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while sum("resumptionToken" in q for q in oai_requests(fake_server, sent)) < 2 \
            and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    recorded = {r[0] for r in fetch_state(out, "SELECT doc_id FROM results WHERE "
                                               "stage = 'fetch'")}
    assert recorded == {"PMC2817654", "PMC3460867", "PMC5828200"}  # 10858524 withdrawn
    assert checkpoint(out, "pubmed.high_water") == "2024-02-12"
    token = "oai%3Apubmedcentral.nih.gov%3A11000001!2024-02-11!2024-12-31!pmc_fm!pmc-open"
    assert json.loads(checkpoint(out, "pubmed.position")["position"])["token"] == token

    sent = len(fake_server.requests)
    pubmed_build(cfg, out, "--refresh")
    asked = oai_requests(fake_server, sent)
    assert asked[0]["resumptionToken"] == [token] and not any("from" in q for q in asked)
    assert json.loads((out / "diff.json").read_text()) == REFRESH_DIFF
    assert checkpoint(out, "pubmed.high_water") == "2024-03-05"


@pytest.mark.e2e
def test_a_dataset_of_cohan_s_ids_refreshed_by_a_listing_gains_papers_outside_them(
        tmp_path: Path, fake_server: FakeServer) -> None:
    """Version 1 from Cohan's ids (GetRecord, their given splits); the refresh lists from
    from_date (no mark yet: `ids` keeps none), skips the ids it has, adds the two new papers
    split by date among themselves, and the old rows keep Cohan's splits."""
    repo = listing_world(fake_server)
    ids = write_cohan(tmp_path / "ids", {"train": ["PMC3460867"], "val": ["PMC2817654"],
                                         "test": ["PMC10858524"]})
    cohan = e2e_config(tmp_path, fake_server, "cohan.yaml", harvest="ids", ids_dir=str(ids),
                       split_mode="given")
    out = tmp_path / "out"
    pubmed_build(cohan, out)
    assert {q["verb"][0] for q in oai_requests(fake_server)} == {"GetRecord"}
    assert checkpoint(out, "pubmed.high_water") is None
    v1 = shards_by_digest(out)
    published_since(repo)
    sent = len(fake_server.requests)
    pubmed_build(e2e_config(tmp_path, fake_server, **{"from": "2024-02-11"}), out, "--refresh")
    asked = oai_requests(fake_server, sent)
    assert asked[0]["verb"] == ["ListRecords"] and asked[0]["from"] == ["2024-02-11"]
    assert not any(q["verb"] == ["GetRecord"] for q in asked)
    assert json.loads((out / "diff.json").read_text()) == REFRESH_DIFF
    after = shards_by_digest(out)
    assert {k: after[k] for k in v1} == v1
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert [docs[i]["split"] for i in ("PMC3460867", "PMC2817654", "PMC10858524",
                                       "PMC5828200", "PMC11000001")] == [
        "train", "validation", "test", "train", "train"]

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

import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from lxml import etree

from loralay_build.http import forbidden_host
from loralay_build.records import Candidate, Rejection
from loralay_build.settings import load_settings
from loralay_build.sources import FetchContext, HarvestStopped, jats, pubmed
from loralay_build.sources.pubmed import in_ncbi_peak, record_to_candidate, s3_to_https
from loralay_build.state import RunState

from .conftest import harvest_source, shared_path
from .fakeserver import FakeServer, Reply, Request
from .test_arxiv import write_cohan

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


def oai_error(code: str) -> bytes:
    return (f'<OAI-PMH xmlns="{OAI_NS}"><responseDate>2026-09-14</responseDate>'
            f'<request verb="GetRecord">x</request><error code="{code}">no</error>'
            f"</OAI-PMH>").encode()


def corpus_pdf(name: str) -> bytes:
    return shared_path("corpus", "pdf", f"{name}.pdf").read_bytes()


def meta_of(xml: bytes) -> tuple[etree._Element, etree._Element]:
    root = jats.parse_xml(xml)
    meta = jats.article_meta(root)
    assert meta is not None
    return root, meta


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


def harvest(cfg: dict[str, Any], state_path: Path, out: Path, limit: int | None = None,
            abandon_after: int | None = None) -> list[Candidate | Rejection]:
    with RunState(state_path) as state:
        return harvest_source("pubmed", cfg, state, out, limit, abandon_after)


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
    with RunState(setup["state"]) as state:
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

    with RunState(setup["state"]) as state:
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

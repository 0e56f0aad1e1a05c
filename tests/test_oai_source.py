"""`--source oai`: the format parsers on the real recorded records (../shared/fixtures/oai,
PROVENANCE.md says where each field sits), and `loralay build --source oai` end to end
against responses built at test time from those records, served on 127.0.0.1.

SYNTHETIC, built here from the recordings: the records kept on purpose get a shared corpus
PDF's true abstracts (so the build finds and cuts them) and a PDF link (or a landing page
with `citation_pdf_url`) on the fake server; every other record keeps its own links, moved
to the fake server's host (which answers 404, an HTML page or a zip there), and gets its
class. The records are split into two ListRecords pages joined by a token. Faults: 503 with
Retry-After, a token answered with badResumptionToken (the window restarts), noRecordsMatch
behind HTTP 422, a record whose XML is broken, a kill after the first page.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from loralay_build.conf import load_settings
from loralay_build.sources.kit.oaipmh import OaiRecord, _record
from loralay_build.sources.oai import (
    Window,
    abstracts_by_language,
    citation_pdf_url,
    pick_license,
    to_candidate,
    windows,
)
from loralay_build.sources.oai_formats import FORMATS, is_abstract

from .conftest import REPO, fetched_ids, loralay
from .fakeserver import Reply
from .helpers.hal import corpus_entry
from .helpers.oai import (
    DC,
    OAI,
    PDF,
    XML,
    World,
    dc_abstracts,
    dc_link,
    fixture,
    keep,
    move_links,
    records_of,
    set_identifier,
    write_config,
)

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def metas(name: str) -> list[etree._Element]:
    """The metadata roots of a fixture's records (the file itself when it is one record)."""
    root = etree.fromstring(fixture(name).lstrip())
    found = [next(c for c in m if isinstance(c.tag, str)) for m in root.iter(f"{{{OAI}}}metadata")]
    return found or [root]


# --- parsers on the recorded records (fields written by hand from the XML) -----------------
def test_oai_dc_rcaap_unlabelled_pt_and_en_descriptions():
    f = FORMATS["oai_dc"](metas("oai_dc_rcaap_ListRecords_2015-12-26_page2_last.xml")[0])
    assert f.title.startswith("A qualidade da investigação em ciências")
    assert [a.label for a in f.abstracts] == [None]
    assert f.abstracts[0].text.startswith("Quase um ano após o novo corpo")
    assert f.dates == ["2015"] and f.languages == ["por"]
    assert f.rights == ["Copyright (c) 2015 Motricidade"] and f.pdf_urls == []
    assert f.landing_urls == [
        "http://www.rcaap.pt/detail.jsp?id=oai:ojs.revistas.rcaap.pt:article/7877"]


def test_oai_dc_hal_xml_lang_and_international_audience_is_not_an_abstract():
    f = FORMATS["oai_dc"](metas("oai_dc_hal_GetRecord_hal-00830421.xml")[0])
    assert [a.label for a in f.abstracts] == ["en"]  # "International audience" is dropped
    assert not is_abstract("International audience")
    assert f.dates == ["2013"] and f.record_languages() == ["en"]


def test_oai_dc_bielefeld_citation_strings_are_not_abstracts():
    """LibreCat's first `dc:description` of every record is a citation (`<em>` escaped):
    of 200 records, only the 11 real abstracts (all second descriptions) are taken."""
    ms = metas("oai_dc_bielefeld-pub_ListRecords_doctoralThesis_page1_with_token.xml")
    found = [a for m in ms for a in FORMATS["oai_dc"](m).abstracts]
    assert len(ms) == 200 and len(found) == 11
    assert not any("<em>" in a.text for a in found)
    assert any("/download/" in u for m in ms for u in FORMATS["oai_dc"](m).pdf_urls)


def test_oai_dc_a_pdf_in_the_identifier_is_the_link():
    f = FORMATS["oai_dc"](metas(
        "oai_dc_cogprints-eprints_ListRecords_2015-04-19_pdf-in-identifier.xml")[0])
    assert f.pdf_urls and all(u.startswith("http://cogprints.org/") and u.endswith(".pdf")
                              for u in f.pdf_urls)


def test_oai_openaire_sample():
    f = FORMATS["oai_openaire"](metas(
        "oai_openaire_openaire-guidelines_official_sample_journalarticle1_NOT_RECORDED.xml")[0])
    assert f.title == "Redox‐Neutral Dual Functionalization of Electron‐Deficient Alkenes"
    assert [a.label for a in f.abstracts] == ["eng"] and f.abstracts[0].language == "en"
    assert f.dates == ["2018-02-25", "2019-02-25"]  # Accepted, Available (no Issued)
    assert f.rights[0] == "http://creativecommons.org/licenses/by-nc/4.0/"
    assert pick_license(f.rights) == "http://creativecommons.org/licenses/by-nc/4.0/"
    assert f.pdf_urls == ["http://europepmc.org/articles/PMC5574022?pdf=render"]


def test_jpcoar_2_tsukuba():
    f = FORMATS["jpcoar_2.0"](metas("jpcoar_2.0_tsukuba-repo-nii_GetRecord_02000144.xml")[0])
    assert f.title.startswith("Aggregation and Utilization of Metadata")
    assert f.abstracts == []  # only descriptionType="Other" (a book's ISBN line)
    assert f.dates == ["2021-03"]  # Issued; the file's "Available" 2021-06-28 is not it
    assert f.pdf_urls == [
        "https://tsukuba.repo.nii.ac.jp/record/2000144/files/LNCS_12645_154-2.pdf"]
    assert f.rights[-1] == "http://purl.org/coar/access_right/c_abf2"
    assert pick_license(f.rights).startswith("© Springer Nature")  # free text kept


def test_jpcoar_1_a_mime_type_filed_as_a_description_is_not_an_abstract():
    for meta in metas("jpcoar_1.0_utokyo-repository_ListRecords_2022-10-25_extracted-from-"
                      "weko-test.xml"):
        assert FORMATS["jpcoar_1.0"](meta).abstracts == []
    assert not is_abstract("application/pdf")


def test_xmetadissplus_opus():
    first, second = metas("xMetaDissPlus_opus4-demo-zib_ListRecords_2012-06-22_two_theses_"
                          "de-en.xml")
    f = FORMATS["xMetaDissPlus"](first)
    assert f.title == "Eine Dissertation"  # not the translated "A PhD-Work"
    assert f.dates == ["2012-06-22", "2011-04-19"]  # issued, then dateAccepted
    assert f.record_languages() == ["de"] and f.rights == ["Creative Commons - Namensnennung"]
    assert f.pdf_urls == ["http://enki.zib.de/opus4-running/oai/container/index/docId/155"]
    g = FORMATS["xMetaDissPlus"](second)
    assert g.title == "Eine Masterarbeit"
    # the demo's abstracts are placeholders of four words: not taken for abstracts
    assert g.abstracts == []


def test_dim_whoas():
    f = FORMATS["dim"](metas("dim_whoas-dspace_5_records_harvested_by_transmogrifier.xml")[0])
    assert f.title.startswith("Time lapse movie of meiosis I in a living spermatocyte")
    assert [a.label for a in f.abstracts] == ["en"]  # provenance notes are not abstracts
    assert f.abstracts[0].text.startswith("The events of meiosis I in a living spermatocyte")
    assert f.dates == ["2002-11"]  # issued, not accessioned 2009-01-08T16:24:37Z
    assert f.pdf_urls == [] and f.landing_urls == ["https://hdl.handle.net/1912/2641"]


def test_datacite_zenodo_abstracts_issue_date_spdx_and_the_doi_landing_page():
    """Zenodo's `datacite`: only `descriptionType="Abstract"` is an abstract (record 11's
    `Other` note of 43 words is not), the Issued date before publicationYear, the SPDX
    `rightsIdentifier`, no file link: the DOI's landing page is where the PDF is looked
    for (`citation_pdf_url`)."""
    ms = metas("datacite_zenodo_ListRecords_2026_page1_with_token.xml")
    f = FORMATS["datacite"](ms[10])
    assert f.title == ("Machine Learning Applications in Marketing: Literature Review and "
                       "Research Agenda")
    assert [a.label for a in f.abstracts] == [None]  # no xml:lang: the language is detected
    assert f.abstracts[0].text.startswith("Currently, machine learning applications in "
                                          "marketing allow to optimize strategies")
    assert f.dates == ["2023-10-12", "2023"] and f.record_languages() == ["en"]
    assert f.rights == ["cc-by-4.0", "info:eu-repo/semantics/openAccess"]
    assert f.pdf_urls == [] and f.landing_urls == ["https://doi.org/10.5281/zenodo.8436315"]
    g = FORMATS["datacite"](ms[11])
    assert [a.text[:30] for a in g.abstracts] == ["This code uses the gFlex code "]
    assert FORMATS["oai_datacite"] is FORMATS["datacite"]


def test_mets_mit_original_pdf_and_zvdd_download_group():
    f = FORMATS["mets"](metas("mets_mit-dspace_12_records_harvested_by_transmogrifier.xml")[0])
    assert f.title == ("Get Smart: Reinventing Plastic Recycling in a Collaborative, Circular "
                       "Supply Chain")
    assert f.abstracts[0].text.startswith("Plastic waste has been a growing source of")
    assert f.dates[0] == "2022-06-08" and f.record_languages() == ["en"]
    assert f.rights[0] == "CC0 1.0 Universal"
    assert f.pdf_urls == ["https://dspace.mit.edu/bitstream/1721.1/142912/1/SCM06_Benitez_"
                          "Critchlow_Project.pdf"]  # ORIGINAL; not TEXT, THUMBNAIL, LICENSE
    g = FORMATS["mets"](metas("mets_zvdd-ub-paderborn_GetRecord_2017_pdf-flocat.xml")[0])
    assert g.pdf_urls[0] == "http://digital.ub.uni-paderborn.de/download/pdf/2572377"
    assert g.dates[0] == "1908" and g.record_languages() == ["de"] and g.abstracts == []


def test_unlabelled_abstracts_are_detected_and_the_wanted_language_comes_first():
    f = FORMATS["oai_dc"](metas("oai_dc_cyberleninka_ListRecords_2015-05-19_ru-en.xml")[0])
    found, notes = abstracts_by_language(f, ["en"])
    if "en" in found:
        assert next(iter(found)) == "en"
    assert set(notes["abstract_language_from"].values()) <= {"detected", "record", "unknown"}


def test_citation_pdf_url_and_windows():
    page = '<html><head><meta content="/x/paper.pdf" name="citation_pdf_url"></head></html>'
    assert citation_pdf_url(page, "http://h/landing/1") == "http://h/x/paper.pdf"
    s = load_settings("oai", overrides={"base_url": "http://h/oai", "from": "2020-01-01",
                                        "until": "2020-03-01", "window_days": 30})
    assert windows(s, dt.date(2026, 1, 1)) == [
        Window("2020-01-01", "2020-01-30"), Window("2020-01-31", "2020-02-29"),
        Window("2020-03-01", "2020-03-01")]


def build_oai(srv, tmp_path: Path, world: World, prefix: str, languages: list[str],
          name: str = "out", **over: Any) -> Path:
    world.serve(srv)
    out = tmp_path / name
    cfg = write_config(tmp_path, srv.url("/oai"), prefix, languages, **over)
    proc = loralay("build", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def dataset_rows(out: Path, tmp_path: Path) -> dict[str, dict]:
    from datasets import load_dataset

    ds = load_dataset(str(out), cache_dir=str(tmp_path / f"cache-{out.name}"))
    return {r["article_id"]: r for s in ds for r in ds[s]}


def assert_cut(row: dict, corpus_id: str) -> None:
    """The abstract is the corpus's, its white space made single spaces as every format's
    text is read (the report's leakage audit says it was cut)."""
    entry = corpus_entry(corpus_id)
    assert row["abstract"] == " ".join(entry["abstracts"][row["language"]].split())


def assert_outcomes(out: Path, kept: set[str], every: list[str]) -> dict[str, dict]:
    """Exactly `kept` kept, 0 leaks, every other record with its class."""
    report = json.loads((out / "report.json").read_text())
    assert report["leakage"]["above_threshold"] == 0 and report["leakage"]["leaks"] == []
    assert report["leakage"]["checked"] >= len(kept)
    docs = report["documents"]
    assert {i for i, o in docs.items() if o["status"] == "kept"} == kept
    for ident in every:
        assert ident in docs, ident
        assert docs[ident]["status"] == "kept" or docs[ident].get("class"), docs[ident]
    return docs


def rcaap_world(base: str) -> tuple[World, dict[str, str]]:
    recs = [copy.deepcopy(r) for r in records_of(
        "oai_dc_rcaap_ListRecords_2015-12-26_page1_with_token.xml")[:6]]
    for r in recs:
        move_links(r, base)
    world = World(recs, split=3)
    chosen = {0: "pt_scielo_hoehnea_senna", 3: "pt_scielo_tinf_brasil_china",
              4: "pt_scielo_rsp_hindex"}
    for i, corpus_id in chosen.items():
        keep(world, base, recs[i], corpus_id, dc_abstracts, dc_link, via_landing=(i == 4))
    kept = {recs[i].find(f"{{{OAI}}}header/{{{OAI}}}identifier").text: c
            for i, c in chosen.items()}
    return world, kept


def ids(world: World) -> list[str]:
    return [r.find(f"{{{OAI}}}header/{{{OAI}}}identifier").text for r in world.records]


@pytest.mark.e2e
def test_build_oai_dc_rcaap_pt(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = rcaap_world(base)
    world.first_faults = [Reply(503, b"busy", {"Retry-After": "1"})]  # honoured, then served
    out = build_oai(fake_server, tmp_path, world, "oai_dc", ["pt"])
    assert len([r for r in world.requests if "resumptionToken" not in r.query]) == 2
    docs = assert_outcomes(out, set(kept), ids(world))
    rows = dataset_rows(out, tmp_path)
    for ident, corpus_id in kept.items():
        row = rows[ident]
        assert row["language"] == "pt" and row["source"] == "oai"
        assert_cut(row, corpus_id)
        assert [a["language"] for a in row["other_abstracts"]] == ["en"]
        assert row["record_url"].startswith(fake_server.url("/oai?verb=GetRecord"))
    # the dates and licences the records state (dc:date, dc:rights of the recording)
    meta = {i: FORMATS["oai_dc"](r.find(f"{{{OAI}}}metadata")[0])
            for i, r in zip(ids(world), world.records)}
    for ident in kept:
        assert rows[ident]["publication_date"] == meta[ident].dates[0][:10]
        stated = pick_license(meta[ident].rights)
        assert rows[ident]["license_text"] in (stated, None) or rows[ident]["license_url"] \
            == stated
    # the record kept through its landing page's citation_pdf_url
    landing = [i for i, c in kept.items() if c == "pt_scielo_rsp_hindex"][0]
    assert rows[landing]["article_pdf_url"].endswith("/files/pt_scielo_rsp_hindex.pdf")
    others = [i for i in ids(world) if i not in kept]
    assert all(docs[i]["class"] in {"unavailable", "no_abstract", "wrong_language"}
               for i in others), {i: docs[i] for i in others}


def openaire_world(base: str) -> tuple[World, dict[str, str]]:
    meta = metas("oai_openaire_openaire-guidelines_official_sample_journalarticle1_NOT_RECORDED"
                 ".xml")[0]
    recs = []
    for n in range(4):
        rec = etree.Element(f"{{{OAI}}}record", nsmap={None: OAI})
        head = etree.SubElement(rec, f"{{{OAI}}}header")
        etree.SubElement(head, f"{{{OAI}}}identifier").text = f"oai:openaire.test:{n}"
        etree.SubElement(head, f"{{{OAI}}}datestamp").text = f"2026-01-0{n + 1}"
        etree.SubElement(rec, f"{{{OAI}}}metadata").append(copy.deepcopy(meta))
        move_links(rec, base)
        recs.append(rec)
    world = World(recs, split=2)
    oaire = "http://namespace.openaire.eu/schema/oaire/"

    def put_abstracts(m: etree._Element, abstracts: dict[str, str]) -> None:
        res = m[0]
        for d in res.findall(f"{{{DC}}}description"):
            res.remove(d)
        three = {"es": "spa", "en": "eng", "fr": "fra", "pt": "por"}
        for lang, text in abstracts.items():
            etree.SubElement(res, f"{{{DC}}}description", {XML_LANG: three[lang]}).text = text

    def put_link(rec: etree._Element, url: str) -> None:
        rec.find(f"{{{OAI}}}metadata")[0].find(f"{{{oaire}}}file").text = url

    keep(world, base, recs[0], "es_scielo_malaga", put_abstracts, put_link)
    keep(world, base, recs[2], "es_baaa_awsom", put_abstracts, put_link)
    # record 1: its file serves an HTML page; record 3 keeps its English abstract
    put_link(recs[1], base + "/files/embargo.pdf")
    put_abstracts(recs[1].find(f"{{{OAI}}}metadata"), corpus_entry("es_ieee_miniscan")[
        "abstracts"])
    world.pages["/files/embargo.pdf"] = Reply(200, "<!DOCTYPE html><html>Embargo</html>", PDF)
    return world, {"oai:openaire.test:0": "es_scielo_malaga",
                   "oai:openaire.test:2": "es_baaa_awsom"}


@pytest.mark.e2e
def test_build_oai_openaire_es(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = openaire_world(base)
    out = build_oai(fake_server, tmp_path, world, "oai_openaire", ["es"])
    docs = assert_outcomes(out, set(kept), ids(world))
    assert docs["oai:openaire.test:1"]["class"] == "unavailable"
    assert docs["oai:openaire.test:3"]["class"] == "wrong_language"
    rows = dataset_rows(out, tmp_path)
    for ident, corpus_id in kept.items():
        row = rows[ident]
        assert_cut(row, corpus_id)
        assert row["language"] == "es" and row["publication_date"] == "2018-02-25"
        assert row["license"] == "cc-by-nc-4.0"
        assert row["license_url"] == "http://creativecommons.org/licenses/by-nc/4.0/"


@pytest.mark.e2e
def test_build_oai_the_order_of_languages_never_picks_the_summary(fake_server, tmp_path):
    """Issue 41 item 4 end to end: the OpenAIRE sample states `eng`, the two Spanish papers
    grafted on it have spa and eng abstracts; with `languages: [en, es]` the summary was
    the English one. Their bodies are Spanish: the Spanish abstract is the summary."""
    base = fake_server.url("").rstrip("/")
    world, kept = openaire_world(base)
    out = build_oai(fake_server, tmp_path, world, "oai_openaire", ["en", "es"])
    assert_outcomes(out, set(kept), ids(world))
    rows = dataset_rows(out, tmp_path)
    for ident, corpus_id in kept.items():
        assert rows[ident]["language"] == "es"
        assert_cut(rows[ident], corpus_id)
        assert [a["language"] for a in rows[ident]["other_abstracts"]] == ["en"]


def jpcoar_world(base: str) -> tuple[World, dict[str, str]]:
    rec0 = records_of("jpcoar_2.0_tsukuba-repo-nii_GetRecord_02000144.xml")[0]
    jp = "https://github.com/JPCOAR/schema/blob/master/2.0/"
    dcite = "https://schema.datacite.org/meta/kernel-4/"
    recs = []
    for n in range(3):
        rec = copy.deepcopy(rec0)
        set_identifier(rec, f"oai:tsukuba.repo.nii.ac.jp:0200014{n}")
        move_links(rec, base)
        recs.append(rec)
    world = World(recs, split=1)

    def put_abstracts(m: etree._Element, abstracts: dict[str, str]) -> None:
        root = m[0]
        for lang, text in abstracts.items():
            etree.SubElement(root, f"{{{dcite}}}description",
                             {XML_LANG: lang, "descriptionType": "Abstract"}).text = text

    def put_link(rec: etree._Element, url: str) -> None:
        rec.find(f".//{{{jp}}}file/{{{jp}}}URI").text = url

    keep(world, base, recs[0], "en_bmc_trauma", put_abstracts, put_link)
    keep(world, base, recs[1], "en_acl_s2orc", put_abstracts, put_link)
    # record 2 keeps its recorded metadata: no Abstract description
    return world, {ids(world)[0]: "en_bmc_trauma", ids(world)[1]: "en_acl_s2orc"}


@pytest.mark.e2e
def test_build_jpcoar_2_en(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = jpcoar_world(base)
    out = build_oai(fake_server, tmp_path, world, "jpcoar_2.0", ["en"])
    docs = assert_outcomes(out, set(kept), ids(world))
    assert docs[ids(world)[2]]["class"] == "no_abstract"
    rows = dataset_rows(out, tmp_path)
    for ident, corpus_id in kept.items():
        assert_cut(rows[ident], corpus_id)
        assert rows[ident]["publication_date"] == "2021-03"
        assert rows[ident]["license"] == "unknown"
        assert rows[ident]["license_text"].startswith("© Springer Nature")


def opus_world(base: str) -> tuple[World, dict[str, str]]:
    recs = [copy.deepcopy(r) for r in records_of(
        "xMetaDissPlus_opus4-demo-zib_ListRecords_2012-06-22_two_theses_de-en.xml")]
    recs += [copy.deepcopy(r) for r in records_of(
        "xMetaDissPlus_opus4-demo-zib_ListRecords_2012-06-20_page2_last.xml")[:2]]
    for r in recs:
        move_links(r, base)
    world = World(recs, split=2)
    dcterms = "http://purl.org/dc/terms/"
    ddb = "http://www.d-nb.de/standards/ddb/"

    def put_abstracts(m: etree._Element, abstracts: dict[str, str]) -> None:
        root = m[0]
        for d in root.findall(f"{{{dcterms}}}abstract"):
            root.remove(d)
        three = {"fr": "fre", "en": "eng"}
        for lang, text in abstracts.items():
            etree.SubElement(root, f"{{{dcterms}}}abstract", {"lang": three[lang]}).text = text

    def put_link(rec: etree._Element, url: str) -> None:
        transfer = rec.find(f".//{{{ddb}}}transfer")
        if transfer is None:
            root = rec.find(f"{{{OAI}}}metadata")[0]
            transfer = etree.SubElement(root, f"{{{ddb}}}transfer")
        transfer.text = url

    keep(world, base, recs[0], "fr_ahrf_censure", put_abstracts, put_link)
    keep(world, base, recs[2], "fr_these_malware_long", put_abstracts, put_link)
    # record 1: a French abstract, but its container serves a zip
    put_abstracts(recs[1].find(f"{{{OAI}}}metadata"), corpus_entry("fr_these_mucoviscidose")[
        "abstracts"])
    put_link(recs[1], base + "/files/container.zip")
    world.pages["/files/container.zip"] = Reply(200, b"PK\x03\x04" + b"\x00" * 200,
                                                {"Content-Type": "application/zip"})
    return world, {ids(world)[0]: "fr_ahrf_censure", ids(world)[2]: "fr_these_malware_long"}


@pytest.mark.e2e
def test_build_xmetadissplus_fr(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = opus_world(base)
    out = build_oai(fake_server, tmp_path, world, "xMetaDissPlus", ["fr"])
    docs = assert_outcomes(out, set(kept), ids(world))
    assert docs[ids(world)[1]]["class"] == "unavailable"
    rows = dataset_rows(out, tmp_path)
    for ident, corpus_id in kept.items():
        assert_cut(rows[ident], corpus_id)
        assert rows[ident]["language"] == "fr"
    # 155 states its licence in free text (kept as the words given); 116 states none
    first, second = (rows[i] for i in kept)
    assert (first["license"], first["license_text"]) == ("unknown",
                                                         "Creative Commons - Namensnennung")
    assert (second["license"], second["license_text"]) == ("unknown", None)
    # dcterms:issued, not dateAccepted
    assert (first["publication_date"], second["publication_date"]) == ("2012-06-22",
                                                                       "2010-04-19")


def dim_world(base: str) -> tuple[World, dict[str, str]]:
    recs = [copy.deepcopy(r) for r in etree.fromstring(fixture(
        "dim_whoas-dspace_5_records_harvested_by_transmogrifier.xml")).iter(f"{{{OAI}}}record")]
    for r in recs:
        move_links(r, base)
    world = World(recs, split=3)
    dim_ns = "http://www.dspace.org/xmlns/dspace/dim"

    def fields(m: etree._Element, element: str, qualifier: str) -> list[etree._Element]:
        return [f for f in m.iter(f"{{{dim_ns}}}field") if f.get("element") == element
                and f.get("qualifier") == qualifier]

    def put_abstracts(m: etree._Element, abstracts: dict[str, str]) -> None:
        root = m[0]
        for f in fields(root, "description", "abstract"):
            root.remove(f)
        for lang, text in abstracts.items():
            etree.SubElement(root, f"{{{dim_ns}}}field", mdschema="dc", element="description",
                             qualifier="abstract", lang=lang).text = text

    def put_link(rec: etree._Element, url: str) -> None:
        found = fields(rec, "identifier", "uri")
        if not found:
            found = [etree.SubElement(rec.find(f"{{{OAI}}}metadata")[0], f"{{{dim_ns}}}field",
                                      mdschema="dc", element="identifier", qualifier="uri")]
        found[0].text = url

    keep(world, base, recs[1], "en_ieee_reqprio", put_abstracts, put_link, via_landing=True)
    # the handle itself serves the PDF (no .pdf in its URL, no landing page)
    keep(world, base, recs[4], "en_arxiv_beyond_summ", put_abstracts, put_link,
         path="/files/handle/1912/9999")
    return world, {ids(world)[1]: "en_ieee_reqprio", ids(world)[4]: "en_arxiv_beyond_summ"}


@pytest.mark.e2e
def test_build_dim_en_through_a_landing_page_and_a_handle_serving_the_pdf(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = dim_world(base)
    out = build_oai(fake_server, tmp_path, world, "dim", ["en"])
    docs = assert_outcomes(out, set(kept), ids(world))
    rows = dataset_rows(out, tmp_path)
    for ident, corpus_id in kept.items():
        assert_cut(rows[ident], corpus_id)
    assert rows[ids(world)[1]]["article_pdf_url"].endswith("/files/en_ieee_reqprio.pdf")
    assert rows[ids(world)[4]]["article_pdf_url"].endswith("/files/handle/1912/9999")
    issued = {i: FORMATS["dim"](r.find(f"{{{OAI}}}metadata")[0]).dates[0]
              for i, r in zip(ids(world), world.records)}
    for ident in kept:
        assert rows[ident]["publication_date"] == issued[ident]
    # the others: their handles moved to the server answer 404 (no landing page)
    assert {docs[i]["class"] for i in ids(world) if i not in kept} <= {"unavailable"}


# --- faults ------------------------------------------------------------------------------------
@pytest.mark.e2e
def test_bad_token_restarts_the_window_and_a_broken_record_is_one_record(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = rcaap_world(base)
    world.token_faults = [Reply(422, fixture("oai_dc_zenodo_error_badResumptionToken_http422"
                                             ".xml"), XML)]
    # the first record of the second page (a kept one) has its XML broken (a tag misspelt)
    good_second = world.second()
    assert b"</dc:title>" in good_second
    broken = good_second.replace(b"</dc:title>", b"</dc:titel>", 1)
    world.second = lambda: broken  # type: ignore[method-assign]
    broken_id = ids(world)[3]
    assert broken_id in kept
    out = build_oai(fake_server, tmp_path, world, "oai_dc", ["pt"])
    first_requests = [r for r in world.requests if "resumptionToken" not in r.query]
    assert len(first_requests) == 2  # the window restarted once, its records skipped
    docs = assert_outcomes(out, set(kept) - {broken_id}, ids(world))
    assert docs[broken_id]["class"] == "bad_metadata"
    assert "does not parse" in docs[broken_id]["message"]
    # the rest of its page went on: the records after it have their own classes
    assert all(docs[i].get("class") != "bad_metadata" for i in ids(world)[4:])


@pytest.mark.e2e
def test_no_records_match_behind_422_is_an_empty_harvest(fake_server, tmp_path):
    world = World([], split=0)
    world.first_faults = [Reply(422, fixture("oai_dc_zenodo_error_noRecordsMatch_http422.xml"),
                                XML)]
    world.serve(fake_server)
    out = tmp_path / "empty"
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"])
    proc = loralay("fetch", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


@pytest.mark.e2e
def test_no_records_match_on_a_token_ends_the_list(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = rcaap_world(base)
    world.token_faults = [Reply(200, fixture(
        "oai_dc_mla-humcore_error_noRecordsMatch_on_resumptionToken.xml"), XML)]
    world.serve(fake_server)
    out = tmp_path / "mla"
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"])
    proc = loralay("fetch", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = fetched_ids(out)
    assert got == set(ids(world)[:3])


def _fetched(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as con:
            return con.execute("SELECT COUNT(*) FROM results WHERE stage='fetch'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _rows_without_time(out: Path) -> list[dict]:
    import pyarrow.parquet as pq

    rows = []
    for f in sorted((out / "data").glob("*.parquet")):
        for r in pq.read_table(f).to_pylist():
            r.pop("retrieved_at", None)
            rows.append(r)
    return sorted(rows, key=lambda r: r["article_id"])


@pytest.mark.e2e
def test_a_kill_after_the_first_page_and_the_same_command_give_the_same_dataset(
        fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = rcaap_world(base)
    world.token_faults = [Reply(200, b"", XML, delay=30)]  # the second page hangs: kill then
    world.serve(fake_server)
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"], timeout_s=60)
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "loralay_build.cli", "build", "--source", "oai", "--config",
           str(cfg), "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    db = out / "state" / "fetch.sqlite"
    deadline = time.monotonic() + 120
    while not any("resumptionToken" in r.query for r in world.requests) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _fetched(db) == 3
    with sqlite3.connect(db) as con:
        saved = json.loads(con.execute("SELECT value FROM checkpoints WHERE name='oai.position'")
                           .fetchone()[0])
    assert json.loads(saved["position"]) == {"window": 0, "token": "tok-2"}
    before = len(world.requests)
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"])
    again = loralay("build", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumptionToken" in world.requests[before].query  # resumed at its page
    whole = World(world.records, world.split, world.pdfs, world.pages)
    fake_server.add_handler("/oai", whole.oai)
    ref = tmp_path / "whole"
    proc = loralay("build", "--source", "oai", "--config", str(cfg), "--out", str(ref))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _rows_without_time(out) == _rows_without_time(ref)
    report, ref_report = (json.loads((o / "report.json").read_text()) for o in (out, ref))
    for r in (report, ref_report):
        r.pop("run")  # the tool versions and the build's time
    assert report == ref_report
    assert {i for i, o in report["documents"].items() if o["status"] == "kept"} == set(kept)


@pytest.mark.e2e
def test_high_water_mark_is_the_newest_datestamp(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, _ = rcaap_world(base)
    world.serve(fake_server)
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"])
    out = tmp_path / "hw"
    proc = loralay("fetch", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    stamps = [r.find(f"{{{OAI}}}header/{{{OAI}}}datestamp").text for r in world.records]
    with sqlite3.connect(out / "state" / "fetch.sqlite") as con:
        hw = json.loads(con.execute("SELECT value FROM checkpoints WHERE name='oai.high_water'")
                        .fetchone()[0])
    assert hw == max(stamps)


def test_to_candidate_of_a_record_without_a_wanted_abstract_is_wrong_language():
    rec = records_of("oai_dc_hal_GetRecord_hal-00830421.xml")[0]
    s = load_settings("oai", overrides={"base_url": "http://h/oai", "languages": ["fr"]})
    got = to_candidate(OaiRecord(rec, _record(rec).header), s, dt.date(2026, 1, 1), None)
    assert got.cls == "wrong_language" and "found: en" in got.message


def test_from_and_until_are_read_from_a_config_file_as_yaml_writes_them(tmp_path):
    cfg = tmp_path / "oai.yaml"
    cfg.write_text("base_url: http://127.0.0.1:9/oai\nfrom: 2020-01-01\nuntil: '2020-02-01'\n"
                   "languages: [pt, en]\ncontact: loralay-tests@example.org\n")
    s = load_settings("oai", cfg)
    assert (s.from_date, s.until_date, s.languages) == ("2020-01-01", "2020-02-01", ["pt", "en"])


@pytest.mark.e2e
def test_an_unreachable_landing_page_is_tried_again_by_the_next_run(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = dim_world(base)
    landing = "/landing/en_ieee_reqprio"
    good = world.pages[landing]
    world.pages[landing] = Reply(503, b"busy", {"Content-Type": "text/plain"})
    out = build_oai(fake_server, tmp_path, world, "dim", ["en"])
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert docs[ids(world)[1]]["class"] == "unreachable"
    world.pages[landing] = good
    out = build_oai(fake_server, tmp_path, world, "dim", ["en"])
    assert_outcomes(out, set(kept), ids(world))


@pytest.mark.e2e
def test_date_windows_are_asked_in_turn_with_set_from_and_until(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, _ = rcaap_world(base)
    world.serve(fake_server)
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"], set="openaire",
                       **{"from": "2015-12-26", "until": "2015-12-28"}, window_days=2)
    out = tmp_path / "windows"
    proc = loralay("fetch", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    asked = [(r.query.get("from"), r.query.get("until"), r.query.get("set"),
              r.query.get("resumptionToken")) for r in world.requests]
    assert asked == [(["2015-12-26"], ["2015-12-27"], ["openaire"], None),
                     (None, None, None, ["tok-2"]),
                     (["2015-12-28"], ["2015-12-28"], ["openaire"], None),
                     (None, None, None, ["tok-2"])]
    with sqlite3.connect(out / "state" / "fetch.sqlite") as con:
        n = con.execute("SELECT COUNT(*) FROM results WHERE stage='fetch'").fetchone()[0]
    assert n == len(world.records)  # the second window's same records: skipped, not doubled


@pytest.mark.e2e
def test_deleted_records_are_skipped(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, _ = rcaap_world(base)
    gone = etree.Element(f"{{{OAI}}}record", nsmap={None: OAI})
    head = etree.SubElement(gone, f"{{{OAI}}}header", status="deleted")
    etree.SubElement(head, f"{{{OAI}}}identifier").text = "oai:example.org:gone"
    etree.SubElement(head, f"{{{OAI}}}datestamp").text = "2015-12-27"
    world.records.insert(1, gone)
    world.split += 1
    world.serve(fake_server)
    cfg = write_config(tmp_path, fake_server.url("/oai"), "oai_dc", ["pt"])
    out = tmp_path / "deleted"
    proc = loralay("fetch", "--source", "oai", "--config", str(cfg), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = fetched_ids(out)
    assert got == set(ids(world)) - {"oai:example.org:gone"}


def mets_world(base: str) -> tuple[World, dict[str, str]]:
    recs = [copy.deepcopy(r) for r in records_of(
        "mets_mit-dspace_12_records_harvested_by_transmogrifier.xml")[:4]]
    for r in recs:
        move_links(r, base)
    world = World(recs, split=2)
    mods = "http://www.loc.gov/mods/v3"
    mets_ns = "http://www.loc.gov/METS/"
    href = "{http://www.w3.org/1999/xlink}href"

    def put_abstracts(m: etree._Element, abstracts: dict[str, str]) -> None:
        record_mods = next(m.iter(f"{{{mods}}}mods"))
        for d in record_mods.findall(f"{{{mods}}}abstract"):
            record_mods.remove(d)
        for lang, text in abstracts.items():
            etree.SubElement(record_mods, f"{{{mods}}}abstract", lang=lang).text = text

    def put_link(rec: etree._Element, url: str) -> None:
        for grp in rec.iter(f"{{{mets_ns}}}fileGrp"):
            if grp.get("USE") == "ORIGINAL":
                next(grp.iter(f"{{{mets_ns}}}FLocat")).set(href, url)

    keep(world, base, recs[0], "en_hal_reaim", put_abstracts, put_link)
    keep(world, base, recs[3], "en_ieee_reqprio", put_abstracts, put_link)
    return world, {ids(world)[0]: "en_hal_reaim", ids(world)[3]: "en_ieee_reqprio"}


@pytest.mark.e2e
def test_build_mets_mit_en(fake_server, tmp_path):
    base = fake_server.url("").rstrip("/")
    world, kept = mets_world(base)
    out = build_oai(fake_server, tmp_path, world, "mets", ["en"])
    docs = assert_outcomes(out, set(kept), ids(world))
    rows = dataset_rows(out, tmp_path)
    for ident, corpus_id in kept.items():
        assert_cut(rows[ident], corpus_id)
        assert rows[ident]["article_pdf_url"].endswith(f"/files/{corpus_id}.pdf")
    # the others: their ORIGINAL PDFs, moved to the server, answer 404
    assert {docs[i]["class"] for i in ids(world) if i not in kept} <= {"unavailable"}
    assert rows[ids(world)[0]]["publication_date"] == "2022-06-08"


# --- the summary is the abstract in the paper's own language (issue 41 item 4) -------------
ENG_SPA_RECORD = f"""<record xmlns="{OAI}"><header><identifier>oai:test:eng-spa</identifier>
<datestamp>2024-01-02</datestamp></header><metadata>
<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="{DC}">
<dc:title>Soil moisture under olive groves in southern Spain</dc:title>
<dc:language>eng</dc:language>
<dc:description xml:lang="spa">Medimos la humedad del suelo bajo olivares del sur de España
durante tres años y comparamos el riego por goteo con el secano en doce parcelas de ensayo
repartidas por la provincia.</dc:description>
<dc:description xml:lang="eng">We measured soil moisture under olive groves in southern
Spain for three years and compared drip irrigation with rain-fed plots on twelve trial plots
spread over the province.</dc:description>
<dc:identifier>http://127.0.0.1:9/files/eng-spa.pdf</dc:identifier>
</oai_dc:dc></metadata></record>"""


def eng_spa_candidate(languages: list[str]):
    rec = etree.fromstring(ENG_SPA_RECORD)
    s = load_settings("oai", overrides={"base_url": "http://h/oai", "languages": languages})
    return to_candidate(OaiRecord(rec, _record(rec).header), s, dt.date(2026, 1, 1), None)


@pytest.mark.parametrize("languages", [["es", "en"], ["en", "es"]])
def test_the_summary_is_the_abstract_in_the_records_language_whatever_the_order(languages):
    """dc:language eng, an English title, spa and eng descriptions: the paper is English,
    its English abstract the summary; `languages` only decides it is kept."""
    got = eng_spa_candidate(languages)
    assert got.language == "en" and next(iter(got.abstracts)) == "en"
    assert got.abstracts["en"].startswith("We measured") and set(got.abstracts) == {"en", "es"}
    assert got.languages == tuple(languages)


def test_a_record_stating_a_language_not_kept_is_fetched_for_its_body_to_decide():
    """A repository's label can be wrong (the OpenAIRE sample below states eng for a
    Spanish paper): the record's language is the candidate's, the body step drops it
    unless the body is Spanish (tests/test_steps.py)."""
    got = eng_spa_candidate(["es"])
    assert got.language == "en" and got.languages == ("es",)
    none_kept = eng_spa_candidate(["fr"])
    assert none_kept.cls == "wrong_language"
    assert none_kept.message == "record has no abstract in fr (found: en, es)"


def test_a_record_stating_no_language_keeps_its_first_kept_abstract_until_the_body_says():
    """Without a stated language the record's own order (never `languages`'s) picks the
    abstract the body step then checks (pdf/steps.py)."""
    rec = etree.fromstring(ENG_SPA_RECORD.replace("<dc:language>eng</dc:language>", ""))
    for languages in (["en", "es"], ["es", "en"]):
        s = load_settings("oai", overrides={"base_url": "http://h/oai", "languages": languages})
        got = to_candidate(OaiRecord(rec, _record(rec).header), s, dt.date(2026, 1, 1), None)
        assert got.language == "es"
    s = load_settings("oai", overrides={"base_url": "http://h/oai", "languages": ["en"]})
    got = to_candidate(OaiRecord(rec, _record(rec).header), s, dt.date(2026, 1, 1), None)
    assert got.language == "en"

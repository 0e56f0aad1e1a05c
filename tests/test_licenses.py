"""Licences and provenance (issue 27): the normaliser on real spellings, and every source's
harvest carrying each document's licence, record URL, fetch time and PDF checksum.

Real values (read in place from ../shared, see each folder's PROVENANCE.md): the arXiv
snapshot lines' `license`, the PMC GetRecord's `ali:license_ref` / `pmc-license-ref` /
`license-p` and the `.nxml` files' `<license>`, the SciELO ArticleMeta record's `license`
and issue `v540`, the shared corpus manifest's `license` values. Documented values that
no recording holds are named where they are used (HAL's `licence_s`, the PMC cloud's
`license_code`, ArticleMeta's `license` spellings other than `by-nc`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from lxml import etree

from loralay_build.licenses import (
    ARXIV_DEFAULT,
    KNOWN_IDS,
    OPEN_ADAPTABLE,
    OPEN_COMMERCIAL,
    OPEN_REDISTRIBUTABLE,
    SHORTHANDS,
    UNKNOWN,
    License,
    license_terms,
    normalise_license,
)
from loralay_build.records import Candidate, Rejection
from loralay_build.sources import get_fetcher, jats, record_fetch_item, retrieved_now
from loralay_build.sources.arxiv import bucket_prefix
from loralay_build.sources.hal import search_params
from loralay_build.sources.hal_records import record_url_of, to_candidate
from loralay_build.sources.manifest import read_manifest
from loralay_build.sources.pubmed import choose_license
from loralay_build.store.fetch import FetchState

from .conftest import REPO, harvest_source, shared_path
from .fakeserver import Reply
from .helpers import arxiv as arx
from .helpers import hal as hal
from .helpers import koreascience as kor
from .helpers import pubmed as pmc
from .helpers import scielo as sci

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
CC = "creativecommons.org/licenses"


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def fetched_between(c: Candidate, start: str, end: str) -> bool:
    """`retrieved_at` is a UTC ISO 8601 stamp taken during the harvest."""
    return c.retrieved_at is not None and bool(STAMP.match(c.retrieved_at)) \
        and start <= c.retrieved_at <= end


# --- the normaliser ---------------------------------------------------------------------
WILEY_NC = ("This is an open access article under the terms of the Creative Commons "
            "Attribution-NonCommercial License, which permits use, distribution and "
            "reproduction in any medium, provided the original work is properly cited and is "
            "not used for commercial purposes.")
SPELLINGS = [
    # ids in their common spellings (the manifest's, PMC cloud's, SciELO's, xylose's)
    ("CC-BY-4.0", License("cc-by-4.0")),
    ("CC BY 4.0", License("cc-by-4.0")),
    ("cc_by", License("cc-by")),
    ("CC BY", License("cc-by")),  # PMC's pmc-license-ref and cloud license_code
    ("CC BY-NC", License("cc-by-nc")),
    ("CC BY-NC-ND", License("cc-by-nc-nd")),
    ("CC BY-SA", License("cc-by-sa")),
    ("CC0", License("cc0-1.0")),
    ("CC0 1.0 Universal", License("cc0-1.0")),
    ("by", License("cc-by")),  # SciELO sends `by` alone: no version is invented
    ("by-nc", License("cc-by-nc")),
    ("BY-NC", License("cc-by-nc")),
    ("by-nc-nd", License("cc-by-nc-nd")),
    ("by/4.0", License("cc-by-4.0")),
    ("by-nc/3.0", License("cc-by-nc-3.0")),
    ("by/igo", License("cc-by-3.0-igo")),
    ("by-nc-nd/3.0/igo", License("cc-by-nc-nd-3.0-igo")),
    ("cc-by-nd-nc-1.0", License("cc-by-nc-nd-1.0")),  # CC 1.0's own element order
    ("CC BY-NC-SA 4.0 International", License("cc-by-nc-sa-4.0")),
    ("arxiv-nonexclusive-distrib-1.0", License(ARXIV_DEFAULT)),
    ("Public Domain", License("public-domain")),
    ("unknown", License(UNKNOWN)),
    # licence URLs, kept as given
    (f"http://{CC}/by-nc-nd/3.0/", License("cc-by-nc-nd-3.0", f"http://{CC}/by-nc-nd/3.0/")),
    (f"https://{CC}/by/4.0", License("cc-by-4.0", f"https://{CC}/by/4.0")),
    (f"https://{CC}/by/4.0/legalcode", License("cc-by-4.0", f"https://{CC}/by/4.0/legalcode")),
    (f"http://{CC}/by/3.0/deed.fr", License("cc-by-3.0", f"http://{CC}/by/3.0/deed.fr")),
    (f"http://{CC}/by/3.0/igo/", License("cc-by-3.0-igo", f"http://{CC}/by/3.0/igo/")),
    (f"http://{CC}/by-nc/3.0/br/", License("cc-by-nc-3.0-br", f"http://{CC}/by-nc/3.0/br/")),
    (f"http://{CC}/by/", License("cc-by", f"http://{CC}/by/")),  # HAL's older licence_s
    ("https://creativecommons.org/publicdomain/zero/1.0/",
     License("cc0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/")),
    ("http://creativecommons.org/publicdomain/mark/1.0/",
     License("public-domain", "http://creativecommons.org/publicdomain/mark/1.0/")),
    ("http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
     License(ARXIV_DEFAULT, "http://arxiv.org/licenses/nonexclusive-distrib/1.0/")),
    ("http://arxiv.org/licenses/assumed-1991-2003/",
     License("arxiv-assumed-1991-2003", "http://arxiv.org/licenses/assumed-1991-2003/")),
    ("http://hal.archives-ouvertes.fr/licences/copyright/",
     License("all-rights-reserved", "http://hal.archives-ouvertes.fr/licences/copyright/")),
    ("http://hal.archives-ouvertes.fr/licences/etalab/",
     License("etalab", "http://hal.archives-ouvertes.fr/licences/etalab/")),
    ("http://hal.archives-ouvertes.fr/licences/publicDomain/",
     License("public-domain", "http://hal.archives-ouvertes.fr/licences/publicDomain/")),
    ("https://www.elsevier.com/tdm/userlicense/1.0/",
     License(UNKNOWN, "https://www.elsevier.com/tdm/userlicense/1.0/")),
    # free text: the id when it names one licence, the text always kept
    ("CC BY-NC 4.0 (as stated on the cover page)",
     License("cc-by-nc-4.0", None, "CC BY-NC 4.0 (as stated on the cover page)")),
    ("CC-BY-4.0 (per HAL TEI metadata)",
     License("cc-by-4.0", None, "CC-BY-4.0 (per HAL TEI metadata)")),
    ("Tous droits réservés (as stated on the cover page)",
     License("all-rights-reserved", None, "Tous droits réservés (as stated on the cover page)")),
    ("Creative Commons Attribution-NonCommercial-NoDerivatives 4.0 International",
     License("cc-by-nc-nd-4.0", None,
             "Creative Commons Attribution-NonCommercial-NoDerivatives 4.0 International")),
    (f"Licensed under CC BY 4.0 (https://{CC}/by/4.0/).",
     License("cc-by-4.0", f"https://{CC}/by/4.0/",
             f"Licensed under CC BY 4.0 (https://{CC}/by/4.0/).")),
    # nothing stated, several stated, or something else: unknown, the words kept
    (None, License(UNKNOWN)),
    ("", License(UNKNOWN)),
    ("  ", License(UNKNOWN)),
    ("NO-CC CODE", License(UNKNOWN, None, "NO-CC CODE")),
    ("open-access", License(UNKNOWN, None, "open-access")),
    ("Licencia Creative Commons", License(UNKNOWN, None, "Licencia Creative Commons")),
    ("cc-by-5.0", License(UNKNOWN, None, "cc-by-5.0")),  # no such version
    ("cc-by-nd-sa", License(UNKNOWN, None, "cc-by-nd-sa")),  # no such licence
    ("CC BY 4.0 or CC BY-SA 4.0", License(UNKNOWN, None, "CC BY 4.0 or CC BY-SA 4.0")),
    # a licence named only to deny it (a negation before it, in its clause): unknown
    *[(t, License(UNKNOWN, None, t)) for t in (
        "not licensed under CC BY 4.0",
        "This version is no longer available under CC BY 4.0",
        "This article isn't distributed under the Creative Commons Attribution 4.0 License",
        f"Not under https://{CC}/by/4.0/",
        "Cet article n'est pas sous licence CC BY 4.0",
        "Este artículo no está bajo una licencia CC BY 4.0",
        "Este artigo não está licenciado sob CC BY 4.0",
        "This work is not in the public domain",
        "Not CC BY-NC but CC BY 4.0")],
    # ... but not a negation after the mention, in another clause, or inside a licence name
    ("CC BY-NC 4.0 (non-commercial use only)",
     License("cc-by-nc-4.0", None, "CC BY-NC 4.0 (non-commercial use only)")),
    ("Use is not restricted: CC BY 4.0", License("cc-by-4.0", None,
                                                  "Use is not restricted: CC BY 4.0")),
    ("Licensed under CC BY-NC-ND; no derivatives allowed",
     License("cc-by-nc-nd", None, "Licensed under CC BY-NC-ND; no derivatives allowed")),
    ("Creative Commons Attribution Non-Commercial No Derivatives License 4.0",
     License("cc-by-nc-nd-4.0", None,
             "Creative Commons Attribution Non-Commercial No Derivatives License 4.0")),
    (WILEY_NC, License("cc-by-nc", None, WILEY_NC)),
    # the official French names: "Pas d'Utilisation Commerciale" is NC, not a negation (it
    # was read as plain `cc-by`, a more permissive licence than stated)
    *[(t, License(i, None, t)) for t, i in (
        ("Licence Creative Commons Attribution - Pas d'Utilisation Commerciale - Pas de "
         "Modification 4.0 International", "cc-by-nc-nd-4.0"),
        ("Creative Commons Attribution - Partage dans les Mêmes Conditions 4.0 International",
         "cc-by-sa-4.0"),
        ("Creative Commons Attribution - Pas d’Utilisation Commerciale 3.0 non transposé",
         "cc-by-nc-3.0"))],
    # a JSON list is several statements (a manifest's `license` and `licence`): the one
    # licence each names, else unknown
    ('["CC BY 4.0", "CC0"]', License(UNKNOWN, None, '["CC BY 4.0", "CC0"]')),
    ('["CC BY 4.0", "see the cover page"]',
     License(UNKNOWN, None, '["CC BY 4.0", "see the cover page"]')),
    ('["CC BY 4.0", "cc-by-4.0"]', License("cc-by-4.0", None, '["CC BY 4.0", "cc-by-4.0"]')),
    (f'["https://{CC}/by/4.0/", "CC BY"]',
     License("cc-by-4.0", f"https://{CC}/by/4.0/", f'["https://{CC}/by/4.0/", "CC BY"]')),
]


@pytest.mark.parametrize("value,expected", SPELLINGS, ids=[repr(v)[:40] for v, _ in SPELLINGS])
def test_spellings(value: str | None, expected: License) -> None:
    assert normalise_license(value) == expected


def test_real_values_of_every_recording_and_the_corpus() -> None:
    """Every licence value the recorded responses and the shared corpus hold."""
    snapshot = shared_path(*arx.SNAPSHOT).read_text(encoding="utf-8").splitlines()
    assert {json.loads(x)["license"] for x in snapshot if x.strip()} == \
        {None, "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"}
    record = json.loads(shared_path("fixtures", "scielo",
                                    f"articlemeta_article_scl_{sci.PID}.json").read_text())
    assert normalise_license(record["license"]) == License("cc-by-nc")
    issue_links = {re.search(r'href="([^"]+)"', t["t"]).group(1)
                   for t in record["issue"]["issue"]["v540"]}
    assert issue_links == {"http://creativecommons.org/licenses/by-nc/3.0/"}
    assert normalise_license(issue_links.pop()) == \
        License("cc-by-nc-3.0", "http://creativecommons.org/licenses/by-nc/3.0/")
    assert normalise_license(record["issue"]["issue"]["v541"][0]["_"]) == License("cc-by-nc")

    manifest = [json.loads(x) for x in shared_path("corpus", "manifest.jsonl").read_text()
                .splitlines() if x.strip()]
    got = {m["license"]: normalise_license(m["license"]) for m in manifest}
    assert got == {
        None: License(UNKNOWN),
        "CC-BY-4.0 (per HAL TEI metadata)": License("cc-by-4.0", None,
                                                    "CC-BY-4.0 (per HAL TEI metadata)"),
        "https://creativecommons.org/licenses/by/4.0/":
            License("cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/"),
        "http://creativecommons.org/licenses/by/4.0/":
            License("cc-by-4.0", "http://creativecommons.org/licenses/by/4.0/"),
        "http://creativecommons.org/licenses/by-nc/3.0/":
            License("cc-by-nc-3.0", "http://creativecommons.org/licenses/by-nc/3.0/"),
        "Tous droits réservés (as stated on the cover page)":
            License("all-rights-reserved", None,
                    "Tous droits réservés (as stated on the cover page)"),
    }


def jats_meta(xml: bytes) -> etree._Element:
    meta = jats.article_meta(jats.parse_xml(re.sub(rb"<!DOCTYPE[^>]*>", b"", xml)))
    assert meta is not None
    return meta


def test_jats_license_statements_of_the_recordings() -> None:
    getrecord = jats.license_statements(jats_meta(shared_path(*pmc.GETRECORD).read_bytes()))
    assert [w for w, _ in getrecord] == ["ali:license_ref", "license-p"]
    assert getrecord[0][1] == "https://creativecommons.org/licenses/by/4.0/"
    # the licence text names the article's CC BY 4.0 and the data's CC0: two, so unknown
    text = getrecord[1][1]
    assert "Creative Commons Attribution 4.0 International License" in text
    assert normalise_license(text) == License(UNKNOWN, None, text)
    assert choose_license(getrecord, None, "CC BY") == (
        "https://creativecommons.org/licenses/by/4.0/", "ali:license_ref")

    nxml = jats.license_statements(jats_meta(
        shared_path("fixtures", "pmc", "jats_PMC5828200.nxml").read_bytes()))
    assert nxml[:2] == [("license/@xlink:href", "http://creativecommons.org/licenses/by/3.0/"),
                        ("license/@license-type", "open-access")]
    assert normalise_license("open-access").id == UNKNOWN  # a type, not a licence
    assert choose_license(nxml) == ("http://creativecommons.org/licenses/by/3.0/",
                                    "license/@xlink:href")

    plos = jats.license_statements(jats_meta(shared_path(*pmc.NXML).read_bytes()))
    assert plos == [("license-p", "This is an open-access article distributed under the terms "
                     "of the Creative Commons Attribution License, which permits unrestricted "
                     "use, distribution, and reproduction in any medium, provided the original "
                     "author and source are credited.")]
    assert normalise_license(plos[0][1]) == License("cc-by", None, plos[0][1])
    assert choose_license(plos, "CC BY-NC") == (plos[0][1], "license-p")  # names one: first
    assert choose_license([], "CC BY-NC", "CC BY") == ("CC BY-NC", "cloud:license_code")
    assert choose_license([], None, "CC BY") == ("CC BY", "custom-meta:pmc-license-ref")
    assert choose_license([("license-p", "Reuse as the publisher allows.")], "NO-CC CODE") == (
        "Reuse as the publisher allows.", "license-p")
    assert choose_license([("license/@license-type", "open-access")]) == (None, None)

    scielo = jats.license_statements(jats_meta(
        shared_path("corpus", "meta", "pt_scielo_rsp_hindex.xml").read_bytes()))
    assert scielo[0] == ("license/@xlink:href", "http://creativecommons.org/licenses/by-nc/3.0/")
    assert normalise_license(scielo[-1][1]).id == "cc-by-nc"  # "Attribution Non-Commercial"


def test_every_known_id_reads_back_and_has_a_description() -> None:
    for license_id in KNOWN_IDS:
        assert normalise_license(license_id) == License(license_id), license_id
    descriptions = [license_terms(i).description for i in KNOWN_IDS]
    assert len(set(descriptions)) == len(KNOWN_IDS) and all(descriptions)
    assert license_terms("cc-by-nc-nd-3.0").description == \
        "Creative Commons Attribution-NonCommercial-NoDerivatives 3.0 Unported (CC BY-NC-ND 3.0)"
    assert license_terms("cc-by").description == \
        "Creative Commons Attribution (CC BY), version not stated"
    assert license_terms("cc-by-3.0-igo").description == \
        "Creative Commons Attribution 3.0 IGO (CC BY 3.0 IGO)"
    assert license_terms("not-an-id") == license_terms(UNKNOWN)


def test_redistribution_shorthands() -> None:
    """`open`: anyone may share verbatim copies (every CC licence, CC0, public domain,
    Etalab); `open-commercial` drops NC, `open-adaptable` drops ND. arXiv's licences grant
    arXiv alone: never open."""
    assert set(SHORTHANDS) == {"open", "open-commercial", "open-adaptable"}
    for i in ("cc-by-4.0", "cc-by-nc-nd-3.0", "cc-by-nc", "cc0-1.0", "public-domain",
              "etalab", "cc-by-sa-3.0-igo", "cc-by-nc-3.0-br"):
        assert i in OPEN_REDISTRIBUTABLE, i
    for i in (ARXIV_DEFAULT, "arxiv-assumed-1991-2003", "all-rights-reserved", UNKNOWN,
              "whatever", None):
        assert i not in OPEN_REDISTRIBUTABLE, i
    assert "cc-by-nd-4.0" in OPEN_COMMERCIAL and "cc-by-nc-4.0" not in OPEN_COMMERCIAL
    assert "cc-by-nc-4.0" in OPEN_ADAPTABLE and "cc-by-nd-4.0" not in OPEN_ADAPTABLE
    assert "cc-by-sa" in OPEN_COMMERCIAL and "cc-by-sa" in OPEN_ADAPTABLE
    assert set(OPEN_REDISTRIBUTABLE) == set(KNOWN_IDS) - {
        ARXIV_DEFAULT, "arxiv-assumed-1991-2003", "all-rights-reserved", UNKNOWN}
    assert len(OPEN_REDISTRIBUTABLE) == len(KNOWN_IDS) - 4


def test_candidate_json_round_trip_and_old_json() -> None:
    c = Candidate("x", "hal", "fr", {"fr": "r"}, license=f"http://{CC}/by/",
                  record_url="https://hal.science/hal-1v1", retrieved_at="2026-11-24T09:30:00Z",
                  pdf_sha256="ab" * 32)
    assert Candidate.from_json(json.loads(json.dumps(c.to_json()))) == c
    old = {k: v for k, v in c.to_json().items()
           if k not in ("license", "record_url", "retrieved_at", "pdf_sha256")}
    old["extra"] = {"pdf_sha256": "cd" * 32, "pdf_bytes": 3}  # where a download kept it
    back = Candidate.from_json(old)
    assert (back.license, back.record_url, back.retrieved_at) == (None, None, None)
    assert back.pdf_sha256 == "cd" * 32 and back.extra == {"pdf_bytes": 3}


# --- HAL ------------------------------------------------------------------------------------
# HAL's licence list as its deposit form offers it (the values `licence_s` takes: HAL's
# documented licence URLs; no recorded search response requested `licence_s`)
HAL_LICENCES = ["http://creativecommons.org/licenses/by/",
                "https://creativecommons.org/licenses/by-nc-nd/4.0/",
                "http://hal.archives-ouvertes.fr/licences/copyright/",
                "http://creativecommons.org/publicdomain/zero/1.0/",
                "http://hal.archives-ouvertes.fr/licences/etalab/"]


def test_hal_harvest_reads_licence_s_and_the_record_uri(fake_server, tmp_path):
    """The real 2020 recording (36 records, `uri_s` on portal hosts) with `fileMain_s`
    pointed here and, as in test_hal, the first two given a French abstract. EXTENDED
    here: `licence_s` added in HAL's shape (a licence URL string) to every third record,
    the others left without one as old deposits are."""
    docs = hal.shared_json(hal.ART_2020)["response"]["docs"]
    fr = hal.corpus_entry("fr_ahrf_censure")["abstracts"]["fr"]
    licences: dict[str, str | None] = {}
    for i, doc in enumerate(docs):
        if doc.get("fileMain_s"):
            doc["fileMain_s"] = fake_server.url(urlsplit(doc["fileMain_s"]).path)
        if i < 2:
            doc["fr_abstract_s"] = [fr]
        if i % 3 == 0:
            doc["licence_s"] = HAL_LICENCES[(i // 3) % len(HAL_LICENCES)]
        licences[doc["halId_s"]] = doc.get("licence_s")
    search = hal.PagedSearch(docs, rows=20)
    fake_server.add_handler("/search/", search)
    pdf = hal.corpus_pdf("en_hal_reaim")
    hal.serve_pdfs(fake_server, pdf)
    start = retrieved_now()
    with FetchState(tmp_path / "state.sqlite") as state:
        items = hal.harvest(hal.make_config(tmp_path, fake_server.url("/search/"), rows=20,
                                            fields=["docid", "halId_s", "fr_abstract_s",
                                                    "fileMain_s"]), state, tmp_path)
    end = retrieved_now()

    fl = search.requests[0].query["fl"][0].split(",")
    # asked for even when `fields` leaves them out (the submission date: a refresh's mark)
    assert fl[-3:] == ["uri_s", "licence_s", "submittedDate_tdate"]
    assert len(items) == 36 and sum(isinstance(i, Candidate) for i in items) == 2
    uris = {d["halId_s"]: d["uri_s"] for d in docs}
    for item in items:
        c = item if isinstance(item, Candidate) else item.candidate
        assert c.license == licences[c.id], c.id
        assert c.record_url == uris[c.id] and c.record_url.startswith("https://")
        assert fetched_between(c, start, end)
        assert c.pdf_sha256 == (sha(pdf) if isinstance(item, Candidate) else None)
        assert c.extra.get("license_field") == ("licence_s" if licences[c.id] else None)
    assert [normalise_license(licences[d["halId_s"]]).id for d in docs[:15:3]] == \
        ["cc-by", "cc-by-nc-nd-4.0", "all-rights-reserved", "cc0-1.0", "etalab"]


def test_hal_record_url_without_uri_s_is_the_search_api_record() -> None:
    api = "https://api.archives-ouvertes.fr/search/"
    assert record_url_of({"halId_s": "hal-01", "uri_s": "https://hal.science/hal-01v2"},
                         api) == "https://hal.science/hal-01v2"
    assert record_url_of({"halId_s": "hal-01"}, api) == \
        f"{api}?q=halId_s:%22hal-01%22&wt=json"
    assert record_url_of({"docid": 42}, api) == f"{api}?q=docid:42&wt=json"
    assert record_url_of({}, api) is None and record_url_of({"halId_s": "h"}) is None
    cand = to_candidate({"halId_s": "hal-01", "fr_abstract_s": "Résumé.", "licence_s":
                         ["http://creativecommons.org/licenses/by/"],
                         "files_s": ["https://hal.science/hal-01/file/a.pdf"]},
                        hal.TODAY, retrieved_at="2026-11-24T09:30:00Z", api_url=api)
    assert isinstance(cand, Candidate)
    assert (cand.license, cand.record_url, cand.retrieved_at) == (
        "http://creativecommons.org/licenses/by/", f"{api}?q=halId_s:%22hal-01%22&wt=json",
        "2026-11-24T09:30:00Z")


def test_hal_fl_keeps_user_fields_first(tmp_path) -> None:
    cfg = hal.make_config(tmp_path, "http://127.0.0.1:1/search/")
    fl = dict(search_params(cfg, "*"))["fl"].split(",")
    # uri_s is among the default fields
    assert fl == [*cfg.fields, "licence_s", "submittedDate_tdate"]


# --- PubMed Central ---------------------------------------------------------------------------
def cloud_json(digits: str, version: str, pdf: bytes, license_code: str | None) -> Reply:
    """The cloud metadata JSON in its documented shape (sources.md §3.2: `pmcid`, `version`,
    `is_pmc_openaccess`, `license_code`, `pdf_url`); EXTENDED with `license_code`, which
    no recording holds, spelled as PMC spells it (`CC BY`, `CC BY-NC`)."""
    key = f"PMC{digits}.{version}/PMC{digits}.{version}.pdf"
    body: dict[str, Any] = {"pmcid": f"PMC{digits}", "version": int(version),
                            "is_pmc_openaccess": True,
                            "pdf_url": f"s3://pmc-oa-opendata/{key}?md5="
                                       f"{hashlib.md5(pdf).hexdigest()}"}
    if license_code is not None:
        body["license_code"] = license_code
    return Reply(200, json.dumps(body), {"Content-Type": "application/json"})


def test_pubmed_harvest_reads_the_jats_licence_then_the_cloud(fake_server, tmp_path):
    """Real JATS: the 2026 GetRecord (`ali:license_ref`), PMC5828200 (`xlink:href`),
    PMC3460867 (only `license-p` text); SYNTHETIC: test_pubmed's multi-abstract article
    without `<permissions>`, twice (with and without a cloud `license_code`)."""
    server = pmc.Pmc(fake_server)
    articles = {
        "10858524": (shared_path(*pmc.GETRECORD).read_bytes(), "en_bmc_trauma", "CC BY"),
        "5828200": (pmc.oai_envelope(shared_path("fixtures", "pmc", "jats_PMC5828200.nxml")
                                     .read_bytes(), "5828200"), "en_acl_s2orc", "CC BY"),
        "3460867": (pmc.oai_envelope(shared_path(*pmc.NXML).read_bytes(), "3460867"),
                    "en_ieee_reqprio", "CC BY"),
        "42": (pmc.oai_envelope(pmc.SYNTHETIC_MULTI.encode(), "42"), "en_truncated_jcap",
               "CC BY-NC"),
        "43": (pmc.oai_envelope(pmc.SYNTHETIC_MULTI.replace("PMC42.3", "PMC43.1").encode(),
                                "43"), "en_arxiv_beyond_summ", None),
    }
    pdfs = {}
    for digits, (record, pdf_name, code) in articles.items():
        version = "3" if digits == "42" else "1"
        pdfs[digits] = pmc.corpus_pdf(pdf_name)
        server.article(digits, record, pdfs[digits], version)
        server.metadata[f"/cloud/metadata/PMC{digits}.{version}.json"] = [
            cloud_json(digits, version, pdfs[digits], code)]
    ids = arx.write_cohan(tmp_path / "ids", {"train": [f"PMC{d}" for d in articles]})
    cfg_path = tmp_path / "pubmed-test.yaml"
    cfg_path.write_text(json.dumps({
        "ids_dir": str(ids), "oai_url": fake_server.url("/oai"),
        "pdf_metadata_url": fake_server.url("/cloud/metadata/{pmcid_ver}.json"),
        "s3_https_url": fake_server.url("/s3/{bucket}"), "email": "team@example.org",
        **pmc.FAST}), encoding="utf-8")
    from loralay_build.conf import load_settings

    start = retrieved_now()
    items = pmc.harvest(load_settings("pubmed", cfg_path), tmp_path / "state.sqlite",
                        tmp_path / "out")
    end = retrieved_now()
    got = {i.id: i for i in items}
    assert all(isinstance(i, Candidate) for i in items) and len(got) == 5
    plos_text = jats.license_statements(jats_meta(shared_path(*pmc.NXML).read_bytes()))[0][1]
    expected = {  # id: (license as stated, where, normalised id)
        "PMC10858524": ("https://creativecommons.org/licenses/by/4.0/", "ali:license_ref",
                        "cc-by-4.0"),
        "PMC5828200": ("http://creativecommons.org/licenses/by/3.0/", "license/@xlink:href",
                       "cc-by-3.0"),
        "PMC3460867": (plos_text, "license-p", "cc-by"),
        "PMC42": ("CC BY-NC", "cloud:license_code", "cc-by-nc"),
        "PMC43": (None, None, UNKNOWN),
    }
    for pmcid, (licence, where, license_id) in expected.items():
        c = got[pmcid]
        assert (c.license, c.extra.get("license_field")) == (licence, where), pmcid
        assert normalise_license(c.license).id == license_id
        digits = pmcid[3:]
        assert c.record_url == (f"{fake_server.url('/oai')}?verb=GetRecord&identifier=oai:"
                                f"pubmedcentral.nih.gov:{digits}&metadataPrefix=pmc_fm")
        assert "email" not in c.record_url and "tool" not in c.record_url
        assert fetched_between(c, start, end)
        assert c.pdf_sha256 == sha(pdfs[digits]) == sha(Path(c.pdf_path).read_bytes())
    assert got["PMC10858524"].extra["license_code"] == "CC BY"  # read, kept, not chosen
    assert "license_code" not in got["PMC43"].extra


# --- arXiv ------------------------------------------------------------------------------------
def test_arxiv_harvest_reads_the_snapshot_license(fake_server, tmp_path):
    """All eight real snapshot lines (two with arXiv's licence URL, six null) and the
    synthetic old-style line of test_arxiv (no `license` key at all)."""
    lines = list(arx.snapshot_lines().values()) + [arx.synthetic_old_style_line()]
    metadata = tmp_path / "snapshot.jsonl"
    metadata.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    keys = [x["id"].replace("/", "") for x in lines]
    ids = arx.write_cohan(tmp_path / "ids", {"train": keys})
    pdf = arx.corpus_pdf("en_arxiv_beyond_summ")
    objects = {f"{bucket_prefix(k)}1.pdf": pdf for k in keys}
    arx.Bucket(fake_server, objects)
    cfg = arx.make_config(tmp_path, fake_server, ids, metadata)
    start = retrieved_now()
    with FetchState(tmp_path / "state.sqlite") as state:
        items = harvest_source("arxiv", cfg, state, tmp_path / "out")
    end = retrieved_now()
    got = {i.id: i for i in items}
    assert all(isinstance(i, Candidate) for i in items) and len(got) == 9
    stated = {"0704.0002", "0704.0008"}
    for key, c in got.items():
        abs_id = "hep-th/9608091" if key == "hep-th9608091" else key
        assert c.record_url == f"https://arxiv.org/abs/{abs_id}"
        assert fetched_between(c, start, end) and c.pdf_sha256 == sha(pdf)
        assert c.extra["license_field"] == "license" and "license" not in c.extra
        if key in stated:
            assert c.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
            assert "license_note" not in c.extra
        else:  # null: arXiv's default licence, said so
            assert c.license == ARXIV_DEFAULT == "arxiv-nonexclusive-distrib-1.0"
            assert c.extra["license_note"].startswith("the snapshot's license is null")
        assert normalise_license(c.license).id == ARXIV_DEFAULT
        assert normalise_license(c.license).id not in OPEN_REDISTRIBUTABLE


# --- SciELO ------------------------------------------------------------------------------------
@pytest.mark.e2e
def test_scielo_harvest_reads_articlemeta_license(tmp_path, fake_server):
    """The real ArticleMeta record (`license`: `by-nc`) and variants of it. EXTENDED: the
    other spellings ArticleMeta's `license` takes (`by/igo`, `by/4.0`, xylose's tests and
    the issue), a record without `license` whose article `v540` holds the licence link
    (the HTML shape of the recording's issue `v540`), and one with neither."""
    base = sci._record()
    v540 = [{"l": "en", "t": '<a rel="license" href="http://creativecommons.org/licenses/by/'
                             '4.0/"><img alt="Creative Commons License" /></a> This work is '
                             "licensed under a Creative Commons Attribution 4.0 License"}]
    recs: dict[str, dict] = {sci.PID: sci._variant(base, sci.PID, "pt",
                                                   fake_server.url(f"/pdf/{sci.PID}.pdf"))}
    for pid, licence in (("IGO", "by/igo"), ("V4", "by/4.0"), ("V540", None), ("NONE", None)):
        rec = sci._variant(base, pid, "pt", fake_server.url(f"/pdf/{pid}.pdf"))
        if licence is None:
            del rec["license"]
        else:
            rec["license"] = licence
        if pid == "V540":
            rec["article"]["v540"] = v540
        recs[pid] = rec
    recs["NOPDF"] = sci._variant(base, "NOPDF", "pt", None)  # rejected, candidate kept
    sci._serve(fake_server, recs)
    pdf = sci._pdf("pt_scielo_rsp_hindex")
    fake_server.add_handler("/pdf/*", lambda req: Reply(200, pdf,
                                                        {"Content-Type": "application/pdf"}))
    start = retrieved_now()
    items = {i.id: i for i in sci._run(sci._ctx(tmp_path, fake_server))}
    end = retrieved_now()
    expected = {sci.PID: ("by-nc", "license", "cc-by-nc"),
                "IGO": ("by/igo", "license", "cc-by-3.0-igo"),
                "V4": ("by/4.0", "license", "cc-by-4.0"),
                "V540": ("http://creativecommons.org/licenses/by/4.0/", "article.v540",
                         "cc-by-4.0"),
                "NONE": (None, None, UNKNOWN),
                "NOPDF": ("by-nc", "license", "cc-by-nc")}
    assert set(items) == {f"scl-{p}" for p in expected}
    for pid, (licence, where, license_id) in expected.items():
        item = items[f"scl-{pid}"]
        c = item.candidate if isinstance(item, Rejection) else item
        assert (c.license, c.extra.get("license_field")) == (licence, where), pid
        assert normalise_license(c.license).id == license_id
        assert c.record_url == fake_server.url(
            f"/api/v1/article/?code={pid}&collection=scl&format=json&body=false")
        assert fetched_between(c, start, end)
        assert c.pdf_sha256 == (None if pid == "NOPDF" else sha(pdf))
    assert items["scl-NOPDF"].cls == "unavailable"


# --- KoreaScience ---------------------------------------------------------------------------------
@pytest.mark.e2e
def test_koreascience_harvest_has_provenance_and_no_licence(tmp_path, fake_server):
    """test_koreascience's synthetic pages around real Korean abstracts and PDFs: no
    licence field is known on KoreaScience's pages, so none is stated."""
    tsp, tsp_pdf = kor._paper("ko_hufs_tsp")
    pat, pat_pdf = kor._paper("ko_ssrn_kopdp")
    vote, _ = kor._paper("ko_kiit_voting")
    fake_server.add_handler("/search/advanced.page", lambda req: Reply(
        200, (kor.FIX / f"search_page{req.query['pageNo'][0]}.html").read_bytes(), kor.HTML))
    pages = {"1": ("article.html", tsp, tsp_pdf), "2": ("article_no_pdf.html", vote, None),
             "3": ("article.html", pat, pat_pdf)}
    for n, (template, rec, body) in pages.items():
        doc_id = f"JAKO20151000000000{n}"
        fake_server.add(f"/article/{doc_id}.page", Reply(200, kor._page(
            template, doc_id, rec, f"/article/{doc_id}.pdf" if body else ""), kor.HTML))
        if body:
            fake_server.add(f"/article/{doc_id}.pdf",
                            Reply(200, body, {"Content-Type": "application/pdf"}))
    ctx = kor._ctx(tmp_path, fake_server)
    start = retrieved_now()
    items = []
    for item in get_fetcher("koreascience")(ctx):
        record_fetch_item(ctx.state, item)
        items.append(item)
    end = retrieved_now()
    assert len(items) == 3
    for item in items:
        c = item.candidate if isinstance(item, Rejection) else item
        n = c.id[-1]
        assert c.license is None and normalise_license(c.license) == License(UNKNOWN)
        assert c.record_url == fake_server.url(f"/article/{c.id}.page")
        assert fetched_between(c, start, end)
        assert c.pdf_sha256 == (sha(pages[n][2]) if pages[n][2] else None)
    assert {i.id: type(i) for i in items} == {"JAKO201510000000001": Candidate,
                                              "JAKO201510000000002": Rejection,
                                              "JAKO201510000000003": Candidate}


# --- local manifests -----------------------------------------------------------------------------
def test_manifest_license_is_read_as_written_for_the_shared_corpus() -> None:
    manifest = shared_path("corpus", "manifest.jsonl")
    lines = [json.loads(x) for x in manifest.read_text().splitlines() if x.strip()]
    items = [line.item for line in read_manifest(manifest)]
    assert len(items) == len(lines) == 21
    for c, line in zip(items, lines):
        assert isinstance(c, Candidate) and c.id == line["id"]
        assert c.license == line["license"]
        assert c.extra == ({"license_field": "manifest"} if line["license"] else {})
        assert (c.record_url, c.retrieved_at, c.pdf_sha256) == (None, None, None)
    assert sum(c.license is not None for c in items) == 7


def test_manifest_license_spellings_and_record_url(tmp_path: Path) -> None:
    sample = json.loads((REPO / "data" / "sample" / "manifest.jsonl").read_text()
                        .splitlines()[0])
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes((REPO / "data" / "sample" / sample["file"]).read_bytes())
    base = {k: v for k, v in sample.items() if k in ("language", "abstracts", "title")}
    objs = [
        {**base, "id": "a", "file": "a.pdf", "license": "CC BY-NC 4.0 (cover page)",
         "record_url": "https://example.org/record/a"},
        {**base, "id": "b", "file": "a.pdf", "licence": "by/4.0"},
        {**base, "id": "c", "file": "a.pdf", "License": {"id": "CC-BY-4.0"}},
        {**base, "id": "d", "file": "a.pdf", "licenses": "CC0"},  # misspelt: ignored
        {**base, "id": "e", "file": "a.pdf", "license": ""},
        {**base, "id": "f", "file": "a.pdf", "license": 42},
        {**base, "id": "g", "file": "a.pdf", "url": "https://example.org/record/g"},
        {**base, "id": "h", "file": "a.pdf", "record_url": ""},
    ]
    path = tmp_path / "manifest.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    got = {line.item.id: line.item for line in read_manifest(path)}
    licences = {k: v.license for k, v in got.items() if isinstance(v, Candidate)}
    assert licences == {"a": "CC BY-NC 4.0 (cover page)", "b": "by/4.0",
                        "c": '{"id": "CC-BY-4.0"}', "d": None, "e": None, "f": "42"}
    assert [normalise_license(licences[k]).id for k in "abcdef"] == \
        ["cc-by-nc-4.0", "cc-by-4.0", "cc-by-4.0", UNKNOWN, UNKNOWN, UNKNOWN]
    assert got["a"].record_url == "https://example.org/record/a"
    assert got["b"].record_url is None
    assert got["g"].cls == "bad_metadata" and got["g"].message.endswith(
        "key 'url' is not read: did you mean 'pdf_url' or 'record_url'?")
    assert got["h"].cls == "bad_metadata" and "'record_url' must be a non-empty string" in \
        got["h"].message


def test_manifest_license_and_licence_that_differ_are_both_kept_and_neither_taken(
        tmp_path: Path) -> None:
    """Before: `license` was read and a different `licence` on the same line silently
    ignored. Now both are kept (a JSON list), `unknown` unless both name the same licence."""
    sample = json.loads((REPO / "data" / "sample" / "manifest.jsonl").read_text()
                        .splitlines()[0])
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes((REPO / "data" / "sample" / sample["file"]).read_bytes())
    base = {k: v for k, v in sample.items() if k in ("language", "abstracts", "title")}
    objs = [
        {**base, "id": "two", "file": "a.pdf", "license": "CC BY 4.0", "licence": "CC0"},
        {**base, "id": "same", "file": "a.pdf", "license": "CC BY 4.0", "Licence": "CC BY 4.0 "},
        {**base, "id": "spelt", "file": "a.pdf", "licence": "cc-by-4.0", "LICENSE": "CC BY 4.0"},
        {**base, "id": "none", "file": "a.pdf", "license": "CC BY 4.0", "licence": "cover page"},
    ]
    path = tmp_path / "manifest.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    got = {line.item.id: line.item.license for line in read_manifest(path)}
    assert got == {"two": '["CC BY 4.0", "CC0"]', "same": "CC BY 4.0",
                   "spelt": '["CC BY 4.0", "cc-by-4.0"]',
                   "none": '["CC BY 4.0", "cover page"]'}
    assert {k: normalise_license(v) for k, v in got.items()} == {
        "two": License(UNKNOWN, None, '["CC BY 4.0", "CC0"]'),
        "same": License("cc-by-4.0"),
        "spelt": License("cc-by-4.0", None, '["CC BY 4.0", "cc-by-4.0"]'),
        "none": License(UNKNOWN, None, '["CC BY 4.0", "cover page"]')}


def test_the_licence_rule_is_in_the_fingerprinted_tool_version() -> None:
    """A result holds the licence id (the allow-list and the report read it): a rule that
    reads a text anew ("not licensed under CC BY 4.0": now unknown) must redo the results
    of an earlier run, as the Parquet column, normalised when written, would disagree."""
    from loralay_build.licenses import LICENSE_RULE
    from loralay_build.pdf.preflight import tool_versions

    assert f"+{LICENSE_RULE}" in tool_versions().loralay_build


def test_a_local_licence_outside_the_list_is_decided_before_its_pdf_is_read(tmp_path: Path
                                                                             ) -> None:
    """The manifest states the licence, so `licenses:` decides before extraction: a
    corrupted PDF under a licence left out is `license_excluded` (stage `licenses`), never
    `corrupted`, and its PDF is not read (no log line of the extractor). A rerun with a
    wider list reads it (the same outcome as a fresh build of that list)."""
    from .conftest import build_local, config

    pdf = REPO / "data" / "sample" / "pdf"
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("".join(json.dumps(line) + "\n" for line in (
        {"id": "good", "file": str(pdf / "en_twocol_graphs.pdf"), "language": "en",
         "abstracts": {"en": "x"}, "license": "cc-by-4.0"},
        {"id": "closed", "file": str(pdf / "en_corrupted_sensors.pdf"), "language": "en",
         "abstracts": {"en": "y"}, "license": "All rights reserved"})))
    out = tmp_path / "out"

    def built(*allow: str) -> tuple[dict[str, Any], str]:
        done = build_local(manifest, out, "--config", str(config(tmp_path, licenses=allow)))
        assert done.returncode == 0, done.stderr
        return json.loads((out / "report.json").read_text()), done.stderr

    report, log = built("cc-by-4.0")
    assert report["documents"]["closed"] == {
        "status": "dropped", "class": "license_excluded", "stage": "licenses",
        "message": "licence all-rights-reserved is not in licenses: cc-by-4.0"}
    assert report["documents"]["good"]["status"] == "kept"
    assert "corrupted" not in log and "Poppler cannot open" not in log
    assert [(f["stage"], f["count"]) for f in report["funnel"]][:3] == [
        ("proposed", 2), ("fetched", 1), ("processed", 1)]

    wider, _ = built("cc-by-4.0", "all-rights-reserved")
    assert wider["documents"]["closed"]["class"] == "corrupted"
    again, _ = built("cc-by-4.0")
    assert again["documents"] == report["documents"]


def test_a_local_refresh_with_a_narrower_list_keeps_its_old_rows_and_misses_none(
        tmp_path: Path) -> None:
    """A refresh never drops an old document (docs/reruns.md): a kept paper whose licence a
    narrower `licenses:` leaves out stays kept, and is not "missing upstream" (its line is
    still in the manifest); a new line under that licence is `license_excluded` unread."""
    from .conftest import build_local, config

    pdf = REPO / "data" / "sample" / "pdf"
    lines = {json.loads(x)["id"]: json.loads(x) for x in
             (REPO / "data" / "sample" / "manifest.jsonl").read_text().splitlines()}

    def line(doc_id: str, license: str, name: str | None = None) -> str:
        entry = {**lines[doc_id], "file": str(pdf / f"{doc_id}.pdf"), "license": license}
        return json.dumps({**entry, "id": name or doc_id}) + "\n"

    manifest = tmp_path / "m.jsonl"
    manifest.write_text(line("en_twocol_graphs", "cc-by-4.0")
                        + line("en_structured_trial", "All rights reserved"))
    out = tmp_path / "out"
    wide = config(tmp_path, licenses=["cc-by-4.0", "all-rights-reserved"])
    build_local(manifest, out, "--config", str(wide), check=True)
    manifest.write_text(manifest.read_text()
                        + line("en_corrupted_sensors", "All rights reserved", "new_closed"))
    narrow = config(tmp_path, licenses=["cc-by-4.0"])
    build_local(manifest, out, "--config", str(narrow), "--refresh", check=True)
    report = json.loads((out / "report.json").read_text())
    assert report["documents"]["en_structured_trial"]["status"] == "kept"
    assert report["documents"]["new_closed"]["class"] == "license_excluded"
    diff = json.loads((out / "diff.json").read_text())
    assert diff["missing_upstream"] == []

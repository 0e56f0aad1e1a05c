"""One small parser per OAI-PMH metadata format, each mapping a record's metadata element to
the same typed `Fields` (no I/O here: every rule is testable on the recorded fixtures).

Elements are matched by namespace and local name (`{ns}name`), never by prefix: several
repositories declare the format's namespace as the default one. docs/oai.md has the table of
where each field sits; PROVENANCE.md of the shared fixtures says which quirks each has.

What is not an abstract, whatever element holds it: a MIME type filed as a description
(U-Tokyo's jpcoar), "International audience" (HAL), a citation string (LibreCat's first
`dc:description`), a DSpace provenance note, anything shorter than `MIN_ABSTRACT_WORDS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lxml import etree

from ..langcodes import to_iso639_1

DC = "http://purl.org/dc/elements/1.1/"
DCTERMS = "http://purl.org/dc/terms/"
OAIRE = "http://namespace.openaire.eu/schema/oaire/"
DATACITE = "http://datacite.org/schema/kernel-4"
DDB = "http://www.d-nb.de/standards/ddb/"
DIM = "http://www.dspace.org/xmlns/dspace/dim"
METS = "http://www.loc.gov/METS/"
MODS = "http://www.loc.gov/mods/v3"
XLINK = "http://www.w3.org/1999/xlink"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
JPCOAR_NS = ("https://github.com/JPCOAR/schema/blob/master/1.0/",
             "https://github.com/JPCOAR/schema/blob/master/2.0/")
DATACITE_NS = (DATACITE, "https://schema.datacite.org/meta/kernel-4/")

MIN_ABSTRACT_WORDS = 20
_MIME = re.compile(r"^[a-z]+/[\w.+-]+$")
_URL = re.compile(r"^https?://\S+$")
_CITATION = re.compile(r"&lt;em&gt;|<em>|\(\d{4}\)\s*[.,:]|\bIn:\s|\bVol\.\s*\d|\bpp\.\s*\d")
_NOT_ABSTRACT_START = ("international audience", "submitted by", "made available in dspace",
                       "approved for entry", "previous issue date")
_ACCESS_TERM = re.compile(r"^(info:eu-repo/semantics/\w+|https?://purl\.org/coar/access_right/"
                          r"\w+|(open|closed|restricted|embargoed|metadata.only)\s*access)$",
                          re.IGNORECASE)


@dataclass
class Abstract:
    text: str
    label: str | None  # the language as the record labels it (None: unlabelled)

    @property
    def language(self) -> str | None:
        return to_iso639_1(self.label) if self.label else None


@dataclass
class Fields:
    """What every format gives a record, in the order of trust within each list."""

    title: str | None = None
    abstracts: list[Abstract] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)  # issue dates first
    languages: list[str] = field(default_factory=list)  # the record's, as labelled
    rights: list[str] = field(default_factory=list)  # licence statements, access terms
    pdf_urls: list[str] = field(default_factory=list)  # links the format gives to the file
    landing_urls: list[str] = field(default_factory=list)  # the record's pages

    def record_languages(self) -> list[str]:
        out: list[str] = []
        for label in self.languages:
            for part in label.replace(",", " ").split():
                code = to_iso639_1(part)
                if code and code not in out:
                    out.append(code)
        return out


def text_of(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


def is_abstract(text: str) -> bool:
    """A description that reads as an abstract (see the module's list of what is not)."""
    if not text or _MIME.match(text) or _URL.match(text):
        return False
    if text.lower().startswith(_NOT_ABSTRACT_START):
        return False
    if len(text.split()) < MIN_ABSTRACT_WORDS:
        return False
    head = text[:400]
    return not (_CITATION.search(head) and len(text.split()) < 80)


def is_access_term(value: str) -> bool:
    return bool(_ACCESS_TERM.match(value.strip()))


def _lang(el: etree._Element) -> str | None:
    value = el.get(XML_LANG) or el.get("lang")
    if value and value.strip() and value.strip() not in ("*", "none"):
        return value.strip()
    return None


def _all(root: etree._Element, ns: str | Iterable[str], name: str) -> list[etree._Element]:
    spaces = (ns,) if isinstance(ns, str) else tuple(ns)
    return [el for space in spaces for el in root.iter(f"{{{space}}}{name}")]


def _texts(elements: Iterable[etree._Element]) -> list[str]:
    return [t for t in (text_of(e) for e in elements) if t]


def _abstracts(elements: Iterable[etree._Element]) -> list[Abstract]:
    return [Abstract(text_of(e), _lang(e)) for e in elements if is_abstract(text_of(e))]


def _pdf_like(url: str) -> bool:
    low = url.lower().split("?")[0]
    return low.endswith(".pdf") or "/download/" in low or "/bitstream/" in low \
        or "pdf=render" in url.lower()


# --- the formats ---------------------------------------------------------------------------
def oai_dc(meta: etree._Element) -> Fields:
    """`dc:*`: descriptions unlabelled or `xml:lang`; dates without a time first (DSpace adds
    accession timestamps); a PDF only where an identifier serves one."""
    dates = _texts(_all(meta, DC, "date"))
    identifiers = [t for t in _texts(_all(meta, DC, "identifier")) if _URL.match(t)]
    return Fields(
        title=next(iter(_texts(_all(meta, DC, "title"))), None),
        abstracts=_abstracts(_all(meta, DC, "description")),
        dates=sorted(dates, key=lambda d: ("T" in d, d)),
        languages=_texts(_all(meta, DC, "language")),
        rights=_texts(_all(meta, DC, "rights")),
        pdf_urls=[u for u in identifiers if _pdf_like(u)],
        landing_urls=[u for u in identifiers if not _pdf_like(u)])


def oai_openaire(meta: etree._Element) -> Fields:
    """OpenAIRE v4: `oaire:file[@objectType=fulltext]`, `oaire:licenseCondition/@uri`."""
    dates = _all(meta, DATACITE_NS, "date")
    issued = [text_of(d) for d in dates if d.get("dateType") == "Issued"]
    other = [text_of(d) for d in dates if d.get("dateType") in ("Accepted", "Available")]
    files = [f for f in _all(meta, OAIRE, "file")
             if f.get("objectType", "fulltext") == "fulltext"
             and f.get("mimeType", "application/pdf") == "application/pdf"]
    licences = [e.get("uri") or text_of(e) for e in _all(meta, OAIRE, "licenseCondition")]
    access = [e.get("rightsURI") or text_of(e) for e in _all(meta, DATACITE_NS, "rights")]
    ids = [text_of(e) for e in _all(meta, DATACITE_NS, "identifier")
           if e.get("identifierType") == "URL"]
    return Fields(
        title=next(iter(_texts(_all(meta, DATACITE_NS, "title"))), None),
        abstracts=_abstracts(_all(meta, DC, "description")),
        dates=[d for d in issued + other if d],
        languages=_texts(_all(meta, DC, "language")),
        rights=[v for v in licences + access if v],
        pdf_urls=_texts(files), landing_urls=ids)


def _in_file(el: etree._Element) -> bool:
    """Inside a `jpcoar:file` (its own dates are the file's, not the paper's)."""
    return any(isinstance(a.tag, str) and etree.QName(a).localname == "file"
               for a in el.iterancestors())


def jpcoar(meta: etree._Element) -> Fields:
    """JPCOAR 1.0/2.0: `datacite:description[@descriptionType=Abstract]`, `jpcoar:file/URI`
    (2.0: `@objectType=fulltext`), `datacite:date[@dateType=Issued]` outside the files."""
    files = _all(meta, JPCOAR_NS, "file")
    issued = [text_of(d) for d in _all(meta, DATACITE_NS, "date")
              if d.get("dateType") == "Issued" and not _in_file(d)]
    descs = [d for d in _all(meta, DATACITE_NS, "description")
             if d.get("descriptionType") == "Abstract"]
    pdfs: list[str] = []
    for f in files:
        mime = " ".join(_texts(_all(f, JPCOAR_NS, "mimeType")))
        for uri in _all(f, JPCOAR_NS, "URI"):
            kind = uri.get("objectType")
            if text_of(uri) and kind in (None, "fulltext") and (not mime or "pdf" in mime):
                pdfs.append(text_of(uri))
    rights = [e.get(f"{{{RDF}}}resource") or text_of(e) for e in _all(meta, DC, "rights")]
    access = [e.get(f"{{{RDF}}}resource") or text_of(e)
              for e in _all(meta, DCTERMS, "accessRights")]
    landing = [text_of(e) for e in _all(meta, JPCOAR_NS, "identifier")
               if e.get("identifierType") == "URI"]
    titles = _all(meta, DC, "title")
    return Fields(
        title=next(iter(_texts(titles)), None), abstracts=_abstracts(descs), dates=issued,
        languages=_texts(_all(meta, DC, "language")), rights=[r for r in rights + access if r],
        pdf_urls=pdfs, landing_urls=landing)


def xmetadissplus(meta: etree._Element) -> Fields:
    """xMetaDissPlus (DNB, OPUS): `dcterms:abstract/@lang` in ISO 639-2/B, `ddb:transfer`
    (a container URL: the file itself, or a zip of several), `dcterms:issued`."""
    titles = [t for t in _all(meta, DC, "title") if t.get(f"{{{DDB}}}type") != "translated"]
    dates = _texts(_all(meta, DCTERMS, "issued")) + _texts(_all(meta, DCTERMS, "dateAccepted"))
    transfer = [text_of(e) for e in _all(meta, DDB, "transfer")]
    landing = [text_of(e) for e in _all(meta, DDB, "identifier") if e.get(f"{{{DDB}}}type")
               == "URL"]
    return Fields(
        title=next(iter(_texts(titles or _all(meta, DC, "title"))), None),
        abstracts=_abstracts(_all(meta, DCTERMS, "abstract")), dates=dates,
        languages=_texts(_all(meta, DC, "language")), rights=_texts(_all(meta, DC, "rights")),
        pdf_urls=[u for u in transfer if u], landing_urls=landing)


def _dim(meta: etree._Element, element: str, qualifier: str | None = "",
         schema: str = "dc") -> list[etree._Element]:
    return [f for f in _all(meta, DIM, "field") if f.get("mdschema", "dc") == schema
            and f.get("element") == element
            and (qualifier == "" or f.get("qualifier") == qualifier)]


def dim(meta: etree._Element) -> Fields:
    """DSpace `dim`: `dc.description.abstract` (`@lang` en, en_US or none), `dc.date.issued`
    (never accessioned/available), `dc.rights(.uri)`; dim names no file: `dc.identifier.uri`
    is the landing page (its `citation_pdf_url`)."""
    links = [t for t in _texts(_dim(meta, "identifier", "uri")) if _URL.match(t)]
    return Fields(
        title=next(iter(_texts(_dim(meta, "title", None))), None),
        abstracts=_abstracts(_dim(meta, "description", "abstract")),
        dates=_texts(_dim(meta, "date", "issued")),
        languages=_texts(_dim(meta, "language", "iso")) + _texts(_dim(meta, "language", None)),
        rights=_texts(_dim(meta, "rights", "uri")) + _texts(_dim(meta, "rights", None)),
        pdf_urls=[u for u in links if _pdf_like(u)],
        landing_urls=[u for u in links if not _pdf_like(u)])


def mets(meta: etree._Element) -> Fields:
    """METS with MODS (DSpace, Visual Library): the PDF `FLocat` of the ORIGINAL or DOWNLOAD
    file group."""
    pdfs = []
    for grp in _all(meta, METS, "fileGrp"):
        if grp.get("USE") not in ("ORIGINAL", "DOWNLOAD", "CONTENT"):
            continue
        for f in grp.iter(f"{{{METS}}}file"):
            if f.get("MIMETYPE", "application/pdf") != "application/pdf":
                continue
            pdfs += [loc.get(f"{{{XLINK}}}href") or "" for loc in f.iter(f"{{{METS}}}FLocat")]
    issued = _all(meta, MODS, "dateIssued")
    dates = [text_of(d) for d in issued if d.get("encoding") == "iso8601" or d.get("keyDate")]
    landing = [text_of(e) for e in _all(meta, MODS, "identifier") if e.get("type") == "uri"]
    return Fields(
        title=next(iter(_texts(_all(meta, MODS, "title"))), None),
        abstracts=_abstracts(_all(meta, MODS, "abstract")),
        dates=dates + [text_of(d) for d in issued],
        languages=_texts(_all(meta, MODS, "languageTerm")),
        rights=_texts(_all(meta, MODS, "accessCondition")),
        pdf_urls=[p for p in pdfs if p], landing_urls=landing)


def datacite(meta: etree._Element) -> Fields:
    """DataCite kernel 4 (`oai_datacite`, Zenodo's `datacite`): `description
    [@descriptionType=Abstract]` (`Other`, `Methods`, ... are not abstracts); the `Issued`
    date, else `publicationYear`; `rights/@rightsIdentifier` (SPDX) or `@rightsURI`; no
    file link in the format: the DOI's landing page (`citation_pdf_url`) or a URL
    identifier gives the PDF."""
    issued = [text_of(d) for d in _all(meta, DATACITE_NS, "date")
              if d.get("dateType") == "Issued"]
    years = _texts(_all(meta, DATACITE_NS, "publicationYear"))
    rights = [e.get("rightsIdentifier") or e.get("rightsURI") or text_of(e)
              for e in _all(meta, DATACITE_NS, "rights")]
    landing: list[str] = []
    files: list[str] = []
    for e in _all(meta, DATACITE_NS, "identifier") + _all(meta, DATACITE_NS,
                                                            "alternateIdentifier"):
        kind, value = (e.get("identifierType") or e.get("alternateIdentifierType") or ""), \
            text_of(e)
        if kind.upper() == "DOI" and value:
            landing.append(f"https://doi.org/{value}")
        elif kind.upper() == "URL" and _URL.match(value):
            (files if _pdf_like(value) else landing).append(value)
    return Fields(
        title=next(iter(_texts(_all(meta, DATACITE_NS, "title"))), None),
        abstracts=_abstracts(d for d in _all(meta, DATACITE_NS, "description")
                             if d.get("descriptionType") == "Abstract"),
        dates=[d for d in issued + years if d],
        languages=_texts(_all(meta, DATACITE_NS, "language")),
        rights=[r for r in rights if r], pdf_urls=files, landing_urls=landing)


Parser = Callable[[etree._Element], Fields]
FORMATS: dict[str, Parser] = {
    "oai_dc": oai_dc,
    "oai_openaire": oai_openaire,
    "jpcoar_1.0": jpcoar,
    "jpcoar_2.0": jpcoar,
    "xMetaDissPlus": xmetadissplus,
    "dim": dim,
    "mets": mets,
    "datacite": datacite,
    "oai_datacite": datacite,
}


def parser_for(metadata_prefix: str) -> Parser:
    return FORMATS[metadata_prefix]

"""Every document's licence as one id, from whatever its source's metadata says (issue 27).

`normalise_license(value)` reads a value as a source gives it (an id in one of its common
spellings, a licence URL, or free text) and returns a `License`: a normalised `id`, the
`url` when the value is (or holds) a licence URL, and the free `text` when the value is
neither a bare id nor a URL. It never guesses: a value that names no licence, names two
different ones, or denies the one it names ("not licensed under CC BY 4.0": a negation
before the mention, in its clause) is `unknown` with its text kept. A value that is a JSON
list of strings is several statements (a manifest line's `license` and `licence`): the
licence when each names it, else `unknown`. docs/licenses.md is the user's view.

Ids (lower case, SPDX-like):

- Creative Commons `cc-<family>[-<version>][-<port>]`: family `by`, `by-sa`, `by-nc`,
  `by-nd`, `by-nc-sa`, `by-nc-nd`; version 1.0, 2.0, 2.5, 3.0 or 4.0; port `igo` or a
  two-letter jurisdiction (`cc-by-nc-3.0-br`). A value without a version keeps none
  (`cc-by`, as HAL's `http://creativecommons.org/licenses/by/` and SciELO's `by` say): a
  version is never invented. Two exceptions, where only one version was ever published:
  CC0 is `cc0-1.0`, and an IGO licence is 3.0 (`by/igo` is `cc-by-3.0-igo`).
- `public-domain` (a public domain mark or statement), `all-rights-reserved` (stated so:
  no licence is granted), `etalab` / `etalab-2.0` (Licence Ouverte), arXiv's own
  `arxiv-nonexclusive-distrib-1.0` and `arxiv-assumed-1991-2003`, and `unknown`.

Redistribution (what the `open*` shorthands mean, `LicenseTerms`):

- `OPEN_REDISTRIBUTABLE`: the licence lets anyone share verbatim copies. Every CC licence
  (NC: only non-commercially; ND: only unmodified), CC0, public domain, Etalab. Not
  arXiv's licences (they grant rights to arXiv alone), not all-rights-reserved, not unknown.
- `OPEN_COMMERCIAL`: the above, commercial use included (no NC).
- `OPEN_ADAPTABLE`: the above, adapted versions included (no ND).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

UNKNOWN = "unknown"
# in the tool version the run state fingerprints (pdf/preflight.py): a result holds the id
# this module gave, so a change of what it reads redoes the results (2: negations, lists)
LICENSE_RULE = "licence2"
CC_VERSIONS = ("1.0", "2.0", "2.5", "3.0", "4.0")
CC_FAMILIES = ("by", "by-sa", "by-nc", "by-nd", "by-nc-sa", "by-nc-nd")
ARXIV_DEFAULT = "arxiv-nonexclusive-distrib-1.0"
_ELEMENT_ORDER = {"nc": 0, "nd": 1, "sa": 1}
_ELEMENT_NAMES = {"by": "Attribution", "nc": "NonCommercial", "nd": "NoDerivatives",
                  "sa": "ShareAlike"}
_VERSION_NAMES = {"4.0": "International", "3.0": "Unported", "2.5": "Generic",
                  "2.0": "Generic", "1.0": "Generic"}


@dataclass(frozen=True, slots=True)
class License:
    """A licence: `id` normalised (or `unknown`), `url` as the source gave it, `text` the
    source's own words when the value was not a bare id or URL."""

    id: str
    url: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class LicenseTerms:
    """What a licence lets anyone (not just the host) do with the document."""

    description: str  # one line, for the dataset card
    redistribution: bool  # share verbatim copies
    commercial: bool  # ... for commercial purposes too
    derivatives: bool  # share adapted versions too


# --- ids ---------------------------------------------------------------------------------
def cc_id(family: str, version: str | None = None, port: str | None = None) -> str:
    return "-".join(p for p in ("cc", family, version, port) if p)


def _family(tokens: list[str]) -> str | None:
    """`by` plus NC/ND/SA in any order and spelling, as the canonical family; None for an
    impossible one (ND with SA, a repeat)."""
    if not tokens or tokens[0] != "by":
        return None
    rest = tokens[1:]
    if len(set(rest)) != len(rest) or not set(rest) <= set(_ELEMENT_ORDER) \
            or {"nd", "sa"} <= set(rest):
        return None
    return "-".join(["by", *sorted(rest, key=_ELEMENT_ORDER.__getitem__)])


_NO_SUCH_VERSION = "?"


def _version(raw: str | None) -> str | None:
    """`4` → `4.0`; None when absent; `_NO_SUCH_VERSION` when no CC version has that number."""
    if raw is None:
        return None
    v = raw if "." in raw else f"{raw}.0"
    return v if v in CC_VERSIONS else _NO_SUCH_VERSION


def _cc(family_tokens: list[str], version: str | None, port: str | None) -> str | None:
    family = _family(family_tokens)
    v = _version(version)
    if family is None or v == _NO_SUCH_VERSION:
        return None
    if port == "igo":
        if v not in (None, "3.0"):
            return None
        v = "3.0"  # CC published IGO licences in version 3.0 only
    elif port is not None and v in (None, "4.0"):
        return None  # a jurisdiction port has a version, and 4.0 has none
    return cc_id(family, v, port)


# --- whole values: ids in their spellings ------------------------------------------------
_SUFFIX_WORDS = re.compile(r"-(?:license|licence|international|unported|universal|generic)$")
_TOKEN_CC = re.compile(r"^(?:cc-?)?(by(?:-(?:nc|nd|sa))*)(?:-v?(\d(?:\.\d)?))?"
                       r"(?:-(igo|[a-z]{2}))?$")
_TOKEN_OTHERS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"^(?:cc-?0|cc-?zero)(?:-v?1(?:\.0)?)?(?:-public-domain-dedication)?$"),
     lambda m: "cc0-1.0"),
    (re.compile(r"^(?:public-?domain|domaine-public|dominio-p[uú]blico)(?:-mark(?:-1\.0)?)?$"),
     lambda m: "public-domain"),
    (re.compile(r"^arxiv-(?:perpetual-)?non-?exclusive(?:-distrib(?:ution)?)?(?:-(?:license|"
                r"licence))?(?:-1\.0)?$"), lambda m: ARXIV_DEFAULT),
    (re.compile(r"^arxiv-assumed-1991-2003$"), lambda m: "arxiv-assumed-1991-2003"),
    (re.compile(r"^(?:all-rights-reserved|tous-droits-r[ée]serv[ée]s|todos-los-derechos-"
                r"reservados|todos-os-direitos-reservados)$"),
     lambda m: "all-rights-reserved"),
    (re.compile(r"^(?:etalab|licence-ouverte)(?:-v?(\d\.\d))?$"),
     lambda m: f"etalab-{m.group(1)}" if m.group(1) else "etalab"),
)


def _token_id(value: str) -> str | None:
    """The id a whole value spells (`CC BY 4.0`, `cc_by`, `by-nc/3.0`, `by/igo`, `CC0`)."""
    t = re.sub(r"[\s_/]+", "-", value.strip().lower())
    t = re.sub(r"-+", "-", t).strip("-.")
    t = re.sub(r"^creative-?commons-", "cc-", t)
    while (shorter := _SUFFIX_WORDS.sub("", t)) != t:
        t = shorter
    if t == UNKNOWN:
        return UNKNOWN
    m = _TOKEN_CC.match(t)
    if m:
        return _cc(m.group(1).split("-"), m.group(2), m.group(3))
    for pattern, make in _TOKEN_OTHERS:
        m = pattern.match(t)
        if m:
            return make(m)
    return None


# --- URLs ----------------------------------------------------------------------------------
_URL = re.compile(r"^(?:https?:)?//\S+$|^(?:www\.)?(?:creativecommons\.org|arxiv\.org|"
                  r"hal\.archives-ouvertes\.fr|hal\.science)/\S*$", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r"(?:https?://|www\.|\b(?:creativecommons\.org|arxiv\.org)/)"
                          r"[^\s<>\"'()\[\]]+", re.IGNORECASE)
_CC_TAIL = re.compile(r"^(?:deed|legalcode)(?:\.[a-z_-]+)?$|^rdf$|^index\.html?$")
_CC_PORT = re.compile(r"^(?:igo|[a-z]{2})$")


def _cc_url(segs: list[str]) -> str | None:
    if segs[:1] == ["licenses"] and len(segs) >= 2:
        if segs[1] == "publicdomain":
            return "public-domain"  # CC's old public domain dedication/certification
        rest = segs[2:]
        version = rest.pop(0) if rest and re.fullmatch(r"\d\.\d", rest[0]) else None
        port = rest.pop(0) if rest and _CC_PORT.match(rest[0]) and not _CC_TAIL.match(rest[0]) \
            else None
        if any(not _CC_TAIL.match(s) for s in rest):
            return None
        return _cc(segs[1].split("-"), version, port)
    if segs[:2] == ["publicdomain", "zero"] and segs[2:3] in ([], ["1.0"]):
        return "cc0-1.0"
    if segs[:2] in (["publicdomain", "mark"], ["choose", "mark"]):
        return "public-domain"  # HAL offers the mark as `creativecommons.org/choose/mark/`
    return None


def _url_id(url: str) -> str | None:
    """The id a licence URL names: Creative Commons (with or without a trailing slash,
    `legalcode`, a language deed such as `deed.fr`), arXiv's and HAL's licence pages,
    Etalab's Licence Ouverte, SPDX pages; None for any other URL."""
    parts = urlsplit(url if "//" in url else f"//{url}")
    host = (parts.hostname or "").lower().removeprefix("www.")
    segs = [s for s in parts.path.lower().split("/") if s]
    if host == "creativecommons.org":
        return _cc_url(segs)
    if host in ("arxiv.org", "export.arxiv.org") and segs[:1] == ["licenses"]:
        rest = "/".join(segs[1:])
        return {"nonexclusive-distrib/1.0": ARXIV_DEFAULT,
                "assumed-1991-2003": "arxiv-assumed-1991-2003"}.get(rest)
    if host in ("hal.archives-ouvertes.fr", "hal.science") and segs[:1] == ["licences"]:
        return {"copyright": "all-rights-reserved", "etalab": "etalab",
                "publicdomain": "public-domain"}.get("/".join(segs[1:]))
    if host == "etalab.gouv.fr":
        m = re.search(r"licence-ouverte(?:-open-licence)?(?:-v?(\d\.\d))?", parts.path.lower())
        return (f"etalab-{m.group(1)}" if m.group(1) else "etalab") if m else None
    if host == "spdx.org" and segs[:1] == ["licenses"] and len(segs) == 2:
        return _token_id(re.sub(r"\.(?:html|json)$", "", segs[1]))
    return None


# --- free text -------------------------------------------------------------------------------
_ELEMENT_WORDS = {"noncommercial": "nc", "nonderivative": "nd", "noderivative": "nd",
                  "noderivatives": "nd", "noderivs": "nd", "noderiv": "nd",
                  "noderivativeworks": "nd", "sharealike": "sa",
                  # the licences' official French names ("Attribution - Pas d'Utilisation
                  # Commerciale - Pas de Modification 4.0 International")
                  "pasdutilisationcommerciale": "nc", "pasdemodification": "nd",
                  "partagedanslesmemesconditions": "sa", "partagedanslesmêmesconditions": "sa"}
_ELEMENT = (r"non[\s-]?commercial|no[\s-]?deriv(?:ative)?s?(?:\s+works)?|share[\s-]?alike|"
            r"pas[\s-]+d['’]\s*utilisation[\s-]+commerciale|pas[\s-]+de[\s-]+modification|"
            r"partage[\s-]+dans[\s-]+les[\s-]+m[êe]mes[\s-]+conditions")
_SPELLED_CC = re.compile(
    r"\bcreative\s+commons\s+(?:licen[cs]e\s+)?attribution"
    rf"((?:[\s,-]+(?:{_ELEMENT}))*)"
    r"(?:\s+licen[cs]e)?"
    r"(?:\s+(?:v(?:ersion)?\s*)?(\d\.\d))?(?:\s+(igo)\b)?", re.IGNORECASE)
_CODE_CC = re.compile(r"\bcc[\s_-]*(by(?:[\s_-]*(?:nc|nd|sa)\b)*)(?:[\s_-]*v?(\d(?:\.\d)?)\b)?"
                      r"(?:[\s_/-]*(igo)\b)?", re.IGNORECASE)
_TEXT_OTHERS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"\bcreative\s+commons\s+(?:cc0\s+)?(?:1\.0\s+)?(?:universal\s+)?public\s+"
                r"domain\s+dedication(?:\s+waiver)?|\bcc[\s-]?(?:0|zero)\b(?:\s*1\.0)?"
                r"(?:\s+universal)?(?:\s+public\s+domain\s+dedication)?(?:\s+waiver)?",
                re.IGNORECASE), lambda m: "cc0-1.0"),
    (re.compile(r"\bpublic\s+domain\b(?:\s+mark\b)?|\bdomaine\s+public\b|"
                r"\bdom[ií]nio\s+p[uú]blico\b", re.IGNORECASE), lambda m: "public-domain"),
    (re.compile(r"\ball\s+rights\s+reserved\b|\btous\s+droits\s+r[ée]serv[ée]s\b|"
                r"\btodos\s+los\s+derechos\s+reservados\b|\btodos\s+os\s+direitos\s+"
                r"reservados\b", re.IGNORECASE), lambda m: "all-rights-reserved"),
    (re.compile(r"\barxiv(?:\.org)?(?:'s)?\s+(?:perpetual,?\s+)?non-?exclusive\b",
                re.IGNORECASE), lambda m: ARXIV_DEFAULT),
    (re.compile(r"\b(?:licence\s+ouverte|etalab)\b(?:\s*(?:/\s*open\s+licence\s*)?"
                r"(?:v(?:ersion)?\s*)?(\d\.\d))?", re.IGNORECASE),
     lambda m: f"etalab-{m.group(1)}" if m.group(1) else "etalab"),
)


def _spelled(m: re.Match[str]) -> str | None:
    words = re.findall(_ELEMENT, m.group(1).lower())
    elements = [_ELEMENT_WORDS.get(re.sub(r"[\s'’-]", "", w)) for w in words]
    if None in elements:
        return None
    return _cc(["by", *[e for e in elements if e]], m.group(2), m.group(3) and "igo")


# A negation in the words before a mention, within its clause: "not licensed under CC BY
# 4.0", "no longer available under ...", "n'est pas sous licence ...", "no está bajo ...",
# "não está licenciado ...". Whole words only: "non-commercial", "non-exclusive" and "no
# derivatives" are parts of licence names, not negations.
_NEGATION = re.compile(
    r"\b(?:not|never|neither|nor|cannot|no(?![\s-]*deriv)|"
    r"non(?![\s-]*(?:commercial|exclusive|deriv|profit))|ne|pas|jamais|ni|nunca|n[ãa]o|nem|"
    r"nicht|kein\w*)\b|\w+n['’]t\b|\bn['’]", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.;:!?](?=\s|$)")


def _negated(text: str, start: int) -> bool:
    """Whether the clause leading to `start` (from the last `.;:!?` before it) denies
    what follows."""
    before = text[:start]
    ends = [m.end() for m in _CLAUSE_END.finditer(before)]
    return _NEGATION.search(before, ends[-1] if ends else 0) is not None


def _mentions(text: str) -> tuple[list[str], list[tuple[str, str]], bool]:
    """Every licence the text names, in order of kind (URLs first), the recognised URLs
    with their ids, and whether any mention is negated; each match is blanked so a weaker
    pattern cannot re-read it."""
    ids: list[str] = []
    urls: list[tuple[str, str]] = []
    negated = False
    rest = text

    def blank(m: re.Match[str]) -> str:
        return " " * (m.end() - m.start())

    def scan(pattern: re.Pattern[str], make: Callable[[re.Match[str]], str | None]) -> None:
        nonlocal rest, negated
        for m in pattern.finditer(rest):
            found = make(m)
            if found is not None:
                ids.append(found)
                negated = negated or _negated(text, m.start())
        rest = pattern.sub(blank, rest)

    def url(m: re.Match[str]) -> str | None:
        raw = m.group(0).rstrip(".,;:")
        found = _url_id(raw)
        if found is not None:
            urls.append((raw, found))
        return found

    scan(_URL_IN_TEXT, url)
    scan(_SPELLED_CC, _spelled)
    scan(_TEXT_OTHERS[0][0], _TEXT_OTHERS[0][1])  # CC0 before `CC BY`, `public domain`
    scan(_CODE_CC, lambda m: _cc(re.split(r"[\s_-]+", m.group(1).lower()), m.group(2),
                                 m.group(3) and "igo"))
    for pattern, make in _TEXT_OTHERS[1:]:
        scan(pattern, make)
    return ids, urls, negated


def _base(license_id: str) -> str:
    """The id without version and port (`cc-by-4.0` → `cc-by`, `etalab-2.0` → `etalab`)."""
    m = re.match(r"^(cc-by(?:-(?:nc|nd|sa))*)(?:-\d\.\d)?(?:-[a-z]{2,3})?$", license_id)
    if m:
        return m.group(1)
    return re.sub(r"^(etalab)-\d\.\d$", r"\1", license_id)


def _agree(ids: list[str]) -> str | None:
    """The one licence several mentions name: `cc-by` and `cc-by-4.0` agree (on the
    versioned one); anything else that differs is a conflict (None)."""
    if not ids or len({_base(i) for i in ids}) != 1:
        return None
    specific = {i for i in ids if i != _base(i)}
    if len(specific) > 1:
        return None
    return specific.pop() if specific else ids[0]


# --- the normaliser --------------------------------------------------------------------------
def normalise_license(value: str | None) -> License:
    """The licence a source's value states; `unknown` (the value kept) when it states none
    or several. See the module docstring for the ids and docs/licenses.md for examples."""
    if value is None:
        return License(UNKNOWN)
    if not isinstance(value, str):
        value = str(value)
    return _normalise(value)


@lru_cache(maxsize=8192)
def _normalise(value: str) -> License:
    """`normalise_license` of a string, cached: sources repeat the same few values across
    documents, and a `License` is immutable (a frozen dataclass of strings)."""
    text = " ".join(value.split())
    if not text:
        return License(UNKNOWN)
    statements = _statements(text)
    if statements is not None:
        return _several(statements, text)
    if _URL.match(text):
        return License(_url_id(text) or UNKNOWN, url=text)
    token = _token_id(text)
    if token is not None:
        return License(token)
    ids, urls, negated = _mentions(text)
    found = _agree(ids)
    if found is None or negated:
        return License(UNKNOWN, text=text)
    url = next((u for u, i in urls if _base(i) == _base(found)), None)
    return License(found, url=url, text=text)


def _statements(text: str) -> list[str] | None:
    """The statements of a value that is a JSON list of strings (a manifest line with both
    `license` and `licence` gives one), else None."""
    if not text.startswith("["):
        return None
    try:
        items = json.loads(text)
    except ValueError:
        return None
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        return None
    return items


def _several(statements: list[str], text: str) -> License:
    """Several statements of one document's licence: each must name a licence and all the
    same one (`_agree`: `CC BY` and `CC BY 4.0` do); otherwise `unknown`, none taken over
    another. The list is kept as the text."""
    each = [_normalise(s) if s.strip() else License(UNKNOWN) for s in statements]
    found = None if any(lic.id == UNKNOWN for lic in each) else _agree([lic.id for lic in each])
    if found is None:
        return License(UNKNOWN, text=text)
    url = next((lic.url for lic in each if lic.url and _base(lic.id) == _base(found)), None)
    return License(found, url=url, text=text)


# --- what each id allows ---------------------------------------------------------------------
_FIXED: dict[str, LicenseTerms] = {
    "cc0-1.0": LicenseTerms("Creative Commons CC0 1.0 Universal (public domain dedication)",
                            True, True, True),
    "public-domain": LicenseTerms("public domain (as the source states)", True, True, True),
    "etalab": LicenseTerms("Licence Ouverte / Open Licence (Etalab), version not stated",
                           True, True, True),
    "etalab-1.0": LicenseTerms("Licence Ouverte / Open Licence 1.0 (Etalab)", True, True, True),
    "etalab-2.0": LicenseTerms("Licence Ouverte / Open Licence 2.0 (Etalab)", True, True, True),
    ARXIV_DEFAULT: LicenseTerms(
        "arXiv.org perpetual, non-exclusive licence to distribute 1.0 (rights granted to "
        "arXiv only: no redistribution by others)", False, False, False),
    "arxiv-assumed-1991-2003": LicenseTerms(
        "arXiv's assumed licence for 1991-2003 submissions (rights granted to arXiv only: "
        "no redistribution by others)", False, False, False),
    "all-rights-reserved": LicenseTerms("all rights reserved (no licence granted)",
                                        False, False, False),
    UNKNOWN: LicenseTerms("no licence stated, or one not recognised", False, False, False),
}
_CC_ID = re.compile(r"^cc-(by(?:-nc)?(?:-nd|-sa)?)(?:-(\d\.\d))?(?:-(igo|[a-z]{2}))?$")


def cc_parts(license_id: str) -> tuple[str, str | None, str | None] | None:
    """A Creative Commons id's (family, version, port), as `cc_id` joins them
    (`cc-by-nc-3.0-br` → (`by-nc`, `3.0`, `br`)); None for any other id. The version is
    any `d.d` (whether CC published it is the caller's question)."""
    m = _CC_ID.match(license_id)
    if m is None or m.group(1) not in CC_FAMILIES:
        return None
    family, version, port = m.groups()
    return family, version, port


def is_hub_license(license_id: str) -> bool:
    """Whether the Hub knows the id as a `license:` tag: a versioned Creative Commons
    licence without a port, or CC0."""
    if license_id == "cc0-1.0":
        return True
    parts = cc_parts(license_id)
    return parts is not None and parts[1] in CC_VERSIONS and parts[2] is None


@lru_cache(maxsize=1024)
def license_terms(license_id: str) -> LicenseTerms:
    """The card's one-line description of an id and what it lets anyone do; an id this
    module does not make is described as not recognised and allows nothing."""
    fixed = _FIXED.get(license_id)
    if fixed is not None:
        return fixed
    cc = cc_parts(license_id)
    if cc is None:
        return _FIXED[UNKNOWN]
    family, version, port = cc
    parts = family.split("-")
    name = "-".join(_ELEMENT_NAMES[p] for p in parts)
    code = "CC " + "-".join(p.upper() for p in parts)
    if version is None:
        what = f"Creative Commons {name} ({code}), version not stated"
    elif port is None:
        what = f"Creative Commons {name} {version} {_VERSION_NAMES[version]} ({code} {version})"
    else:
        what = f"Creative Commons {name} {version} {port.upper()} ({code} {version} " \
               f"{port.upper()})"
    return LicenseTerms(what, True, "nc" not in parts, "nd" not in parts)


KNOWN_IDS: tuple[str, ...] = (
    *(cc_id(f, v) for f in CC_FAMILIES for v in (*CC_VERSIONS, None)),
    *(cc_id(f, "3.0", "igo") for f in CC_FAMILIES),
    *_FIXED,
)


@dataclass(frozen=True, slots=True)
class LicenseGroup:
    """A shorthand for licence ids: `id in group` answers for any id (ported CC licences
    included); iterating lists the ids of `KNOWN_IDS` in it (ports are open-ended)."""

    name: str
    test: Callable[[LicenseTerms], bool]

    def __contains__(self, license_id: object) -> bool:
        return isinstance(license_id, str) and self.test(license_terms(license_id))

    def __iter__(self) -> Iterator[str]:
        return (i for i in KNOWN_IDS if i in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


OPEN_REDISTRIBUTABLE = LicenseGroup("open", lambda t: t.redistribution)
OPEN_COMMERCIAL = LicenseGroup("open-commercial", lambda t: t.redistribution and t.commercial)
OPEN_ADAPTABLE = LicenseGroup("open-adaptable", lambda t: t.redistribution and t.derivatives)
SHORTHANDS = {g.name: g for g in (OPEN_REDISTRIBUTABLE, OPEN_COMMERCIAL, OPEN_ADAPTABLE)}


ID_FORMS = (f"cc-<family>[-<version>][-<port>] (family {', '.join(CC_FAMILIES)}; version "
            f"{', '.join(CC_VERSIONS)}; port igo with 3.0, or a two-letter jurisdiction with "
            f"a version before 4.0), {', '.join(_FIXED)}")


def is_license_id(value: str) -> bool:
    """Whether `value` is an id this module makes, spelled as it makes it: the one rule
    for what a document's `license` can be (`cc-by-4.0-fr` is none: 4.0 has no ports)."""
    return value in _FIXED or (cc_parts(value) is not None and _token_id(value) == value)


def check_allow_list(values: Sequence[str]) -> list[str]:
    """A `licenses:` allow-list: ids a document can carry (`is_license_id`) or the
    shorthands `open`, `open-commercial`, `open-adaptable`; anything else is a ValueError
    naming it and the known forms (it would keep nothing, silently)."""
    for value in values:
        if value in SHORTHANDS or is_license_id(value):
            continue
        spelled = _token_id(value)  # `CC-BY-4.0`, `cc0`: an id in another spelling
        close = [spelled] if spelled and is_license_id(spelled) else difflib.get_close_matches(
            value, [*KNOWN_IDS, *SHORTHANDS], n=1, cutoff=0.8)
        hint = f"did you mean {close[0]}? " if close else ""
        raise ValueError(f"{value!r} is no licence id a document can carry ({hint}ids: "
                         f"{ID_FORMS}; shorthands: {', '.join(SHORTHANDS)})")
    return list(values)


def allowed(license_id: str, allow: Sequence[str]) -> bool:
    """Whether a document's licence id is in an allow-list of ids and shorthands."""
    return any(license_id == a or (a in SHORTHANDS and license_id in SHORTHANDS[a])
               for a in allow)


LICENSE_STAGE = "licenses"  # the stage a `license_excluded` document is reported under


def stated_exclusion(stated: str | None, allow: Sequence[str] | None) -> str | None:
    """`exclusion` of a licence as its source states it (a candidate's `license`), read by
    the normaliser: what the fetch asks before it downloads a PDF."""
    if allow is None:
        return None
    return exclusion(normalise_license(stated).id, allow)


def exclusion(license_id: str, allow: Sequence[str] | None) -> str | None:
    """The one licence rule: why a document under `license_id` is `license_excluded` by
    the `licenses:` allow-list (None: it is kept, or there is no list). The fetch applies
    it as soon as a candidate's licence is known, before its PDF is fetched; the finish
    applies it again to what was fetched under an earlier list."""
    if allow is None or allowed(license_id, allow):
        return None
    return f"licence {license_id} is not in licenses: {', '.join(allow)}"

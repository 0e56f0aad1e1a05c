"""JATS front matter (PMC OAI `pmc_fm`/`pmc`, `.nxml` files), read namespace-agnostically.

Old PMC files are un-namespaced JATS; the 2025+ OAI service wraps JATS 1.4 in the
namespace `https://jats.nlm.nih.gov/ns/archiving/1.4/`. Every path here matches on
`local-name()`, so both read the same. The text is taken as printed: no LaTeX pass
(the original ran pylatexenc over PubMed text and cut abstracts at the first `%`).

Abstract keys (Candidate.abstracts): the main abstract (no `abstract-type`, or the
type `abstract`) in the article's language is the summary under its language code
(`en`); every other abstract is kept for removal under its language, numbered from 2
when the language is taken (`en-2`, `en-3`, ... in document order; `fr` for a French
`trans-abstract`). The strip stage searches every key; only `en` is the summary.

The article is found from the element given, at it or below it (`descendant-or-self`): a
record of a `ListRecords` page is read as itself, never as the page's first article (a path
starting `//` starts at the document's root, whatever element it is asked of).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

# the one strict XML parser, kept importable from here
from .kit.oaipmh import parse_xml as parse_xml
from .kit.oaipmh import strict_parser as strict_parser

PLAIN_TYPES = frozenset({"", "abstract"})
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
ALI_NS = "http://www.niso.org/schemas/ali/1.0/"
_WS = re.compile(r"\s+")
_DATE_PREFERENCE = ("epub", "ppub", "pub", "epub-ppub", "collection", "pmc-release")
_ARTICLE = "(descendant-or-self::*[local-name()='article'])[1]"




def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if _local(c) == name]


@dataclass(frozen=True, slots=True)
class Abstract:
    kind: str  # abstract-type, "" when absent
    language: str
    text: str
    trans: bool  # a <trans-abstract>


def _inline_text(el: etree._Element) -> str:
    """Text of an element as printed: LaTeX alternatives of MathML are left out."""
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        if isinstance(node.tag, str):
            parent = node.getparent()
            if _local(node) == "tex-math" and parent is not None \
                    and _local(parent) == "alternatives":
                parts.append(node.tail or "")
                return
            parts.append(node.text or "")
            for child in node:
                walk(child)
        if node is not el:
            parts.append(node.tail or "")

    walk(el)
    return _WS.sub(" ", "".join(parts)).strip()


def _block_lines(el: etree._Element) -> list[str]:
    """One line per paragraph; a section is `TITLE first paragraph`, then its others."""
    lines: list[str] = []
    for child in el:
        name = _local(child)
        if name == "sec":
            titles = _children(child, "title")
            head = _inline_text(titles[0]) if titles else ""
            body = _block_lines(child)
            if body and head:
                body[0] = f"{head} {body[0]}"
            elif head:
                body = [head]
            lines.extend(body)
        elif name in ("title", "label", "object-id", "graphic", "alt-text"):
            continue  # the "Abstract" heading and the like are not abstract text
        else:
            text = _inline_text(child)
            if text:
                lines.append(text)
    return lines


def abstract_text(el: etree._Element) -> str:
    lines = _block_lines(el)
    if not lines:
        return _inline_text(el)
    return "\n".join(lines)


def article_meta(root: etree._Element) -> etree._Element | None:
    found = root.xpath(_ARTICLE + "/*[local-name()='front']"
                       "/*[local-name()='article-meta']")
    return found[0] if found else None


def article_language(root: etree._Element) -> str | None:
    found = root.xpath(_ARTICLE)
    lang = found[0].get(XML_LANG) if found else None
    return lang.lower()[:2] if lang else None


def translations(root: etree._Element) -> list[tuple[etree._Element, str]]:
    """(front matter, language) of each translation sub-article, whose abstracts are
    printed too (SciELO-style JATS; PMC mostly uses trans-abstract instead)."""
    out = []
    for sub in root.xpath(_ARTICLE + "/*[local-name()='sub-article']"
                          "[@article-type='translation']"):
        fronts = sub.xpath("*[local-name()='front-stub'] | *[local-name()='front']"
                           "/*[local-name()='article-meta']")
        lang = sub.get(XML_LANG)
        if fronts and lang:
            out.append((fronts[0], lang.lower()[:2]))
    return out


def all_abstracts(root: etree._Element, meta: etree._Element, default_lang: str
                  ) -> list[Abstract]:
    """The article's abstracts, then those of its translation sub-articles (as trans)."""
    found = abstracts(meta, default_lang)
    for front, lang in translations(root):
        found += [Abstract(a.kind, a.language, a.text, True) for a in abstracts(front, lang)]
    return found


def abstracts(meta: etree._Element, default_lang: str) -> list[Abstract]:
    out: list[Abstract] = []
    for el in meta:
        name = _local(el)
        if name not in ("abstract", "trans-abstract"):
            continue
        text = abstract_text(el)
        if not text:
            continue  # e.g. a graphical abstract that is only an image
        lang = (el.get(XML_LANG) or default_lang).lower()[:2]
        out.append(Abstract((el.get("abstract-type") or "").strip().lower(), lang, text,
                            name == "trans-abstract"))
    return out


def keyed_abstracts(found: list[Abstract], language: str) -> dict[str, str] | None:
    """{key: text} with the main abstract first under `language`; None without one."""
    main = next((a for a in found if a.language == language and not a.trans
                 and a.kind in PLAIN_TYPES), None)
    if main is None:
        return None
    keyed = {language: main.text}
    for a in found:
        if a is main:
            continue
        key, n = a.language, 2
        while key in keyed:
            key, n = f"{a.language}-{n}", n + 1
        keyed[key] = a.text
    return keyed


def article_ids(meta: etree._Element) -> dict[str, str]:
    return {el.get("pub-id-type", ""): (el.text or "").strip()
            for el in _children(meta, "article-id")}


def custom_meta(meta: etree._Element) -> dict[str, str]:
    out: dict[str, str] = {}
    for cm in meta.xpath(".//*[local-name()='custom-meta']"):
        name = cm.xpath("string(*[local-name()='meta-name'])").strip()
        if name:
            out[name] = cm.xpath("string(*[local-name()='meta-value'])").strip()
    return out


def license_statements(meta: etree._Element) -> list[tuple[str, str]]:
    """Every licence statement of the article's `<permissions>` as (where, value), by kind
    in the order they are trusted: the NISO ALI `ali:license_ref` (a URL), the
    `<license>`'s `xlink:href`, its `license-type`, then the text of its `license-p`
    (SciELO-style JATS has one `<license>` per language, in document order)."""
    found: dict[str, list[str]] = {"ali:license_ref": [], "license/@xlink:href": [],
                                   "license/@license-type": [], "license-p": []}
    for perm in _children(meta, "permissions"):
        for ref in perm.xpath(".//*[local-name()='license_ref']"):
            if etree.QName(ref).namespace in (ALI_NS, None):
                found["ali:license_ref"].append(_inline_text(ref))
        for lic in _children(perm, "license"):
            found["license/@xlink:href"].append((lic.get(XLINK_HREF) or "").strip())
            found["license/@license-type"].append((lic.get("license-type") or "").strip())
            paragraphs = [_inline_text(p) for p in _children(lic, "license-p")]
            found["license-p"].append(" ".join(p for p in paragraphs if p))
    return [(where, value) for where, values in found.items() for value in values if value]


def title(meta: etree._Element) -> str | None:
    found = meta.xpath("*[local-name()='title-group']/*[local-name()='article-title']")
    return _inline_text(found[0]) or None if found else None


def publication_date(meta: etree._Element) -> str | None:
    """The earliest-meant publication date: epub, then print, then the collection."""
    dates = {(d.get("pub-type") or d.get("date-type") or ""): d
             for d in _children(meta, "pub-date")}
    for kind in (*_DATE_PREFERENCE, *dates):
        d = dates.get(kind)
        if d is None:
            continue
        parts = [d.xpath(f"string(*[local-name()='{p}'])").strip()
                 for p in ("year", "month", "day")]
        if not parts[0].isdigit():
            continue
        out = parts[0]
        for p in parts[1:]:
            if not p.isdigit():
                break
            out += f"-{int(p):02d}"
        return out
    return None

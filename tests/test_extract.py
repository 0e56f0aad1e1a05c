"""Extraction on real PDFs: no word lost or altered, broken files classed, layout ids sane."""

from __future__ import annotations

import json
import subprocess
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest

from loralay_build.extract import ExtractLimits, extract_document
from loralay_build.extract.parse import parse_bbox_layout
from loralay_build.failures import Failure, FailureClass
from loralay_build.records import normalized_box

from .conftest import REPO, shared_path

BROKEN = {"en_truncated_jcap": FailureClass.CORRUPTED,
          "en_encrypted_phoenix": FailureClass.ENCRYPTED,
          "en_scanned_fama1973": FailureClass.SCANNED}


class _Reference(HTMLParser):
    """An independent reading of Poppler's XHTML (stdlib tokenizer, no regex of ours)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[tuple[str, int, int, int]] = []
        self.page = self.line = self.block = 0
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "page":
            self.page += 1
        elif tag == "block":
            self.block += 1
        elif tag == "line":
            self.line += 1
        elif tag == "word":
            self._text = []

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "word" and self._text is not None:
            self.words.append(("".join(self._text), self.page, self.line - 1, self.block - 1))
            self._text = None


def _documented_rule(text: str) -> str:
    """The README's rule, written out again independently of extract/parse.py."""
    text = "".join("\ufffd" if (ord(c) < 32 and c not in "\t\n\r") or c in "\ufffe\uffff"
                   else c for c in text)
    text = unicodedata.normalize("NFKC", text)
    invisible = {"Cf", "Co", "Zs", "Zl", "Zp", "Cc"}
    if all(unicodedata.category(c) in invisible for c in text):
        return ""
    return "".join(c for c in text if unicodedata.category(c) != "Cf").strip()


def _readable_pdfs() -> list[Path]:
    corpus = shared_path("corpus", "pdf")
    bench = shared_path("bench", "pdfs")
    return [p for p in sorted(corpus.glob("*.pdf")) if p.stem not in BROKEN] + \
        sorted(bench.glob("*.pdf"))


def _reference_words(pdf: Path) -> list[tuple[str, int, int, int]]:
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True,
                         check=True).stdout.decode("utf-8", "replace")
    ref = _Reference()
    ref.feed(xml)
    return [(_documented_rule(t), p, ln, b) for t, p, ln, b in ref.words]


@pytest.mark.integration
def test_no_word_lost_or_altered_on_every_real_pdf():
    total = dropped = 0
    for pdf in _readable_pdfs():
        doc = extract_document(pdf, pdf.stem)
        assert not isinstance(doc, Failure), f"{pdf.name}: {doc}"
        ref = _reference_words(pdf)
        expected = [w for w in ref if w[0]]
        got = list(zip(doc.words, doc.word_pages, doc.line_ids, doc.block_ids))
        assert got == expected, pdf.name
        assert doc.dropped_invisible == len(ref) - len(expected), pdf.name
        total += len(ref)
        dropped += doc.dropped_invisible
    assert total > 300_000  # the 49 readable PDFs hold about 470k words
    assert dropped / total < 0.001


@pytest.mark.parametrize("stem,cls", sorted(BROKEN.items()))
def test_broken_real_files_get_their_class(stem, cls):
    pdf = shared_path("corpus", "pdf", f"{stem}.pdf")
    result = extract_document(pdf, stem)
    assert isinstance(result, Failure) and result.cls is cls, result


def test_not_a_pdf_empty_and_missing_are_unavailable(tmp_path):
    html = tmp_path / "page.pdf"
    html.write_text("<!DOCTYPE html><html><body>Not found</body></html>")
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    for path in (html, empty, tmp_path / "missing.pdf"):
        result = extract_document(path, path.stem)
        assert isinstance(result, Failure) and result.cls is FailureClass.UNAVAILABLE


def test_limits_timeout_memory_and_page_cap():
    pdf = shared_path("corpus", "pdf", "fr_these_malware_long.pdf")
    assert extract_document(pdf, "x", ExtractLimits(timeout_s=0.02)).cls is FailureClass.TIMEOUT
    assert extract_document(pdf, "x", ExtractLimits(memory_mb=20)).cls is FailureClass.MEMORY
    capped = extract_document(pdf, "x", ExtractLimits(max_pages=10))
    assert capped.cls is FailureClass.TOO_MANY_PAGES


def test_layout_ids_boxes_and_pages_are_consistent():
    pdf = shared_path("corpus", "pdf", "en_acl_s2orc.pdf")
    doc = extract_document(pdf, "acl")
    assert len(doc.pages) == 15 and doc.pages[0].number == 1
    for ids in (doc.line_ids, doc.block_ids):
        assert ids[0] == 0 and all(b - a in (0, 1) or b > a for a, b in zip(ids, ids[1:]))
        assert all(b >= a for a, b in zip(ids, ids[1:]))  # increasing in reading order
    # a line never spans two blocks or two pages
    seen: dict[int, tuple[int, int]] = {}
    for line, block, page in zip(doc.line_ids, doc.block_ids, doc.word_pages):
        assert seen.setdefault(line, (block, page)) == (block, page)
    for (x0, y0, x1, y1), page in zip(doc.boxes, doc.word_pages):
        w, h = doc.page_size(page)
        assert 0 <= x0 <= x1 <= w and 0 <= y0 <= y1 <= h
        assert all(0 <= v <= 1000 for v in normalized_box((x0, y0, x1, y1), w, h))


def test_ligatures_are_expanded():
    pdf = shared_path("bench", "pdfs", "oup-template.pdf")
    raw = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True).stdout.decode()
    assert any("\ufb00" <= c <= "\ufb06" for c in raw)  # Poppler passes ligatures through here
    doc = extract_document(pdf, "oup")
    assert not any("\ufb00" <= c <= "\ufb06" for w in doc.words for c in w)
    assert any("fi" in w for w in doc.words)


def _page(words: str) -> bytes:
    return (b'<doc><page width="100.0" height="200.0"><flow><block xMin="0" yMin="0" '
            b'xMax="1" yMax="1"><line xMin="0" yMin="0" xMax="1" yMax="1">' + words +
            b"</line></block></flow></page></doc>")


def _w(text: bytes, box: bytes = b'xMin="1" yMin="2" xMax="3" yMax="4"') -> bytes:
    return b"<word " + box + b">" + text + b"</word>\n"


def test_documented_rule_for_entities_forbidden_and_invisible_characters():
    data = _page(_w(b"R&amp;D") + _w(b"a&lt;b") + _w(b"x\x01y") + _w("\uf8ff".encode())
                 + _w("\u200b".encode()) + _w("co\u200bop".encode()) + _w("\ufb01nal".encode())
                 + _w(b"back", b'xMin="-5" yMin="300" xMax="-9" yMax="150"'))
    doc = parse_bbox_layout(data)
    assert doc.words == ["R&D", "a<b", "x\ufffdy", "coop", "final", "back"]
    assert doc.dropped_invisible == 2
    assert doc.boxes[-1] == (0.0, 150.0, 0.0, 200.0)  # swapped, then clamped to the page


def test_chunked_feeding_matches_whole_parse():
    from loralay_build.extract.parse import BBoxLayoutParser

    pdf = shared_path("corpus", "pdf", "ko_hufs_tsp.pdf")
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True,
                         check=True).stdout
    whole = parse_bbox_layout(xml)
    for size in (7, 333, 4096):
        p = BBoxLayoutParser("x")
        for i in range(0, len(xml), size):
            p.feed(xml[i:i + size])
        doc = p.finish()
        assert (doc.words, doc.boxes, doc.line_ids) == (whole.words, whole.boxes, whole.line_ids)


def test_cli_extract_formats_and_exit_status(tmp_path):
    good = shared_path("corpus", "pdf", "en_bmc_trauma.pdf")
    bad = shared_path("corpus", "pdf", "en_encrypted_phoenix.pdf")
    one = subprocess.run(["loralay", "extract", str(good)], capture_output=True, text=True,
                         cwd=REPO)
    first = json.loads(one.stdout.splitlines()[0])
    assert one.returncode == 0 and set(first) == {"text", "box", "page", "line", "block"}
    both = subprocess.run(["loralay", "extract", "--format", "tsv", "--out-dir", str(tmp_path),
                           str(good), str(bad)], capture_output=True, text=True, cwd=REPO)
    assert both.returncode == 1
    assert both.stderr.strip().splitlines()[-1] == \
        f"{bad}: encrypted: the PDF needs a password"
    row = (tmp_path / "en_bmc_trauma.tsv").read_text().splitlines()[0].split("\t")
    assert len(row) == 10 and row[0] == "Datta" and row[7] == "1"
    assert not (tmp_path / "en_encrypted_phoenix.tsv").exists()

"""Extraction on real PDFs: no word lost or altered, broken files classed, layout ids sane."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest

from loralay_build.failures import Failure, FailureClass
from loralay_build.pdftext import ExtractLimits, extract_document
from loralay_build.pdftext.parse import parse_bbox_layout
from loralay_build.records import normalized_box

from .conftest import REPO, shared_path
from .helpers.pdfs import _dense_pdf

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
    """The README's rule, written out again independently of pdftext/parse.py."""
    text = "".join("\ufffd" if (ord(c) < 32 and c not in "\t\n\r") or c in "\ufffe\uffff"
                   else c for c in text)
    text = unicodedata.normalize("NFKC", text)
    invisible = {"Cf", "Co", "Zs", "Zl", "Zp", "Cc"}
    if all(unicodedata.category(c) in invisible for c in text):
        return ""
    return "".join(c for c in text if unicodedata.category(c) != "Cf").strip()


LIGATURES = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl",  # T1
             "\x0b": "ff", "\x0c": "fi", "\x0e": "ffi", "\x0f": "ffl"}  # OT1 (0x0D: white)


def _is_repair(got: str, raw: str) -> bool:
    """The README's glyph rule: Poppler's word with some ligature codes replaced by their
    ligatures, the documented rule applied to the rest."""
    codes = [i for i, c in enumerate(raw) if c in LIGATURES][:8]
    for pick in itertools.product((False, True), repeat=len(codes)):
        text = list(raw)
        for i, on in zip(codes, pick):
            text[i] = LIGATURES[raw[i]] if on else raw[i]
        if any(pick) and _documented_rule("".join(text)) == got:
            return True
    return False


def _readable_pdfs() -> list[Path]:
    corpus = shared_path("corpus", "pdf")
    bench = shared_path("bench", "pdfs")
    return [p for p in sorted(corpus.glob("*.pdf")) if p.stem not in BROKEN] + \
        sorted(bench.glob("*.pdf"))


def _reference_words(pdf: Path) -> list[tuple[str, int, int, int, str]]:
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True,
                         check=True).stdout.decode("utf-8", "replace")
    ref = _Reference()
    ref.feed(xml)
    return [(_documented_rule(t), p, ln, b, t) for t, p, ln, b in ref.words]


@pytest.mark.stress
@pytest.mark.e2e
def test_no_word_lost_or_altered_on_every_real_pdf():
    total = dropped = repaired = 0
    for pdf in _readable_pdfs():
        doc = extract_document(pdf, pdf.stem)
        assert not isinstance(doc, Failure), f"{pdf.name}: {doc}"
        ref = _reference_words(pdf)
        expected = [w[:4] for w in ref if w[0]]
        raws = [w[4] for w in ref if w[0]]
        got = list(zip(doc.words, doc.word_pages, doc.line_ids, doc.block_ids))
        fixed = [e if g[0] != e[0] and g[1:] == e[1:] and _is_repair(g[0], r) else g
                 for g, e, r in zip(got, expected, raws)]
        assert fixed == expected, pdf.name
        changed = sum(g[0] != e[0] for g, e in zip(got, expected))
        assert doc.words_repaired == changed, pdf.name
        repaired += changed
        assert doc.dropped_invisible == len(ref) - len(expected), pdf.name
        total += len(ref)
        dropped += doc.dropped_invisible
    assert total > 300_000  # the 49 readable PDFs hold about 470k words
    assert repaired > 1600  # the 2012 thesis in T1 Type 3 fonts (see test_glyphs.py)
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
    for (x0, y0, x1, y1), page in zip(doc.boxes.tolist(), doc.word_pages, strict=True):
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
    assert doc.boxes[-1].tolist() == [0.0, 150.0, 0.0, 200.0]  # swapped, then clamped to the page


def test_chunked_feeding_matches_whole_parse():
    from loralay_build.pdftext.parse import BBoxLayoutParser

    pdf = shared_path("corpus", "pdf", "ko_hufs_tsp.pdf")
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True,
                         check=True).stdout
    whole = parse_bbox_layout(xml)
    for size in (7, 333, 4096):
        p = BBoxLayoutParser("x")
        for i in range(0, len(xml), size):
            p.feed(xml[i:i + size])
        doc = p.finish()
        assert (doc.words, doc.boxes.tolist(), doc.line_ids) == (
            whole.words, whole.boxes.tolist(), whole.line_ids)


def _columns_of(doc):
    """Everything a reader decides, boxes to the last bit (bytes: -0.0 is not 0.0)."""
    return (doc.words, doc.boxes.tobytes(), doc.word_pages, doc.line_ids, doc.block_ids,
            doc.pages, doc.dropped_invisible, doc.raw_broken)


def _chunked(xml: bytes, stem: str, reader: str, size: int = 65536):
    from loralay_build.pdftext.parse import BBoxLayoutParser

    p = BBoxLayoutParser(stem, reader=reader)
    for i in range(0, len(xml), size):
        p.feed(xml[i:i + size])
    return p.finish()


def test_the_compiled_reader_is_built():
    """`make install` installs a C compiler and the Python headers, so the reader of
    pdftext/_fastread.c must be there (a wheel built without them falls back to the
    NumPy reader, ~0.1 of Poppler's CPU slower, same words)."""
    from loralay_build.pdftext import parse

    assert parse.read_chunk is not None
    assert parse.BBoxLayoutParser("x").reader == "c"


@pytest.mark.stress
@pytest.mark.e2e
def test_each_reader_equals_the_next_one_on_every_real_pdf():
    """The compiled reader against the NumPy/Arrow columnar reader, and that one against
    the per-word token reader they replaced: same words, boxes to the last bit, ids,
    pages, dropped tokens and raw bytes of broken words, read whole or in pipe chunks."""
    for pdf in _readable_pdfs():
        xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"],
                             capture_output=True, check=True).stdout
        tokens = _columns_of(parse_bbox_layout(xml, reader="tokens"))
        for reader in ("columns", "c"):
            assert _columns_of(parse_bbox_layout(xml, reader=reader)) == tokens, (pdf, reader)
            assert _columns_of(_chunked(xml, pdf.stem, reader)) == tokens, (pdf, reader)


ODD = [
    _w(b"nan", b'xMin="nan" yMin="2" xMax="3" yMax="4"'),  # NumPy and min() differ on NaN
    _w(b"font", b'xMin="1" yMin="2" xMax="3" yMax="4" font="x"'),  # not Poppler's shape
    b'<page width="50" height="60" rotate="90">' + _w(b"rot"),  # nor is this page
    _w(b"1e3", b'xMin="1e3" yMin="-2" xMax="3_0" yMax="4"'),  # float() reads 3_0, Arrow not
    _w(b"a<b"),  # an unescaped '<' in a text (the columnar text pattern stops at '<')
    _w(b"two", b' xMin="1" yMin="2" xMax="3" yMax="4"'),  # two spaces after `<word`
    _w(b"open").replace(b"</word>", b"</wrd>"),  # no closing tag
]


@pytest.mark.parametrize("odd", ODD)
def test_output_not_in_poppler_shape_is_read_token_by_token(odd):
    from loralay_build.pdftext.columns import read_columns
    from loralay_build.pdftext.parse import read_chunk

    data = _page(_w(b"before") + odd + _w(b"after", b'xMin="90" yMin="-1" xMax="95" yMax="9"'))
    assert read_columns(data) is None and read_chunk(data, 0, -1, -1, 0.0, 0.0) is None
    # repr: NaN equals itself there
    tokens = repr(_columns_of(parse_bbox_layout(data, reader="tokens")))
    for reader in ("c", "columns"):
        assert repr(_columns_of(parse_bbox_layout(data, reader=reader))) == tokens
    assert parse_bbox_layout(data).words[0] == "before"


@pytest.mark.parametrize("box", [
    b'xMin="-0.000000" yMin="-0.5" xMax="-0" yMax="0.000000"',  # signed zeros, as NumPy
    b'xMin="123456789.123456789" yMin="2" xMax="3" yMax="4"',  # 18 digits: the exact path
    b'xMin="9007199254740993" yMin="2" xMax="3" yMax="4"',  # 2**53 + 1: Python's float()
    b'xMin="0.1234567890123456789012" yMin="2" xMax="3" yMax="4"',  # 23 digits
    b'xMin="1." yMin="2" xMax="3" yMax="4"',  # no digit after the point
    b'xMin="150.5" yMin="250.25" xMax="99.75" yMax="-3"',  # past the page, inverted
])
def test_compiled_numbers_and_clamps_equal_the_python_readers(box):
    """Clinger's exact path (a decimal of at most 2**53 over at most 10**22) or Python's
    readers: either way the boxes equal the token reader's to the last bit."""
    data = _page(_w(b"x", box) + _w(b"y"))
    tokens = _columns_of(parse_bbox_layout(data, reader="tokens"))
    assert _columns_of(parse_bbox_layout(data, reader="c")) == tokens


def test_compiled_reader_hands_odd_words_to_the_documented_rule():
    """Only printable ASCII without '&' is taken as it is; entities, controls, invisible
    and broken UTF-8 words go through the rule, and a dropped word renumbers the raw bytes
    kept for the glyph repair."""
    words = [b"R&amp;D", "\u200b".encode(), b"x\x1by", b"\xff\xfe", b"a b", b"\x7f", b"ok"]
    data = _page(b"".join(_w(t) for t in words))
    doc = parse_bbox_layout(data, reader="c")
    assert _columns_of(doc) == _columns_of(parse_bbox_layout(data, reader="tokens"))
    assert doc.words == ["R&D", "x\ufffdy", "\ufffd\ufffd", "a b", "\x7f", "ok"]
    assert doc.raw_broken == {1: b"x\x1by", 2: b"\xff\xfe"}


@pytest.mark.stress
@pytest.mark.e2e
def test_compiled_reader_equals_the_python_readers_on_mutated_real_output():
    """Bytes of a real page's output deleted, doubled or replaced (20,000 seeded mutants):
    whatever the compiled reader accepts it reads as the Python readers do, and what it
    refuses they read."""
    import random

    pdf = shared_path("corpus", "pdf", "en_bmc_trauma.pdf")
    xml = subprocess.run(["pdftotext", "-bbox-layout", "-l", "1", str(pdf), "-"],
                         capture_output=True, check=True).stdout
    start = xml.index(b"<page ")
    page = xml[start:xml.rindex(b"</word>", start, start + 6000) + 7]
    rng = random.Random(15)
    alphabet = b'<>/"= .-0123456789&;wordlinepageblockxyMinax\n\x01\xc3\xa9'
    accepted = 0
    for _ in range(20_000):
        data = bytearray(page)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(data))
            op = rng.random()
            if op < 0.4:
                data[i] = rng.choice(alphabet)
            elif op < 0.7:
                del data[i:i + rng.randint(1, 12)]
            else:
                data[i:i] = data[i:i + rng.randint(1, 40)]
        data = bytes(data)
        try:
            ref = repr(_columns_of(parse_bbox_layout(data, reader="columns")))
        except (ValueError, IndexError):  # a page-less word: the Python readers refuse
            continue
        from loralay_build.pdftext.parse import read_chunk

        accepted += read_chunk(data, 0, -1, -1, 0.0, 0.0) is not None
        assert repr(_columns_of(parse_bbox_layout(data, reader="c"))) == ref, data
    assert accepted > 5000, accepted


def test_cli_extract_formats_and_exit_status(tmp_path):
    # the console script installed beside the interpreter running the tests (.venv/bin),
    # not whatever `loralay` happens to be on PATH
    loralay = str(Path(sys.executable).parent / "loralay")
    good = shared_path("corpus", "pdf", "en_bmc_trauma.pdf")
    bad = shared_path("corpus", "pdf", "en_encrypted_phoenix.pdf")
    one = subprocess.run([loralay, "extract", str(good)], capture_output=True, text=True,
                         cwd=REPO)
    first = json.loads(one.stdout.splitlines()[0])
    assert one.returncode == 0 and set(first) == {"text", "box", "page", "line", "block", "label"}
    both = subprocess.run([loralay, "extract", "--format", "tsv", "--out-dir", str(tmp_path),
                           str(good), str(bad)], capture_output=True, text=True, cwd=REPO)
    assert both.returncode == 1
    assert both.stderr.strip().splitlines()[-1] == \
        f"{bad}: encrypted: the PDF needs a password"
    row = (tmp_path / "en_bmc_trauma.tsv").read_text().splitlines()[0].split("\t")
    assert len(row) == 10 and row[0] == "Datta" and row[7] == "1"
    assert not (tmp_path / "en_encrypted_phoenix.tsv").exists()


def test_jsonl_rows_are_one_json_object_per_word_as_written_row_by_row():
    """`jsonl_bytes` writes the document in one orjson call and cuts it into lines at the
    objects' separators; on a real paper, with words holding the separator itself, quotes
    and braces, every line equals the row orjson writes on its own."""
    import dataclasses

    import orjson

    from loralay_build.group.labels import label_words
    from loralay_build.labels import LABELS
    from loralay_build.pdftext.formats import jsonl_bytes

    doc = extract_document(shared_path("corpus", "pdf", "en_bmc_trauma.pdf"), "d")
    odd = ['},{"text":', '"', "{}", "a\\", "\u2028", '},{\\"text\\":']
    doc = dataclasses.replace(doc, words=odd + doc.words[len(odd):])
    labels = [LABELS[c] for c in label_words(doc).tolist()]
    rows = [orjson.dumps({"text": t, "box": b, "page": p, "line": ln, "block": k, "label": lab})
            for t, b, p, ln, k, lab in zip(doc.words, doc.boxes.tolist(), doc.word_pages,
                                           doc.line_ids, doc.block_ids, labels)]
    assert len(rows) > 3000
    assert jsonl_bytes(doc) == b"\n".join(rows) + b"\n"
    assert [json.loads(x)["text"] for x in jsonl_bytes(doc).splitlines()[:6]] == odd


# --- issue #11: inputs that used to hang, blow up or lose their text ---------------------

SMALL = "pt_scielo_rsp_hindex"  # 8 pages, 110 KB, 4,755 words


def _qdf(tmp_path: Path, stem: str = SMALL) -> bytes:
    """The real PDF in qpdf's QDF form: uncompressed, one dictionary key per line."""
    out = tmp_path / "orig.qdf"
    subprocess.run(["qpdf", "--qdf", "--object-streams=disable",
                    str(shared_path("corpus", "pdf", f"{stem}.pdf")), str(out)], check=True)
    return out.read_bytes()


def _write_fixed(data: bytes, path: Path) -> Path:
    """Edited QDF back to a valid PDF (fix-qdf recomputes stream lengths and xref)."""
    raw = path.with_suffix(".qdf")
    raw.write_bytes(data)
    with open(path, "wb") as fh:
        subprocess.run(["fix-qdf", str(raw)], stdout=fh, check=True)
    return path


def test_fifo_and_directory_are_unavailable_without_blocking(tmp_path):
    import os
    import time

    fifo = tmp_path / "paper.pdf"
    os.mkfifo(fifo)  # nobody writes: a plain open() would block forever
    folder = tmp_path / "folder.pdf"
    folder.mkdir()
    t = time.monotonic()
    for path in (fifo, folder, Path("/dev/null")):
        result = extract_document(path, "x")
        assert result == Failure(FailureClass.UNAVAILABLE, "not a regular file"), path
    assert time.monotonic() - t < 2


def test_word_cap_stops_a_dense_document_early_with_bounded_memory(tmp_path):
    import sys

    dense = _dense_pdf(tmp_path, 1000)
    assert dense.stat().st_size < 200_000
    words = subprocess.run(["pdftotext", "-l", "1", str(dense), "-"], capture_output=True,
                           check=True).stdout.split()
    assert len(words) > 16_000  # x 1,000 pages: 16.7M words when read whole
    # a child process, so its peak memory (and pdftotext's) is its own to report
    script = (
        "import resource, sys, time\n"
        "from loralay_build.pdftext import ExtractLimits, extract_document\n"
        "t = time.monotonic()\n"
        "r = extract_document(sys.argv[1], 'd', ExtractLimits(max_words=150_000))\n"
        # VmHWM is this process's own peak: ru_maxrss of SELF survives fork and exec, so
        # under pytest it would report the test runner's peak
        "me = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) // 1024\n"
        "kid = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024\n"
        "print(r.cls.value, r.message, time.monotonic() - t, me, kid, sep='|')\n")
    out = subprocess.run([sys.executable, "-c", script, str(dense)], capture_output=True,
                         text=True, check=True, cwd=REPO).stdout.strip().split("|")
    cls, message, seconds, rss_mb, poppler_mb = out[0], out[1], *map(float, out[2:])
    assert cls == "too_large" and message.startswith("more than 150,000 words"), out
    assert "\n" not in message and int(message.split("page ")[1].rstrip(")")) < 20
    assert seconds < 20 and rss_mb < 300 and poppler_mb < 300, out


def test_word_cap_comes_from_the_settings():
    from loralay_build.conf import load_settings
    from loralay_build.pdf.steps import extract_limits

    assert ExtractLimits().max_words == 2_000_000
    s = load_settings("local", None, {"max_words_per_document": 5000, "extract_timeout_s": 7.0})
    limits = extract_limits(s.document(), s.limits())
    assert (limits.max_words, limits.timeout_s) == (5000, 7.0)


def test_page_without_area_is_corrupted_not_kept_with_empty_boxes(tmp_path):
    data = _qdf(tmp_path)
    # the root page-tree node lists itself after its 8 pages and counts 9: Poppler gives
    # the 9th page a 0 x 0 box and the previous page's words, every box [0, 0, 0, 0]
    root = data.index(b"  /Count 8\n")
    kids_end = data.index(b"  ]\n", root)
    obj = data.rindex(b" 0 obj", 0, root)
    num = data[data.rindex(b"\n", 0, obj) + 1:obj]
    data = (data[:root] + b"  /Count 9\n" + data[root + 11:kids_end] + b"    " + num
            + b" 0 R\n" + data[kids_end:])
    pdf = _write_fixed(data, tmp_path / "loop.pdf")
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True
                         ).stdout
    assert b'<page width="0.000000" height="0.000000">' in xml  # what Poppler makes of it
    result = extract_document(pdf, "loop")
    assert result == Failure(FailureClass.CORRUPTED, "page 9 has no area (0 x 0 pt): its "
                             "words would have no boxes")


@pytest.mark.parametrize("box", [b"0 0 -612 -792", b"-612 -792 0 0"])
def test_negative_mediabox_keeps_the_text_with_boxes_inside_the_page(tmp_path, box):
    import re

    data = re.sub(rb"/CropBox \[[^\]]*\]\n", b"", _qdf(tmp_path))
    data = re.sub(rb"/MediaBox \[[^\]]*\]", b"/MediaBox [" + box + b"]", data)
    pdf = _write_fixed(data, tmp_path / "negative.pdf")
    plain = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True)
    assert b"<word" not in plain.stdout  # Poppler alone sees no text at all
    doc = extract_document(pdf, "neg")
    original = extract_document(shared_path("corpus", "pdf", f"{SMALL}.pdf"), "orig")
    assert not isinstance(doc, Failure), doc
    assert sorted(doc.words) == sorted(original.words)  # a taller page may reorder a few
    assert [(p.width, p.height) for p in doc.pages] == [(612.0, 792.0)] * 8
    for x0, y0, x1, y1 in doc.boxes:
        assert 0 <= x0 <= x1 <= 612 and 0 <= y0 <= y1 <= 792
    widths = {round(b[2] - b[0], 3) for b in doc.boxes} - {0.0}
    assert widths == {round(b[2] - b[0], 3) for b in original.boxes} - {0.0}


def test_extracting_in_a_fresh_process_does_not_import_pandas():
    """`pa.array` on a Python list and `Array.to_numpy` import pandas on first use
    (0.2-0.3 s): paid by every `loralay extract` and every worker until the reader
    built its Arrow input from buffers. The words are still read (3 documents)."""
    code = ("import sys; from loralay_build.pdftext import extract_document; "
            "docs = [extract_document(p, 'x') for p in sys.argv[1:]]; "
            "print(min(len(d.words) for d in docs), 'pandas' in sys.modules)")
    pdfs = sorted((REPO / "data/sample/pdf").glob("en_*.pdf"))[1:4]
    out = subprocess.run([sys.executable, "-c", code, *map(str, pdfs)], capture_output=True,
                         text=True, cwd=REPO, check=True)
    words, imported = out.stdout.split()
    assert int(words) > 100 and imported == "False"


def test_clean_words_in_one_pass_equals_the_rule_word_by_word():
    """`clean_words` runs each step of the rule over the words joined by line breaks; on
    every raw word of the real PDFs (five languages, ligatures, Korean) and on 20,000
    seeded words mixing the characters the rule treats apart, it gives `clean_word`'s
    result, word for word."""
    import random
    import re as _re

    from loralay_build.pdftext.parse import clean_word, clean_words

    raws = []
    for pdf in _readable_pdfs()[::3]:
        xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"],
                             capture_output=True, check=True).stdout
        raws += _re.findall(rb'">([^<]*)</word>', xml)
    assert len(raws) > 100_000 and sum(not r.isascii() for r in raws) > 5000
    assert clean_words(raws) == [clean_word(r, True) for r in raws]
    rng = random.Random(15)
    pieces = ["a", "Z", "9", " ", "\t", "\x7f", "\x01", "\u00a0", "\u200b", "\u00ad",
              "\ufeff", "\uf8ff", "\ufb01", "\u0301", "e\u0301", "\u1100\u1161", "\u11a8",
              "\u2028", "\u3000", "\uffff", "&amp;", "&#1;", "&#10;", "&lt;", "&", "é", "한",
              "\ufffd", "\u2126", "\u00bd"]
    made = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 4))).encode()
            for _ in range(20_000)] + [b"\xff\xfe", b"\xe2\x82", b"ok\xc3"]
    for start in range(0, len(made), 50):  # chunks of 50: one odd word changes the chunk
        chunk = made[start:start + 50]
        assert clean_words(chunk) == [clean_word(r, True) for r in chunk], chunk
    assert clean_words([]) == []


def test_poppler_stderr_keeps_its_head_and_tail_only():
    """Poppler's stderr is read in the same loop as its words and bounded: its first
    64 KB and last 64 KB are kept, whatever a broken PDF makes it write."""
    from loralay_build.pdftext.poppler import _Said

    small = _Said()
    small.add(b"Syntax Error: one\n")
    small.add(b"Syntax Error: two\n")
    assert small.text() == b"Syntax Error: one\nSyntax Error: two\n"
    big = _Said()
    lines = [f"Syntax Error ({i}): Illegal character\n".encode() for i in range(20_000)]
    for i in range(0, len(lines), 37):
        big.add(b"".join(lines[i:i + 37]))
    text = big.text()
    everything = b"".join(lines)
    assert len(text) < 2 * _Said.KEEP + 100
    assert text.startswith(everything[:_Said.KEEP]) and text.endswith(everything[-_Said.KEEP:])
    assert f"[{len(everything) - 2 * _Said.KEEP} bytes left out]".encode() in text


def test_without_the_compiled_reader_extraction_is_the_same_and_a_build_says_so(
        monkeypatch, caplog):
    """A package built with no C compiler: the parser falls back to the NumPy/Arrow reader
    (same document, to the last bit) and a build warns once, naming the fix."""
    from loralay_build.pdf.pipeline import _note_slow_reader
    from loralay_build.pdftext import parse

    pdf = shared_path("corpus", "pdf", "pt_scielo_rsp_hindex.pdf")
    compiled = extract_document(pdf, "d")
    monkeypatch.setattr(parse, "read_chunk", None)
    assert parse.BBoxLayoutParser("x").reader == "columns"
    assert _columns_of(extract_document(pdf, "d")) == _columns_of(compiled)
    with caplog.at_level("WARNING", logger="loralay.build"):
        _note_slow_reader()
    assert "compiled reader of Poppler's output is not built" in caplog.text

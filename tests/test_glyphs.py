"""Glyph repair: ligature codes of fonts without a Unicode map, on PDFs made with real TeX
bitmap fonts (tests/fixtures/glyphs, see its README) and on a real 2012 thesis."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from loralay_build.conf import DocumentSettings, LimitSettings
from loralay_build.pdf.steps import DocumentJob, run_document_steps
from loralay_build.pdftext import extract_document
from loralay_build.pdftext.glyphs import (
    ENCODINGS,
    GLYPH_RULE,
    accepted_encodings,
    coded_form,
    decode,
    repair_glyphs,
)
from loralay_build.pdftext.parse import parse_bbox_layout
from loralay_build.records import Candidate, Document

from .conftest import REPO, shared_path
from .helpers.glyphs import FIXTURES, ligature_words

T1 = ENCODINGS["T1"]


def _parsed(pdf: Path) -> Document:
    """Poppler's words under the documented rule, before any repair."""
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True,
                         check=True).stdout
    return parse_bbox_layout(xml, pdf.stem)


def _is_t1_repair_of(new: str, raw: bytes) -> bool:
    """`new` is Poppler's word with some T1 ligature codes replaced, the rest U+FFFD."""
    pattern = ""
    for ch in coded_form(raw):
        code = ord(ch) - 0xF0000
        if code in T1:
            pattern += f"(?:{T1[code]}|\ufffd)"
        else:
            pattern += "\ufffd" if code >= 0 else re.escape(ch)
    return re.fullmatch(pattern, new) is not None


def test_t1_bitmap_fonts_have_no_unicode_map():
    out = subprocess.run(["pdffonts", str(FIXTURES / "ligatures-t1.pdf")], capture_output=True,
                         text=True, check=True).stdout.splitlines()[2:]
    assert out and all("Type 3" in row and row.split()[-3] == "no" for row in out)


def test_t1_pdf_ligature_words_repaired_and_no_correct_word_changed():
    pdf = FIXTURES / "ligatures-t1.pdf"
    before, doc, truth = _parsed(pdf), extract_document(pdf, "t1"), ligature_words()
    assert before.words != truth and len(before.words) == len(doc.words) == len(truth)
    broken = [i for i, w in enumerate(before.words) if "\ufffd" in w]
    fixed = [i for i in broken if doc.words[i] == truth[i]]
    assert len(broken) >= 100  # every ligature outside the typewriter line
    assert len(fixed) / len(broken) >= 0.95, [truth[i] for i in broken if i not in fixed]
    for i, (old, new) in enumerate(zip(before.words, doc.words)):
        if i not in broken:
            assert new == old == truth[i]
        else:  # repaired right, in part ("flu\ufffd" for "fluff") or not at all
            assert _is_t1_repair_of(new, before.raw_broken[i]), (new, truth[i])
            assert new == truth[i] or "\ufffd" in new
    changed = sum(a != b for a, b in zip(before.words, doc.words))
    assert (doc.words_repaired, doc.words_unrepaired) == (changed, len(broken) - len(fixed))
    assert doc.raw_broken == {}  # the raw bytes are not carried on


def test_word_end_code_needs_the_word_found_elsewhere():
    doc = extract_document(FIXTURES / "ligatures-t1.pdf", "t1")
    # "staff" is in the typewriter line, "fluff" nowhere else, "off" only broken
    assert doc.words.count("staff") == 3  # two in the text, both repaired
    assert "flu\ufffd" in doc.words and "o\ufffd" in doc.words


def _without_keywords(pdf: Path) -> tuple[Document, int]:
    """The document cut before its typewriter line: no unbroken ligature word is left."""
    doc = _parsed(pdf)
    cut = doc.words.index("Keywords:")
    raw = {i: r for i, r in doc.raw_broken.items() if i < cut}
    return Document("cut", doc.pages, words=doc.words[:cut], raw_broken=raw), len(raw)


def test_no_evidence_leaves_the_codes_as_they_were():
    doc, broken = _without_keywords(FIXTURES / "ligatures-t1.pdf")
    before = list(doc.words)
    counts = repair_glyphs(doc)
    assert counts.encodings == () and doc.words == before
    assert (doc.words_repaired, doc.words_unrepaired) == (0, broken) and broken >= 90


def test_the_abstract_handed_in_is_evidence():
    doc, broken = _without_keywords(FIXTURES / "ligatures-t1.pdf")
    truth = ligature_words()
    abstract = " ".join(truth[truth.index("Abstract.") + 1:truth.index("Definitions")])
    before = list(doc.words)
    counts = repair_glyphs(doc, evidence=[abstract])  # as the source's metadata has it
    assert counts.encodings == ("T1",)
    right = sum(new == truth[i] for i, (old, new) in enumerate(zip(before, doc.words))
                if old != new)
    assert right >= 0.95 * broken
    assert all(new == truth[i] or "\ufffd" in new for i, new in enumerate(doc.words))


def test_context_rule():
    def fix(raw: bytes, vocab: frozenset[str] = frozenset()) -> str:
        return decode(coded_form(raw), T1, vocab)
    assert fix(b"de\x1cnition") == "definition"
    assert fix(b"\x1crst") == "first" and fix(b"(\x1cgure") == "(figure"
    assert fix("Dé\x1cnition".encode()) == "Définition"
    assert fix(b"control-\x1dow") == "control-flow"
    # a lone code, one beside digits or punctuation: a symbol, not a ligature
    for raw in (b"\x1c", b"3\x1c4", b"(\x1b,", b"x\x1c.", b"\x1c-"):
        assert fix(raw) == coded_form(raw)
    assert fix(b"sta\x1b") == coded_form(b"sta\x1b")
    assert fix(b"sta\x1b", frozenset({"staff"})) == "staff"


def test_rival_reading_wins_when_the_document_prints_it():
    coded = [coded_form(b"c\x1bur"), coded_form(b"s\x1bur")]
    assert accepted_encodings(coded, frozenset({"cœur", "sœur"})) == ()
    assert accepted_encodings(coded, frozenset({"cffur", "sffur"})) == ("T1",)


def test_ot1_pdf_only_the_ffl_code_reaches_us_and_is_repaired():
    pdf = FIXTURES / "ligatures-ot1.pdf"
    before, doc = _parsed(pdf), extract_document(pdf, "ot1")
    changed = {(a, b) for a, b in zip(before.words, doc.words) if a != b}
    assert changed == {("shu\ufffde", "shuffle"), ("o\ufffdine", "offline"),
                       ("wa\ufffde", "waffle"), ("ba\ufffding", "baffling")}
    assert doc.words_unrepaired == 0
    # Poppler turned ff, fi, fl into white space: those words are split, not repaired
    assert "rst" in doc.words and "di" in doc.words


def test_real_thesis_with_t1_type3_fonts():
    pdf = shared_path("corpus", "pdf", "fr_these_malware_long.pdf")
    before, doc = _parsed(pdf), extract_document(pdf, "thesis")
    ligature = [i for i, r in before.raw_broken.items()
                if re.search(rb"[a-z\xa9][\x1b-\x1f]|[\x1b-\x1f][a-z]", r)]
    fixed = [i for i in ligature if "\ufffd" not in doc.words[i]]
    assert len(ligature) > 1600 and len(fixed) / len(ligature) >= 0.99
    changed = [i for i, (a, b) in enumerate(zip(before.words, doc.words)) if a != b]
    assert set(changed) <= set(before.raw_broken) and doc.words_repaired == len(changed)
    assert all(_is_t1_repair_of(doc.words[i], before.raw_broken[i]) for i in changed)
    assert doc.words.count("Définition") >= 40 and doc.words.count("flot") >= 200


@pytest.mark.e2e
def test_report_counts_repairs_per_document_and_older_runs_are_redone(tmp_path):
    line = next(x for x in shared_path("corpus", "manifest.jsonl").read_text().splitlines()
                if '"fr_these_malware_long"' in x)
    entry = json.loads(line)
    entry["file"] = str(shared_path("corpus", entry["file"]))
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps(entry) + "\n")
    out = tmp_path / "ds"
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                           "local", "--manifest", str(manifest), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    doc = extract_document(shared_path("corpus", entry["file"]), "thesis")
    assert report["glyphs"]["documents"] == {
        "fr_these_malware_long": {"repaired": doc.words_repaired,
                                  "unrepaired": doc.words_unrepaired}}
    assert report["glyphs"]["words_repaired"] == doc.words_repaired > 1600
    assert "## Glyph repair" in (out / "report.md").read_text()
    # a run made before the glyph rule stored the bare version: its document is redone
    for db in (out / "state").glob("shard-*.sqlite"):
        with sqlite3.connect(db) as con:
            con.execute("UPDATE ledger SET fingerprint = replace(fingerprint, ?, '')",
                        (f"+{GLYPH_RULE}",))
    again = subprocess.run(proc.args, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "1 to do, of which 1 because loralay-build, Poppler or pdfium changed" in again.stderr


def test_abstract_from_metadata_decides_when_the_document_cannot():
    pdf = FIXTURES / "ligatures-t1-bare.pdf"
    truth = ligature_words()[:ligature_words().index("Keywords:")]
    alone = extract_document(pdf, "bare")
    broken = sum("\ufffd" in w for w in alone.words)
    assert alone.words_repaired == 0 and alone.words_unrepaired == broken >= 90
    assert alone.raw_broken  # kept for the stage that knows the abstract
    start, end = truth.index("Abstract.") + 1, truth.index("1")
    cand = Candidate("bare", "local", "en", {"en": " ".join(truth[start:end])},
                     pdf_path=str(pdf))
    work, res = run_document_steps(cand, DocumentJob(DocumentSettings(), LimitSettings()))
    assert res.failure is None
    processed = work.processed()
    body, match = processed.document, processed.matches[0]
    # the repaired abstract is found word for word and cut out, with its heading
    # ("Abstract." run in)
    assert (match.start, match.end, match.distance) == (start - 1, end, 0)
    rest = truth[:start - 1] + truth[end:]
    right = sum(w == t for w, t in zip(body.words, rest) if "\ufffd" not in w)
    assert len(body.words) == len(rest) and right == len(rest) - body.words_unrepaired
    assert body.words_repaired >= 0.95 * broken

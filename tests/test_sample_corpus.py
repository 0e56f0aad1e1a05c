"""The embedded sample corpus (data/sample) is what `make demo` and the CI smoke run build
from, so it must be what its manifest says: files intact, abstracts really printed (in
reading order, in Poppler's text layer) and broken files really broken."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from samples.model import SampleTextError, doc_from_dict, load_docs, read_order

from loralay_build.records import Candidate
from loralay_build.sources.local import read_manifest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "data" / "sample"
MANIFEST = SAMPLE / "manifest.jsonl"
TEXTS = SAMPLE / "texts"
KINDS = {"article", "corrupted", "encrypted", "scanned", "cover-page"}
BROKEN = {"corrupted", "encrypted", "scanned"}
FIELDS = ["id", "file", "language", "abstracts", "title", "publication_date", "pdf_url",
          "kind", "pages", "bytes", "sha256", "notes"]
HAL_NOTICE = "HAL is a multi-disciplinary open access archive"

poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="Poppler not installed")


def entries() -> list[dict]:
    return [json.loads(line) for line in MANIFEST.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def by_kind(*kinds: str) -> list[dict]:
    return [e for e in entries() if e["kind"] in kinds]


def poppler_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def norm(text: str) -> str:
    """Line breaks become spaces and a line-end hyphen joins its word, as a reader would."""
    text = unicodedata.normalize("NFKC", text).replace("\u00ad", "")
    text = re.sub(r"-\s+", "-", text)
    return " ".join(text.split())


def text_layer(entry: dict, *extra: str) -> str:
    out = poppler_run("pdftotext", *extra, str(SAMPLE / entry["file"]), "-")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_manifest_lines_have_the_corpus_fields_in_order():
    ids = set()
    for e in entries():
        assert list(e) == FIELDS, e["id"]
        assert re.fullmatch(r"[a-z]{2}_[a-z0-9_-]+", e["id"]) and e["id"] not in ids
        ids.add(e["id"])
        assert e["id"].startswith(e["language"] + "_")
        assert e["file"] == f"pdf/{e['id']}.pdf"
        assert e["kind"] in KINDS
        assert next(iter(e["abstracts"])) == e["language"], "body language comes first"
        assert all(isinstance(t, str) and len(t.split()) >= 10 for t in e["abstracts"].values())
        date = e["publication_date"]
        assert date is None or re.fullmatch(r"20\d\d(-\d\d(-\d\d)?)?", date)
        assert e["title"] and e["notes"] and 1 <= e["pages"] <= 8


def test_corpus_covers_languages_kinds_and_layout_cases():
    es = entries()
    readable = [e for e in es if e["kind"] not in BROKEN]
    assert {e["language"] for e in readable} == {"en", "fr", "es", "pt", "ko"}
    assert {e["kind"] for e in es} == KINDS
    assert sum(len(e["abstracts"]) > 1 for e in readable) >= 4
    assert any(e["publication_date"] is None for e in es)
    assert len({e["publication_date"][:4] for e in es if e["publication_date"]}) >= 6
    assert {e["pages"] for e in readable} >= {3, 4}


def test_files_match_manifest_and_stay_small():
    es = entries()
    for e in es:
        data = (SAMPLE / e["file"]).read_bytes()
        assert len(data) == e["bytes"], e["id"]
        assert hashlib.sha256(data).hexdigest() == e["sha256"], e["id"]
    assert {p.name for p in (SAMPLE / "pdf").iterdir()} == {Path(e["file"]).name for e in es}
    assert sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file()) < 3_000_000


def test_local_source_accepts_every_line():
    items = [line.item for line in read_manifest(MANIFEST)]
    assert all(isinstance(c, Candidate) for c in items), items
    assert [c.id for c in items] == [e["id"] for e in entries()]
    assert all(Path(c.pdf_path).is_file() for c in items)


@poppler
@pytest.mark.parametrize("entry", by_kind("article", "cover-page"), ids=lambda e: e["id"])
def test_every_abstract_is_in_the_text_layer_in_reading_order(entry):
    info = poppler_run("pdfinfo", str(SAMPLE / entry["file"])).stdout
    assert re.search(r"^Pages:\s+(\d+)$", info, re.M).group(1) == str(entry["pages"])
    body = norm(text_layer(entry))
    for lang, abstract in entry["abstracts"].items():
        assert norm(abstract) in body, f"{entry['id']}: {lang} abstract not found"


@poppler
def test_cover_page_is_page_one_and_holds_no_abstract():
    (entry,) = by_kind("cover-page")
    page1 = norm(text_layer(entry, "-f", "1", "-l", "1"))
    assert HAL_NOTICE in page1
    assert all(norm(a)[:60] not in page1 for a in entry["abstracts"].values())


@poppler
def test_special_layouts_are_really_printed_that_way():
    es = {e["id"]: e for e in entries()}
    graphs = es["en_twocol_graphs"]
    page1 = text_layer(graphs, "-bbox", "-f", "1", "-l", "1")
    first, last = graphs["abstracts"]["en"].split()[0], graphs["abstracts"]["en"].split()[-1]
    x = {w: float(m) for m, w in re.findall(r'xMin="([\d.]+)"[^>]*>([^<]+)</word>', page1)}
    assert x[first] < 297 < x[last], "the abstract should continue in the right column"
    acoustique = es["fr_twocol_acoustique"]
    text = norm(text_layer(acoustique))
    assert text.index(norm(acoustique["abstracts"]["en"])) > text.index("Références")
    trial = norm(es["en_structured_trial"]["abstracts"]["en"])
    assert all(s in trial for s in ("Background:", "Methods:", "Results:", "Conclusions:"))
    assert re.search(r"[\uac00-\ud7a3]{2,}", text_layer(es["ko_kci_wifi_parks"]))


@poppler
def test_corrupted_file_does_not_open():
    """A PDF cut short (it starts as one, it is the size the manifest says) is refused by
    Poppler for its structure, not for a missing file or a missing tool."""
    entries = by_kind("corrupted")
    assert entries
    for entry in entries:
        path = SAMPLE / entry["file"]
        assert path.read_bytes()[:5] == b"%PDF-" and path.stat().st_size == entry["bytes"]
        info = poppler_run("pdfinfo", str(path))
        assert info.returncode == 1 and "Syntax Error" in info.stderr, info.stderr


@poppler
def test_encrypted_file_needs_its_password():
    for entry in by_kind("encrypted"):
        out = poppler_run("pdftotext", str(SAMPLE / entry["file"]), "-")
        assert out.returncode != 0 and "Incorrect password" in out.stderr
        unlocked = norm(text_layer(entry, "-upw", "user"))
        assert all(norm(a) in unlocked for a in entry["abstracts"].values())


@poppler
def test_scanned_file_has_images_and_no_words():
    for entry in by_kind("scanned"):
        assert text_layer(entry).split() == []
        fonts = poppler_run("pdffonts", str(SAMPLE / entry["file"])).stdout.splitlines()
        assert len(fonts) == 2, "header only: no font at all"
        images = poppler_run("pdfimages", "-list", str(SAMPLE / entry["file"])).stdout
        assert len(images.splitlines()) - 2 == entry["pages"]


def _load_generator():
    if importlib.util.find_spec("fpdf") is None or shutil.which("qpdf") is None:
        pytest.skip("fpdf2 (dev extra) or qpdf not installed")
    from samples import make

    return make


def test_texts_are_one_yaml_file_per_document_in_manifest_order():
    assert read_order(TEXTS) == [e["id"] for e in entries()]
    assert sorted(p.stem for p in TEXTS.glob("*.yaml")) == sorted(read_order(TEXTS))


def test_manifest_says_what_the_texts_say():
    """A cheap staleness check that needs no fpdf2: the printed texts are the manifest's."""
    for doc, e in zip(load_docs(TEXTS), entries(), strict=True):
        assert doc.id == e["id"] and doc.language == e["language"] and doc.kind == e["kind"]
        assert {a.lang: a.text for a in doc.abstracts} == e["abstracts"]
        assert (doc.title, doc.date, doc.notes) == (e["title"], e["publication_date"],
                                                    e["notes"])


def test_a_typo_in_a_text_file_is_an_error_not_a_default():
    minimal = {"language": "en", "kind": "article", "title": "T", "authors": "A",
               "affiliation": "X", "venue": "V", "date": "2020", "notes": "n",
               "abstracts": [{"lang": "en", "label": "Abstract", "text": "a\n\nb"}],
               "body": "# 1 Intro\n\nsome\ntext", "references": "r"}
    doc = doc_from_dict("en_x", minimal)
    assert doc.abstracts[0].text == "a\nb" and [b.kind for b in doc.body] == ["h", "p"]
    assert doc.body[1].text == "some text"
    with pytest.raises(SampleTextError, match="unknown key.*colums"):
        doc_from_dict("en_x", {**minimal, "colums": 2})
    with pytest.raises(SampleTextError, match="abstract 1: unknown key.*keyword"):
        doc_from_dict("en_x", {**minimal, "abstracts": [{**minimal["abstracts"][0],
                                                         "keyword": "k"}]})


def test_the_data_model_loads_without_the_rendering_tools():
    """fpdf2 and Pillow are dev dependencies: reading the corpus must not need them."""
    code = (f"import sys; sys.path.insert(0, {str(REPO / 'scripts')!r}); "
            "import samples.make, samples.model; "
            "assert not {'fpdf', 'PIL'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


@poppler
def test_committed_corpus_is_what_the_script_makes(tmp_path):
    """Texts edited without re-running the script would leave a stale corpus. Bytes depend
    on tool versions (fonts, Pillow, qpdf), so only the content is compared."""
    made = _load_generator().build(tmp_path)
    drop = ("bytes", "sha256")
    assert [{k: v for k, v in e.items() if k not in drop} for e in made] == [
        {k: v for k, v in e.items() if k not in drop} for e in entries()]

"""`loralay show`: the picture's pixels say what the dataset kept and what the build cut.

Kept words come from the dataset row; the cut words are found here independently of
`preview.py`'s own bookkeeping: every word Poppler extracts on the page whose box is not a
kept box was removed, and must sit under a shade of its language's colour.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from PIL import Image

from loralay_build.cli import main
from loralay_build.dataset import find_row
from loralay_build.errors import ConfigError
from loralay_build.pdftext import extract_document
from loralay_build.preview import (
    COVER_COLOUR,
    LANG_COLOURS,
    SCALE,
    SHADE_ALPHA,
    TREE_WIDTH,
    WORD,
    show_document,
)

from .conftest import REPO

pytestmark = pytest.mark.e2e

DOC = "fr_hal_cover_glaciers"  # a HAL cover page, a French and an English abstract


@pytest.fixture(scope="module")
def sample(built_sample) -> Path:
    return built_sample[0]


def tint(colour: tuple[int, int, int]) -> np.ndarray:
    """What a shade of `colour` makes of white paper."""
    a = SHADE_ALPHA / 255
    return np.array([255 * (1 - a) + c * a for c in colour])


def _px(v: float) -> int:
    return round(float(v) * SCALE)


def tinted_share(img: np.ndarray, box, colours) -> float:
    """Share of the pixels strictly inside `box` that are white paper under one of `colours`."""
    x0, y0, x1, y1 = (_px(v) for v in box)
    inner = img[y0 + 1:y1, x0 + 1:x1].reshape(-1, 3).astype(float)
    if not len(inner):
        return 1.0
    hits = np.zeros(len(inner), dtype=bool)
    for c in colours:
        hits |= (np.abs(inner - tint(c)) <= 2).all(axis=1)
    return float(hits.mean())


def cut_boxes(sample: Path, page: int) -> tuple[list, list]:
    """(kept boxes, removed boxes) of `page`: removed = extracted but not kept."""
    _, row = find_row(sample, DOC)
    kept = [b for b, p in zip(row["article_bboxes"], row["article_pages"], strict=True)
            if p == page]
    keys = {tuple(float(v) for v in b) for b in kept}  # float32 values, exactly
    doc = extract_document(REPO / "data/sample/pdf/fr_hal_cover_glaciers.pdf", DOC)
    removed = [b for b, p in zip(doc.boxes, doc.word_pages, strict=True)
               if p == page and tuple(float(np.float32(v)) for v in b) not in keys]
    return kept, removed


def test_kept_words_outlined_and_abstracts_shaded(sample, tmp_path):
    png = show_document(sample, DOC, page=2, out=tmp_path / "p2.png")
    img = np.asarray(Image.open(png).convert("RGB"))
    kept, removed = cut_boxes(sample, 2)
    assert len(kept) > 100 and len(removed) > 100
    for x0, y0, x1, _ in kept:  # the top edge of every kept word's box is drawn
        mid = (_px(x0) + max(_px(x1), _px(x0) + 1)) // 2
        assert tuple(img[_px(y0), mid]) == WORD
    langs = (LANG_COLOURS["fr"], LANG_COLOURS["en"])
    shaded = [tinted_share(img, b, langs) for b in removed]
    assert min(shaded) > 0.2, "a removed abstract word is not shaded"
    assert max(tinted_share(img, b, langs) for b in kept) < 0.05, "a kept word is shaded"


def test_cover_page_shaded_and_caption(sample, tmp_path):
    png = show_document(sample, DOC, page=1, out=tmp_path / "p1.png")
    img = np.asarray(Image.open(png).convert("RGB"))
    kept, removed = cut_boxes(sample, 1)
    assert not kept and len(removed) > 50
    assert min(tinted_share(img, b, [COVER_COLOUR]) for b in removed) > 0.2
    assert img.shape[0] > _px(842) + 40  # the caption band under the page


def test_default_page_and_cli(sample, tmp_path):
    run = CliRunner().invoke(main, ["show", str(sample), DOC, "--out", str(tmp_path / "x.png")])
    assert run.exit_code == 0, run.output
    assert (tmp_path / "x.png").is_file()
    # the page, and the section tree's panel beside it (the sample paper has headings)
    assert Image.open(tmp_path / "x.png").size[0] == _px(595.28) + _px(TREE_WIDTH)


def test_errors_are_one_line(sample, tmp_path):
    with pytest.raises(ConfigError, match="no document"):
        show_document(sample, "nope", out=tmp_path / "n.png")
    with pytest.raises(ConfigError, match="no page 9"):
        show_document(sample, DOC, page=9, out=tmp_path / "n.png")
    gone = tmp_path / "gone"
    shutil.copytree(sample, gone, ignore=shutil.ignore_patterns("*.lock"))
    with sqlite3.connect(gone / "state" / "fetch.sqlite") as conn:
        body = json.loads(conn.execute("SELECT body FROM candidates WHERE id=?",
                                       (DOC,)).fetchone()[0])
        body["pdf_path"] = str(tmp_path / "moved.pdf")
        conn.execute("UPDATE candidates SET body=? WHERE id=?", (json.dumps(body), DOC))
    config = gone / "report" / "config.yaml"
    settings = yaml.safe_load(config.read_text())
    settings["manifest"] = str(tmp_path / "no-manifest.jsonl")
    config.write_text(yaml.safe_dump(settings))
    run = CliRunner().invoke(main, ["show", str(gone), DOC])
    assert run.exit_code == 2
    assert run.output.count("\n") == 1 and "its PDF is gone" in run.output
    assert "moved.pdf" in run.output


def test_a_dropped_id_says_why_and_a_typo_gets_the_close_ids(sample, tmp_path):
    """Issue 46, 6: `show` said "no document 'X'" for a paper the report knows was dropped
    as `scanned`, and nothing helpful for a typo."""
    run = CliRunner().invoke(main, ["show", str(sample), "pt_scanned_aves"])
    assert run.exit_code == 2
    assert run.output == (f"loralay: {sample}: no document 'pt_scanned_aves' in the dataset: "
                          "the build dropped it as scanned at extract (no text layer (0 words "
                          "on 2 pages); --ocr auto would read it); "
                          f"{sample / 'report.md'} lists every drop\n")
    run = CliRunner().invoke(main, ["show", str(sample), "en_twocol_graph"])
    assert run.output == (f"loralay: {sample}: no document 'en_twocol_graph' in the dataset; "
                          "did you mean 'en_twocol_graphs'?\n")
    bare = tmp_path / "bare"  # the data alone, no report: the ids come from the rows
    shutil.copytree(sample / "data", bare / "data")
    run = CliRunner().invoke(main, ["show", str(bare), "ko_kci_wifi_park"])
    assert run.exit_code == 2
    assert run.output.endswith("in the dataset; did you mean 'ko_kci_wifi_parks'?\n")
    run = CliRunner().invoke(main, ["show", str(sample), "zzz"])
    assert run.output == f"loralay: {sample}: no document 'zzz' in the dataset\n"


def test_a_pdf_is_previewed_before_any_build_with_what_the_cut_would_take(sample, tmp_path):
    """Issue 46, 5: `loralay show FILE.pdf` draws what a build would make of a PDF; with
    `--abstract` the words the cut would take are those the build took."""
    import json as _json  # noqa: PLC0415

    from loralay_build.preview import preview_cuts  # noqa: PLC0415

    pdf = REPO / "data/sample/pdf/fr_hal_cover_glaciers.pdf"
    line = next(_json.loads(x) for x in (REPO / "data/sample/manifest.jsonl").open()
                if _json.loads(x)["id"] == DOC)
    row, cuts, notes = preview_cuts(pdf, line["abstracts"]["fr"], None, None)
    assert notes == ["preview of fr_hal_cover_glaciers.pdf: not a dataset row; language fr "
                     "(detected)"]
    kept, removed = cut_boxes(sample, 2)  # what the build cut from page 2 (fr and en)
    fr_cut = {tuple(float(np.float32(v)) for v in b) for p, b, lang in cuts.words
              if p == 2 and lang == "fr"}
    built = {tuple(float(np.float32(v)) for v in b) for b in removed}
    assert fr_cut and fr_cut < built  # the French abstract alone: the English one stays
    assert row["article_words"][:3] and len(row["article_labels"]) == len(row["article_words"])
    run = CliRunner().invoke(main, ["show", str(pdf), "--abstract", line["abstracts"]["fr"],
                                    "--out", str(tmp_path / "p.png")])
    assert run.exit_code == 0, run.output
    img = np.asarray(Image.open(tmp_path / "p.png").convert("RGB"))
    assert min(tinted_share(img, box, [LANG_COLOURS["fr"]]) for box in fr_cut) > 0.2
    assert max(tinted_share(img, box, [LANG_COLOURS["fr"]]) for box in built - fr_cut) < 0.05
    _, _, bare = preview_cuts(pdf, None, "fr", None)
    assert bare[1].startswith("no --abstract given: nothing cut")
    scanned = CliRunner().invoke(main, ["show", str(REPO / "data/sample/pdf/pt_scanned_aves.pdf")])
    assert scanned.exit_code == 2 and scanned.output.endswith(
        "a build would drop it: scanned: no text layer (0 words on 2 pages); "
        "--ocr auto would read it\n")

"""`loralay export vila`: VILA's token JSON, I-VILA text and H-VILA groups.

The rules are checked three ways: small hand cases; every page of the sample dataset and of
the shared corpus against the rule written out independently here; and, where VILA's own
preprocessors import (`pip install --no-deps vila layoutparser pysbd` + opencv), against
VILA's `insert_layout_indicator`, `clean_group_ids`, `union_box` and
`replace_unicode_tokens` themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from loralay_build import api
from loralay_build.cli import main
from loralay_build.errors import ConfigError
from loralay_build.export import VilaOptions, export_vila
from loralay_build.export.vila import (
    UNK,
    indicator_text,
    points_box,
    renumber,
    vila_word,
)

from .conftest import REPO
from .helpers.vila import load_vila

SPLITS = ("train", "dev", "test")


@pytest.fixture(scope="module")
def sample(built_sample) -> Path:
    return built_sample[0]


@pytest.fixture(scope="module")
def corpus(built_corpus) -> Path:
    return built_corpus[0]


def test_unk_rule():
    assert vila_word("\uf8ff") == UNK  # private use, seen in VILA's own test PDFs
    assert vila_word("\u0303") == UNK  # combining tilde alone
    assert vila_word("\u00a0\u200b") == UNK  # no-break space + zero-width space
    assert vila_word("a\uf8ff") == "a\uf8ff"  # one ordinary character keeps the word
    assert vila_word("[BLK]") == "[BLK]"


def test_points_box_rescales_only_large_pages():
    assert points_box([10.7, 20.2, 30.9, 40.99], 595.28, 841.89) == [10, 20, 30, 40]
    assert points_box([30, 40, 10, 20], 612, 792) == [10, 20, 30, 40]  # inverted corners
    # a 1224 x 1584 page: one factor, from the larger side, for both axes
    f = 1000 / 1584
    # (1584 * f is 999.99..., truncated as VILA's int() does)
    assert points_box([1224, 1584, 1224, 1584], 1224, 1584) == [int(1224 * f), int(1584 * f),
                                                                 int(1224 * f), int(1584 * f)]
    assert points_box([1500, 100, 1600, 200], 1600, 900) == [937, 62, 1000, 125]


def test_renumber_and_indicator():
    assert renumber([7, 7, 9, 12, 12]) == [0, 0, 1, 2, 2]
    words = ["a", "b", "c", "d", "e", "f"]
    # a group that comes back after another is a new run, as itertools.groupby makes it
    assert indicator_text(words, [0, 0, 1, 1, 0, 2], "[BLK]") == "a b [BLK] c d [BLK] e [BLK] f"
    assert indicator_text(words[:1], [5], "[SEP]") == "a"
    assert indicator_text([], [], "[BLK]") == ""
    assert indicator_text(["[BLK]", "x"], [0, 0], "[BLK]") == "BLK x"  # VILA's clean_text


def test_options_are_checked():
    with pytest.raises(ValueError, match="group"):
        VilaOptions(group="word")


def _pages(out: Path, split: str) -> tuple[list[dict], dict]:
    obj = json.loads((out / f"{split}-token.json").read_text(encoding="utf-8"))
    return obj["data"], obj


def expected_text(words: list[str], ids: list[int], token: str) -> str:
    """The rule written out again, position by position: a token wherever the id changes."""
    parts: list[str] = []
    for i, w in enumerate(words):
        if i and ids[i] != ids[i - 1]:
            parts.append(token)
        parts.append(w.strip("[]") if w in ("[BLK]", "[SEP]") else w)
    return " ".join(parts)


# VILA's datasets/s2-vl-utils/config.json `selected_categories`, numbered in order
VILA_S2VL = {name: k for k, name in enumerate(
    ["Title", "Author", "Abstract", "Keywords", "Section", "Paragraph", "List", "Bibliography",
     "Equation", "Algorithm", "Figure", "Table", "Caption", "Header", "Footer", "Footnote"])}


def check_export(out: Path, group: str, token: str) -> int:
    """Every page: VILA's columns consistent, ids from 0, indicator rule, groups, files."""
    checked = 0
    for split in SPLITS:
        if not (out / f"{split}-token.json").exists():
            continue
        data, obj = _pages(out, split)
        assert obj["labels"] == VILA_S2VL and len(obj["files"]) == len(data)
        groups = [json.loads(x) for x in (out / f"{split}-groups.jsonl").open()]
        for page, file, grp in zip(data, obj["files"], groups, strict=True):
            n = len(page["words"])
            assert n and all(len(page[k]) == n for k in ("bbox", "labels", "block_ids",
                                                         "line_ids"))
            assert set(page["labels"]) <= set(range(16)) and grp["file"] == file
            for key in ("block_ids", "line_ids"):
                assert page[key][0] == 0 and sorted(set(page[key])) == list(range(
                    max(page[key]) + 1))
            assert all(isinstance(v, int) and 0 <= v <= 1000 for b in page["bbox"] for v in b)
            ids = page["block_ids" if group == "block" else "line_ids"]
            assert page["ivila_text"] == expected_text(page["words"], ids, token)
            assert [w for g in grp["groups"] for w in g["words"]] == page["words"]
            assert sum(g["word_count"] for g in grp["groups"]) == n
            checked += 1
        docs = [json.loads(x) for x in (out / f"{split}-docs.jsonl").open()]
        by_file = dict(zip(obj["files"], data, strict=True))
        for d in docs:
            texts = [by_file[f]["ivila_text"] for f in d["files"]]
            assert d["ivila_text"] == f" {token} ".join(texts)
            assert all(f.startswith(d["article_id"] + "-") for f in d["files"])
    return checked


@pytest.mark.e2e
def test_sample_export_loads_as_vila_does(sample, tmp_path):
    from datasets import load_dataset

    out = tmp_path / "vila"
    summary = export_vila(sample, out)
    assert json.loads((out / "labels.json").read_text()) == {
        str(v): k for k, v in VILA_S2VL.items()}
    files = {s: str(out / f"{s}-token.json") for s in SPLITS}
    ds = load_dataset("json", data_files=files, field="data")
    assert {s: ds[s].num_rows for s in SPLITS} == {s: summary["splits"][s]["pages"]
                                                   for s in SPLITS}
    assert {"words", "bbox", "labels", "block_ids", "line_ids"} <= set(ds["train"].features)
    assert check_export(out, "block", "[BLK]") == sum(ds[s].num_rows for s in SPLITS)
    assert summary["splits"]["train"]["blocks_per_page"]["mean"] > 0


@pytest.mark.parametrize(("group", "bbox", "indicator"),
                         [("line", "norm1000", "SEP"), ("block", "points", "BLK")])
@pytest.mark.e2e
def test_corpus_every_page_follows_the_rule(corpus, tmp_path, group, bbox, indicator):
    out = tmp_path / "vila"
    export_vila(corpus, out, VilaOptions(group=group, bbox=bbox, indicator=indicator))
    assert check_export(out, group, f"[{indicator}]") > 100


@pytest.mark.e2e
def test_matches_vila_own_code(sample, corpus, tmp_path):
    vila = load_vila()  # skips when VILA's preprocessors cannot be imported
    for ds, n in ((sample, 20), (corpus, 300)):
        out = tmp_path / ds.parent.name
        export_vila(ds, out)
        assert vila.check_split_files(out, SPLITS) >= n
        assert vila.check_boxes(ds) > 1000


@pytest.mark.e2e
def test_cli_export_and_errors(sample, tmp_path):
    run = CliRunner().invoke(main, ["export", "vila", str(sample), "--out",
                                    str(tmp_path / "v"), "--group", "line"])
    assert run.exit_code == 0, run.output
    assert "train:" in run.output and "blocks/page" in run.output
    bad = CliRunner().invoke(main, ["export", "vila", str(tmp_path), "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "no data/ folder" in bad.output
    with pytest.raises(ConfigError):
        export_vila(tmp_path / "missing", tmp_path / "o")


@pytest.mark.e2e
def test_published_features_are_refused(tmp_path):
    out = tmp_path / "pub"
    api.build("local", out, manifest=str(REPO / "data/sample/manifest.jsonl"), workers=2,
              features="published")
    with pytest.raises(ConfigError, match="published"):
        export_vila(out, tmp_path / "o")


def test_labels_are_vilas_ids_of_the_words_labels():
    from loralay_build.export.vila import VilaOptions, page_records

    names = ["header", "section", "paragraph", "paragraph", "caption", "footer"]
    row = {"article_id": "d", "article_words": ["H", "1", "Text", "more", "Fig.", "2"],
           "article_bboxes": [[10, 10 + 20 * i, 50, 20 + 20 * i] for i in range(6)],
           "article_norm_bboxes": [[0, 0, 1, 1]] * 6, "article_pages": [1] * 6,
           "article_line_ids": list(range(6)), "article_block_ids": [0, 1, 2, 2, 3, 4],
           "article_labels": names, "page_sizes": [[600.0, 800.0]]}
    (page,) = page_records(row, VilaOptions())
    assert page["labels"] == [VILA_S2VL[n.capitalize()] for n in names] == [13, 4, 5, 5, 12, 14]


def test_help_and_docs_advise_line_for_poppler_groups_only():
    """Issue 41 §7: `--group line` is the advice for Poppler's one-word blocks, not for the
    default geometric blocks (whose statistics docs/outputs.md quotes)."""
    text = " ".join(CliRunner().invoke(main, ["export", "vila", "--help"]).output.split())
    assert "line for a dataset built with `groups: poppler`" in text
    assert "line when Poppler splits pages" not in text
    docs = " ".join((REPO / "docs" / "outputs.md").read_text(encoding="utf-8").split())
    assert "With the default `groups: geometry` the blocks are" in docs
    assert "A dataset built with `groups: poppler` has Poppler's blocks" in docs


def test_stored_ids_and_an_older_datasets_names_give_the_same_export():
    """A dataset built before `article_labels` became ClassLabel ids holds the names: its
    export is the same as the ids' (one map, `loralay_build.labels`)."""
    from loralay_build.export.vila import VilaOptions, page_records
    from loralay_build.labels import CODE

    names = ["title", "author", "paragraph", "table", "footnote"]
    row = {"article_id": "d", "article_words": ["T", "A", "p", "t", "f"],
           "article_bboxes": [[10, 10 + 20 * i, 50, 20 + 20 * i] for i in range(5)],
           "article_norm_bboxes": [[0, 0, 1, 1]] * 5, "article_pages": [1] * 5,
           "article_line_ids": list(range(5)), "article_block_ids": list(range(5)),
           "page_sizes": [[600.0, 800.0]]}
    (by_name,) = page_records({**row, "article_labels": names}, VilaOptions())
    (by_id,) = page_records({**row, "article_labels": [CODE[n] for n in names]},
                            VilaOptions())
    assert by_name == by_id and by_id["labels"] == [0, 1, 5, 11, 15]
    with pytest.raises(ValueError, match="label id 16"):
        list(page_records({**row, "article_labels": [16] * 5}, VilaOptions()))


@pytest.mark.e2e
def test_classlabel_names_are_the_vila_exports_map(sample, tmp_path):
    """Issue 46, 2: `load_dataset` in a new process shows the label map as a ClassLabel,
    the same ids and names (VILA's capitalisation) as the VILA export's `labels.json`,
    and each word's stored id is the label the export gives it."""
    import subprocess
    import sys

    code = ("import json, sys; from datasets import load_dataset; "
            "ds = load_dataset(sys.argv[1]); f = ds['train'].features['article_labels']; "
            "row = ds['train'][0]; "
            "print(json.dumps([type(f).__name__, type(f.feature).__name__, f.feature.names, "
            "row['article_id'], row['article_labels']]))")
    proc = subprocess.run([sys.executable, "-c", code, str(sample)], capture_output=True,
                          text=True, check=True)
    kind, inner, names, doc_id, ids = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (kind, inner) == ("List", "ClassLabel")
    out = tmp_path / "vila"
    export_vila(sample, out)
    vila_map = json.loads((out / "labels.json").read_text())
    assert [n.capitalize() for n in names] == [vila_map[str(k)] for k in range(len(vila_map))]
    assert {n.capitalize(): k for k, n in enumerate(names)} == VILA_S2VL
    token = json.loads((out / "train-token.json").read_text())
    pages = [p for f, p in zip(token["files"], token["data"], strict=True)
             if f.startswith(f"{doc_id}-")]
    assert pages and [k for p in pages for k in p["labels"]] == ids

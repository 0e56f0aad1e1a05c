"""The dataset card (`DIR/README.md`): YAML that `datasets` reads, prose that people read.

Why the YAML is explicit: with `configs[].data_files` naming `data/{split}-*.parquet`,
`load_dataset(DIR)` (or `load_dataset(DIR, config_name)`) never guesses, so run state,
reports and PDFs beside the data are never mistaken for splits; and
`dataset_info.features` is generated from the same `Features` as the Parquet schema, so
the card cannot drift from the files (the old cards documented `norm_article_bboxes`
while the data said `article_norm_bboxes`).

Why `huggingface_hub.DatasetCard`: the front matter is built as `DatasetCardData` and
filled by the same public helpers `push_to_hub` uses (`MetadataConfigs` and
`DatasetInfosDict.to_dataset_card_data`), so the YAML has the shape the Hub and
`datasets` expect, without anchors, and without calling private `Features` methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets import Features, List, Value
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from ..atomic import write_text_atomic
from ..labels import LABELS
from ..licenses import UNKNOWN, is_hub_license
from ..splits import SPLITS
from .features import COMPACT, PUBLISHED, features_for
from .parquet import DATA_DIR

CARD_NAME = "README.md"
MULTILINGUAL = "multilingual"  # what a driver without one main language may pass


@dataclass(frozen=True, slots=True)
class CardFacts:
    """What the driver knows about the run that the card must tell; counts come from the writer.

    `language` is the run's main language (ISO 639-1) when it has one; None, or the
    legacy "multilingual", when each document brings its own. `languages` are language
    tags to declare; `write_dataset` adds every language it wrote, so a local build's
    card names its languages too. `config_name` is what `load_dataset(DIR, config_name)`
    accepts (e.g. "scielo_es", as the published SciELO dataset); it is also the default.
    `filters` are one sentence each ("pages <= p95 = 31"); `thresholds` are the computed
    values (e.g. `Thresholds.to_json()`); `split_rule` says how documents were assigned.
    """

    name: str
    source: str
    language: str | None = None
    config_name: str = "default"
    pretty_name: str | None = None
    license: str | None = None  # the card's tag as the user set it; None: from the rows
    license_counts: Mapping[str, int] = field(default_factory=dict)  # licence id -> rows
    languages: Sequence[str] = ()
    split_rule: str = ""
    filters: Sequence[str] = ()
    thresholds: Mapping[str, Any] = field(default_factory=dict)
    source_terms_url: str | None = None
    notes: Sequence[str] = ()
    # the per-document settings the card's sentences about the words follow (their order,
    # lines, blocks and labels): the run's `groups`, `labels` and `drop_labels`
    groups: str = "geometry"
    labels: str = "rules"
    drop_labels: Sequence[str] = ()
    images: bool = False  # a second config `images` (write/images.py) beside the main one
    counts: Mapping[str, int] | None = None  # rows per split as decided; None: as written
    # the exact files of each split (`write/shards.py` names them after their content, so
    # `datasets`' cache, keyed on the card, never serves an earlier build's rows)
    data_files: Mapping[str, Sequence[str]] = field(default_factory=dict)
    image_files: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # language -> the splits holding its rows: one config per language (`language_configs`)
    language_splits: Mapping[str, Sequence[str]] = field(default_factory=dict)
    dropped: Mapping[str, int] = field(default_factory=dict)  # failure class -> papers left out
    ocr_rows: int = 0  # rows holding words read by OCR (`ocr_pages` not empty)
    ocr_pages: int = 0  # and their pages
    version: int = 1  # the dataset's version: 1 when built, one more per refresh
    changelog: Sequence[str] = ()  # one line of counts per version, oldest first

    def language_tags(self) -> list[str]:
        """Every language the card declares, sorted; never the word "multilingual"."""
        tags = set(self.languages)
        if self.language and self.language != MULTILINGUAL:
            tags.add(self.language)
        return sorted(t for t in tags if t and t != MULTILINGUAL)

    def multilinguality(self) -> str | None:
        tags = self.language_tags()
        if len(tags) > 1 or (not tags and self.language == MULTILINGUAL):
            return "multilingual"
        return "monolingual" if tags else None


def card_data(facts: CardFacts, counts: Mapping[str, int],
              features: str = COMPACT) -> DatasetCardData:
    """The front matter; splits with no rows are left out because they cannot be loaded."""
    present = [s for s, n in counts.items() if n > 0]
    multi = facts.multilinguality()
    data = DatasetCardData(
        pretty_name=facts.pretty_name or facts.name,
        language=facts.language_tags() or None,
        multilinguality=[multi] if multi else None,
        license=card_license(facts)[0],
        task_categories=["summarization"],
        tags=["layout", "pdf", "scientific-papers", "long-document", "loralay"],
    )
    configs = {facts.config_name: {"data_files": _data_files(present, facts.data_files,
                                                              DATA_DIR), "default": True}}
    # no `splits` in dataset_info: datasets wants num_bytes (Arrow size) beside
    # num_examples and warns about the card otherwise; the counts are in the prose table
    infos = {facts.config_name: DatasetInfo(features=features_for(features))}
    if facts.images:  # every kept document has a page, so the same splits have images
        from .images import IMAGE_FEATURES, IMAGES_CONFIG, IMAGES_DIR

        configs[IMAGES_CONFIG] = {"data_files": _data_files(present, facts.image_files,
                                                             IMAGES_DIR)}
        infos[IMAGES_CONFIG] = DatasetInfo(features=IMAGE_FEATURES)
    for lang, splits in language_configs(facts, features).items():
        configs[lang] = {"data_files": _data_files(splits, facts.data_files, DATA_DIR),
                         "filters": [["language", "==", lang]]}
        infos[lang] = DatasetInfo(features=features_for(features))
    license_name = card_license(facts)[1]
    if license_name:  # the Hub's field for an `other` licence with a name
        data["license_name"] = license_name
    MetadataConfigs(configs).to_dataset_card_data(data)
    DatasetInfosDict(infos).to_dataset_card_data(data)
    return data


def language_configs(facts: CardFacts, features: str) -> dict[str, list[str]]:
    """One config per language of a multilingual dataset, named by its code, holding the
    splits that have its rows: the same Parquet files as `default`, read through a
    `language == code` filter (no copies; `load_dataset(DIR, "pt")`, as the published
    LoRaLay sets are one per language). None with `--features published`: no `language`
    column to filter on."""
    if features != COMPACT or len(facts.language_splits) < 2:
        return {}
    return {lang: [s for s in SPLITS if s in splits]
            for lang, splits in sorted(facts.language_splits.items())
            if lang and lang not in (facts.config_name, "images", "default")}


def _data_files(splits: Sequence[str], files: Mapping[str, Sequence[str]], folder: str
                ) -> list[dict[str, Any]]:
    """Each split's exact files; a folder pattern only for a card made without them."""
    return [{"split": s, "path": list(files[s]) if files.get(s) else f"{folder}/{s}-*.parquet"}
            for s in splits]


# The project's own measurement of the structure columns (`scripts/eval_structure.py`,
# rules SECTIONS_RULE sections3, LABEL_RULE labels3): 6 documents with ground truth
# others made (2 tagged PDFs' H1-H6 trees, 4 SciELO papers' JATS XML), split by a fixed
# hash of the id into a tuning half (the rules were tuned on it) and a check half (they
# were not); means per document. Re-measure and update these when the rules change.
STRUCTURE_ACCURACY = {
    "sections": "Measured (`scripts/eval_structure.py`, 6 documents with others' ground "
                "truth: tagged PDFs' H1-H6, publishers' JATS): heading recall 0.98 / 0.86, "
                "precision 0.92 / 0.76, level agreement 1.00 / 0.67 (tuning half / "
                "held-out check half, 3 documents each; min recall 0.94 / 0.57).",
    "words": "Measured: 0.96 / 0.91 of the words in the right section (tuning / check "
             "half).",
    "references": "Measured on 4 JATS reference lists: every true entry matched by one "
                  "entry (0.6 of the tokens both ways); counts 45/45 on the tuning half, "
                  "16/16, 28/29 and 56/59 (+0 % to +5 %) on the check half.",
}

_MEANING = {
    "article_id": "The source's identifier of the paper.",
    "article_bboxes": "Word boxes (x0, y0, x1, y1) in PDF points, origin top-left of the page.",
    "article_norm_bboxes": "The same boxes scaled to 0-1000 per page axis (LayoutLM "
                           "convention, truncated; not aspect-preserving).",
    "article_pages": "1-based physical page of each word (never renumbered).",
    "page_sizes": "(width, height) of every page in PDF points.",
    "ocr_pages": "The 1-based pages whose words Tesseract read (`ocr: auto|always`); empty "
                 "for a paper whose words all come from its text layer.",
    "article_section_ids": "Index in `sections` of the section each word belongs to (the "
                           "last heading at or before it); -1 before the first heading "
                           "(title block, authors, front matter). "
                           + STRUCTURE_ACCURACY["words"],
    "sections": "The section tree in reading order: each heading's `title` as printed "
                "(numbering included), `level` (1 = top) and `parent` (index into "
                "`sections`, -1 for a top one). Where the PDF's outline (bookmarks) "
                "matches the printed headings it gives them and their levels; else the "
                "words labelled `section`, levels from their numbers (\"2.3.1\"), else "
                "from the type size of numbered headings; running heads and the title "
                "block are no headings. " + STRUCTURE_ACCURACY["sections"],
    "references": "Each bibliography entry's text, in order, from the words labelled "
                  "`bibliography`, split at entry numbers, hanging indents or an "
                  "author's name after an entry's end. " + STRUCTURE_ACCURACY["references"],
    "abstract": "The summary: the abstract in the paper's main language.",
    "other_abstracts": "Abstracts in other languages (also removed from the body).",
    "article_pdf_url": "Where the PDF can be downloaded (may be null).",
    "language": "ISO 639-1 code of the summary.",
    "publication_date": "ISO 8601 date as given by the source (may be null).",
    "source": "The source the paper came from.",
    "license": "The paper's licence as its source states it, normalised (an SPDX-like id "
               "such as `cc-by-4.0`, or `unknown`).",
    "license_url": "The licence URL the source gave (may be null).",
    "license_text": "The source's own words when it stated the licence as text, not as a "
                    "bare id or URL (may be null).",
    "record_url": "The source's metadata record of the paper (may be null).",
    "pdf_sha256": "sha256 of the PDF the words were read from.",
    "retrieved_at": "When the metadata record was fetched (UTC, ISO 8601; may be null).",
}
# what each `groups` value (conf/common.py) makes of the words: their order, lines, blocks
_ORDER = {"geometry": "the reading order found from the words' geometry (regions top to "
                      "bottom, columns left to right)",
          "poppler": "Poppler's reading order"}
_LINE_MEANING = {
    "geometry": "Visual line of each word (the words of one baseline within one column, "
                "from their geometry; VILA-style layout group); ids increase in reading order.",
    "poppler": "Poppler's line of each word (its `-bbox-layout` line, which may cut a "
               "justified line in several); ids increase in reading order.",
}
_BLOCK_MEANING = {
    "geometry": "Block of each word: one paragraph, heading, caption, table, list or page "
                "header/footer, from the words' geometry (VILA-style layout group), same "
                "convention.",
    "poppler": "Poppler's block of each word (its `-bbox-layout` block: anything from one "
               "line to a whole column), same convention.",
}
# what each `labels` value bases the labels on
_LABELS_FROM = {"rules": "from layout rules",
                "rules+detector": "from layout rules, tables also from rapid-layout's "
                                  "detector"}
_PUBLISHED_MEANING = {
    "article_bboxes": "Word boxes (x0, y0, x1, y1) in PDF points, origin top-left of the "
                      "page, rounded to integers (half to even) as in the original LoRaLay.",
}


def type_name(feature: Any) -> str:
    """A feature as the columns table spells it: `list of float32[4]`, `string`, ..."""
    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, List):
        inner = type_name(feature.feature)
        return f"{inner}[{feature.length}]" if feature.length > 0 else f"list of {inner}"
    if isinstance(feature, dict):
        return "{" + ", ".join(feature) + "}"
    return type(feature).__name__


def _removed(facts: CardFacts) -> str:
    """What the body lacks: the abstracts, and the words of the `drop_labels` labels."""
    if not facts.drop_labels:
        return "abstracts removed"
    return f"abstracts and words labelled {' or '.join(facts.drop_labels)} removed"


def _meanings(facts: CardFacts, features: str) -> dict[str, str]:
    """Every column's meaning; those of the words follow the run's settings."""
    return _MEANING | (_PUBLISHED_MEANING if features == PUBLISHED else {}) | {
        "article_words": f"Body words in {_ORDER[facts.groups]}, {_removed(facts)}.",
        "article_line_ids": _LINE_MEANING[facts.groups],
        "article_block_ids": _BLOCK_MEANING[facts.groups],
        "article_labels": "Category of each word's block, a class id (`ClassLabel`) of VILA's "
                          f"S2-VL labels, VILA's own ids: {_label_map()}; "
                          f"{_LABELS_FROM[facts.labels]}.",
    }


def _label_map() -> str:
    return ", ".join(f"{k} {name}" for k, name in enumerate(LABELS))


# How right the rule labels (`labels: rules`) are, per class: word precision and recall
# against ground truth made by others (DocBank's 89 pages, the structure trees of ten
# tagged PDFs from Word, LaTeX, Antenna House, LibreOffice and SciELO; headers and footers
# against the tagged PDFs' artifacts), measured by scripts/eval_layout.py under
# LABEL_ACCURACY_RULE (a test fails when group.labels.LABEL_RULE moves on without them).
# (label, precision, recall, truth words); classes the truth holds fewer than 100 words
# of are left out (their numbers would be noise).
LABEL_ACCURACY_RULE = "labels3"
LABEL_ACCURACY: tuple[tuple[str, float, float, int], ...] = (
    ("paragraph", 0.900, 0.933, 85563), ("table", 0.976, 0.848, 29789),
    ("list", 0.291, 0.055, 5465), ("bibliography", 0.604, 0.986, 5179),
    ("equation", 0.866, 0.754, 3748), ("section", 0.340, 0.273, 1310),
    ("caption", 0.668, 0.979, 1246), ("footnote", 0.272, 0.953, 688),
    ("abstract", 0.614, 1.000, 132),
)
# (label, precision over our blocks, recall over the artifact words of the page's top or
# bottom 15 %, truth words)
RUNNING_ACCURACY: tuple[tuple[str, float, float, int], ...] = (
    ("header", 0.987, 0.545, 1377), ("footer", 0.993, 0.808, 626),
)


def _labels_section(facts: CardFacts, features: str) -> list[str]:
    """How noisy the labels are, so that a user weighs them (issue 43): the project's own
    measure, per class; only for what was measured (the rules on the geometry's groups)."""
    if (facts.labels != "rules" or facts.groups != "geometry"
            or "article_labels" not in features_for(features)):
        return []
    lines = ["## How right the labels are", "",
             "Word precision and recall of the words' labels per class, measured by the "
             "project on layout ground truth made by others (DocBank pages; tagged PDFs' "
             "structure trees; for headers and footers, the text tagged PDFs keep out of "
             "their trees), not on this dataset's papers; macro averages hide how uneven "
             "they are:", "",
             "| label | precision | recall | words measured |", "|---|---|---|---|"]
    lines += [f"| `{c}` | {p:.2f} | {r:.2f} | {n:,} |"
              for c, p, r, n in LABEL_ACCURACY + RUNNING_ACCURACY]
    return lines + [""]


def _columns_section(facts: CardFacts, features: str) -> list[str]:
    meaning = _meanings(facts, features)
    feats: Features = features_for(features)
    lines = ["## Columns", ""]
    if features == PUBLISHED:
        lines += ["The columns, types and order of the published LoRaLay datasets, so this "
                  "data concatenates with them; pages, line and block ids are left out.", ""]
    lines += ["| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{n}` | {type_name(f)} | {meaning[n]} |" for n, f in feats.items()]
    return lines + [""]


def _in_languages(facts: CardFacts) -> str:
    """'`fr`', or the paper's own language when the data mixes several (or says none)."""
    tags = facts.language_tags()
    if len(tags) == 1:
        return f"`{tags[0]}`"
    listed = f" ({', '.join(f'`{t}`' for t in tags)})" if tags else ""
    return f"the paper's own language{listed}"


def _words_sentence(facts: CardFacts, columns: Sequence[str]) -> str:
    """How the words were read, ordered and grouped: the `groups` setting says whose order
    and groups they are, the columns written say which of them the rows carry."""
    groups = [c for c in ("article_line_ids", "article_block_ids") if c in columns]
    named = f" (`{'`, `'.join(groups)}`)" if groups else ""
    said = "Words and their boxes were extracted with Poppler (`pdftotext -bbox-layout`)"
    if facts.groups == "poppler":
        said += f", in {_ORDER['poppler']}" + (f", with its line and block groups{named}"
                                               if groups else "")
    elif groups:
        said += (f"; their reading order, visual lines and blocks{named} were then found "
                 f"from the words' geometry (regions top to bottom, columns left to right), "
                 "not taken from Poppler")
    else:
        said += f"; their order is {_ORDER[facts.groups]}, not Poppler's"
    if "article_pages" in columns:
        said += "; each word keeps its physical page number (`article_pages`)"
    return said + "."


_BOUNDS = {"max_pages": ("pages", "at most", "max_pages_percentile"),
           "min_summary_words": ("summary words", "at least", "min_summary_percentile")}


def _thresholds_sentence(thresholds: Mapping[str, Any]) -> str:
    """The run's length filters in words: which bound, from which percentile, or none;
    never a Python value (`None`) in prose."""
    said = [f"{what} {how} {thresholds[key]:g} (`{key}`"
            + (f", the run's p{thresholds[pct]:g})" if isinstance(thresholds.get(pct),
                                                                  (int, float)) else ")")
            for key, (what, how, pct) in _BOUNDS.items()
            if isinstance(thresholds.get(key), (int, float))]
    skipped = thresholds.get("not_applied")
    if said:
        return f"Length filters: {'; '.join(said)}."
    if skipped:
        return f"No length filter was applied: the percentile filters were set, but {skipped}."
    return "No length filter was applied (no page or summary-length percentile set)."


def _source_title(source: str) -> str:
    from .. import registry

    try:
        return registry.source(source).title or source
    except ValueError:
        return source


def _build_section(facts: CardFacts, features: str = COMPACT) -> list[str]:
    lines = [
        "## How it was built", "",
        f"- Papers and their abstracts come from **{_source_title(facts.source)}** "
        f"(`--source {facts.source}`); the summary is the "
        f"abstract in {_in_languages(facts)}.",
        f"- {_words_sentence(facts, list(features_for(features)))}",
        "- Every abstract the source gives (in any language) was located in the body and "
        "removed, so the summary cannot be copied from the input.",
    ]
    if facts.drop_labels:
        lines.append(f"- Words labelled {' or '.join(facts.drop_labels)} were left out of "
                     "the body (`drop_labels`).")
    lines += [f"- Filter: {f}" for f in facts.filters]
    lines.append(f"- {_thresholds_sentence(facts.thresholds)}")
    if facts.dropped:
        classes = ", ".join(f"{cls} {n:,}" for cls, n in sorted(facts.dropped.items(),
                                                               key=lambda kv: (-kv[1], kv[0])))
        lines.append(f"- {sum(facts.dropped.values()):,} papers were left out ({classes}); "
                     "the build's `report.md` says why, paper by paper.")
    if facts.ocr_rows:
        rows = "1 row holds" if facts.ocr_rows == 1 else f"{facts.ocr_rows:,} rows hold"
        lines.append(f"- {rows} words read by OCR (Tesseract, "
                     f"{facts.ocr_pages:,} scanned pages; `ocr_pages` names them): their "
                     "words and boxes are the OCR's, not a text layer's.")
    if facts.split_rule:
        lines.append(f"- Splits: {facts.split_rule}")
    lines += [f"- {n}" for n in facts.notes]
    return lines + [""]


def _splits_section(counts: Mapping[str, int]) -> list[str]:
    lines = ["## Splits", "", "| split | documents |", "|---|---:|"]
    lines += [f"| {s} | {n:,} |" for s, n in counts.items()]
    lines += [f"| **total** | {sum(counts.values()):,} |", ""]
    empty = [s for s, n in counts.items() if n == 0]
    if empty:
        lines += [f"Empty splits are not declared in the configuration and so do not load: "
                  f"{', '.join(empty)}.", ""]
    return lines


def _versions_section(facts: CardFacts) -> list[str]:
    """The version, and what each version brought (a refresh adds a line)."""
    if not facts.changelog:
        return []
    return ["## Versions", "", f"This is version {facts.version}. A refresh adds new papers "
            "in new files and keeps every earlier row, split and file as it was.", "",
            *[f"- {line}" for line in facts.changelog], ""]


def _usage_section(facts: CardFacts, features: str = COMPACT) -> list[str]:
    config = "" if facts.config_name == "default" else f', "{facts.config_name}"'
    per_language = language_configs(facts, features)
    lines = [
        "## Loading", "", "```python", "from datasets import load_dataset", "",
        f'ds = load_dataset("path/to/{facts.name}"{config})  # or the Hub repository id',
        'doc = ds["train"][0]',
        'words, boxes = doc["article_words"], doc["article_norm_bboxes"]',
        "```", ""]
    if per_language:
        first = next(iter(per_language))
        lines += [f"One config per language holds that language's papers alone, from the same "
                  f"files: {', '.join(f'`{k}`' for k in per_language)} (e.g. "
                  f'`load_dataset("path/to/{facts.name}", "{first}")`).', ""]
    if features == COMPACT:
        lines += ["Each word's label is a class id; its name:", "", "```python",
                  'names = ds["train"].features["article_labels"].feature',
                  'labels = names.int2str(doc["article_labels"])  # ["title", ...]',
                  "```", ""]
        lines += ["Readable text, line-end hyphens mended and blocks apart (the words "
                  "themselves stay as extracted):", "", "```python",
                  "from loralay_build import text", 'print(text(doc, by="block"))', "```", ""]
    return lines + [
        "Only `data/` holds data; `state/`, `report*` and `pdfs/` beside it belong to the "
        "build and are ignored by the configuration above.", ""]


def card_license(facts: CardFacts) -> tuple[str, str | None]:
    """The front matter's licence: the user's tag if set; else the one licence every row
    shares (a Hub id, or `other` named after it); else `other` (the prose has the table)."""
    if facts.license:
        return facts.license, None
    ids = [i for i, n in facts.license_counts.items() if n]
    if len(ids) == 1 and is_hub_license(ids[0]):
        return ids[0], None
    if len(ids) == 1:
        return "other", ids[0]
    return "other", None


_LICENSE_COLUMNS = ("license", "license_url", "license_text")
_PROVENANCE_COLUMNS = ("record_url", "pdf_sha256", "retrieved_at")


def _rows_say(facts: CardFacts, columns: Sequence[str]) -> str:
    """What the rows say of their paper's licence and provenance, by the columns written."""
    if all(c in columns for c in _LICENSE_COLUMNS + _PROVENANCE_COLUMNS):
        return ("Each row carries its paper's licence as its source states it (`license`, "
                "normalised; `license_url` and `license_text` as given) and where it came "
                "from (`record_url`, `pdf_sha256`, `retrieved_at`).")
    table = (" The table below counts the licences of the papers kept." if
             any(facts.license_counts.values()) else "")
    return ("The rows have the published LoRaLay columns only, which carry neither a "
            "paper's licence nor where it came from (build with the default compact "
            f"features to have both in every row).{table}")


_CITATIONS = """@inproceedings{nguyen-etal-2023-loralay,
  title = {{LoRaLay}: A Multilingual and Multimodal Dataset for Long Range and Layout-Aware
           Summarization},
  author = {Nguyen, Laura and Scialom, Thomas and Piwowarski, Benjamin and Staiano, Jacopo},
  booktitle = {Proceedings of the 17th Conference of the European Chapter of the Association
               for Computational Linguistics},
  year = {2023}
}

@article{shen-etal-2022-vila,
  title = {{VILA}: Improving Structured Content Extraction from Scientific {PDF}s Using
           Visual Layout Groups},
  author = {Shen, Zejiang and Lo, Kyle and Wang, Lucy Lu and Kuehl, Bailey and Weld,
            Daniel S. and Downey, Doug},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {10},
  year = {2022}
}"""


def _citation_section() -> list[str]:
    """The works whose format the rows follow: LoRaLay's corpora, VILA's layout groups."""
    return ["## Citation", "", "The rows follow the format of the LoRaLay corpora, and the "
            "line and block groups and labels VILA's layout groups:", "", "```bibtex",
            _CITATIONS, "```", ""]


def _license_section(facts: CardFacts, features: str = COMPACT) -> list[str]:
    from ..licenses import ARXIV_DEFAULT, license_terms

    terms = (f"the terms of {facts.source} ({facts.source_terms_url}) and "
             if facts.source_terms_url else "")
    lines = [
        "## Licensing", "",
        "This dataset distributes words, their boxes and a link to each PDF, not the PDFs. "
        f"{_rows_say(facts, list(features_for(features)))} Check {terms}each paper's licence "
        "before redistributing or training on it.", ""]
    counts = {i: n for i, n in facts.license_counts.items() if n}
    if counts:
        lines += ["| licence | rows | what it is | anyone may redistribute |",
                  "|---|---:|---|---|"]
        for lid, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            t = license_terms(lid)
            share = "yes" if t.redistribution else "no"
            lines.append(f"| `{lid}` | {n:,} | {t.description} | {share} |")
        lines.append("")
    if ARXIV_DEFAULT in counts:
        lines += ["`arxiv-nonexclusive-distrib-1.0` is arXiv's default licence: it grants "
                  "arXiv, not you, the right to distribute the paper.", ""]
    if UNKNOWN in counts:
        lines += ["`unknown`: the source's metadata states no licence this tool can name; "
                  "treat such papers as all rights reserved.", ""]
    return lines


def dataset_card(facts: CardFacts, counts: Mapping[str, int],
                 features: str = COMPACT) -> DatasetCard:
    """The whole card: `DatasetCardData` front matter, then prose for people."""
    tags = facts.language_tags()
    in_langs = f" in {', '.join(f'`{t}`' for t in tags)}" if tags else ""
    body = [
        f"# {facts.pretty_name or facts.name}", "",
        f"A layout-aware long-document summarization dataset of {sum(counts.values()):,} "
        f"scientific papers from {_source_title(facts.source)}{in_langs}, in the format of "
        "the LoRaLay "
        "corpora: each row is the body of a paper as words with boxes, and its abstract as "
        "summary.", "",
        *_build_section(facts, features), *_splits_section(counts), *_versions_section(facts),
        *_columns_section(facts, features), *_labels_section(facts, features),
        *_usage_section(facts, features), *_license_section(facts, features),
        *_citation_section(),
    ]
    front = card_data(facts, counts, features).to_yaml()
    return DatasetCard(f"---\n{front}\n---\n\n" + "\n".join(body))


def card_text(facts: CardFacts, counts: Mapping[str, int], features: str = COMPACT) -> str:
    """README.md's text."""
    return str(dataset_card(facts, counts, features))


def write_card(out_dir: str | Path, facts: CardFacts, counts: Mapping[str, int], *,
               features: str = COMPACT) -> Path:
    """Write README.md atomically so a reader never sees half a card."""
    path = Path(out_dir) / CARD_NAME
    write_text_atomic(path, str(dataset_card(facts, counts, features)))
    return path

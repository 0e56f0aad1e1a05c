"""The dataset card (`DIR/README.md`): YAML that `datasets` reads, prose that people read.

Why the YAML is explicit: with `configs[].data_files` naming `data/{split}-*.parquet`,
`load_dataset(DIR)` never guesses, so run state, reports and PDFs beside the data are
never mistaken for splits; and `dataset_info.features` is generated from the same
`Features` as the Parquet schema, so the card cannot drift from the files (the old
cards documented `norm_article_bboxes` while the data said `article_norm_bboxes`).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .features import COMPACT, features_for
from .parquet import DATA_DIR

CARD_NAME = "README.md"


@dataclass(frozen=True, slots=True)
class CardFacts:
    """What the driver knows about the run that the card must tell; counts come from the writer.

    `filters` are one sentence each ("pages <= p95 = 31"); `thresholds` are the computed
    values (e.g. `Thresholds.to_json()`); `split_rule` says how documents were assigned.
    """

    name: str
    source: str
    language: str  # ISO 639-1 of the summaries and the main body language
    config_name: str = "default"
    pretty_name: str | None = None
    license: str = "other"
    split_rule: str = ""
    filters: Sequence[str] = ()
    thresholds: Mapping[str, Any] = field(default_factory=dict)
    source_terms_url: str | None = None
    notes: Sequence[str] = ()


class _PlainDumper(yaml.SafeDumper):
    """Never emit anchors/aliases: the Hub's YAML validator and humans both dislike them."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def card_yaml(facts: CardFacts, counts: Mapping[str, int],
              features: str = COMPACT) -> dict[str, Any]:
    """The front matter; splits with no rows are left out because they cannot be loaded."""
    present = [s for s, n in counts.items() if n > 0]
    # the Hub wants ISO codes under `language`; a mixed corpus says so under multilinguality
    lang = ({"multilinguality": ["multilingual"]} if facts.language == "multilingual"
            else {"language": [facts.language]})
    return {
        "pretty_name": facts.pretty_name or facts.name,
        **lang,
        "license": facts.license,
        "task_categories": ["summarization"],
        "tags": ["layout", "pdf", "scientific-papers", "long-document", "loralay"],
        "configs": [{
            "config_name": facts.config_name,
            "default": True,
            "data_files": [{"split": s, "path": f"{DATA_DIR}/{s}-*.parquet"} for s in present],
        }],
        "dataset_info": {
            "config_name": facts.config_name,
            # no `splits` entry: datasets wants num_bytes (Arrow size) beside num_examples and
            # warns about the card otherwise; the counts are in the prose table
            "features": copy.deepcopy(features_for(features)._to_yaml_list()),
        },
    }


_COLUMNS = [
    ("article_id", "string", "The source's identifier of the paper."),
    ("article_words", "list of string", "Body words in Poppler reading order, abstracts removed."),
    ("article_bboxes", "list of float32[4]",
     "Word boxes (x0, y0, x1, y1) in PDF points, origin top-left of the page."),
    ("article_norm_bboxes", "list of int16[4]",
     "The same boxes scaled to 0-1000 per page axis (LayoutLM convention, truncated; "
     "not aspect-preserving)."),
    ("article_pages", "list of int16", "1-based physical page of each word (never renumbered)."),
    ("article_line_ids", "list of int32",
     "Poppler line of each word; ids increase in reading order (VILA-style layout groups)."),
    ("article_block_ids", "list of int32",
     "Poppler block (paragraph-like group) of each word, same convention."),
    ("page_sizes", "list of float32[2]", "(width, height) of every page in PDF points."),
    ("abstract", "string", "The summary: the abstract in the dataset's language."),
    ("other_abstracts", "list of {language, text}",
     "Abstracts in other languages (also removed from the body)."),
    ("article_pdf_url", "string or null", "Where the PDF can be downloaded."),
    ("language", "string", "ISO 639-1 code of the summary."),
    ("publication_date", "string or null", "ISO 8601 date as given by the source."),
    ("source", "string", "The source the paper came from."),
]


def _build_section(facts: CardFacts) -> list[str]:
    lines = [
        "## How it was built", "",
        f"- Papers and their abstracts come from **{facts.source}**; the summary is the "
        f"abstract in `{facts.language}`.",
        "- Words and their boxes were extracted with Poppler (`pdftotext -bbox-layout`), "
        "keeping Poppler's line and block groups and the physical page numbers.",
        "- Every abstract the source gives (in any language) was located in the body and "
        "removed, so the summary cannot be copied from the input.",
    ]
    lines += [f"- Filter: {f}" for f in facts.filters]
    if facts.thresholds:
        applied = ", ".join(f"`{k}` = {v}" for k, v in facts.thresholds.items())
        lines.append(f"- Thresholds applied: {applied}.")
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


def _usage_section(facts: CardFacts) -> list[str]:
    return [
        "## Loading", "", "```python", "from datasets import load_dataset", "",
        f'ds = load_dataset("path/to/{facts.name}")  # or the Hub repository id',
        'doc = ds["train"][0]',
        'words, boxes = doc["article_words"], doc["article_norm_bboxes"]',
        "```", "",
        "Only `data/` holds data; `state/`, `report*` and `pdfs/` beside it belong to the "
        "build and are ignored by the configuration above.", "",
    ]


def _license_section(facts: CardFacts) -> list[str]:
    terms = f" ({facts.source_terms_url})" if facts.source_terms_url else ""
    return [
        "## Licensing", "",
        "This dataset distributes words, their boxes and a link to each PDF, not the PDFs. "
        f"The papers remain under their own licences: check the terms of {facts.source}"
        f"{terms} and of each paper before redistributing or training on it.", "",
    ]


def card_text(facts: CardFacts, counts: Mapping[str, int], features: str = COMPACT) -> str:
    """The whole README.md: front matter, then prose for people."""
    front = yaml.dump(card_yaml(facts, counts, features), Dumper=_PlainDumper, sort_keys=False,
                      allow_unicode=True)
    total = sum(counts.values())
    body = [
        f"# {facts.pretty_name or facts.name}", "",
        f"A layout-aware long-document summarization dataset of {total:,} scientific papers "
        f"from {facts.source} in `{facts.language}`, in the format of the LoRaLay corpora: "
        "each row is the body of a paper as words with boxes, and its abstract as summary.",
        "",
        *_build_section(facts), *_splits_section(counts),
        "## Columns", "", "| column | type | meaning |", "|---|---|---|",
        *[f"| `{n}` | {t} | {m} |" for n, t, m in _COLUMNS], "",
        *_usage_section(facts), *_license_section(facts),
    ]
    return f"---\n{front}---\n\n" + "\n".join(body)


def write_card(out_dir: str | Path, facts: CardFacts, counts: Mapping[str, int], *,
               features: str = COMPACT) -> Path:
    """Write README.md atomically so a reader never sees half a card."""
    path = Path(out_dir) / CARD_NAME
    tmp = path.with_name(f".{CARD_NAME}.tmp")
    tmp.write_text(card_text(facts, counts, features), encoding="utf-8")
    os.replace(tmp, path)
    return path

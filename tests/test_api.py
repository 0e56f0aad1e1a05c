"""The Python API as the README shows it, and `features="published"` end to end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.e2e


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Python API"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_api_example_runs_as_written(tmp_path, monkeypatch, capsys):
    code = readme_example()
    assert "out/api" in code and len(code.strip().splitlines()) <= 7
    monkeypatch.chdir(REPO)
    exec(compile(code.replace('"out/api"', repr(str(tmp_path / "api"))), "README", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.strip() == "{'train': 6, 'validation': 1, 'test': 1}"
    assert (tmp_path / "api" / "README.md").exists()


def test_api_errors_are_typed_not_exits(tmp_path):
    from loralay_build import ConfigError, build

    with pytest.raises(ConfigError, match="rows_per_shard: 0 is not valid"):
        build("local", tmp_path / "o", manifest=str(REPO / "data/sample/manifest.jsonl"),
              rows_per_shard=0)
    with pytest.raises(ConfigError, match="--workers 0"):
        build("local", tmp_path / "o", manifest=str(REPO / "data/sample/manifest.jsonl"),
              workers=0)
    assert not (tmp_path / "o").exists()


def test_published_features_concatenate_with_a_published_dataset(tmp_path):
    from datasets import Dataset, concatenate_datasets, load_dataset

    from loralay_build import build
    from loralay_build.write import PUBLISHED_FEATURES

    out = tmp_path / "pub"
    build("local", out, manifest=str(REPO / "data/sample/manifest.jsonl"),
          features="published")
    ours = load_dataset(str(out))["train"]
    assert ours.features == PUBLISHED_FEATURES
    assert list(ours.features) == ["article_id", "article_words", "article_bboxes",
                                   "article_norm_bboxes", "abstract", "article_pdf_url"]
    theirs = Dataset.from_dict({"article_id": ["x"], "article_words": [["a"]],
                                "article_bboxes": [[[1, 2, 3, 4]]],
                                "article_norm_bboxes": [[[1, 2, 3, 4]]], "abstract": ["s"],
                                "article_pdf_url": ["u"]}, features=PUBLISHED_FEATURES)
    both = concatenate_datasets([theirs, ours])
    assert len(both) == 1 + len(ours)
    assert all(isinstance(v, int) for box in ours[0]["article_bboxes"] for v in box)
    assert Path(out / "README.md").read_text().count("int64") >= 2

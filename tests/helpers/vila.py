"""VILA's own reference code loaded, shared by the VILA reference and export tests."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import logging
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from loralay_build.dataset import LAYOUT_COLUMNS, Dataset
from loralay_build.export.vila import points_box


class VilaReference:
    def __init__(self, li: Any, hm: Any, utils: Any, constants: Any, normalize_bbox: Any):
        self.li, self.hm, self.utils, self.constants = li, hm, utils, constants
        self.normalize_bbox = normalize_bbox

    def _indicator(self, page: dict, token: str, level: str) -> str:
        """VILA's clean_text then insert_layout_indicator, called with a stand-in `self`."""
        cls = (self.li.BlockLayoutIndicatorPDFDataPreprocessor if level == "block"
               else self.li.RowLayoutIndicatorPDFDataPreprocessor)
        me = types.SimpleNamespace(added_special_separation_token=token,
                                   text_column_name="words", label_column_name="labels",
                                   special_tokens_map={"[BLK]": 1, "[SEP]": 2})
        example = {k: list(page[k]) for k in ("words", "bbox", "labels", "block_ids",
                                               "line_ids")}
        if hasattr(cls, "clean_text"):  # the repository's HEAD has it; PyPI's 0.5.0 not
            example = cls.clean_text(me, example)
        processed, _ = cls.insert_layout_indicator(me, example)
        return " ".join(processed["words"])

    def check_page(self, page: dict, groups: list[dict], token: str = "[BLK]") -> None:
        assert page["ivila_text"] == self._indicator(page, token, "block")
        assert self.utils.replace_unicode_tokens(
            page["words"], self.constants.UNICODE_CATEGORIES_TO_REPLACE, "[UNK]") \
            == page["words"]
        gids = self.hm.clean_group_ids(page["block_ids"])
        assert [g["group_id"] for g in groups for _ in range(g["word_count"])] == gids
        start = 0
        for g in groups:
            boxes = page["bbox"][start:start + g["word_count"]]
            assert g["bbox_union"] == list(self.utils.union_box(boxes))
            assert g["bbox_first"] == boxes[0]
            start += g["word_count"]

    def check_split_files(self, out: Path, splits: tuple[str, ...]) -> int:
        n = 0
        for split in splits:
            path = out / f"{split}-token.json"
            if path.exists():
                data = json.loads(path.read_text(encoding="utf-8"))["data"]
                groups = [json.loads(x)["groups"] for x in (out / f"{split}-groups.jsonl")
                          .open(encoding="utf-8")]
                for page, grp in zip(data, groups, strict=True):
                    self.check_page(page, grp)
                    n += 1
        return n

    def check_boxes(self, dataset_dir: Path) -> int:
        """Our points boxes == int() of VILA's normalize_bbox on every word of the dataset."""
        n = 0
        ds = Dataset.open(dataset_dir)
        for split in ds.splits:
            for row in ds.rows(split, LAYOUT_COLUMNS):
                for box, page in zip(row["article_bboxes"], row["article_pages"], strict=True):
                    w, h = row["page_sizes"][page - 1]
                    theirs = [int(v) for v in self.normalize_bbox(box, w, h)]
                    assert points_box(box, w, h) == theirs
                    n += 1
        return n


def _bare_package(name: str, path: Path) -> None:
    if name not in sys.modules:
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module


def _normalize_bbox(root: Path, constants: Any) -> Any:
    tree = ast.parse((root / "predictors.py").read_text(encoding="utf-8"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef)
              and n.name == "normalize_bbox")
    scope = {"MODEL_PDF_WIDTH": constants.MODEL_PDF_WIDTH,
             "MODEL_PDF_HEIGHT": constants.MODEL_PDF_HEIGHT, "logger": logging.getLogger("v")}
    exec(compile(ast.Module([fn], []), "vila/predictors.py", "exec"), scope)  # noqa: S102
    return scope["normalize_bbox"]


def load_vila() -> VilaReference:
    if "vila" in sys.modules:  # a bare package made by an earlier call
        root = Path(list(sys.modules["vila"].__path__)[0])
    else:
        spec = importlib.util.find_spec("vila")
        if spec is None or not spec.submodule_search_locations:
            pytest.skip("VILA is not installed (pip install --no-deps vila layoutparser pysbd)")
        root = Path(list(spec.submodule_search_locations)[0])
        _bare_package("vila", root)
    _bare_package("vila.dataset", root / "dataset")
    _bare_package("vila.dataset.preprocessors", root / "dataset" / "preprocessors")
    try:
        li = importlib.import_module("vila.dataset.preprocessors.layout_indicator")
        hm = importlib.import_module("vila.dataset.preprocessors.hierarchical_modeling")
        utils = importlib.import_module("vila.utils")
        constants = importlib.import_module("vila.constants")
    except ImportError as e:
        pytest.skip(f"VILA's preprocessors do not import here: {e}")
    return VilaReference(li, hm, utils, constants, _normalize_bbox(root, constants))

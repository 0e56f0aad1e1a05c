"""VILA's own preprocessing code, loaded without its package `__init__` (which pulls torch).

`pip install --no-deps vila layoutparser pysbd opencv-python-headless` gives the modules;
the parents `vila`, `vila.dataset`, `vila.dataset.preprocessors` are put in `sys.modules`
as bare packages so that importing `layout_indicator` and `hierarchical_modeling` runs only
those files (and `vila.utils`, `vila.constants`). `normalize_bbox` lives in `predictors.py`,
which imports transformers and pdfplumber at the top: that one function is compiled from the
installed file's source on its own. Anything missing makes `load_vila` skip the caller.
"""

from __future__ import annotations

from loralay_build.export.vila import points_box, vila_word

from .helpers.vila import load_vila


def test_unk_rule_is_vilas():
    vila = load_vila()
    words = ["\uf8ff", "\u0303", "a\u0303", "\u00a0", "\u200b", "★", "★a", "x", "\x07",
             "∑", "—", "\ufeff", "\u2028", "é"]
    ours = [vila_word(w) for w in words]
    assert vila.utils.replace_unicode_tokens(
        words, vila.constants.UNICODE_CATEGORIES_TO_REPLACE, "[UNK]") == ours


def test_normalize_bbox_is_vilas():
    vila = load_vila()
    for box, w, h in [((10.6, 20.2, 30.9, 40.99), 595.28, 841.89),
                      ((30, 40, 10, 20), 612, 792), ((1500, 100, 1600, 200), 1600, 900),
                      ((100, 1500, 200, 1584), 1224, 1584), ((5, 5, 999, 1001), 1000, 1002)]:
        assert points_box(box, w, h) == [int(v) for v in vila.normalize_bbox(box, w, h)]

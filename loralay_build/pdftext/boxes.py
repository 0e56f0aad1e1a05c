"""Normalise inverted or negative page boxes so Poppler can see the text again.

Why: Poppler sorts the corners of a MediaBox such as [0 0 -612 -792] into
[-612 -792 0 0] and then throws away every character outside it; the text, drawn at
positive coordinates as on any page, is lost and the document reads as scanned. A
viewer that takes the absolute width and height shows it. We do the same: every
such box becomes [0 0 |w| |h|], which shifts the page back over its text.

Why qpdf's JSON and not a PDF library: qpdf is already a dependency, its JSON v2 lists
every object without stream data (fast), and `--update-from-json` rewrites only the
objects we hand back. This runs only for documents that would otherwise be `scanned`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

PAGE_BOXES = ("/MediaBox", "/CropBox", "/BleedBox", "/TrimBox", "/ArtBox")


def is_negative_box(box: object) -> bool:
    """Inverted corners, or an area wholly left of or below the origin."""
    if not (isinstance(box, list) and len(box) == 4
            and all(isinstance(v, (int, float)) for v in box)):
        return False
    x0, y0, x1, y1 = box
    if x1 - x0 == 0 or y1 - y0 == 0:
        return False  # no area: nothing to shift, the parser classes such a page
    return x1 < x0 or y1 < y0 or max(x0, x1) <= 0 or max(y0, y1) <= 0


def _fixed(value: dict) -> dict | None:
    """The page (or page-tree node) dictionary with its negative boxes normalised."""
    if value.get("/Type") not in ("/Page", "/Pages"):
        return None
    bad = [k for k in PAGE_BOXES if is_negative_box(value.get(k))]
    if not bad:
        return None
    out = dict(value)
    for key in bad:
        x0, y0, x1, y1 = value[key]
        out[key] = [0, 0, abs(x1 - x0), abs(y1 - y0)]
    return out


def _updates(objects: dict) -> dict:
    changed = {}
    for key, obj in objects.items():
        value = obj.get("value") if isinstance(obj, dict) else None
        if isinstance(value, dict):
            new = _fixed(value)
            if new is not None:
                changed[key] = {"value": new}
    return changed


def normalise_page_boxes(src: Path, dst: Path, timeout_s: float) -> Path | None:
    """Write `dst` with every negative page box normalised; None when there is none to
    fix (or qpdf is missing or cannot read the file: the first verdict then stands)."""
    qpdf = shutil.which("qpdf")
    if qpdf is None:
        return None
    try:
        listing = subprocess.run(
            [qpdf, "--json=2", "--json-key=qpdf", "--json-stream-data=none", str(src)],
            capture_output=True, timeout=timeout_s, check=False)
        header, objects = json.loads(listing.stdout)["qpdf"]
        changed = _updates(objects)
        if not changed:
            return None
        update = dst.with_suffix(".json")
        update.write_text(json.dumps({"qpdf": [header, changed]}))
        done = subprocess.run([qpdf, str(src), f"--update-from-json={update}", str(dst)],
                              capture_output=True, timeout=timeout_s, check=False)
    except (subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return None
    # qpdf exits 3 when it wrote the file but warned (common on real-world PDFs)
    return dst if done.returncode in (0, 3) and dst.exists() else None

"""`loralay show DIR ID`: one page of one document as the dataset sees it, as a PNG.

What the picture is for: checking a build by eye. Kept words, Poppler's lines and blocks
come straight from the dataset row; the words the build cut out (abstracts, a cover page)
are not in the dataset, so they are found again the only exact way there is: the PDF is
re-extracted and `strip_abstracts` re-run with the run's own settings
(`DIR/report/config.yaml`), and every word of the extraction missing from the kept body is
shaded in its abstract's language. If the re-run's body differs from the row (another
Poppler), the caption says so rather than silently shading the wrong words.
The PDF is the candidate's (`DIR/state/fetch.sqlite`, `candidates`), else the manifest's
(`manifest:` of the run's config); when neither is on disk the error says where it looked.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .dataset import Dataset, NoSuchDocument, find_row
from .errors import ConfigError
from .extras import require
from .images.redact import removed_indices
from .labels import LABELS, label_name
from .paths import REPORT_JSON, readable_name
from .records import Candidate, Outcome
from .runfolder import RunFolder
from .store.fetch import FetchState

SCALE = 2.0  # 144 dpi: small words stay readable, an A4 page is 1190 x 1684 pixels
COVER = "cover page"


@dataclass
class Cuts:
    """What the re-run removed: per removed word its page, box and language (or COVER)."""

    words: list[tuple[int, tuple[float, ...], str]] = field(default_factory=list)
    leakage: dict[str, float] = field(default_factory=dict)
    differs: int = 0  # kept words of the re-run minus those of the dataset row
    num_pages: int = 0


def _state_candidate(dataset_dir: Path, article_id: str) -> Candidate | None:
    db = RunFolder(dataset_dir).fetch_db
    if not db.is_file():
        return None
    with FetchState.read_only(db) as state:
        return state.candidate(article_id)


def _manifest_candidate(settings: Any, article_id: str) -> Candidate | None:
    from .sources.manifest import read_manifest

    manifest = getattr(settings, "manifest", None)
    if not manifest or not Path(manifest).is_file():
        return None
    for line in read_manifest(Path(manifest)):
        if isinstance(line.item, Candidate) and line.item.id == article_id:
            return line.item
    return None


def locate_pdf(dataset_dir: Path, article_id: str, settings: Any) -> tuple[Candidate, Path]:
    """The candidate and its PDF on disk; a ConfigError naming every place looked at."""
    tried: list[str] = []
    for cand in (_state_candidate(dataset_dir, article_id),
                 _manifest_candidate(settings, article_id)):
        if cand is None or not cand.pdf_path:
            continue
        for path in (Path(cand.pdf_path), dataset_dir / cand.pdf_path):
            if path.is_file():
                return cand, path
            tried.append(str(path))
    where = ", ".join(dict.fromkeys(tried)) or "no candidate in the run state or manifest"
    raise ConfigError(f"{article_id}: its PDF is gone ({where})")


def run_settings(dataset_dir: Path, source: str) -> Any:
    """The build's settings, from the configuration it wrote beside its report."""
    from .conf import load_settings

    config = RunFolder(dataset_dir).config_file
    if not config.is_file():
        raise ConfigError(f"{config}: missing (not the folder of a finished build?)")
    return load_settings(source, config)


def recut(pdf: Path, cand: Candidate, settings: Any, row_words: list[str]) -> Cuts:
    """The build's own steps re-run on the PDF (all but rendering images); where each
    removed word was."""
    from .pdf.steps import DocumentJob, run_document_steps

    job = DocumentJob(settings.document(), settings.limits())
    work, results = run_document_steps(cand.with_pdf(str(pdf)), job, until="leakage",
                              skip=frozenset({"render"}))
    failed = results.failure
    if failed is not None:
        stage, fail = failed
        raise ConfigError(f"{cand.id}: re-running the build's steps on {pdf} failed now: "
                          f"{stage}: {fail.cls.value}: {fail.message}")
    doc, stripped = work.doc, work.stripped
    assert doc is not None and stripped is not None and work.leaks is not None
    kept, matches = stripped.body, stripped.matches
    cuts = Cuts(leakage=work.leaks, differs=len(kept) - len(row_words),
                num_pages=len(doc.pages))
    if kept.words != row_words and not cuts.differs:
        cuts.differs = sum(a != b for a, b in zip(kept.words, row_words, strict=True))
    for i in removed_indices(doc, kept):
        lang = next((m.language for m in matches if m.start <= i < m.end), COVER)
        cuts.words.append((doc.word_pages[i], tuple(doc.boxes[i].tolist()), lang))
    return cuts


def _report_outcomes(dataset_dir: Path) -> dict[str, Any]:
    """`report.json["documents"]`, or nothing when the folder has no readable report (a
    copy of the data alone): the explanation is a courtesy, never a second failure."""
    import orjson

    try:
        documents = orjson.loads((dataset_dir / REPORT_JSON).read_bytes()).get("documents")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return {}
    return documents if isinstance(documents, dict) else {}


def why_missing(dataset_dir: Path, article_id: str) -> str:
    """Why a dataset has no row for an id: the drop the run's report recorded for it, else
    the ids closest to it (a typo), else nothing."""
    import difflib

    outcomes = _report_outcomes(dataset_dir)
    outcome = Outcome.from_json(outcomes.get(article_id))
    if outcome is not None and outcome.status == "dropped":
        return (f": the build dropped it as {outcome.cls} at {outcome.stage} "
                f"({outcome.message}); {dataset_dir / 'report.md'} lists every drop")
    ds = Dataset.open(dataset_dir)
    known = list(outcomes) or [row["article_id"] for split in ds.splits
                               for row in ds.rows(split, columns=("article_id",))]
    close = difflib.get_close_matches(article_id, known, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""


def default_page(cuts: Cuts) -> int:
    """The first page an abstract was cut from; else the first cut page (a cover); else 1."""
    abstract_pages = [p for p, _, lang in cuts.words if lang != COVER]
    return min(abstract_pages or [p for p, _, _ in cuts.words] or [1])


def show_document(dataset_dir: str | Path, article_id: str, page: int | None = None,
                  out: str | Path | None = None, scale: float = SCALE) -> Path:
    """Draw one page (default: `default_page`) into `out` (default ID-pN.png); its path."""
    require("images", "`loralay show`")
    dataset_dir = Path(dataset_dir)
    try:
        split, row = find_row(dataset_dir, article_id)
    except NoSuchDocument as e:
        raise NoSuchDocument(e.root, article_id, why_missing(dataset_dir, article_id)) from None
    row["article_labels"] = [label_name(v) for v in row.get("article_labels") or []]
    settings = run_settings(dataset_dir, row["source"])
    cand, pdf = locate_pdf(dataset_dir, article_id, settings)
    cuts = recut(pdf, cand, settings, row["article_words"])
    if page is None:
        page = default_page(cuts)
    if not 1 <= page <= cuts.num_pages:
        raise ConfigError(f"{article_id}: no page {page} (the PDF has {cuts.num_pages})")
    caption = Caption(article_id, split, page, cuts.num_pages, row, cuts)
    image = draw_page(pdf, page, row, cuts, caption, scale)
    target = Path(out) if out is not None else Path(readable_name(article_id, f"-p{page}.png"))
    png = io.BytesIO()
    image.save(png, format="PNG", optimize=True)
    write_atomic(target, png.getvalue())
    return target


def _row_of(doc: Any, cand: Candidate, outline: tuple[Any, ...] = ()) -> dict[str, Any]:
    """A body as `show_document` holds a dataset's row (the columns `draw_page` reads), its
    section tree made as the row's is (`group/sections.py`, with the PDF's outline)."""
    from .group.sections import sections_of

    secs, ids = sections_of(doc.words, doc.boxes, doc.block_ids, doc.labels,
                            [(e.title, e.level) for e in outline], doc.word_pages)
    return {"article_words": doc.words, "article_bboxes": doc.boxes.tolist(),
            "article_pages": doc.word_pages, "article_line_ids": doc.line_ids,
            "article_block_ids": doc.block_ids,
            "article_labels": [LABELS[k] for k in doc.labels],
            "sections": [{"title": x.title, "level": x.level, "parent": x.parent}
                         for x in secs],
            "article_section_ids": ids.tolist(),
            "language": cand.language, "source": "preview"}


def preview_pdf(pdf: str | Path, page: int | None = None, out: str | Path | None = None,
                abstract: str | None = None, language: str | None = None,
                config: str | Path | None = None, scale: float = SCALE) -> Path:
    """`loralay show FILE.pdf`: what a build would make of a PDF before any build (words,
    lines, blocks, labels, order, and with `abstract` what the cut would take), drawn as
    `show_document` draws a dataset's page; the caption says what a build would do."""
    require("images", "`loralay show`")
    pdf = Path(pdf)
    row, cuts, notes = preview_cuts(pdf, abstract, language, config)
    if page is None:
        page = default_page(cuts)
    if not 1 <= page <= cuts.num_pages:
        raise ConfigError(f"{pdf}: no page {page} (the PDF has {cuts.num_pages})")
    caption = Caption(pdf.stem, "preview", page, cuts.num_pages, row, cuts, notes)
    image = draw_page(pdf, page, row, cuts, caption, scale)
    target = Path(out) if out is not None else Path(readable_name(pdf.stem, f"-p{page}.png"))
    png = io.BytesIO()
    image.save(png, format="PNG", optimize=True)
    write_atomic(target, png.getvalue())
    return target


def preview_cuts(pdf: Path, abstract: str | None, language: str | None,
                 config: str | Path | None) -> tuple[dict[str, Any], Cuts, list[str]]:
    """The row a build would write for `pdf` (`--source local`'s steps and settings), what
    its cut takes, and the caption's notes."""
    from .conf import load_settings
    from .language import detect
    from .pdf.steps import DocumentJob, run_document_steps

    if not pdf.is_file():
        raise ConfigError(f"{pdf}: no such PDF file")
    settings = load_settings("local", config)
    job = DocumentJob(settings.document(), settings.limits())
    # the abstract's own language (what its cut is looked for under), else the body's,
    # read once the words are out
    lang = language or (detect(abstract).top if abstract else None) or "und"
    cand = Candidate(pdf.stem, "local", lang, {lang: abstract} if abstract else {},
                     pdf_path=str(pdf))
    until = "leakage" if abstract else "group"
    work, results = run_document_steps(cand, job, until=until, skip=frozenset({"render"}))
    failed = results.failure
    if work.doc is None:  # extraction itself failed: nothing to draw
        assert failed is not None
        raise ConfigError(f"{pdf}: a build would drop it: {failed[1].cls.value}: "
                          f"{failed[1].message}")
    if language is None and not abstract:
        lang = detect(" ".join(work.doc.words[:5000])).top or "und"
        cand = Candidate(cand.id, "local", lang, {}, pdf_path=str(pdf))
    notes = [f"preview of {pdf.name}: not a dataset row; language {lang}"
             + ("" if language else " (detected)")]
    cuts = Cuts(num_pages=len(work.doc.pages))
    body = work.doc
    if failed is not None:
        notes.append(f"a build would drop it: {failed[0]}: {failed[1].cls.value}: "
                     f"{failed[1].message}")
    elif work.stripped is not None:
        body = work.stripped.body
        cuts.leakage = work.leaks or {}
        for i in removed_indices(work.doc, body):
            match = next((m.language for m in work.stripped.matches if m.start <= i < m.end),
                         COVER)
            cuts.words.append((work.doc.word_pages[i], tuple(work.doc.boxes[i].tolist()),
                               match))
    elif not abstract:
        notes.append("no --abstract given: nothing cut (a build drops a paper whose abstract "
                     "it cannot find)")
    return _row_of(body, cand, work.outline), cuts, notes


# --- drawing ---------------------------------------------------------------------------

WORD, LINE, BLOCK = (25, 90, 230), (0, 160, 70), (225, 30, 30)
# each block outlined in its label's colour (article_labels; BLOCK for a label not here)
LABEL_COLOURS: dict[str, tuple[int, int, int]] = {
    "title": (128, 0, 128), "author": (160, 82, 45), "abstract": (0, 128, 128),
    "keywords": (85, 107, 47), "section": (220, 20, 60), "paragraph": (225, 30, 30),
    "list": (255, 140, 0), "bibliography": (139, 69, 19), "equation": (0, 0, 205),
    "algorithm": (72, 61, 139), "figure": (34, 139, 34), "table": (0, 139, 139),
    "caption": (199, 21, 133), "header": (105, 105, 105), "footer": (112, 128, 144),
    "footnote": (184, 134, 11)}
LANG_COLOURS = {"en": (255, 140, 0), "fr": (150, 60, 220), "es": (0, 170, 200),
                "pt": (220, 0, 140), "ko": (130, 130, 0), "de": (140, 80, 20)}
OTHER_COLOURS = ((200, 90, 90), (60, 140, 140), (150, 150, 60), (90, 90, 200))
COVER_COLOUR = (110, 110, 110)
SHADE_ALPHA = 110  # of 255: the text under the shade stays legible


def lang_colour(lang: str) -> tuple[int, int, int]:
    if lang == COVER:
        return COVER_COLOUR
    return LANG_COLOURS.get(lang, OTHER_COLOURS[sum(map(ord, lang)) % len(OTHER_COLOURS)])


def _px(box: Any, scale: float) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = (float(v) * scale for v in box)
    return round(x0), round(y0), round(max(x1, x0 + 1)), round(max(y1, y0 + 1))


def _union(boxes: list[Any]) -> tuple[float, float, float, float]:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))


@dataclass
class Caption:
    """The lines under the picture: who, where, what was kept and cut, how much leaked."""

    article_id: str
    split: str
    page: int
    num_pages: int
    row: dict[str, Any]
    cuts: Cuts
    notes: list[str] = field(default_factory=list)  # a preview's: what a build would do

    def lines(self) -> list[str]:
        r, on_page = self.row, [i for i, p in enumerate(self.row["article_pages"])
                                if p == self.page]
        cut = Counter(lang for _, _, lang in self.cuts.words)
        here = sum(1 for p, _, _ in self.cuts.words if p == self.page)
        leak = ", ".join(f"{k} {100 * v:.1f}%" for k, v in sorted(self.cuts.leakage.items()))
        lines = [
            f"{self.article_id}  |  split {self.split}  |  page {self.page} of "
            f"{self.num_pages}  |  {r.get('language')} ({r.get('source')})",
            f"kept: {len(r['article_words'])} words in the document; on this page "
            f"{len(on_page)} words, {len({r['article_line_ids'][i] for i in on_page})} lines, "
            f"{len({r['article_block_ids'][i] for i in on_page})} blocks",
            "cut: " + (", ".join(f"{n} {k} words" for k, n in sorted(cut.items())) or "nothing")
            + f" in the document, {here} on this page",
            f"leakage (share of each abstract's n-grams left in the body): {leak or 'n/a'}"]
        if self.cuts.differs:
            lines.append(f"WARNING: re-extraction differs from the dataset ({self.cuts.differs:+d}"
                         " words): the shading may be off")
        return lines + self.notes


def _render(pdf: Path, page: int, scale: float) -> Any:
    from .images.render import open_pdf, render_rgb

    with open_pdf(pdf) as doc:
        return render_rgb(doc, page, scale)


def _shade(img: Any, cuts: Cuts, page: int, scale: float) -> Any:
    """Removed words filled with their language's colour; the language written once per
    language on the page, above its first word."""
    from PIL import Image, ImageDraw

    overlay = Image.new("RGBA", img.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    firsts: dict[str, Any] = {}
    for p, box, lang in cuts.words:
        if p == page:
            draw.rectangle(_px(box, scale), fill=(*lang_colour(lang), SHADE_ALPHA))
            firsts.setdefault(lang, box)
    out = Image.alpha_composite(img.convert("RGBA"), overlay).convert("RGB")
    text = ImageDraw.Draw(out)
    font = _font(11 * scale)
    for lang, box in firsts.items():
        x0, y0, _, _ = _px(box, scale)
        label = lang if lang == COVER else f"{lang} abstract (cut)"
        at = (x0, max(0, y0 - 13 * scale))
        text.rectangle(text.textbbox(at, label, font=font), fill="white")
        text.text(at, label, fill=lang_colour(lang), font=font)
    return out


def page_labels(row: dict[str, Any], page: int) -> list[str]:
    """The labels of the page's blocks, each once, in reading order."""
    labels = row.get("article_labels") or []
    seen: dict[str, None] = {}
    for i, p in enumerate(row["article_pages"]):
        if p == page and i < len(labels):
            seen.setdefault(labels[i], None)
    return list(seen)


def _outlines(img: Any, row: dict[str, Any], page: int, scale: float) -> None:
    """Blocks (in their label's colour, tagged at their top left corner with their place in
    the page's reading order and their label: "3 caption"), then lines (each padded
    outwards), then words on top."""
    from PIL import ImageDraw

    draw = ImageDraw.Draw(img)
    idx = [i for i, p in enumerate(row["article_pages"]) if p == page]
    boxes = row["article_bboxes"]
    labels = row.get("article_labels") or []
    tags: list[tuple[int, int, str, Any]] = []  # corner, "N label", colour
    for key, pad, width in (("article_block_ids", 3, 2), ("article_line_ids", 1, 1)):
        groups: dict[int, list[Any]] = {}
        first: dict[int, int] = {}
        for i in idx:  # dicts keep insertion order: the groups in reading order
            groups.setdefault(row[key][i], []).append(boxes[i])
            first.setdefault(row[key][i], i)
        for gid, members in groups.items():
            x0, y0, x1, y1 = _px(_union(members), scale)
            colour = LINE
            if key == "article_block_ids":
                name = labels[first[gid]] if first[gid] < len(labels) else ""
                colour = LABEL_COLOURS.get(name, BLOCK)
                tags.append((x0 - pad, y0 - pad, f"{len(tags) + 1} {name}".strip(), colour))
            draw.rectangle((x0 - pad, y0 - pad, x1 + pad, y1 + pad), outline=colour,
                           width=width)
    for i in idx:
        draw.rectangle(_px(boxes[i], scale), outline=WORD, width=1)
    font = _font(7 * scale)
    for x, y, tag, colour in tags:
        at = (x, max(0, y - round(8 * scale)))
        draw.rectangle(draw.textbbox(at, tag, font=font), fill=colour)
        draw.text(at, tag, fill="white", font=font)


TREE_WIDTH = 230  # points: the section tree's panel beside the page
TREE_OTHER = (120, 120, 120)  # a heading of another page


def section_lines(row: dict[str, Any], page: int) -> list[tuple[str, bool]]:
    """The section tree as the panel lists it, one heading a line: indented by its level,
    "level title (p. N)", and whether it opens on `page` (drawn in the section colour);
    nothing for a row without the columns (`--features published`)."""
    secs = row.get("sections") or []
    ids, pages = row.get("article_section_ids") or [], row["article_pages"]
    opens: dict[int, int] = {}
    for i, k in enumerate(ids):
        if k >= 0:
            opens.setdefault(int(k), int(pages[i]))
    return [(f"{'  ' * (s['level'] - 1)}{s['level']} {s['title']} (p. {opens.get(k, '?')})",
             opens.get(k) == page) for k, s in enumerate(secs)]


def _with_tree(img: Any, row: dict[str, Any], page: int, scale: float) -> Any:
    """The page with the section tree beside it (headings and their levels), the
    page's own headings in the section colour; the page alone for a row without one."""
    from PIL import Image, ImageDraw

    lines = section_lines(row, page)
    if not lines:
        return img
    font, step = _font(7 * scale), round(9 * scale)
    width = round(TREE_WIDTH * scale)
    panel = Image.new("RGB", (width, img.height), "white")
    draw = ImageDraw.Draw(panel)
    draw.text((step // 2, step // 2), f"sections ({len(lines)}): level title (page)",
              fill=(0, 0, 0), font=font)
    room = max(1, img.height // step - 3)
    for k, (text, here) in enumerate(lines[:room]):
        while text and draw.textlength(text, font=font) > width - step:
            text = text[:-2] + "…"
        draw.text((step // 2, step // 2 + (k + 1) * step), text,
                  fill=LABEL_COLOURS["section"] if here else TREE_OTHER, font=font)
    if len(lines) > room:
        draw.text((step // 2, step // 2 + (room + 1) * step),
                  f"… {len(lines) - room} more", fill=(0, 0, 0), font=font)
    draw.line((0, 0, 0, img.height), fill=TREE_OTHER, width=1)
    out = Image.new("RGB", (img.width + width, img.height), "white")
    out.paste(img, (0, 0))
    out.paste(panel, (img.width, 0))
    return out


def _font(size: float) -> Any:
    from PIL import ImageFont

    return ImageFont.load_default(size=max(8, round(size)))


def _with_caption(img: Any, caption: Caption, langs: list[str], scale: float,
                  labels: list[str] | None = None) -> Any:
    """The page above a white band: the caption's lines, then a colour legend."""
    from PIL import Image, ImageDraw

    font, step = _font(8 * scale), round(11 * scale)
    lines = caption.lines()
    legend = [("word", WORD), ("line", LINE)]
    legend += [(name, LABEL_COLOURS.get(name, BLOCK)) for name in labels or ["block"]]
    legend += [(lang if lang == COVER else f"{lang} abstract", lang_colour(lang))
               for lang in langs]
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    places, x, row = [], step, 0  # the legend wraps at the page's width
    for name, colour in legend:
        width = step * 2 + round(measure.textlength(name, font=font))
        if x > step and x + width > img.width:
            x, row = step, row + 1
        places.append((name, colour, x, row))
        x += width
    band = Image.new("RGB", (img.width, step * (len(lines) + row + 2)), "white")
    draw = ImageDraw.Draw(band)
    for k, line in enumerate(lines):
        draw.text((step, step // 2 + k * step), line, fill=(0, 0, 0), font=font)
    for name, colour, x, row in places:
        y = step // 2 + (len(lines) + row) * step
        draw.rectangle((x, y + 2, x + step - 4, y + step - 4), outline=colour, width=2)
        draw.text((x + step + 2, y), name, fill=colour, font=font)
    out = Image.new("RGB", (img.width, img.height + band.height), "white")
    out.paste(img, (0, 0))
    out.paste(band, (0, img.height))
    return out


def draw_page(pdf: Path, page: int, row: dict[str, Any], cuts: Cuts, caption: Caption,
              scale: float = SCALE) -> Any:
    """The rendered page with shading, outlines and caption, as a PIL image."""
    img = _shade(_render(pdf, page, scale), cuts, page, scale)
    _outlines(img, row, page, scale)
    img = _with_tree(img, row, page, scale)
    langs = sorted({lang for _, _, lang in cuts.words})
    return _with_caption(img, caption, langs, scale, page_labels(row, page))

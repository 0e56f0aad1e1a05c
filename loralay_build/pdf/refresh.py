"""A refresh (`build --refresh`): the dataset already built grows by what is new, and what
it held stays as it was.

What a refresh stands on is the **base**: the dataset as its last finish wrote it,
committed in the finish's state (`state/finish.sqlite`) only once that finish's files are
all in place: a copy of its decisions (`base_decisions`: every id it decided, the kept ones
with split and shard, in the dataset's row order) beside a checkpoint `dataset` (its
version, its data files per split, their languages, the thresholds it applied, where its
papers came from (`identity`: the source and the keys naming its repository or query), the
settings its rows were made with, the changelog, and with `images: true` its page images'
files per split). A refresh killed at any moment finds the same base when run again, so it
decides and writes the same version.

Given the base, the corpus steps decide as for any build (`corpus_steps.CORPUS_STEPS`, the one
list) with the base's kept ids as `Prior`: they keep their split and row (they are never
written again; their files are carried into the new `data/`, and their page images' into
the new `images/`, unchanged), they win against
any new copy of themselves, the percentile filters apply the base's thresholds, and the
splits share out the new documents alone.

What the source now says of an old document that its frozen row does not take (its PDF
changed: the same id, another sha256; with `split_mode: given`, another split) is not
dropped in silence: `Untaken` lists it in diff.json, the changelog counts it and the log
says that a rebuild without --refresh takes it.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..atomic import write_text_atomic
from ..conf import CommonSettings
from ..corpus.filters import Thresholds
from ..corpus.split import SplitError, given_name
from ..diffs import DatasetDiff, Untaken
from ..errors import ConfigError
from ..failures import FailureClass
from ..paths import DATA_DIR, DIFF_JSON, IMAGES_DIR, SHARD_NAME
from ..records import DocSummary
from ..runfolder import RunFolder
from ..splits import SPLITS
from ..store.fetch import FetchState
from ..store.finish import KEPT, FinishState
from .fingerprint import PdfChecksums, real_sha256

log = logging.getLogger("loralay.refresh")



@dataclass(frozen=True)
class Prior:
    """What the corpus steps keep of the base: its kept ids (split and shard state, in the
    dataset's row order) and its thresholds; `decided`: every id the base decided."""

    kept: Mapping[str, tuple[str, int]]  # id -> (split, shard), in row order
    thresholds: Thresholds
    decided: Mapping[str, str | None] = field(default_factory=dict)  # id -> class (None: kept)

    def rank(self) -> dict[str, int]:
        return {doc_id: k for k, doc_id in enumerate(self.kept)}


def say_untaken(untaken: Untaken) -> None:
    """One line each in the log: what was not taken, and how to take it."""
    how = ("rebuild without --refresh to take them (a new version 1: every document "
           "decided again, its splits too)")
    if untaken.pdf_changed:
        e = untaken.pdf_changed[0]
        log.warning("refresh: %d old documents' PDFs changed upstream (e.g. %s: sha256 "
                    "%s, now %s); their rows are kept as they were (diff.json "
                    "`pdf_changed`): %s", len(untaken.pdf_changed), e["id"],
                    e["old_pdf_sha256"][:12], e["new_pdf_sha256"][:12], how)
    if untaken.split_moves_refused:
        e = untaken.split_moves_refused[0]
        log.warning("refresh: %d old documents are given another split (e.g. %s: kept "
                    "in %s, given %s); a refresh keeps their split (diff.json "
                    "`split_moves_refused`): %s", len(untaken.split_moves_refused),
                    e["id"], e["kept"], e["asked"], how)


class OldOffers:
    """The old documents the source offers again as it offers them now (the sha256 of
    their PDF, the split it gives), compared with each old row's summary as the finish
    reads it (`see`): hashed as a document's fingerprint hashes its PDF (`PdfChecksums`,
    cached by path, size and mtime, so unchanged files are not read again)."""

    def __init__(self, fstate: FetchState, prior: Prior, current: Container[str],
                 checksums: Path, given: bool) -> None:
        sums = PdfChecksums(checksums)
        try:
            self.now = {c.id: (sums.sha256(c.pdf_path), c.split) for c in fstate.candidates(
                keep=lambda i: i in prior.kept and i in current)}
        finally:
            sums.close()
        self.kept, self.given = prior.kept, given
        self.found = Untaken()

    def see(self, summary: DocSummary) -> None:
        doc_id = summary.id
        if doc_id not in self.now:  # not offered now: missing upstream
            return
        sha, asked = self.now[doc_id]
        old = real_sha256(summary.pdf_sha256)
        if old and real_sha256(sha) and sha != old:
            self.found.pdf_changed.append({"id": doc_id, "old_pdf_sha256": old,
                                           "new_pdf_sha256": sha})
        if self.given and asked is not None:
            try:
                asked = given_name(doc_id, asked)
            except SplitError:  # what was asked, as it was asked
                pass
            if asked != self.kept[doc_id][0]:
                self.found.split_moves_refused.append(
                    {"id": doc_id, "kept": self.kept[doc_id][0], "asked": asked})

    def untaken(self) -> Untaken:
        return Untaken(sorted(self.found.pdf_changed, key=lambda e: e["id"]),
                       sorted(self.found.split_moves_refused, key=lambda e: e["id"]))


@dataclass
class Base:
    """The dataset as the last complete finish wrote it."""

    version: int
    files: dict[str, list[str]]  # split -> paths relative to DIR, in load order
    languages: list[str]
    thresholds: dict[str, Any]
    row_settings: dict[str, Any]
    changelog: list[str]
    prior: Prior
    missing: list[str] = field(default_factory=list)  # kept ids gone upstream, as listed
    # `source_identity` of the build; None: a base committed before it was recorded (taken
    # to be today's, as an older build's row settings are)
    identity: dict[str, Any] | None = None
    # the `images` config's files per split, as `files`; None: a base committed before
    # they were recorded (`record_image_files` reads them from `images/` once)
    image_files: dict[str, list[str]] | None = None
    untaken: Untaken = field(default_factory=Untaken)  # what its diff.json listed so

    def counts(self) -> dict[str, int]:
        got = Counter(split for split, _ in self.prior.kept.values())
        return {s: got[s] for s in SPLITS}


def row_settings(settings: CommonSettings) -> dict[str, Any]:
    """The settings an old row is made with: the per-document ones and the columns."""
    return {**settings.document().model_dump(mode="json"),
            "features": settings.corpus().features}


def source_identity(settings: CommonSettings) -> dict[str, Any]:
    """Where the papers come from: the source, and its keys naming the repository or the
    query (`IDENTITY`; a date window is not among them, a refresh moves it)."""
    keys = settings.IDENTITY
    values = settings.model_dump(mode="json", include=set(keys))
    return {"source": settings.source, **{k: values[k] for k in keys}}


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def read_base(finish_db: Path) -> Base | None:
    """The committed base, or None when no finish of this tool completed here."""
    if not finish_db.exists():
        return None
    with FinishState(finish_db) as st:
        facts = st.dataset()
        if facts is None:
            return None
        rows = list(st.base_decisions())
    kept = {r.id: (str(r.split), int(r.shard)) for r in rows if r.kept and r.shard is not None}
    decided = {r.id: (None if r.kept else r.cls) for r in rows}
    t = facts["thresholds"]
    prior = Prior(kept, Thresholds.from_json(t), decided)
    images = facts.get("image_files")
    return Base(int(facts["version"]), {s: list(v) for s, v in facts["files"].items()},
                list(facts["languages"]), dict(facts["thresholds"]),
                dict(facts["row_settings"]), list(facts["changelog"]), prior,
                list(facts.get("missing_upstream", [])),
                facts.get("identity"),
                None if images is None else {s: list(v) for s, v in images.items()},
                Untaken.from_json(facts.get("untaken")))


def commit_base(finish_db: Path, version: int, files: Mapping[str, Sequence[str]],
                languages: Iterable[str], thresholds: Mapping[str, Any],
                settings: Mapping[str, Any], identity: Mapping[str, Any],
                changelog: Sequence[str], missing: Sequence[str] = (),
                image_files: Mapping[str, Sequence[str]] | None = None,
                untaken: Untaken | None = None) -> None:
    """The decisions just written become the base, in one transaction, once every file
    of the version is in place (called last). `identity`: `source_identity`;
    `image_files`: the `images` config's files per split (none without images)."""
    with FinishState(finish_db) as st:
        with st.transaction():
            st.decisions_become_base()
            st.set_dataset({
                "version": version, "files": {s: list(v) for s, v in files.items()},
                "languages": sorted(languages), "thresholds": dict(thresholds),
                "row_settings": dict(settings), "identity": dict(identity),
                "changelog": list(changelog),
                "missing_upstream": sorted(missing),
                "image_files": {s: list(v) for s, v in (image_files or {}).items()},
                "untaken": (untaken or Untaken()).to_json()})


def record_image_files(layout: RunFolder, base: Base) -> dict[str, list[str]]:
    """The page images' files of a base committed before they were recorded, read from
    `images/` and recorded in the base before a refresh writes anything: a refresh killed
    after it swapped in a new `images/` then finds them recorded, never its own new files."""
    files = _shard_files(layout.out, IMAGES_DIR)
    with FinishState(layout.finish_db) as st, st.transaction():
        facts = st.dataset()
        assert facts is not None
        st.set_dataset({**facts, "image_files": files})
    base.image_files = files
    return files


def _shard_files(out: Path, folder: str) -> dict[str, list[str]]:
    """A config folder's shard files per split, in load order (paths relative to `out`)."""
    files: dict[str, list[str]] = {}
    for p in sorted((out / folder).glob("*.parquet")) if (out / folder).is_dir() else ():
        m = SHARD_NAME.match(p.name)
        if m:
            files.setdefault(m.group(1), []).append(f"{folder}/{p.name}")
    return files


def _older_build(layout: RunFolder) -> tuple[dict[str, int], dict[str, Any]] | None:
    """The kept counts and thresholds of a dataset built before bases were committed
    (decisions recorded, `data/` written), read without writing; None: there is none."""
    db = layout.finish_db
    if not db.exists():
        return None
    with FinishState(db) as st:
        got = st.kept_counts()
        thresholds = st.thresholds()
    if not got or not (layout.out / DATA_DIR).is_dir() or not isinstance(thresholds, dict):
        return None
    return {s: got.get(s, 0) for s in SPLITS}, thresholds


def adopt_older_build(layout: RunFolder, settings: CommonSettings) -> None:
    """A dataset built before bases were committed becomes version 1's base, its files
    read from `data/` (and `images/`) and its row settings taken to be today's, but for
    `images`: whether `images/` holds pages (a refresh must not add a config the old rows
    lack, nor leave out one they have)."""
    if read_base(layout.finish_db) is not None:
        return
    older = _older_build(layout)
    if older is None:
        return
    counts, thresholds = older
    files = _shard_files(layout.out, DATA_DIR)
    images = _shard_files(layout.out, IMAGES_DIR)
    commit_base(layout.finish_db, 1, files, _languages(layout.out, files), thresholds,
                {**row_settings(settings), "images": bool(images)},
                source_identity(settings), [f"v1: {count_line(counts)}"],
                image_files=images)


def _languages(out: Path, files: Mapping[str, Sequence[str]]) -> list[str]:
    found: set[str] = set()
    for paths in files.values():
        for rel in paths:
            if "language" in pq.read_schema(out / rel).names:
                col = pq.read_table(out / rel, columns=["language"]).column(0)
                found.update(v for v in col.to_pylist() if v)
    return sorted(found)


def check_refresh(layout: RunFolder, settings: CommonSettings, adopt: bool = True
                  ) -> Base | None:
    """The base a refresh of this folder grows, or one line saying why there is none or
    why its rows could not stay as they are under these settings. `adopt`: an older
    build's dataset becomes the base (else, checking only, nothing is written and None
    is returned for it)."""
    if adopt:
        adopt_older_build(layout, settings)
    base = read_base(layout.finish_db)
    if base is None:
        if not adopt and _older_build(layout) is not None:
            return None
        raise ConfigError(f"{layout.out}: --refresh needs a dataset this tool built there, "
                          f"and holds none; build it first, without --refresh")
    _check_same(layout, base, settings)
    _check_columns(layout, base, settings.corpus().features)
    if settings.images:
        _check_old_images(layout, base, adopt)
    return base


def _check_same(layout: RunFolder, base: Base, settings: CommonSettings) -> None:
    """One rule for what a refresh must share with its base: the source and its repository
    or query (else the dataset would mix papers of two places, and call every old one
    missing upstream), and the settings its rows were made with (its old rows cannot
    change); the first key that differs is named, with both values."""
    identity = source_identity(settings)
    was = {**(identity if base.identity is None else base.identity), **base.row_settings}
    now = {**identity, **row_settings(settings)}
    where = list(dict.fromkeys([*identity, *(base.identity or {})]))
    for key in where + sorted((set(now) | set(was)) - set(where)):
        if now.get(key) == was.get(key):
            continue
        old, new = _dump(was.get(key)), _dump(now.get(key))
        if key in where:
            raise ConfigError(
                f"--refresh: `{key}` is {new}, the dataset in {layout.out} was built with "
                f"{old}; a refresh adds papers from the same source and query: refresh "
                f"with `{key}` {old}, or build the other one into a new --out")
        raise ConfigError(
            f"--refresh: `{key}` is {new}, the dataset's rows were made with {old}; its "
            f"old rows cannot change: refresh with the same `{key}`, or rebuild without "
            f"--refresh")


def _check_columns(layout: RunFolder, base: Base, features: str) -> None:
    """The old rows' files must have the columns and types new rows get: a split whose
    files disagree does not load (`datasets` refuses it), and old rows cannot change. A
    dataset an earlier version wrote (`article_labels` as names, before they became
    ClassLabel ids; before `ocr_pages`) is refused in one line naming the column."""
    from ..write.features import SCHEMAS
    from ..write.shards import resolve_carried

    want = SCHEMAS[features]
    for rels in base.files.values():
        for rel in rels:
            path = layout.out / resolve_carried(layout.out, rel)
            if not path.is_file():
                continue  # a missing file is the finish's to name
            try:
                have = pq.read_schema(path)
            except (OSError, pa.ArrowException) as e:
                raise ConfigError(f"{path}: not a readable Parquet file ({e}); rebuild "
                                  "without --refresh") from None
            why = schema_difference(have, want)
            if why:
                raise ConfigError(f"--refresh: {path} {why}; it was written by an earlier "
                                  "loralay-build and its old rows cannot change: rebuild "
                                  "without --refresh")


def schema_difference(have: pa.Schema, want: pa.Schema) -> str:
    """The first column whose presence or type differs, said in a few words ("" if none)."""
    for f in want:
        if f.name not in have.names:
            return f"has no `{f.name}` column"
        got, wanted = _plain(have.field(f.name).type), _plain(f.type)
        if got != wanted:
            return f"holds `{f.name}` as {got}, this version writes {wanted}"
    extra = [n for n in have.names if n not in want.names]
    return f"has a `{extra[0]}` column this version does not write" if extra else ""


def _plain(t: pa.DataType) -> pa.DataType:
    """The type with its list items unnamed: Parquet readers call them `element` or
    `item` by who wrote the file, which is no difference of the rows."""
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_plain(t.value_type), t.list_size)
    if pa.types.is_list(t):
        return pa.list_(_plain(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _plain(f.type)) for f in t])
    return t


def _check_old_images(layout: RunFolder, base: Base, adopt: bool) -> None:
    """With `images: true` the old documents' pages are carried as they are, so they must
    all be there: a refresh could not list its old rows in the `images` config otherwise."""
    files = base.image_files
    if files is None:
        files = record_image_files(layout, base) if adopt else \
            _shard_files(layout.out, IMAGES_DIR)
    if not base.prior.kept:
        return
    from ..write.shards import resolve_carried

    gone = [rel for paths in files.values() for rel in paths
            if not (layout.out / resolve_carried(layout.out, rel)).is_file()]
    if gone or not any(files.values()):
        what = f"{gone[0]} is missing" if gone else f"{IMAGES_DIR}/ holds none"
        raise ConfigError(f"{layout.out}: --refresh with images: true, and the page images of "
                          f"the dataset's old rows are not all there ({what}); rebuild "
                          f"without --refresh")


def count_line(counts: Mapping[str, int]) -> str:
    total = sum(counts.values())
    per = ", ".join(f"{s} {n:,}" for s, n in counts.items() if n)
    return f"{total:,} documents ({per})" if per else f"{total:,} documents"


def make_diff(base: Base, outcomes: Sequence[tuple[str, Any]], duplicates: Mapping[str, Any],
              missing: Sequence[str], untaken: Untaken | None = None) -> DatasetDiff:
    """`outcomes`: the refresh's (id, Outcome) in the report's order; `duplicates`: its
    dropped id -> `Duplicate`; `missing`: the base's kept ids the source no longer offers;
    `untaken`: what the source says of the others that their rows do not take."""
    added: dict[str, list[str]] = {}
    dups: list[dict[str, Any]] = []
    dropped: Counter[str] = Counter()
    decided = base.prior.decided
    for doc_id, o in outcomes:
        if o.status == KEPT:
            if doc_id not in base.prior.kept:
                added.setdefault(o.split, []).append(doc_id)
        elif doc_id not in decided:
            if o.cls == FailureClass.DUPLICATE.value and doc_id in duplicates:
                dups.append(duplicates[doc_id].to_json())
            else:
                dropped[o.cls] += 1
    added = {s: added[s] for s in SPLITS if s in added}
    return DatasetDiff(base.version, base.version + 1, added, dups, sorted(missing),
                dict(sorted(dropped.items())), untaken or Untaken())


def write_diff(out: Path, diff: DatasetDiff) -> None:
    write_text_atomic(out / DIFF_JSON, diff.write_text())


def remove_diff(out: Path) -> None:
    """A plain build is a version 1 again: no diff of a refresh it replaced."""
    (out / DIFF_JSON).unlink(missing_ok=True)


def nothing_new(diff: DatasetDiff, base: Base) -> bool:
    """Nothing added, no new id dropped, no id newly gone upstream, nothing newly left
    untaken."""
    return not diff.added and not diff.duplicates and not diff.dropped \
        and set(diff.missing_upstream) <= set(base.missing) \
        and diff.untaken.within(base.untaken)

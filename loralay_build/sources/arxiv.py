"""arXiv-Lay: Cohan et al. ids, abstracts from the arXiv metadata snapshot, PDFs from the bucket.

The snapshot (`arxiv-metadata-oai-snapshot.json`, millions of JSON lines, several GB) is
streamed once and joined on the id without its slash (`hep-th/9608091` is Cohan's
`hep-th9608091`) through a dict: linear time, where the original scanned a list of ids
for every line. Only lines whose id is wanted are fully parsed.

PDFs: the highest version listed under the id's prefix in the public `arxiv-dataset`
bucket, through the storage JSON API (`bucket_api_url`, `?prefix=`), downloaded from
`bucket_download_url/<object name>`. Ids are skipped once recorded, so a rerun after a
kill fetches only the rest; no paging checkpoint is needed for an id list.

Licence: the snapshot's `license` (a licence URL). Null means arXiv's default, its
non-exclusive licence to distribute, which gives others no right to redistribute: it
is recorded as that licence's id, with a note in `extra["license_note"]`.

`select: snapshot` takes the papers from the snapshot itself instead of Cohan's lists:
the lines of some categories whose `update_date` falls in a window, read in the same one
pass (the two fields are read from the raw line; only a line that may be chosen is parsed).
The snapshot is in no order, so the newest `update_date` chosen (`HighWater`) is saved only
once the whole file has been read and every chosen paper recorded: a run cut short by
`--limit` or a kill leaves the mark where it was, and a refresh then still asks for what
that run never reached.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pylatexenc.latex2text import LatexNodes2Text

from ..conf import ArxivSettings
from ..failures import FailureClass, StageError
from ..http import HostBlocked, HostForbidden, PoliteClient
from ..licenses import ARXIV_DEFAULT
from ..records import Candidate, Rejection
from . import (
    BadRunInput,
    FetchContext,
    HarvestStopped,
    download_candidate,
    forbidden,
    retrieved_now,
)
from .cohan import read_ids
from .kit.harvest import HighWater
from .kit.jsonl import BadLine, bad_record, numbered_lines, parse_line

SOURCE = "arxiv"
NEW_ID = re.compile(r"^(\d{4})\.(\d{4,5})$")  # 0704.0001, 1501.00001
OLD_ID = re.compile(r"^([a-z]+(?:-[a-z]+)*)(\d{7})$")  # hep-th9608091 (slash removed)
_SNAPSHOT_ID = re.compile(rb'^\s*\{\s*"id"\s*:\s*"([^"\\]+)"')
# a key's closing quote is never escaped, a quote inside a string always is: these match a
# line's own fields only (a value with an escape is left to the full parse)
_CATEGORIES = re.compile(rb'"categories"\s*:\s*"([^"\\]*)"')
_UPDATE_DATE = re.compile(rb'"update_date"\s*:\s*"([^"\\]*)"')
HIGH_WATER = "arxiv.high_water"
_UNESCAPED_PERCENT = re.compile(r"(?<!\\)%")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LATEX = LatexNodes2Text()
ABS_URL = "https://arxiv.org/abs/{id}"
DEFAULT_LICENSE_NOTE = ("the snapshot's license is null: arXiv's default non-exclusive "
                        "licence to distribute (no redistribution right for others)")


def require_inputs(s: ArxivSettings) -> ArxivSettings:
    """The local inputs have no default: say which key to set (`select: snapshot` reads
    Cohan's files only to leave their ids out, when given)."""
    if not s.metadata_path or (s.select == "ids" and not s.ids_dir):
        raise BadRunInput("arxiv: set ids_dir (the Cohan et al. files) and metadata_path "
                         "(arxiv-metadata-oai-snapshot.json) with --config FILE")
    if not Path(s.metadata_path).is_file():
        raise BadRunInput(f"arxiv: {s.metadata_path}: metadata snapshot not found")
    return s


# --- ids and bucket paths ------------------------------------------------------------
def bucket_prefix(article_id: str) -> str | None:
    """The object-name prefix of an id's PDFs (`...<id>v`), None for an unknown id form."""
    key = article_id.replace("/", "")
    new = NEW_ID.match(key)
    if new:
        return f"arxiv/arxiv/pdf/{new.group(1)}/{key}v"
    old = OLD_ID.match(key)
    if old:
        archive, number = old.groups()
        return f"arxiv/{archive}/pdf/{number[:4]}/{number}v"
    return None


def canonical_id(article_id: str) -> str:
    """`hep-th9608091` -> `hep-th/9608091` (arXiv's own form); new-style ids unchanged."""
    old = OLD_ID.match(article_id.replace("/", ""))
    return f"{old.group(1)}/{old.group(2)}" if old else article_id


def latest_version(names: list[str], prefix: str) -> tuple[int, str] | None:
    """The highest `vN` among listed object names; other objects under the prefix ignored."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.pdf$")
    found = [(int(m.group(1)), n) for n in names if (m := pattern.match(n))]
    return max(found) if found else None


# --- metadata ------------------------------------------------------------------------
def abstract_text(raw: str) -> tuple[str, bool]:
    """The abstract as text, and whether the LaTeX conversion was used.

    pylatexenc reads a bare `%` as a comment and drops the rest of the abstract, so every
    unescaped `%` is escaped first (`\\%` comes out as `%`). A conversion that fails or
    loses over half the text falls back to the joined raw text."""
    joined = " ".join(raw.split())
    try:
        text = " ".join(_LATEX.latex_to_text(_UNESCAPED_PERCENT.sub(r"\\%", joined)).split())
    except Exception:  # noqa: BLE001 - any parser failure means: keep the raw text
        return joined, False
    if len(text) < len(joined) / 2:
        return joined, False
    return text, True


def publication_date(meta: dict[str, Any]) -> str | None:
    """v1's submission date (the paper's first appearance), else `update_date`."""
    versions = meta.get("versions")
    if isinstance(versions, list) and versions:
        first = next((v for v in versions if isinstance(v, dict) and v.get("version") == "v1"),
                     versions[0])
        created = first.get("created") if isinstance(first, dict) else None
        if isinstance(created, str):
            try:
                return email.utils.parsedate_to_datetime(created).date().isoformat()
            except (TypeError, ValueError):
                pass
    update = meta.get("update_date")
    return update if isinstance(update, str) and _DATE.match(update) else None


def license_of(meta: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The snapshot's `license` as given, or arXiv's default licence (and a note) when null."""
    value = meta.get("license")
    if isinstance(value, str) and value.strip():
        return value.strip(), {"license_field": "license"}
    return ARXIV_DEFAULT, {"license_field": "license", "license_note": DEFAULT_LICENSE_NOTE}


def to_candidate(article_id: str, split: str | None, meta: dict[str, Any],
                 retrieved_at: str | None = None) -> Candidate | Rejection:
    raw = meta.get("abstract")
    if not isinstance(raw, str) or not raw.strip():
        return Rejection(article_id, SOURCE, FailureClass.NO_ABSTRACT.value,
                         "the metadata snapshot has no abstract for this id")
    text, converted = abstract_text(raw)
    title = meta.get("title")
    arxiv_id = canonical_id(article_id)
    licence, notes = license_of(meta)
    extra = {"arxiv_id": arxiv_id, "latex_converted": converted, **notes}
    for key in ("categories", "doi", "update_date"):
        if meta.get(key) is not None:
            extra[key] = meta[key]
    return Candidate(id=article_id, source=SOURCE, language="en", abstracts={"en": text},
                     publication_date=publication_date(meta), split=split,
                     title=" ".join(title.split()) if isinstance(title, str) else None,
                     extra=extra, license=licence, record_url=ABS_URL.format(id=arxiv_id),
                     retrieved_at=retrieved_at)


def read_snapshot(path: str | Path, may_want: Callable[[str | None, bytes], bool]
                  ) -> Iterator[tuple[str, dict[str, Any]] | BadLine]:
    """(slash-less id, metadata) of each snapshot line `may_want(id, raw line)` keeps, read
    by the one JSON-lines reader (plain or gzipped); the caller checks the parsed line.

    The id is read from the start of the line without parsing the rest (None for a line
    of another shape), so a line not wanted costs a regex, not a JSON parse. A line parsed
    that is not a JSON object with a string `id` is yielded as a `BadLine` (one of the
    report's bad input records)."""
    path = Path(path)
    for lineno, line in numbered_lines(path):
        m = _SNAPSHOT_ID.match(line)
        head = m.group(1).decode("utf-8", "replace").replace("/", "") if m else None
        if not may_want(head, line):
            continue
        meta = parse_line(lineno, line, path)
        if isinstance(meta, BadLine):
            yield meta
            continue
        if not isinstance(meta.get("id"), str):
            yield BadLine(lineno, "no string 'id'", path)
            continue
        yield meta["id"].replace("/", ""), meta


def stream_snapshot(path: str | Path, wanted: dict[str, str]
                    ) -> Iterator[tuple[str, dict[str, Any]] | BadLine]:
    """(Cohan id, metadata) for each snapshot line whose slash-less id is in `wanted`."""
    for found in read_snapshot(path, lambda head, _: head is None or head in wanted):
        if isinstance(found, BadLine) or found[0] in wanted:
            yield found


@dataclass(frozen=True)
class Selection:
    """The snapshot lines `select: snapshot` takes: one of the paper's categories starts
    with one of `categories` (none given: any paper), and its `update_date` is from `since`
    to `until` (both included; None: unbounded). `since` does not hold for `retry` ids: a
    refresh asks again for a paper an earlier run could not fetch, however old its line."""

    categories: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    leave_out: Collection[str] = ()  # Cohan's ids: arXiv-Lay's own papers
    retry: Collection[str] = ()

    def in_categories(self, value: str) -> bool:
        return not self.categories or any(c.startswith(self.categories) for c in value.split())

    def dated(self, value: str, retrying: bool) -> bool:
        if self.since is not None and value < self.since and not retrying:
            return False
        return self.until is None or value <= self.until

    def may_hold(self, key: str | None, line: bytes) -> bool:
        """Whether a raw line may be chosen: False only when its own fields say it is not
        (an id not read from the line's start may be one to retry: the parse decides)."""
        if key is not None and key in self.leave_out:
            return False
        cats = _CATEGORIES.search(line) if self.categories else None
        if cats is not None and not self.in_categories(cats.group(1).decode("utf-8", "replace")):
            return False
        found = _UPDATE_DATE.search(line) if self.since or self.until else None
        date = found.group(1).decode("ascii", "replace") if found else ""
        if not _DATE.match(date):
            return True
        return self.dated(date, key in self.retry if key is not None else bool(self.retry))

    def holds(self, key: str, meta: dict[str, Any]) -> bool:
        cats, date = meta.get("categories"), meta.get("update_date")
        if key in self.leave_out:
            return False
        if self.categories and not (isinstance(cats, str) and self.in_categories(cats)):
            return False
        if self.since is None and self.until is None:
            return True
        return isinstance(date, str) and _DATE.match(date) is not None \
            and self.dated(date, key in self.retry)

    def describe(self) -> str:
        cats = ", ".join(self.categories) if self.categories else "every category"
        return f"{cats}; update_date {self.since or '...'} to {self.until or '...'}"


def select_snapshot(path: str | Path, rule: Selection
                    ) -> Iterator[tuple[str, dict[str, Any]] | BadLine]:
    """(record id, metadata) of each snapshot line `rule` chooses, in file order."""
    for found in read_snapshot(path, rule.may_hold):
        if isinstance(found, BadLine) or rule.holds(*found):
            yield found


# --- the harvest -----------------------------------------------------------------------
class ArxivHarvest:
    def __init__(self, ctx: FetchContext, settings: ArxivSettings, client: PoliteClient):
        self.ctx = ctx
        self.settings = settings
        self.client = client
        self.yielded = 0

    def limit_reached(self) -> bool:
        return self.ctx.limit_reached(self.yielded)

    def pending(self) -> tuple[dict[str, str], list[Rejection]]:
        """Ids still to fetch (id -> split) and rejections for ids of no known form (and
        bad records for lines naming no id)."""
        wanted: dict[str, str] = {}
        bad: list[Rejection] = []
        assert self.settings.ids_dir is not None  # require_inputs
        for cid in read_ids(self.settings.ids_dir):
            if isinstance(cid, BadLine):
                bad.append(bad_record(cid, SOURCE))
                continue
            key = cid.article_id.replace("/", "")  # the record's id: Cohan's slash-less form
            if self.ctx.already_fetched(key) or key in wanted:
                continue
            if bucket_prefix(key) is None:
                bad.append(Rejection(key, SOURCE, FailureClass.BAD_METADATA.value,
                                     "not an arXiv id (neither 0704.0001 nor archive/YYMMNNN)"))
                continue
            wanted[key] = cid.split
        return wanted, bad

    def run(self) -> Iterator[Candidate | Rejection]:
        if self.settings.select == "snapshot":
            yield from self.run_snapshot()
            return
        started = time.monotonic()
        wanted, bad = self.pending()
        self.ctx.log.info("arxiv: %d ids to fetch, %d ids of an unknown form", len(wanted),
                          len(bad))
        for item in bad:
            if item.bad_record:  # an input line, not a document: not one of the limit's
                yield item
                continue
            if self.limit_reached():
                return
            self.yielded += 1
            yield item
        assert self.settings.metadata_path is not None  # require_inputs
        for found in stream_snapshot(self.settings.metadata_path, wanted):
            if isinstance(found, BadLine):
                yield bad_record(found, SOURCE)
                continue
            if self.limit_reached():
                return
            key, meta = found
            split = wanted.pop(key)
            self.yielded += 1
            yield self.process(key, split, meta)
        self.ctx.log.info("arxiv: snapshot streamed in %.0f s", time.monotonic() - started)
        for key in sorted(wanted):
            if self.limit_reached():
                return
            self.yielded += 1
            yield Rejection(key, SOURCE, FailureClass.NO_ABSTRACT.value,
                            "id not in the metadata snapshot")

    def cohan_ids(self) -> Iterator[str | Rejection]:
        """Cohan's ids (slash-less) when `ids_dir` is given, and its bad lines as bad records."""
        if not self.settings.ids_dir:
            return
        for cid in read_ids(self.settings.ids_dir):
            yield bad_record(cid, SOURCE) if isinstance(cid, BadLine) \
                else cid.article_id.replace("/", "")

    def run_snapshot(self) -> Iterator[Candidate | Rejection]:
        """The papers of the snapshot's chosen lines, in file order, fetched as Cohan's are;
        the high-water mark is their newest `update_date`, saved once the file is read."""
        started = time.monotonic()
        s = self.settings
        cohan: set[str] = set()
        for item in self.cohan_ids():
            if isinstance(item, Rejection):
                yield item
            else:
                cohan.add(item)
        hw = HighWater(self.ctx, HIGH_WATER)
        rule = Selection(tuple(s.categories), hw.start(s.from_date), s.until_date,
                         frozenset(cohan), frozenset(self.ctx.to_retry()))
        self.ctx.log.info("arxiv: choosing from the snapshot: %s (%d ids of Cohan's files "
                          "left out)", rule.describe(), len(cohan))
        assert s.metadata_path is not None  # require_inputs
        for found in select_snapshot(s.metadata_path, rule):
            if isinstance(found, BadLine):
                yield bad_record(found, SOURCE)
                continue
            key, meta = found
            date = meta.get("update_date")
            hw.seen(date if isinstance(date, str) and _DATE.match(date) else None)
            if self.ctx.already_fetched(key):
                continue
            if self.limit_reached():
                return  # the mark stays: papers after this line were never asked for
            self.yielded += 1
            if bucket_prefix(key) is None:
                yield Rejection(key, SOURCE, FailureClass.BAD_METADATA.value,
                                "not an arXiv id (neither 0704.0001 nor archive/YYMMNNN)")
                continue
            yield self.process(key, None, meta)
        hw.save()  # every chosen paper is recorded (the driver records before asking on)
        self.ctx.log.info("arxiv: snapshot streamed in %.0f s; newest update_date chosen: %s",
                          time.monotonic() - started, hw.mark)

    def process(self, key: str, split: str | None, meta: dict[str, Any]
                ) -> Candidate | Rejection:
        item = to_candidate(key, split, meta, retrieved_now())
        if isinstance(item, Rejection):
            return item
        excluded = self.ctx.license_excluded(item)  # the snapshot states it: before listing
        if excluded is not None:
            return excluded
        prefix = bucket_prefix(key)
        assert prefix is not None  # pending() kept only known forms
        try:
            found = latest_version(self.list_names(prefix), prefix)
        except HostForbidden as e:
            if e.refused_now:  # the listing itself was refused: the source is closed to us
                raise HarvestStopped(f"arxiv: {e}") from e
            return forbidden(self.ctx, item, e)  # the bucket refused a PDF earlier this run
        except HostBlocked as e:
            raise HarvestStopped(f"arxiv: {e}") from e
        except StageError as e:
            return Rejection(key, SOURCE, e.failure.cls.value, e.failure.message, item)
        if found is None:
            return Rejection(key, SOURCE, FailureClass.UNAVAILABLE.value,
                             f"no PDF in the bucket under {prefix}*", item)
        version, name = found
        url = f"{self.settings.bucket_download_url.rstrip('/')}/{quote(name)}"
        item = replace(item, pdf_url=url, extra={**item.extra, "version": version})
        return download_candidate(self.ctx, self.client, item, self.settings.pdf_attempts)

    def list_names(self, prefix: str) -> list[str]:
        """Object names under `prefix`, following `nextPageToken` a bounded number of times."""
        names: list[str] = []
        params: dict[str, str] = {"prefix": prefix, "fields": "items(name),nextPageToken"}
        for _ in range(max(1, self.settings.listing_pages)):
            data = self.client.get_json(self.settings.bucket_api_url, params)
            items = data.get("items", []) if isinstance(data, dict) else None
            if not isinstance(items, list):
                raise StageError(FailureClass.UNAVAILABLE, f"bucket listing for {prefix}: "
                                 "not an object listing")
            names.extend(str(i["name"]) for i in items if isinstance(i, dict) and "name" in i)
            token = data.get("nextPageToken")
            if not token:
                break
            params = {**params, "pageToken": str(token)}
        return names


def fetch(ctx: FetchContext) -> Iterator[Candidate | Rejection]:
    assert isinstance(ctx.settings, ArxivSettings)
    settings = require_inputs(ctx.settings)
    client = PoliteClient(settings.http_fields())
    yield from ArxivHarvest(ctx, settings, client).run()

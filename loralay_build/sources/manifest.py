"""A `--source local` manifest, line by line: a `Candidate`, or the line's fault.

Why this strict: a manifest is typed by hand or by a script, and every loose value used to
travel into the dataset ("March 2021" sorted as a string, `"id": ["x"]` becoming the id
"['x']", a `date` key silently ignored, a duplicate id putting one text in train and test).
Each fault now names its line; the other lines go on.

Licence and provenance: an optional `license` (also spelled `licence`; an id, a licence URL
or free text, kept as written: `licenses.normalise_license` reads it; both keys with
different values are kept as the list of the two, which reads as `unknown` unless both name
the same licence) and an optional `record_url` (where the document's metadata record
lives). A licence is never a reason to reject a line: any value is kept (a non-string one
as its JSON text), and a misspelled licence key is ignored rather than a fault. `url` alone
is ambiguous (`pdf_url` or `record_url`?) and stays a fault.

Text: a lone UTF-16 surrogate (`"\\ud800"`, valid JSON, no character) anywhere in a line,
keys and licence included, is that line's fault (`check_text`, before any other check), so
no id, message or value that reaches the run state, the report or Parquet holds one.

A `file` whose path cannot even be looked at (a symlink loop, a name too long, a folder
without permission, a NUL byte) is that line's `unavailable`, naming the path and the
reason; a missing file is left to the extractor's "file not found", as before.

Lines are read by the one JSON-lines reader (`kit/jsonl.py`: plain or gzipped, numbered,
blank ones skipped) and decoded here, where each fault has its own documented message.
"""

from __future__ import annotations

import datetime as dt
import difflib
import errno
import json
import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..failures import FailureClass
from ..langcodes import is_iso639_1
from ..records import Candidate, Rejection
from .kit.jsonl import numbered_lines

KEYS = ("id", "file", "language", "abstracts", "title", "publication_date", "pdf_url", "split",
        "license", "record_url")
REQUIRED = ("id", "file", "language", "abstracts")
LICENSE_KEYS = ("license", "licence")  # read in this order, whatever their case
# keys people write for a known one; other extra keys (provenance, notes) are kept out of
# the build but allowed
SYNONYMS = {"date": "publication_date", "year": "publication_date", "published": "publication_date",
            "pub_date": "publication_date", "lang": "language", "abstract": "abstracts",
            "summary": "abstracts", "path": "file", "pdf": "file", "url": "pdf_url' or 'record_url"}
_SHOWN_PATH = 240  # characters of a path a message shows (the middle of a longer one elided)
# a `file` the extractor reports itself ("file not found"): not a fault of the manifest
_LEFT_TO_EXTRACTOR = (errno.ENOENT, errno.ENOTDIR)
SPLIT_NAMES = ("train", "validation", "val", "valid", "dev", "test")
_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$", re.ASCII)  # `\d` is 0-9 only
_BAD_ID_CHARS = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")
# a JSON escape of a UTF-16 surrogate: legal JSON, but alone it is no character (UTF-8
# cannot encode it), so it would stop the run state, the report or Parquet far from its line
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class ManifestError(ValueError):
    pass


class UnreadableFile(ManifestError):
    """The line is fine but its `file` cannot be looked at: the line is `unavailable`."""


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    item: Candidate | Rejection


def check_text(obj: dict[str, Any]) -> None:
    """Every string of the line, keys and nested values included, is text UTF-8 can
    write: the one gate for a lone surrogate (`"\\ud800"`), checked before anything else
    reads the line, so no message, id or value downstream ever holds one."""
    for key, value in obj.items():
        stack: list[Any] = [key, value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                found = _SURROGATE.search(item)
                if found is not None:
                    raise ManifestError(f"{key!r} holds a lone UTF-16 surrogate "
                                        f"({found.group()!r}): not text")
            elif isinstance(item, dict):
                stack.extend(item)
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)


def _check_keys(obj: dict[str, Any]) -> None:
    for key in obj:
        if key in KEYS or key.lower() in LICENSE_KEYS:
            continue
        meant = SYNONYMS.get(key.lower()) or next(
            iter(difflib.get_close_matches(key, KEYS, n=1, cutoff=0.8)), None)
        if meant is not None and meant != "license":  # a licence never rejects a line
            raise ManifestError(f"key {key!r} is not read: did you mean '{meant}'?")
    for key in REQUIRED:
        if obj.get(key) in (None, "", {}):
            raise ManifestError(f"missing {key!r}")


def _text(obj: dict[str, Any], key: str, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"{key!r} must be a non-empty string, not {json.dumps(value)[:40]}")
    return value


def license_of(obj: dict[str, Any]) -> str | None:
    """The line's licence as written (`license`, `licence`, in any case); a value that is
    not a string is kept as its JSON text, an empty one is none. Keys that say different
    things (`license: CC BY 4.0`, `licence: CC0`) are both kept, as the JSON list of their
    values, which `normalise_license` reads statement by statement (`unknown` unless each
    names the same licence): neither is silently taken over the other."""
    values: list[str] = []
    for name in LICENSE_KEYS:
        for key, value in obj.items():
            if key.lower() != name or value is None:
                continue
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            text = text.strip()
            if text and " ".join(text.split()) not in {" ".join(v.split()) for v in values}:
                values.append(text)
    if len(values) > 1:
        return json.dumps(values, ensure_ascii=False)
    return values[0] if values else None


def _shown(path: str) -> str:
    """A path for a one-line message: control characters escaped, a long one shortened."""
    text = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group(0)):02x}", path)
    if len(text) > _SHOWN_PATH:
        half = _SHOWN_PATH // 2
        text = f"{text[:half]}...{text[-half:]}"
    return text


def _unreadable(given: Path, e: Exception) -> UnreadableFile:
    if isinstance(e, RuntimeError):  # Python < 3.13: Path.resolve()'s "Symlink loop from"
        why = "symlink loop (ELOOP)"
    elif isinstance(e, OSError):
        why = f"{e.strerror or e} ({errno.errorcode.get(e.errno or 0, str(e.errno))})"
    else:  # a NUL byte, a character the file system cannot encode
        why = f"not a usable path ({e})"
    return UnreadableFile(f"'file' {_shown(str(given))}: {why}")


def resolve_file(base: Path, name: str) -> Path:
    """The absolute path of a line's `file`, symlinks resolved; `UnreadableFile` when the
    path cannot be looked at (it used to stop the whole run with a traceback). A missing
    file is returned as it is: the extractor reports it."""
    given = base / name
    try:
        path = given.resolve()
    except (RuntimeError, OSError, ValueError) as e:
        raise _unreadable(given, e) from None
    try:
        os.stat(path)
    except OSError as e:
        if e.errno not in _LEFT_TO_EXTRACTOR:
            raise _unreadable(given, e) from None
    except ValueError as e:
        raise _unreadable(given, e) from None
    return path


def check_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"'id' must be a non-empty string, not {json.dumps(value)[:40]}")
    if _BAD_ID_CHARS.search(value):
        raise ManifestError(f"'id' {value!r} holds a control character (NUL, newline, ...)")
    return value


def check_date(value: Any) -> str | None:
    """ISO 8601 `YYYY`, `YYYY-MM` or `YYYY-MM-DD`, a real date, in ASCII digits; None when
    absent. The value is read in Unicode's compatibility form (NFKC) first, so full-width
    digits and hyphens ("２０２０－０３") become the date they show ("2020-03"), the
    value the dataset holds; any other digit (Arabic-Indic, ...) is refused. Shipped as
    written, "２０２０" sorted after every ASCII date."""
    if value is None:
        return None
    if isinstance(value, str):
        value = unicodedata.normalize("NFKC", value)
    match = _DATE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ManifestError(f"'publication_date' {json.dumps(value)} is not YYYY, YYYY-MM "
                            f"or YYYY-MM-DD")
    year, month, day = (int(g) if g else None for g in match.groups())
    try:
        dt.date(year or 1, month or 1, day or 1)
    except ValueError as e:
        raise ManifestError(f"'publication_date' {value!r} is not a real date ({e})") from e
    return value


def check_language(value: Any, what: str) -> str:
    if not is_iso639_1(value):
        raise ManifestError(f"{what} {json.dumps(value)[:40]} is not an ISO 639-1 code "
                            f"(two letters, e.g. 'en')")
    return str(value)


def check_abstracts(value: Any, lang: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ManifestError("'abstracts' must map a language code to a text")
    for code in value:
        check_language(code, "'abstracts' key")
    if not value.get(lang, "").strip():
        raise ManifestError(f"no abstract in the document's language {lang!r}")
    return {lang: value[lang], **{k: v for k, v in value.items() if k != lang}}


def split_of(obj: dict[str, Any]) -> str | None:
    """The line's `split` as written (None when absent or null); a fault when it names
    none of train, validation, test (or their aliases)."""
    split = _text(obj, "split")
    if split is not None and split.strip().lower() not in SPLIT_NAMES:
        raise ManifestError(f"'split' {split!r} is not train, validation or test")
    return split


def unread_splits(path: Path) -> str | None:
    """Why the manifest cannot be built with `split_mode: chronological`: lines that set
    a `split` (read by `split_of`; a line whose `split` is a fault is left to its line
    check), which that mode would ignore, so a paper marked `test` could land in train.
    Only lines holding `"split"` are parsed: a manifest without one costs a byte search."""
    lines: list[int] = []
    for n, raw in numbered_lines(path):
        if b'"split"' not in raw:
            continue
        try:
            obj = json.loads(raw)
            if isinstance(obj, dict) and split_of(obj) is not None:
                lines.append(n)
        except (ValueError, RecursionError):  # ManifestError too: the line's own fault
            continue
    if not lines:
        return None
    more = len(lines) - 1
    where = f" (and on {more:,} more line{'s' * (more > 1)})" if more else ""
    return (f"{path}:{lines[0]}: 'split' is set{where} but split_mode is chronological, which "
            f"ignores it: set `split_mode: given` in --config to keep the manifest's splits "
            f"(every line then needs one), or remove 'split'")


def candidate_from_line(obj: Any, base: Path, raw: bytes | None = None,
                        split_mode: str = "chronological") -> Candidate:
    """The line's Candidate, or the ManifestError naming its first fault; `raw` (the line's
    bytes) lets a line without a `\\uD8..`-like escape skip the surrogate walk. With
    `split_mode: given` a line must name its split (`unread_splits` is the other way)."""
    if not isinstance(obj, dict):
        raise ManifestError("not a JSON object")
    if raw is None or _SURROGATE_ESCAPE.search(raw):
        check_text(obj)
    _check_keys(obj)
    doc_id = check_id(obj["id"])
    lang = check_language(obj["language"], "'language'")
    split = split_of(obj)
    if split is None and split_mode == "given":
        raise ManifestError("no 'split' (split_mode: given reads each line's split)")
    abstracts = check_abstracts(obj["abstracts"], lang)
    date = check_date(obj.get("publication_date"))
    pdf_url, title, record_url = (_text(obj, k) for k in ("pdf_url", "title", "record_url"))
    name = str(_text(obj, "file", True))
    licence = license_of(obj)
    return Candidate(
        id=doc_id, source="local", language=lang, abstracts=abstracts,
        pdf_path=str(resolve_file(base, name)), pdf_url=pdf_url, publication_date=date,
        split=split, title=title, license=licence, record_url=record_url,
        extra={} if licence is None else {"license_field": "manifest"})


def read_manifest(path: Path, split_mode: str = "chronological") -> Iterator[Line]:
    """Every non-blank line as a Candidate or a Rejection naming `path:line`; an id seen
    before is rejected as `duplicate` under the line's own name (the first one stands).

    The first line naming an id holds it whatever that line's outcome: a faulty line
    (a `file` in a symlink loop, a bad date) is its id's outcome in the run state, so a
    later good copy under that id, or a faulty copy after a good line, would fight over
    one record (the build kept 0 of 1 where `--dry-run` said 1 ready)."""
    base = path.parent
    first_line: dict[str, int] = {}
    for n, raw in numbered_lines(path):
        item = parse_line(raw, n, path, base, split_mode)
        if not (isinstance(item, Rejection) and item.bad_record):
            if item.id in first_line:
                item = Rejection(f"{path.name}:{n}", "local", FailureClass.DUPLICATE.value,
                                 f"{path}:{n}: id {item.id!r} is already on line "
                                 f"{first_line[item.id]}", bad_record=True)
            else:
                first_line[item.id] = n
        yield Line(n, item)


def parse_line(raw: bytes, n: int, path: Path, base: Path,
               split_mode: str = "chronological") -> Candidate | Rejection:
    obj: Any = None
    cls = FailureClass.BAD_METADATA
    try:
        text = raw.decode("utf-8")
        obj = json.loads(text)
        return candidate_from_line(obj, base, raw, split_mode)
    except UnicodeDecodeError as e:
        reason = f"not UTF-8 (byte {e.start + 1} of the line)"
    except UnreadableFile as e:
        reason, cls = str(e), FailureClass.UNAVAILABLE
    except (ValueError, ManifestError, RecursionError) as e:
        reason = str(e) if isinstance(e, ManifestError) else f"not valid JSON ({e})"
    doc_id = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(doc_id, str) and doc_id.strip() and not _BAD_ID_CHARS.search(doc_id):
        return Rejection(doc_id, "local", cls.value, f"{path}:{n}: {reason}")
    return Rejection(f"{path.name}:{n}", "local", cls.value, f"{path}:{n}: {reason}",
                     bad_record=True)

"""The one JSON-lines reader (`sources/kit/jsonl.py`): plain or gzipped by content, bad lines
as values (never exceptions) that become the report's bad input records."""

from __future__ import annotations

import gzip
from pathlib import Path

from loralay_build.sources.kit.jsonl import BadLine, bad_record, numbered_lines, records
from loralay_build.sources.manifest import read_manifest

LINES = (b'{"a": 1}\n\n   \n[1]\n{"b": \n\xff\xfe\n' + b"[" * 100_000 + b"]" * 100_000 +
         b'\n{"c": "\\ud800"}\n{"d": 4}')


def test_gzip_is_told_by_content_not_by_name(tmp_path: Path) -> None:
    plain, zipped, misnamed = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.gz"
    plain.write_bytes(LINES)
    zipped.write_bytes(gzip.compress(LINES))
    misnamed.write_bytes(LINES)
    got = [list(numbered_lines(p)) for p in (plain, zipped, misnamed)]
    assert got[0] == got[1] == got[2]
    assert [n for n, _ in got[0]] == [1, 4, 5, 6, 7, 8, 9]  # blank lines skipped, numbered


def test_bad_lines_are_values_and_bad_records(tmp_path: Path) -> None:
    path = tmp_path / "ids.jsonl.gz"
    path.write_bytes(gzip.compress(LINES))
    got = list(records(path))
    assert [rec for _, rec in got if not isinstance(rec, BadLine)] == [{"a": 1}, {"d": 4}]
    bad = [rec for _, rec in got if isinstance(rec, BadLine)]
    assert [(b.lineno, b.reason.split(" (")[0]) for b in bad] == [
        (4, "not a JSON object"), (5, "not JSON"), (6, "not UTF-8"), (7, "JSON nested too deep"),
        (8, "a lone UTF-16 surrogate")]
    rej = bad_record(bad[0], "arxiv")
    assert (rej.id, rej.source, rej.cls, rej.bad_record) == ("ids.jsonl.gz:4", "arxiv",
                                                             "bad_metadata", True)
    assert rej.message == f"{path}:4: not a JSON object"


def test_a_gzipped_manifest_reads_as_the_plain_one(tmp_path: Path) -> None:
    text = (b'{"id": "x", "file": "x.pdf", "language": "en", "abstracts": {"en": "An abstract."}}'
            b'\n\nnot json\n')
    (tmp_path / "m.jsonl").write_bytes(text)
    (tmp_path / "m.jsonl.gz").write_bytes(gzip.compress(text))
    plain = [(line.number, line.item.id, line.item.__class__.__name__)
             for line in read_manifest(tmp_path / "m.jsonl")]
    zipped = [(line.number, line.item.id.replace(".gz", ""), line.item.__class__.__name__)
              for line in read_manifest(tmp_path / "m.jsonl.gz")]
    assert plain == zipped == [(1, "x", "Candidate"), (3, "m.jsonl:3", "Rejection")]

"""Manifest lines: each fault named by its line, the rest of the run going on; `--dry-run`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from loralay_build.records import Candidate, Rejection
from loralay_build.sources.manifest import read_manifest

from .conftest import REPO, config, loralay, rows_as_written

SAMPLE = REPO / "data" / "sample"


def sample_lines() -> list[dict]:
    return [json.loads(x) for x in (SAMPLE / "manifest.jsonl").read_text().splitlines()]


def write_manifest(tmp: Path, objs: list, raw_tail: bytes = b"") -> Path:
    shutil.copytree(SAMPLE / "pdf", tmp / "pdf")
    path = tmp / "manifest.jsonl"
    body = "".join(json.dumps(o) + "\n" for o in objs).encode()  # escapes, as JSON allows
    path.write_bytes(body + raw_tail)
    return path


def good() -> dict:
    return dict(sample_lines()[0])


FAULTS = [
    ({"publication_date": "March 2021"}, "'publication_date' \"March 2021\" is not YYYY"),
    ({"publication_date": 2020}, "'publication_date' 2020 is not YYYY"),
    ({"publication_date": "2021-02-30"}, "is not a real date"),
    ({"publication_date": "\u0662\u0660\u0662\u0660"}, "is not YYYY, YYYY-MM or YYYY-MM-DD"),
    ({"date": "2021"}, "key 'date' is not read: did you mean 'publication_date'?"),
    ({"language": "english"}, "'language' \"english\" is not an ISO 639-1 code"),
    ({"file": 42}, "'file' must be a non-empty string, not 42"),
    ({"pdf_url": {}}, "'pdf_url' must be a non-empty string, not {}"),
    ({"id": ["x"]}, "'id' must be a non-empty string, not [\"x\"]"),
    ({"id": "a\nb"}, "holds a control character"),
    ({"id": "a\u0000b"}, "holds a control character"),
    ({"abstracts": {"fr": "Un résumé."}}, "no abstract in the document's language 'en'"),
    ({"split": "holdout"}, "'split' 'holdout' is not train, validation or test"),
    # a lone surrogate anywhere (JSON allows the escape; UTF-8 cannot write it)
    ({"title": "T\ud800"}, "'title' holds a lone UTF-16 surrogate ('\\ud800'): not text"),
    ({"id": "x\udfff"}, "'id' holds a lone UTF-16 surrogate ('\\udfff')"),
    ({"abstracts": {"en": "A\ud800b" * 20}}, "'abstracts' holds a lone UTF-16 surrogate"),
    ({"notes": ["ok", {"\udc00": 1}]}, "'notes' holds a lone UTF-16 surrogate"),
    ({"license": "CC BY\ud800"}, "'license' holds a lone UTF-16 surrogate"),
]


@pytest.mark.parametrize("change,expected", FAULTS)
def test_each_fault_is_bad_metadata_naming_its_line(tmp_path, change, expected):
    bad = {**good(), **change}
    path = write_manifest(tmp_path, [sample_lines()[1], bad])
    items = [line.item for line in read_manifest(path)]
    assert isinstance(items[0], Candidate)
    assert isinstance(items[1], Rejection) and items[1].cls == "bad_metadata"
    assert items[1].message.startswith(f"{path}:2: ") and expected in items[1].message
    assert "\n" not in items[1].message


@pytest.mark.parametrize("written,read", [
    ("２０２０", "2020"), ("２０２０－０３－０２", "2020-03-02"), ("2019-０６", "2019-06")])
def test_full_width_digits_of_a_date_are_read_as_the_date_they_show(tmp_path, written, read):
    """Before: "２０２０" passed (`\\d` is any Unicode digit) and was shipped as written,
    sorting after every ASCII date, so a 2020 paper landed in test after 2023's."""
    path = write_manifest(tmp_path, [{**good(), "publication_date": written}])
    (item,) = [line.item for line in read_manifest(path)]
    assert isinstance(item, Candidate) and item.publication_date == read


def test_a_surrogate_pair_is_text_not_a_fault(tmp_path):
    path = write_manifest(tmp_path, [{**good(), "title": "Emoji \U0001f600"}])
    (item,) = [line.item for line in read_manifest(path)]
    assert isinstance(item, Candidate) and item.title == "Emoji \U0001f600"


def test_a_non_utf8_byte_rejects_its_line_only(tmp_path):
    path = write_manifest(tmp_path, sample_lines()[:2], b'{"id": "caf\xe9"}\n')
    lines = list(read_manifest(path))
    assert [type(x.item) for x in lines] == [Candidate, Candidate, Rejection]
    assert lines[2].item.message == f"{path}:3: not UTF-8 (byte 12 of the line)"


def test_a_duplicate_id_is_classed_and_the_first_line_stands(tmp_path):
    first, second = sample_lines()[:2]
    path = write_manifest(tmp_path, [first, second, {**second, "title": "again"}])
    items = [line.item for line in read_manifest(path)]
    assert [i.id for i in items] == [first["id"], second["id"], "manifest.jsonl:3"]
    assert items[2].cls == "duplicate"
    assert f"id {second['id']!r} is already on line 2" in items[2].message


def test_provenance_keys_are_allowed(tmp_path):
    """A line with a licence and a key of the user's own (`source_repo`) is the same
    candidate as without them, but for the licence as stated: the extra key is kept out."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = write_manifest(tmp_path / "a", [{**good(), "license": "CC-BY", "source_repo": "x/y"}])
    plain_path = write_manifest(tmp_path / "b", [good()])
    got, plain = next(read_manifest(path)).item, next(read_manifest(plain_path)).item
    assert isinstance(got, Candidate) and isinstance(plain, Candidate)
    assert (got.license, got.extra) == ("CC-BY", {"license_field": "manifest"})
    assert "x/y" not in repr(got)
    assert replace(got, license=plain.license, extra=plain.extra,
                   pdf_path=plain.pdf_path) == plain


def test_dry_run_reports_every_fault_by_line_and_writes_nothing(tmp_path):
    objs = sample_lines()[:3]
    objs.append({**good(), "id": "d1", "publication_date": "March 2021"})
    objs.append({**good(), "id": "d2", "date": "2021"})
    objs.append({**good(), "id": "d3", "language": "english"})
    objs.append({**good(), "id": "d4", "file": "pdf/nowhere.pdf"})
    objs.append({**good(), "id": "d5", "file": "manifest.jsonl"})  # exists, not a PDF
    path = write_manifest(tmp_path, objs)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "loralay_build.cli", "build", "--source",
                           "local", "--manifest", str(path), "--out", str(out), "--dry-run"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    report = proc.stdout
    assert f"{path}:4: 'publication_date'" in report
    assert f"{path}:5: key 'date' is not read" in report
    assert f"{path}:6: 'language' \"english\"" in report
    assert f"{path}:7: d4: unavailable: file not found" in report
    assert f"{path}:8: d5: unavailable: not a PDF (no %PDF- header)" in report
    assert "8 lines, 3 ready to build; bad_metadata 3, unavailable 2" in report
    assert not out.exists()


# --- a `file` that cannot even be looked at --------------------------------------------------
def unreadable_lines(tmp: Path) -> tuple[Path, list[dict]]:
    """A real two-link symlink loop, a name past NAME_MAX, a NUL byte, around good lines."""
    (tmp / "loop-a.pdf").symlink_to(tmp / "loop-b.pdf")
    (tmp / "loop-b.pdf").symlink_to(tmp / "loop-a.pdf")
    first, second = sample_lines()[:2]
    objs = [first, {**good(), "id": "loop", "file": "loop-a.pdf"},
            {**good(), "id": "long", "file": "x" * 300 + ".pdf"},
            {**good(), "id": "nul", "file": "pdf/a\u0000b.pdf"}, second]
    return write_manifest(tmp, objs), objs


def test_a_symlink_loop_is_that_lines_unavailable_naming_path_and_reason(tmp_path):
    path, objs = unreadable_lines(tmp_path)
    items = [line.item for line in read_manifest(path)]
    assert [type(i) for i in items] == [Candidate, Rejection, Rejection, Rejection, Candidate]
    loop, long, nul = items[1:4]
    assert (loop.id, loop.cls) == ("loop", "unavailable")
    assert loop.message == f"{path}:2: 'file' {tmp_path}/loop-a.pdf: symlink loop (ELOOP)"
    assert (long.id, long.cls) == ("long", "unavailable")
    assert long.message.startswith(f"{path}:3: 'file' {tmp_path}/xxx")
    assert long.message.endswith("xxx.pdf: File name too long (ENAMETOOLONG)")
    assert "..." in long.message and len(long.message) < len(str(path)) + 320
    assert (nul.id, nul.cls) == ("nul", "unavailable")
    assert nul.message == (f"{path}:4: 'file' {tmp_path}/pdf/a\\x00b.pdf: not a usable path "
                           f"(embedded null byte)")
    assert all("\n" not in i.message and "\x00" not in i.message for i in items[1:4])
    assert items[4].id == objs[4]["id"]


def test_permission_denied_on_the_path_is_unavailable(tmp_path, monkeypatch):
    """EACCES cannot be made for root with chmod: `os.stat` refuses the one path instead."""
    import errno
    import os

    path = write_manifest(tmp_path, [good()])
    target = str((tmp_path / good()["file"]).resolve())
    real = os.stat

    def stat(p, *args, **kwargs):
        if os.fspath(p) == target:
            raise PermissionError(errno.EACCES, "Permission denied", target)
        return real(p, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    (item,) = [line.item for line in read_manifest(path)]
    assert isinstance(item, Rejection) and item.cls == "unavailable"
    assert item.message == (f"{path}:1: 'file' {tmp_path}/{good()['file']}: Permission denied "
                            f"(EACCES)")


def test_a_missing_file_is_still_left_to_the_extractor(tmp_path):
    path = write_manifest(tmp_path, [{**good(), "file": "pdf/nowhere.pdf"},
                                     {**good(), "id": "nodir", "file": f"{good()['file']}/x.pdf"}])
    items = [line.item for line in read_manifest(path)]
    assert all(isinstance(i, Candidate) for i in items)
    assert items[0].pdf_path == str(tmp_path / "pdf" / "nowhere.pdf")


def test_pdf_checks_never_raise_on_an_unreadable_path(tmp_path):
    from loralay_build.failures import Failure, FailureClass
    from loralay_build.pdfmagic import is_pdf_file
    from loralay_build.pdftext.poppler import check_pdf_file

    (tmp_path / "loop.pdf").symlink_to(tmp_path / "loop.pdf")
    loop = tmp_path / "loop.pdf"
    assert check_pdf_file(loop) == Failure(
        FailureClass.UNAVAILABLE, "cannot read file (Too many levels of symbolic links, ELOOP)")
    assert check_pdf_file(tmp_path / ("y" * 300)) == Failure(
        FailureClass.UNAVAILABLE, "cannot read file (File name too long, ENAMETOOLONG)")
    assert check_pdf_file(Path("a\x00b.pdf")) == Failure(
        FailureClass.UNAVAILABLE, "not a usable path (embedded null byte)")
    assert not is_pdf_file(loop) and not is_pdf_file("a\x00b.pdf")
    assert not is_pdf_file(tmp_path / ("y" * 300))


@pytest.mark.e2e
def test_dry_run_and_build_report_unreadable_paths_and_go_on(tmp_path):
    """Before: a symlink loop stopped `--dry-run` and the build with a traceback."""
    path, objs = unreadable_lines(tmp_path)
    cmd = [sys.executable, "-m", "loralay_build.cli", "build", "--source", "local",
           "--manifest", str(path), "--out", str(tmp_path / "out")]
    dry = subprocess.run([*cmd, "--dry-run"], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert dry.returncode == 1 and "Traceback" not in dry.stderr, dry.stderr
    assert f"{path}:2: 'file' {tmp_path}/loop-a.pdf: symlink loop (ELOOP) [unavailable]" \
        in dry.stdout
    assert "5 lines, 2 ready to build; unavailable 3" in dry.stdout
    build = subprocess.run([*cmd, "--workers", "1"], cwd=REPO, capture_output=True, text=True,
                           timeout=600)
    assert build.returncode == 0 and "Traceback" not in build.stderr, build.stderr[-3000:]
    assert "2 kept of 5" in build.stderr and "(unavailable 3)" in build.stderr
    report = (tmp_path / "out" / "report.md").read_text()
    assert "symlink loop (ELOOP)" in report and "File name too long (ENAMETOOLONG)" in report


@pytest.mark.e2e
def test_a_lone_surrogate_is_its_lines_bad_metadata_and_the_build_goes_on(tmp_path):
    """Before: `"\\ud800"` in one line's title stopped the fetch ("surrogates not allowed",
    no line number), and a rerun stopped at the same place."""
    first, second = sample_lines()[:2]
    path = write_manifest(tmp_path, [first, {**good(), "id": "sur", "title": "T\ud800"},
                                     second])
    out = tmp_path / "out"
    cmd = ["build", "--source", "local", "--manifest", str(path), "--out", str(out),
           "--workers", "1"]
    runs = []
    for _ in range(2):  # a rerun gives the same
        proc = loralay(*cmd)
        assert proc.returncode == 0 and "surrogates not allowed" not in proc.stderr, \
            proc.stderr[-3000:]
        assert "2 kept of 3" in proc.stderr
        report = json.loads((out / "report.json").read_text())
        runs.append((rows_as_written(out), report["documents"]["sur"]))
    assert runs[0] == runs[1]
    assert runs[0][1]["class"] == "bad_metadata"
    assert runs[0][1]["message"] == (f"{path}:2: 'title' holds a lone UTF-16 surrogate "
                                     f"('\\ud800'): not text")


@pytest.mark.e2e
def test_a_full_width_date_is_written_and_split_as_the_date_it_shows(tmp_path):
    """Three dated papers, one per split: the oldest, dated "２０１５", is train and holds
    "2015" (before: it sorted after "2021-03-02" and went to test, written as typed)."""
    first, second = sample_lines()[:2]  # 2019-06-14, 2021-03-02
    path = write_manifest(tmp_path, [first, second,
                                     {**sample_lines()[5], "publication_date": "２０１５"}])
    out = tmp_path / "out"
    loralay("build", "--source", "local", "--manifest", str(path), "--out", str(out),
            "--workers", "1", check=True)
    rows = {r["article_id"]: (name.split("-")[0], r["publication_date"])
            for name, table in rows_as_written(out) for r in table}
    assert rows == {sample_lines()[5]["id"]: ("train", "2015"),
                    first["id"]: ("validation", "2019-06-14"),
                    second["id"]: ("test", "2021-03-02")}


def _not_a_file(tmp: Path, kind: str) -> Path:
    import os

    if kind == "folder":
        (tmp / "m.jsonl").mkdir()
    elif kind == "FIFO (named pipe)":
        os.mkfifo(tmp / "m.jsonl")  # opening it would block until a writer came
    else:
        return Path("/dev/null")
    return tmp / "m.jsonl"


@pytest.mark.parametrize("kind", ["folder", "FIFO (named pipe)", "device"])
@pytest.mark.parametrize("dry", [False, True])
def test_a_manifest_that_is_no_file_is_one_line_and_creates_no_out(tmp_path, kind, dry):
    """Before: a folder, a FIFO or /dev/null passed the check ("exists"), the build made
    `--out` and its state, then said "manifest not found"; `--dry-run` on a folder ended in
    a traceback (IsADirectoryError)."""
    manifest = _not_a_file(tmp_path, kind)
    out = tmp_path / "out"
    proc = loralay("build", "--source", "local", "--manifest", str(manifest), "--out",
                   str(out), *(["--dry-run"] if dry else []), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"loralay: manifest: {manifest}: a {kind}, not a file\n"
    assert not out.exists()


@pytest.mark.e2e
def test_denied_and_conflicting_licences_are_written_unknown_with_their_words(tmp_path):
    """Before: "not licensed under CC BY 4.0" was written `cc-by-4.0`, and a `licence`
    differing from `license` was dropped without a word (the row said `license`'s)."""
    first, second, third = (sample_lines()[i] for i in (0, 1, 5))
    path = write_manifest(tmp_path, [
        {**first, "license": "not licensed under CC BY 4.0"},
        {**second, "license": "CC BY 4.0", "licence": "CC0"},
        {**third, "license": "CC BY 4.0", "licence": "cc-by-4.0"}])
    out = tmp_path / "out"
    loralay("build", "--source", "local", "--manifest", str(path), "--out", str(out),
            "--workers", "1", check=True)
    rows = {r["article_id"]: (r["license"], r["license_text"])
            for _, table in rows_as_written(out) for r in table}
    assert rows == {first["id"]: ("unknown", "not licensed under CC BY 4.0"),
                    second["id"]: ("unknown", '["CC BY 4.0", "CC0"]'),
                    third["id"]: ("cc-by-4.0", '["CC BY 4.0", "cc-by-4.0"]')}


# --- a given `split` is honoured (split_mode: given) or the run refused ---------------------
def _marked(tmp: Path) -> tuple[Path, list[dict]]:
    """The oldest paper marked test, the middle one train, the newest without a split."""
    objs = [{**sample_lines()[5], "publication_date": "2015", "split": "test"},
            {**sample_lines()[0], "split": "train"}, sample_lines()[1]]
    return write_manifest(tmp, objs), objs


@pytest.mark.parametrize("dry", [False, True])
def test_a_split_the_mode_would_ignore_refuses_the_run_naming_split_mode(tmp_path, dry):
    """Before: with the default split_mode (chronological) a line's `split` was checked,
    then ignored: the paper marked test went to train, without a word."""
    path, _ = _marked(tmp_path)
    out = tmp_path / "out"
    proc = loralay("build", "--source", "local", "--manifest", str(path), "--out", str(out),
                   *(["--dry-run"] if dry else []), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == (f"loralay: {path}:1: 'split' is set (and on 1 more line) but "
                           f"split_mode is chronological, which ignores it: set `split_mode: "
                           f"given` in --config to keep the manifest's splits (every line then "
                           f"needs one), or remove 'split'\n")
    assert not out.exists()


def test_with_split_mode_given_a_line_without_split_is_its_bad_metadata(tmp_path):
    path, _ = _marked(tmp_path)
    (*kept, missing) = [line.item for line in read_manifest(path, "given")]
    assert [c.split for c in kept] == ["test", "train"]
    assert isinstance(missing, Rejection) and missing.cls == "bad_metadata"
    assert missing.message == f"{path}:3: no 'split' (split_mode: given reads each line's split)"
    # the chronological reading has nothing to refuse on a line: the run is refused before
    assert all(isinstance(line.item, Candidate) for line in read_manifest(path))


@pytest.mark.e2e
def test_with_split_mode_given_each_paper_is_written_in_its_split(tmp_path):
    """`--dry-run` and the build agree: the line without a split is bad_metadata in both;
    the paper marked test is in test though it is the oldest."""
    path, objs = _marked(tmp_path)
    out = tmp_path / "out"
    cmd = ["build", "--source", "local", "--manifest", str(path), "--out", str(out),
           "--config", str(config(tmp_path, split_mode="given")), "--workers", "1"]
    dry = loralay(*cmd, "--dry-run", timeout=60)
    assert dry.returncode == 1, dry.stderr
    assert f"{path}:3: no 'split' (split_mode: given reads each line's split) " \
           f"[bad_metadata]" in dry.stdout
    assert "3 lines, 2 ready to build; bad_metadata 1" in dry.stdout
    loralay(*cmd, check=True)
    rows = {r["article_id"]: name.split("-")[0]
            for name, table in rows_as_written(out) for r in table}
    assert rows == {objs[0]["id"]: "test", objs[1]["id"]: "train"}
    docs = json.loads((out / "report.json").read_text())["documents"]
    assert docs[objs[2]["id"]]["class"] == "bad_metadata"


def test_a_manifest_that_cannot_be_read_is_one_line(tmp_path, monkeypatch):
    """EACCES cannot be made for root with chmod: `open` refuses the manifest instead."""
    import builtins
    import errno

    from loralay_build.conf import load_settings
    from loralay_build.errors import ConfigError
    from loralay_build.pdf.preflight import check_inputs

    path = write_manifest(tmp_path, [good()])
    real = builtins.open

    def refuse(p, *args, **kwargs):
        if str(p) == str(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(p, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refuse)
    with pytest.raises(ConfigError) as e:
        check_inputs(load_settings("local", None, {"manifest": str(path)}))
    assert str(e.value) == f"manifest: {path}: cannot be read (Permission denied)"


def test_dry_run_names_every_symlink_loop_line_with_the_class_the_build_gives_it(tmp_path):
    """Issue 41 §15: each form of loop (to itself, two links, in a folder on the way, an
    absolute path, a chain into one) is its own line's fault in `--dry-run`, with the
    class the build records for the same line (`read_manifest`, what the fetch yields),
    and the lines after it are still checked."""
    from loralay_build.run.dryrun import check_manifest

    (tmp_path / "self.pdf").symlink_to("self.pdf")
    (tmp_path / "a.pdf").symlink_to("b.pdf")
    (tmp_path / "b.pdf").symlink_to("a.pdf")
    (tmp_path / "d").symlink_to("d")
    (tmp_path / "chain.pdf").symlink_to("a.pdf")
    files = ["self.pdf", "a.pdf", "d/x.pdf", str(tmp_path / "b.pdf"), "chain.pdf"]
    objs = [{**good(), "id": f"loop{i}", "file": f} for i, f in enumerate(files)] + [good()]
    path = write_manifest(tmp_path, objs)
    said: list[str] = []
    assert check_manifest(path, None, said.append) is False  # a fault: exit status 1
    built = {line.number: line.item for line in read_manifest(path)}
    for n, name in enumerate(files, start=1):
        item = built[n]
        assert isinstance(item, Rejection) and item.cls == "unavailable", (name, item)
        assert item.message.startswith(f"{path}:{n}: 'file' ") and "symlink loop" in item.message
        assert f"{item.message} [unavailable]" in said, (name, said)
    assert isinstance(built[len(objs)], Candidate)
    assert said[-1] == f"{path}: {len(objs)} lines, 1 ready to build; unavailable {len(files)}"


def test_a_faulty_line_repeating_an_id_is_a_duplicate_whatever_its_order(tmp_path):
    """Issue 41 §15: a good line, then its copy whose file is a symlink loop: the build
    gave the copy's `unavailable` to the good paper's id (kept 0 of 1) while `--dry-run`
    said 1 ready; in the other order the paper was built and its id also `unavailable`.
    One rule now: the first line naming an id holds it, whatever that line's outcome,
    and every later one is a `duplicate` -- in the build and the dry run alike."""
    from loralay_build.run.dryrun import check_manifest

    (tmp_path / "loop.pdf").symlink_to("loop.pdf")
    paper = good()
    copy = {**paper, "file": "loop.pdf"}
    for name, objs, first_cls in (("good-first", [paper, copy], None),
                                  ("loop-first", [copy, paper], "unavailable")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "loop.pdf").symlink_to("loop.pdf")
        path = write_manifest(tmp_path / name, objs)
        first, second = (line.item for line in read_manifest(path))
        assert first.id == paper["id"] and getattr(first, "cls", None) == first_cls, name
        assert isinstance(second, Rejection) and second.cls == "duplicate", (name, second)
        assert second.bad_record and second.id == f"{path.name}:2"
        assert second.message == f"{path}:2: id {paper['id']!r} is already on line 1"
        said: list[str] = []
        check_manifest(path, None, said.append)
        ready = 1 if first_cls is None else 0
        faults = "duplicate 1" + ("" if first_cls is None else ", unavailable 1")
        assert said[-1] == f"{path}: 2 lines, {ready} ready to build; {faults}", said


@pytest.mark.e2e
def test_a_looped_copy_of_a_good_line_does_not_cost_the_paper_in_the_build(tmp_path):
    (tmp_path / "loop.pdf").symlink_to("loop.pdf")
    paper = good()
    path = write_manifest(tmp_path, [paper, {**paper, "file": "loop.pdf"}])
    out = tmp_path / "out"
    proc = loralay("build", "--source", "local", "--manifest", str(path), "--out", str(out),
                   "--workers", "1", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r["article_id"] for _, rows in rows_as_written(out) for r in rows] == [paper["id"]]
    assert f"{path}:2: id {paper['id']!r} is already on line 1" in proc.stderr

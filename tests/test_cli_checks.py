"""What the commands say before any work: one plan for `build` and `--dry-run`, an output
path that cannot be written named in one line, help texts that match the docs."""

from __future__ import annotations

import logging

import pytest

from loralay_build.failures import RETRYABLE_ON_REQUEST
from loralay_build.pdf import pipeline as pdf
from loralay_build.pdftext import parse

from .conftest import SAMPLE, build_local, loralay

pytestmark = pytest.mark.e2e  # most run the CLI in a subprocess
ONE_PDF = SAMPLE.parent / "pdf" / "en_onecol_timing_note.pdf"


def test_dry_run_refuses_an_executor_the_build_refuses(tmp_path):
    """`--executor bogus --dry-run` said "valid" while the build refused it."""
    out = tmp_path / "o"
    dry = build_local(SAMPLE, out, "--executor", "bogus", "--dry-run")
    real = build_local(SAMPLE, out, "--executor", "bogus")
    line = "loralay: --executor bogus: one of local, slurm\n"
    assert (dry.returncode, dry.stderr, dry.stdout) == (2, line, "")
    assert (real.returncode, real.stderr) == (2, line)
    assert not out.exists()


def test_dry_run_into_an_out_that_cannot_be_made_says_so(tmp_path):
    """A dry run said "would be created" under a file, where the build then failed."""
    (tmp_path / "a-file").write_text("mine\n")
    out = tmp_path / "a-file" / "o"
    dry = build_local(SAMPLE, out, "--dry-run")
    assert dry.returncode == 2
    assert dry.stderr == (f"loralay: {out}: a build could not write here "
                          f"({tmp_path / 'a-file'} is not a folder)\n")
    assert (tmp_path / "a-file").read_text() == "mine\n"


def test_extract_out_dir_onto_a_file_is_one_line_and_no_work(tmp_path):
    target = tmp_path / "taken"
    target.write_text("mine\n")
    proc = loralay("extract", str(ONE_PDF), "--out-dir", str(target))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"loralay: --out-dir {target}: exists and is not a folder\n"
    assert target.read_text() == "mine\n"


def test_extract_out_dir_that_cannot_be_made_is_one_line(tmp_path):
    target = tmp_path / "taken" / "deeper"
    (tmp_path / "taken").write_text("mine\n")
    proc = loralay("extract", str(ONE_PDF), "--out-dir", str(target))
    assert proc.returncode == 2
    assert proc.stderr == f"loralay: --out-dir {target}: cannot be made (not a folder)\n"


def test_extract_out_dir_is_made_with_its_parents(tmp_path):
    target = tmp_path / "new" / "deeper"
    proc = loralay("extract", str(ONE_PDF), "--out-dir", str(target), check=True)
    assert proc.stderr == ""
    assert [p.name for p in target.iterdir()] == ["en_onecol_timing_note.jsonl"]


def test_build_help_names_the_classes_retry_takes():
    """The help said "fetch failures, or citesum shards"; docs/reruns.md says the same five
    classes for every source, documents and shards alike."""
    text = " ".join(loralay("build", "--help", check=True).stdout.split())
    assert f"(one of: {', '.join(sorted(RETRYABLE_ON_REQUEST))})" in text
    assert "documents and CiteSum shards alike" in text


def test_slow_reader_warning_prints_one_percent_sign(monkeypatch, caplog):
    """The message had no arguments, so `%%` reached the user as two signs."""
    monkeypatch.setattr(parse, "read_chunk", None)
    with caplog.at_level(logging.WARNING, logger="loralay.build"):
        pdf._note_slow_reader()
    (message,) = [r.getMessage() for r in caplog.records]
    assert "~10 % more CPU" in message and "%%" not in message


def test_verbose_works_after_the_subcommand_on_every_command():
    """Issue 46, 12: `-v` worked only before the subcommand (`loralay -v build`), while
    users write it last (`loralay build ... -v`)."""
    import logging  # noqa: PLC0415

    from click.testing import CliRunner  # noqa: PLC0415

    from loralay_build.cli import main  # noqa: PLC0415

    def commands(group, prefix=()):
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                yield from commands(cmd, (*prefix, name))
            else:
                yield (*prefix, name), cmd

    found = dict(commands(main))
    assert {" ".join(k) for k in found} >= {"build", "fetch", "extract", "settings", "show",
                                              "eval", "publish", "export vila"}
    for name, cmd in found.items():
        assert any("-v" in p.opts for p in cmd.params), name
    root = logging.getLogger()
    level = root.level
    try:
        root.setLevel(logging.WARNING)
        run = CliRunner().invoke(main, ["settings", "--source", "local", "-v"])
        assert run.exit_code == 0, run.output
        assert root.level == logging.DEBUG
    finally:
        root.setLevel(level)


def test_a_manifest_that_is_a_link_loop_or_a_dangling_link_says_so(tmp_path):
    """Issue 41, 15 (the manifest itself): a loop of links was "not found"."""
    from loralay_build.conf import load_settings  # noqa: PLC0415
    from loralay_build.errors import ConfigError  # noqa: PLC0415
    from loralay_build.pdf.preflight import check_inputs  # noqa: PLC0415

    (tmp_path / "a.jsonl").symlink_to("b.jsonl")
    (tmp_path / "b.jsonl").symlink_to("a.jsonl")
    (tmp_path / "c.jsonl").symlink_to("gone.jsonl")
    for name, words in (("a.jsonl", "a loop of symbolic links (ELOOP)"),
                        ("c.jsonl", "a symbolic link to gone.jsonl, which does not exist"),
                        ("d.jsonl", "not found")):
        s = load_settings("local", None, {"manifest": str(tmp_path / name)})
        with pytest.raises(ConfigError) as e:
            check_inputs(s)
        assert str(e.value) == f"manifest: {tmp_path / name}: {words}"

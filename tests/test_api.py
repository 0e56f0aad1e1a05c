"""The Python API as the README shows it, and `features="published"` end to end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.e2e


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Python API"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_api_example_runs_as_written(tmp_path, monkeypatch, capsys):
    code = readme_example()
    assert "out/api" in code and len(code.strip().splitlines()) <= 7
    monkeypatch.chdir(REPO)
    exec(compile(code.replace('"out/api"', repr(str(tmp_path / "api"))), "README", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.strip() == "{'train': 6, 'validation': 1, 'test': 1}"
    assert (tmp_path / "api" / "README.md").exists()


def test_api_errors_are_typed_not_exits(tmp_path):
    from loralay_build import ConfigError, build

    with pytest.raises(ConfigError, match="rows_per_shard: 0 is not valid"):
        build("local", tmp_path / "o", manifest=str(REPO / "data/sample/manifest.jsonl"),
              rows_per_shard=0)
    with pytest.raises(ConfigError, match="--workers 0"):
        build("local", tmp_path / "o", manifest=str(REPO / "data/sample/manifest.jsonl"),
              workers=0)
    assert not (tmp_path / "o").exists()


def test_published_features_concatenate_with_a_published_dataset(tmp_path):
    from datasets import Dataset, concatenate_datasets, load_dataset

    from loralay_build import build
    from loralay_build.write import PUBLISHED_FEATURES

    out = tmp_path / "pub"
    build("local", out, manifest=str(REPO / "data/sample/manifest.jsonl"),
          features="published")
    ours = load_dataset(str(out))["train"]
    assert ours.features == PUBLISHED_FEATURES
    assert list(ours.features) == ["article_id", "article_words", "article_bboxes",
                                   "article_norm_bboxes", "abstract", "article_pdf_url"]
    theirs = Dataset.from_dict({"article_id": ["x"], "article_words": [["a"]],
                                "article_bboxes": [[[1, 2, 3, 4]]],
                                "article_norm_bboxes": [[[1, 2, 3, 4]]], "abstract": ["s"],
                                "article_pdf_url": ["u"]}, features=PUBLISHED_FEATURES)
    both = concatenate_datasets([theirs, ours])
    assert len(both) == 1 + len(ours)
    assert all(isinstance(v, int) for box in ours[0]["article_bboxes"] for v in box)
    assert Path(out / "README.md").read_text().count("int64") >= 2


# every CLI command, as the function of the same name (eval -> evaluate, export vila ->
# export_vila)
API_COMMANDS = ("build", "evaluate", "export_cohan", "export_vila", "extract", "fetch",
                "publish", "settings", "show")


def test_every_api_name_imported_in_one_statement_is_the_function():
    """A fresh process, as a user's script: the package docstring's own import, every
    command at once, after the subpackages have been imported (they used to shadow
    `extract`, `publish`, `show`, `settings`)."""
    import subprocess
    import sys

    code = ("import types, loralay_build.api, loralay_build.cli\n"
            f"from loralay_build import {', '.join(API_COMMANDS)}, text, load_settings\n"
            "import loralay_build as lb\n"
            f"names = {API_COMMANDS!r} + ('text', 'load_settings')\n"
            "for n in names:\n"
            "    f = getattr(lb, n)\n"
            "    assert isinstance(f, types.FunctionType), (n, f)\n"
            "    assert f is getattr(loralay_build.api, n), n\n"
            "print(sorted(n for n in dir(lb) if not n[0].isupper()))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    listed = eval(proc.stdout)  # noqa: S307 - our own print of a list of names
    assert listed == sorted(["__version__", *API_COMMANDS, "text", "load_settings"])


def test_the_cli_command_list_is_the_api():
    from loralay_build import api
    from loralay_build.cli import main

    commands = {"evaluate" if n == "eval" else n for n in main.commands if n != "export"}
    commands |= {f"export_{n}" for n in main.commands["export"].commands}  # type: ignore[attr-defined]
    assert commands == set(api.COMMANDS) == set(API_COMMANDS)


def _cli_line(*args: str) -> str:
    from .conftest import loralay

    proc = loralay(*args)
    assert proc.returncode != 0
    return (proc.stderr or proc.stdout).strip().splitlines()[-1]


def test_each_api_function_raises_the_clis_one_line_error(tmp_path):
    """The same bad input to the command and to its function: the function's exception
    is the line the CLI printed (after its `loralay: ` prefix)."""
    import loralay_build as lb
    from loralay_build import ConfigError, ExtractFailed, LoralayError

    empty = tmp_path / "empty"
    empty.mkdir()
    missing = tmp_path / "missing.pdf"
    cases = [
        (lambda: lb.build("nosuch", tmp_path / "o"), ConfigError,
         ("build", "--source", "nosuch", "--out", str(tmp_path / "o"))),
        (lambda: lb.fetch("nosuch", tmp_path / "o"), ConfigError,
         ("fetch", "--source", "nosuch", "--out", str(tmp_path / "o"))),
        (lambda: lb.settings("nosuch"), ConfigError, ("settings", "--source", "nosuch")),
        (lambda: lb.extract(missing), ExtractFailed, ("extract", str(missing))),
        (lambda: lb.export_vila(empty, tmp_path / "v"), LoralayError,
         ("export", "vila", str(empty), "--out", str(tmp_path / "v"))),
        (lambda: lb.export_cohan(empty, tmp_path / "c"), LoralayError,
         ("export", "cohan", str(empty), "--out", str(tmp_path / "c"))),
        (lambda: lb.show(empty), ConfigError, ("show", str(empty))),
        (lambda: lb.evaluate(empty, out=tmp_path / "e.json"), LoralayError,
         ("eval", str(empty), "--out", str(tmp_path / "e.json"))),
        (lambda: lb.publish(empty, "a/b"), LoralayError,
         ("publish", str(empty), "--repo", "a/b")),
    ]
    for call, kind, args in cases:
        with pytest.raises(kind) as raised:
            call()
        message = str(raised.value)
        assert "\n" not in message
        line = _cli_line(*args)
        assert line.removeprefix("loralay: ") == message, args


@pytest.mark.parametrize("call", [
    lambda lb, d: lb.extract(d / "x.pdf", groups="nosuch"),
    lambda lb, d: lb.export_vila(d, d / "v", bbox="pixels"),
    lambda lb, d: lb.build("local", d / "o", features="tiny"),
])
def test_the_clis_choices_are_checked_by_the_functions(tmp_path, call):
    import loralay_build as lb

    with pytest.raises(lb.ConfigError, match=r"^\w+='\w+': one of "):
        call(lb, tmp_path)

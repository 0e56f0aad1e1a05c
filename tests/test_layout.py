"""The run folder's entries are named in one place (`paths.py`): every path `RunFolder`
makes is under an entry `owned.py` lists, so what the tool writes is what `--fresh`
removes and what a claim recognises as its own."""

from __future__ import annotations

import inspect

from loralay_build.owned import BUILD, RUN_ENTRIES, is_owned_name
from loralay_build.pdf.preflight import fresh_deletions
from loralay_build.runfolder import RunFolder


def layout_paths(layout: RunFolder) -> dict[str, object]:
    """Every path RunFolder makes: its properties, and its methods called with shard 0 of 1
    or a source name."""
    out = {}
    for name, member in inspect.getmembers(RunFolder):
        if name.startswith("_") or name == "out":
            continue
        if isinstance(member, property):
            out[name] = getattr(layout, name)
        elif inspect.isfunction(member):
            params = list(inspect.signature(member).parameters)[1:]
            if params == ["shard", "num_shards"]:
                out[name] = member(layout, 0, 1)
            elif params == ["source"]:
                out[name] = member(layout, "scielo-es")
    return out


def test_every_path_of_the_layout_is_under_an_entry_the_tool_owns(tmp_path):
    layout = RunFolder(tmp_path / "run")
    paths = layout_paths(layout)
    assert {"state_dir", "pdf_dir", "slurm_dir", "work_dir", "config_file", "lock_file",
            "images_db", "crawl_dir"} <= set(paths)
    for name, path in paths.items():
        top = path.relative_to(layout.out).parts[0]
        assert top in RUN_ENTRIES and is_owned_name(top, BUILD), (name, top)


def test_fresh_removes_a_crawls_feed(tmp_path):
    """A SciELO or KoreaScience rerun after --fresh replayed the old feed: crawl/ was
    written but not listed among the run folder's entries, so --fresh kept it."""
    layout = RunFolder(tmp_path / "run")
    feed = layout.crawl_dir("scielo-es") / "feed.jsonl"
    feed.parent.mkdir(parents=True)
    feed.write_text('{"id": "S1"}\n')
    (layout.pdf_dir).mkdir()
    (layout.out / "notes.txt").write_text("mine\n")
    assert fresh_deletions(layout) == [layout.out / "crawl"]

"""The bounded worker pool: real work in children, budgets per task, no orphan left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from loralay_build.failures import Failure, FailureClass
from loralay_build.machinery.pool import TaskLimits, map_bounded
from loralay_build.pdftext import ExtractLimits

from .conftest import REPO, shared_path
from .helpers.pool import _extract, _task

LIMITS = TaskLimits(timeout_s=60, memory_mb=2048)


_LOADED: list[bytearray] = []


def _load(megabytes: int) -> None:
    """A worker's one-time load (a model, a library's imports), held for its life."""
    _LOADED.extend(bytearray(1 << 20) for _ in range(megabytes))


def test_what_prepare_loads_is_the_worker_at_rest_not_a_task():
    """300 MB loaded by `prepare` leave a 256 MB task cap whole; loaded by a task, they
    are over it (ROUGE's imports in the CiteSum scoring, datasketch's in the print)."""
    limits = TaskLimits(timeout_s=60, memory_mb=256)
    got = dict(map_bounded(_task, ["hog:50", "pid"], 300, 1, limits, _load))
    assert got["hog:50"] == 50 and isinstance(got["pid"], int)
    got = dict(map_bounded(_task, ["hog:300"], None, 1, limits))
    assert got["hog:300"] == Failure(FailureClass.MEMORY, "document stage ran over 256 MB")


def test_extract_in_workers_equals_in_process():
    pdfs = sorted(shared_path("corpus", "pdf").glob("*.pdf"), key=lambda p: p.stat().st_size)
    pdfs = [str(p) for p in pdfs[:8]]  # broken ones included: their Failure must match too
    limits = ExtractLimits()
    got = dict(map_bounded(_extract, pdfs, limits, 2, LIMITS))
    assert sorted(got) == sorted(pdfs)
    for pdf in pdfs:
        assert got[pdf] == _extract(pdf, limits), pdf


def test_every_task_runs_in_a_child_even_with_one_worker():
    pids = [pid for _, pid in map_bounded(_task, ["pid"] * 3, None, 1, LIMITS)]
    assert len(set(pids)) == 1 and pids[0] != os.getpid()


def test_timeout_memory_and_death_fail_one_item_and_the_rest_goes_on():
    items = ["pid", "sleep:30", "pid", "hog:800", "pid", "exit:3", "raise:boom", "hog:50",
             "pid"]
    t = time.monotonic()
    got = dict(map_bounded(_task, items, None, 2, TaskLimits(timeout_s=2, memory_mb=400)))
    assert time.monotonic() - t < 15
    assert got["sleep:30"] == Failure(FailureClass.TIMEOUT, "document stage ran over 2 s")
    assert got["hog:800"] == Failure(FailureClass.MEMORY, "document stage ran over 400 MB")
    assert got["exit:3"] == Failure(FailureClass.INTERNAL_ERROR,
                                    "worker died (exit status 3) without a result")
    assert got["raise:boom"] == Failure(FailureClass.INTERNAL_ERROR, "ValueError: boom")
    assert got["hog:50"] == 50 and isinstance(got["pid"], int)


def test_window_is_bounded_and_results_stream():
    pulled = 0

    def items():
        nonlocal pulled
        for i in range(40):
            pulled += 1
            yield f"sleep:0.0{i % 3}#{i}"

    done = 0
    for _ in map_bounded(_task, items(), None, 2, LIMITS):
        done += 1
        assert pulled - done <= 2 * 2 - 1  # the one just yielded is no longer in flight
    assert done == 40


def test_closing_early_kills_the_workers():
    gen = map_bounded(_task, ["pid", "sleep:30", "sleep:30"], None, 2, LIMITS)
    _, pid = next(gen)
    gen.close()
    assert not _alive(pid)


def _children() -> dict[int, int]:
    """pid -> parent pid of every process, read from /proc."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            out[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    return out


def _descendants(root: int) -> set[int]:
    parents = _children()
    found, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    """Exists and is not a zombie (a container's pid 1 may never reap orphans)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


SCRIPT = """
import sys
from loralay_build.pdftext import ExtractLimits
from loralay_build.machinery.pool import TaskLimits, map_bounded
from tests.helpers.pool import _extract, _task
slow = ExtractLimits(timeout_s=600, max_words=10**9)
work = [("t", "sleep:600"), ("x", sys.argv[-1]), ("t", "sleep:600")]
def run(pair, arg):
    return (_task if pair[0] == "t" else _extract)(pair[1], slow)
def main():
    print("ready", flush=True)
    for _ in map_bounded(run, work, None, 3, TaskLimits(900, 0)):
        pass
"""


def test_workers_and_their_pdftotext_end_when_the_parent_is_sigkilled(tmp_path):
    from .helpers.pdfs import _dense_pdf

    dense = _dense_pdf(tmp_path, 1000)  # minutes of pdftotext when read whole
    # the task function lives in a module (workers import it by name), not in __main__
    (tmp_path / "parent_script.py").write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path)]))
    parent = subprocess.Popen([sys.executable, "-c", "import parent_script; parent_script.main()",
                               str(dense)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert parent.stdout.readline().strip() == "ready"
        kids = _wait_for(lambda: _busy_tree(parent.pid))
        names = {_name(p) for p in kids}
        assert "pdftotext" in names and len(kids) >= 4, names  # 3 workers + pdftotext
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 5
        while any(_alive(p) for p in kids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [(p, _name(p)) for p in kids if _alive(p)]
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def _busy_tree(pid: int) -> set[int] | None:
    """The parent's descendants once its three workers and a pdftotext are all up."""
    kids = _descendants(pid)
    return kids if any(_name(p) == "pdftotext" for p in kids) and len(kids) >= 4 else None


def _wait_for(probe, timeout_s: float = 20.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def test_the_per_document_worker_does_not_import_the_dataset_writer():
    """A worker imports `pdf.steps` for its task; the writer's `datasets` (with pandas,
    ~0.7 s) is only the finish's business, so each worker start must not pay for it, nor
    its first document (`pa.array` imports pandas on first use; the payload is built from
    buffers)."""
    code = ("import json, sys; from loralay_build.pdf.steps import DocumentJob, "
            "process_candidate; "
            "from loralay_build.records import Candidate; "
            "from loralay_build.conf import load_settings; "
            "m = json.loads(open(sys.argv[1]).readline()); "
            "c = Candidate(m['id'], 'local', m['language'], m['abstracts'], "
            "pdf_path=sys.argv[2] + '/' + m['file']); "
            "s = load_settings('local', None, {'manifest': sys.argv[1]}); "
            "r = process_candidate(c, DocumentJob(s.document(), s.limits())); "
            "assert r.stored is not None, r.stages; "
            "print(sorted(m for m in ('datasets', 'pandas', 'matplotlib') if m in sys.modules))")
    manifest = REPO / "data" / "sample" / "manifest.jsonl"
    out = subprocess.run([sys.executable, "-c", code, str(manifest), str(manifest.parent)],
                         capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"

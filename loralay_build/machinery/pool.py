"""A bounded pool of worker processes for the per-document stage.

Why not ProcessPoolExecutor: its forkserver and resource tracker outlived a SIGKILLed
run by 12+ minutes, a worker that dies breaks the whole executor (every pending future
fails), and a task cannot be stopped, only abandoned. Here each worker is a plain
`python -c` process we start ourselves, talking over two pipes, so we can:

- stop one task past its wall clock by killing its worker's process group (the worker
  and its pdftotext alike), and start another worker;
- cap each worker's address space (RLIMIT_AS: Python raises MemoryError);
- make workers die with their parent: PR_SET_PDEATHSIG, plus a thread watching the
  parent pid (PDEATHSIG fires when the *thread* that started the worker ends, and
  misses a parent that died before the worker set it); neither a forkserver nor a
  resource tracker is ever started (no multiprocessing start method, no semaphores).

Every task runs in a child, even with one worker: the whole document stage (Poppler,
and the parsing and matching in Python) is bounded, never only pdftotext.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, TypeVar

from ..failures import Failure, FailureClass, internal_error
from ..gcpolicy import settle_heap

T = TypeVar("T")
R = TypeVar("R")

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = "import sys; from loralay_build.machinery.pool import serve; serve(sys.argv[1:])"


@dataclass(frozen=True, slots=True)
class TaskLimits:
    """Budget of one task: wall clock (s) and its worker's address space (MB; 0: none)."""

    timeout_s: float
    memory_mb: int


class _Worker:
    """One child process; `item` is the task it is running, None when idle."""

    def __init__(self, fn: Callable, arg: Any, limits: TaskLimits,
                 prepare: Callable[[Any], Any] | None = None) -> None:
        task_r, task_w = os.pipe()
        res_r, res_w = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [_PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(task_r), str(res_w), str(os.getpid()),
             str(limits.memory_mb)],
            pass_fds=(task_r, res_w), stdin=subprocess.DEVNULL, env=env,
            start_new_session=True)  # own process group: a kill takes its pdftotext too
        os.close(task_r)
        os.close(res_w)
        self.tasks = Connection(task_w, readable=False)
        self.results = Connection(res_r, writable=False)
        self.tasks.send(sys.path)
        self.tasks.send((fn, arg, prepare))
        self.item: Any = None
        self.busy = False
        self.deadline = 0.0

    def start(self, item: Any, timeout_s: float) -> bool:
        """Hand over one task; False if the worker is already gone."""
        try:
            self.tasks.send(item)
        except (BrokenPipeError, ConnectionResetError):
            return False
        self.item, self.busy = item, True
        self.deadline = time.monotonic() + timeout_s
        return True

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for conn in (self.tasks, self.results):
            if not conn.closed:
                conn.close()

    def stop(self, grace_s: float) -> None:
        """Close its task pipe (it exits on EOF); kill it if it lingers."""
        if not self.tasks.closed:
            self.tasks.close()
        try:
            self.proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def _death_failure(rc: int, limits: TaskLimits) -> Failure:
    """Why a worker ended without a result: SIGKILL not sent by us is the kernel's OOM
    killer in practice; anything else (os._exit, a segfault) is a bug for this item."""
    if rc == -signal.SIGKILL:
        return Failure(FailureClass.MEMORY, f"document stage was killed (SIGKILL), most "
                       f"likely out of memory (cap {limits.memory_mb} MB)")
    how = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
    return Failure(FailureClass.INTERNAL_ERROR, f"worker died ({how}) without a result")


class _Pool:
    def __init__(self, fn: Callable, arg: Any, workers: int, limits: TaskLimits,
                 prepare: Callable[[Any], Any] | None = None) -> None:
        self.fn, self.arg, self.limits, self.prepare = fn, arg, limits, prepare
        self.slots: list[_Worker | None] = [None] * max(1, workers)

    def running(self) -> int:
        return sum(1 for w in self.slots if w is not None and w.busy)

    def dispatch(self, queue: deque) -> None:
        """Give queued items to idle workers, starting workers where a slot is empty."""
        for i, w in enumerate(self.slots):
            while queue and (w is None or not w.busy):
                if w is None:
                    w = self.slots[i] = _Worker(self.fn, self.arg, self.limits, self.prepare)
                if not w.start(queue[0], self.limits.timeout_s):
                    w.kill()
                    w = self.slots[i] = None
                    continue
                queue.popleft()

    def collect(self) -> Iterator[tuple[Any, Any]]:
        """Wait for the first result or deadline; yield every task that ended."""
        busy = [w for w in self.slots if w is not None and w.busy]
        timeout = max(0.0, min(w.deadline for w in busy) - time.monotonic())
        ready = wait([w.results for w in busy], timeout)
        for i, w in enumerate(self.slots):
            if w is None or not w.busy:
                continue
            if w.results in ready:
                yield self._receive(i, w)
            elif time.monotonic() >= w.deadline:
                w.kill()
                self.slots[i] = None
                yield w.item, Failure(FailureClass.TIMEOUT, f"document stage ran over "
                                      f"{self.limits.timeout_s:g} s")

    def _receive(self, i: int, w: _Worker) -> tuple[Any, Any]:
        w.busy = False
        try:
            result, restart = w.results.recv()
        except (EOFError, OSError):
            w.stop(grace_s=1.0)  # let it finish dying: its own exit status tells why
            self.slots[i] = None
            return w.item, _death_failure(w.proc.returncode, self.limits)
        if restart:
            w.stop(grace_s=1.0)
            self.slots[i] = None
        return w.item, result

    def close(self, grace_s: float) -> None:
        for w in self.slots:
            if w is not None:
                w.stop(grace_s) if grace_s else w.kill()


def map_bounded(fn: Callable[[T, Any], R], items: Iterable[T], arg: Any, workers: int,
                limits: TaskLimits, prepare: Callable[[Any], Any] | None = None
                ) -> Iterator[tuple[T, R | Failure]]:
    """`fn(item, arg)` for every item, each in a worker process, results as they complete.

    `fn` must be a module-level function (it is pickled by name), `arg` is sent once per
    worker. At most 2 x workers items are taken from `items` and not yet yielded, so
    memory stays flat however long the input. A task past `limits.timeout_s` yields
    Failure(TIMEOUT), past `limits.memory_mb` Failure(MEMORY), a worker that dies
    Failure(INTERNAL_ERROR); the other tasks go on. Closing the generator early kills
    the workers. `prepare(arg)`, also module-level, runs once per worker before the
    memory cap: what it loads (a model, ROUGE's imports) is the worker at rest, not a task.
    """
    pool = _Pool(fn, arg, workers, limits, prepare)
    window = 2 * len(pool.slots)
    source = iter(items)
    queue: deque = deque()
    clean = False
    try:
        while True:
            _fill(queue, source, window - pool.running())
            pool.dispatch(queue)
            if not pool.running():
                break
            yield from pool.collect()
        clean = True
    finally:
        pool.close(grace_s=2.0 if clean else 0.0)


def _fill(queue: deque, source: Iterator, room: int) -> None:
    while len(queue) < room:
        try:
            queue.append(next(source))
        except StopIteration:
            return


# --- the worker side -----------------------------------------------------------------

def _kill_own_group(*_: Any) -> None:
    """The worker leads its own process group: this ends it and its pdftotext at once."""
    os.killpg(os.getpid(), signal.SIGKILL)


def _die_with_parent(ppid: int) -> None:
    signal.signal(signal.SIGTERM, _kill_own_group)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the watchdog below still works
    if os.getppid() != ppid:  # the parent died before prctl
        _kill_own_group()

    def watch() -> None:
        while os.getppid() == ppid:
            time.sleep(0.5)
        _kill_own_group()

    import threading

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _cap_memory(memory_mb: int) -> None:
    """Soft limit only: pdftotext inherits it, and extract may still set its own cap.

    The cap is what a task may add to the worker at rest: a worker that has imported
    NumPy and Arrow already maps ~370 MB of address space it never touches, so an absolute
    cap of a few hundred MB failed every task before it began."""
    if memory_mb > 0:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = _address_space() + memory_mb * 1024 * 1024
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _address_space() -> int:
    """This process's mapped address space in bytes (0 where /proc does not say)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _run_one(fn: Callable, item: Any, arg: Any, memory_mb: int) -> tuple[Any, bool]:
    """(result, restart): after a MemoryError the worker's heap is suspect, so it ends (a
    result may say so itself with a true `worker_spent`, having classed the error)."""
    try:
        result = fn(item, arg)
        return result, bool(getattr(result, "worker_spent", False))
    except MemoryError:
        return Failure(FailureClass.MEMORY, f"document stage ran over {memory_mb} MB"), True
    except Exception as e:  # noqa: BLE001 - a bug in fn is this item's failure only
        return internal_error(e), False


def serve(argv: list[str]) -> None:
    """Worker main loop: sys.path, then (fn, arg, prepare) once, then items until EOF."""
    task_fd, result_fd, ppid, memory_mb = (int(a) for a in argv)
    _die_with_parent(ppid)
    tasks = Connection(task_fd, writable=False)
    results = Connection(result_fd, readable=False)
    fn, arg, prepare = _first_message(tasks)
    if prepare is not None:
        _prepare(prepare, arg)
    settle_heap()  # fn's module is imported: what is alive now lives as long as the worker
    _cap_memory(memory_mb)
    while True:
        try:
            item = tasks.recv()
        except EOFError:
            return
        result, restart = _run_one(fn, item, arg, memory_mb)
        try:
            results.send((result, restart))
        except MemoryError:
            results.send((Failure(FailureClass.MEMORY, f"result over {memory_mb} MB"), True))
        if restart:
            return


def _prepare(prepare: Callable[[Any], Any], arg: Any) -> None:
    """A failure here is left to the first task, which meets it again as its own."""
    try:
        prepare(arg)
    except Exception:  # noqa: BLE001, S110 - recorded by the task that meets it again
        pass


def _first_message(tasks: Connection) -> tuple[Callable, Any, Callable[[Any], Any] | None]:
    """The parent's sys.path comes alone first, so fn's module can be imported."""
    for path in tasks.recv():
        if path not in sys.path:
            sys.path.append(path)
    return tasks.recv()

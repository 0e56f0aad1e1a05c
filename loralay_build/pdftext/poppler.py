"""Run `pdftotext -bbox-layout` on one PDF under a time and memory budget.

Why a pipe and a chunked parser: no temporary file, never a shell string, and the
parsing of one chunk overlaps with Poppler producing the next (on two cores the
Python side is nearly free). Why `-l`: the page cap bounds the work Poppler can
do on a 5,000-page file without paying for a second process (pdfinfo) on every PDF.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import re
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from ..errors import ToolMissing
from ..failures import Failure, FailureClass
from ..limits import DEFAULT_LIMITS, ExtractLimits
from ..pdfmagic import has_pdf_magic
from ..records import Document
from .boxes import normalise_page_boxes
from .glyphs import repair_glyphs
from .parse import BBoxLayoutParser
from .rotation import displayed_sizes, settle_rotation

# Poppler writes its output through stdio, which on a pipe flushes every 4 KB: each write
# woke this process for one read (~270 a paper, ~10 us each). `stdbuf -o` (coreutils)
# gives Poppler's stdout a 1 MB buffer, and the pipe is widened to match, so a paper
# arrives in a few reads (docs/performance.md, round 5).
WRITE_BUFFER = 1 << 20
CHUNK = 1 << 20


class PopplerMissing(RuntimeError):
    pass


INSTALL_HINT = "install Poppler: `apt-get install poppler-utils` (or `make install`)"


def poppler_version() -> str:
    """Poppler's version, after checking that its pdftotext has `-bbox-layout`."""
    exe = shutil.which("pdftotext")
    if exe is None:
        raise ToolMissing(f"pdftotext not found on PATH: {INSTALL_HINT}")
    try:
        text = _help_text(exe)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolMissing(f"pdftotext ({exe}) does not run ({e}): {INSTALL_HINT}") from e
    if "-bbox-layout" not in text:
        raise ToolMissing(f"pdftotext ({exe}) is too old (no -bbox-layout): {INSTALL_HINT}")
    match = re.search(r"version (\S+)", text)
    return match.group(1) if match else "unknown"


@functools.cache
def _help_text(exe: str) -> str:
    """What `exe -h` prints (stderr, then stdout), run once per process and binary (an
    exception is raised again on every call: functools.cache keeps only results)."""
    proc = subprocess.run([exe, "-h"], capture_output=True, text=True, timeout=30,
                          check=False)
    return proc.stderr + proc.stdout


def pdftotext_binary() -> str:
    path = shutil.which("pdftotext")
    if path is None:
        raise PopplerMissing("pdftotext not found: install Poppler (apt-get install "
                             "poppler-utils), or run `make install`")
    return path


@functools.cache
def _crop_box() -> tuple[str, ...]:
    """`-cropbox` (Poppler >= 21.03): words in the frame of the visible page (the CropBox,
    which pdfium renders), words outside it left out; the same output as without it when
    the CropBox is the MediaBox (docs/rotation.md). Older Poppler: the MediaBox's frame."""
    try:
        text = _help_text(pdftotext_binary())
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return ("-cropbox",) if "-cropbox" in text else ()


@functools.cache
def _big_writes() -> tuple[str, ...]:
    """The `stdbuf` prefix that makes Poppler write 1 MB at a time, if coreutils has it."""
    stdbuf = shutil.which("stdbuf")
    return (stdbuf, "-o", str(WRITE_BUFFER)) if stdbuf else ()


def _widen_pipe(fd: int) -> None:
    """Best effort: a 1 MB pipe holds one of Poppler's writes (Linux only; an unprivileged
    process may be held to a smaller `pipe-max-size`)."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, WRITE_BUFFER)
    except (AttributeError, OSError):
        pass


def check_pdf_file(path: Path) -> Failure | None:
    """Cheap checks before starting a process: missing, empty, or not a PDF at all.

    A FIFO (or device, directory) named like a PDF would block `open()` forever, before
    any timeout runs: stat first, then open without blocking and check the open file
    again (the name may have been swapped in between). A path that cannot even be looked
    at (a symlink loop, a name too long, no permission, a NUL byte) is `unavailable` too,
    with the reason and its errno name: never an exception."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return Failure(FailureClass.UNAVAILABLE, "not a regular file")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return Failure(FailureClass.UNAVAILABLE, "not a regular file")
            head = fh.read(1024)
    except FileNotFoundError:
        return Failure(FailureClass.UNAVAILABLE, "file not found")
    except OSError as e:
        code = errno.errorcode.get(e.errno or 0, str(e.errno))
        return Failure(FailureClass.UNAVAILABLE, f"cannot read file ({e.strerror or e}, {code})")
    except ValueError as e:  # a NUL byte, a name the file system cannot encode
        return Failure(FailureClass.UNAVAILABLE, f"not a usable path ({e})")
    if not head:
        return Failure(FailureClass.UNAVAILABLE, "empty file")
    if not has_pdf_magic(head):
        kind = "an HTML page" if b"<html" in head.lower() or b"<!doctype" in head.lower() \
            else "not a PDF"
        return Failure(FailureClass.UNAVAILABLE, f"{kind} (no %PDF- header)")
    return None


def _limit_memory(pid: int, memory_mb: int) -> None:
    """Cap the child's address space from outside: a `preexec_fn` would force a full
    fork of this (large) Python process, which cost ~13 ms per PDF when measured."""
    if memory_mb > 0:
        cap = memory_mb * 1024 * 1024
        try:
            resource.prlimit(pid, resource.RLIMIT_AS, (cap, cap))
        except ProcessLookupError:  # already finished
            pass
        except (PermissionError, ValueError):  # an inherited hard cap below ours: keep it
            pass


def extract_document(path: str | Path, doc_id: str, limits: ExtractLimits = DEFAULT_LIMITS
                     ) -> Document | Failure:
    """Words, boxes, lines, blocks and pages of one PDF, or the failure class of why not.

    A document that reads as scanned gets one more try when its page boxes are inverted
    or lie wholly below the origin (e.g. MediaBox [0 0 -612 -792]): Poppler drops every
    character outside the box, so the text only appears once the boxes are normalised."""
    path = Path(path)
    bad = check_pdf_file(path)
    if bad is not None:
        return bad
    result = _extract(path, doc_id, limits)
    if isinstance(result, Failure) and result.cls is FailureClass.SCANNED:
        with tempfile.TemporaryDirectory(prefix="loralay-boxes-") as tmp:
            fixed = normalise_page_boxes(path, Path(tmp) / "fixed.pdf", limits.timeout_s)
            if fixed is not None:
                return _extract(fixed, doc_id, limits)
    return result


def _extract(path: Path, doc_id: str, limits: ExtractLimits) -> Document | Failure:
    """One Poppler run and its verdict, every box where the displayed page shows it; the
    rotated pages are read again unrotated, unless their rotation is what stands their
    text upright (pdftext/rotation.py)."""
    run = _run_pdftotext(path, doc_id, limits)
    result = _verdict(*run, limits)
    if not isinstance(result, Document):
        return result

    def reread(copy: Path, display: list[tuple[float, float]]) -> Document | Failure:
        return _verdict(*_run_pdftotext(copy, doc_id, limits, display), limits)

    return settle_rotation(result, run[2], path, limits.timeout_s, reread)


def _run_pdftotext(path: Path, doc_id: str, limits: ExtractLimits,
                   display: list[tuple[float, float]] | None = None
                   ) -> tuple[int, bytes, BBoxLayoutParser, bool]:
    """Poppler's output read as it arrives. `display`: each page's displayed size, by
    default pdfium's, read while Poppler starts (the parser needs it to clamp a rotated
    page, pdftext/rotation.py)."""
    cmd = [*_big_writes(), pdftotext_binary(), "-bbox-layout", *_crop_box(), "-f", "1",
           "-l", str(limits.max_pages + 1), str(path), "-"]
    deadline = time.monotonic() + limits.timeout_s
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    _widen_pipe(proc.stdout.fileno())  # type: ignore[union-attr]
    _limit_memory(proc.pid, limits.memory_mb)
    stderr, timed_out = b"", False
    try:
        if display is None:
            display = displayed_sizes(path, limits.max_pages + 1)
        parser = BBoxLayoutParser(doc_id, limits.max_pages, limits.max_words, display=display)
        stderr, timed_out = _pump(proc, parser, deadline)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    return proc.returncode, stderr, parser, timed_out


def _pump(proc: subprocess.Popen, parser: BBoxLayoutParser, deadline: float
          ) -> tuple[bytes, bool]:
    """Feed stdout to the parser as it arrives and keep what Poppler says on stderr, in
    this thread (a timer and a stderr reader thread cost ~0.5 ms a document); stop at the
    deadline (True: timed out) or once the parser has its verdict (past a cap)."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    said = _Said()
    with selectors.DefaultSelector() as sel:
        sel.register(out, selectors.EVENT_READ)
        sel.register(err, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                proc.kill()
                return said.text(), True
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, CHUNK)
                if not chunk:
                    sel.unregister(key.fd)
                    if key.fd == out:
                        parser.flush()
                elif key.fd == err:
                    said.add(chunk)
                else:
                    parser.feed(chunk)
                    if parser.stop_reason:
                        proc.kill()
                        return said.text(), False
    return said.text(), False


class _Said:
    """The head and tail of Poppler's stderr (its first error and its last words are
    what `_verdict` reads), never all of it: a broken PDF can make it write megabytes."""

    KEEP = 1 << 16

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.KEEP - len(self.head)
        self.head += chunk[:room]
        self.tail += chunk[room:] if room > 0 else chunk
        if len(self.tail) > self.KEEP:
            self.dropped += len(self.tail) - self.KEEP
            del self.tail[:-self.KEEP]

    def text(self) -> bytes:
        cut = f"\n[{self.dropped} bytes left out]\n".encode() if self.dropped else b""
        return bytes(self.head + cut + self.tail)


def _verdict(rc: int, stderr: bytes, parser: BBoxLayoutParser, timed_out: bool,
             limits: ExtractLimits) -> Document | Failure:
    if timed_out:
        return Failure(FailureClass.TIMEOUT, f"pdftotext ran over {limits.timeout_s:g} s")
    stop = _stopped(parser, limits)
    if stop is not None:
        return stop
    message = _last_line(stderr)
    if "Incorrect password" in message or b"Incorrect password" in stderr:
        return Failure(FailureClass.ENCRYPTED, "the PDF needs a password")
    if _out_of_memory(rc, stderr):
        return Failure(FailureClass.MEMORY, f"pdftotext ran over {limits.memory_mb} MB")
    if rc < 0:
        return Failure(FailureClass.CORRUPTED, f"pdftotext crashed (signal {-rc})")
    if rc != 0:
        return Failure(FailureClass.CORRUPTED, f"Poppler cannot open it: {message or rc}")
    doc = parser.finish()
    repair_glyphs(doc)
    if not doc.pages:
        return Failure(FailureClass.CORRUPTED, "Poppler found no pages")
    if len(doc.words) < limits.scanned_min_words_per_page * len(doc.pages):
        return Failure(FailureClass.SCANNED, f"no text layer ({len(doc.words)} words on "
                       f"{len(doc.pages)} pages)")
    return doc


def _stopped(parser: BBoxLayoutParser, limits: ExtractLimits) -> Failure | None:
    """The verdicts the parser reached on its own, before Poppler was done."""
    if parser.too_many_pages:
        return Failure(FailureClass.TOO_MANY_PAGES, f"more than {limits.max_pages} pages")
    if parser.too_many_words:
        return Failure(FailureClass.TOO_LARGE, f"more than {limits.max_words:,} words "
                       f"(stopped on page {len(parser.doc.pages)})")
    if parser.degenerate_page is not None:
        number, w, h = parser.degenerate_page
        return Failure(FailureClass.CORRUPTED, f"page {number} has no area "
                       f"({w:g} x {h:g} pt): its words would have no boxes")
    return None


def _out_of_memory(rc: int, stderr: bytes) -> bool:
    """bad_alloc aborts Poppler; a cap below its own size stops the loader from mapping it."""
    low = stderr.lower()
    return (rc == -signal.SIGABRT or b"bad_alloc" in low or b"out of memory" in low
            or b"failed to map segment" in low or b"cannot allocate memory" in low)


def _last_line(stderr: bytes) -> str:
    """Poppler's most telling line: its first error, else its last word on the matter."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if "Error" in ln and not ln.startswith("Command Line")]
    pick = errors[0] if errors else (lines[-1] if lines else "")
    return pick[:200]

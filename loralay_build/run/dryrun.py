"""`loralay build --dry-run`: every check a build makes before working, and nothing written.

For a manifest it goes further than a build's fetch: each PDF is opened far enough to see
`%PDF-`, so a wrong path is found before a ten-hour run rather than in its report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..conf import OaiSettings
from ..errors import ConfigError
from ..failures import BadRecords
from ..machinery.request import BuildRequest
from ..owned import BUILD, check_folder, unwritable
from ..pdftext.poppler import check_pdf_file
from ..records import Candidate
from ..runfolder import RunFolder
from ..sources.manifest import read_manifest
from .pipeline import plan

Echo = Callable[[str], None]
FOLDER_STATES = {"new": "would be created", "empty": "empty: would be used",
                 "ours": "a run folder of this tool: would be resumed",
                 "older": "a run folder of an earlier version: would be marked and resumed"}


def dry_run(req: BuildRequest, echo: Echo) -> bool:
    """Print what a build would do; True when no input line has a fault."""
    pipeline, _ = plan(req)
    folder = check_folder(req.out, BUILD, fresh=req.fresh)
    problem = unwritable(req.out)
    if problem is not None:
        raise ConfigError(f"{req.out}: a build could not write here ({problem})")
    s = req.settings
    echo(f"settings: valid for --source {s.source} ({pipeline.name} pipeline, --executor "
         f"{req.executor})")
    echo(f"{req.out}: {FOLDER_STATES[folder.status]}")
    if req.fresh:
        doomed = pipeline.fresh_deletions(RunFolder(req.out))
        echo(f"--fresh would delete {len(doomed)} entries" + (":" if doomed else ""))
        for path in doomed:
            echo(f"  {path}")
    ok = True
    manifest = getattr(s, "manifest", None)
    if manifest is not None:
        ok = check_manifest(Path(manifest), req.limit, echo, s.split_mode)
    else:
        for line in pipeline.would_do(req):
            echo(line)
        if isinstance(s, OaiSettings):  # the repository asked once: its address, formats
            from ..sources.oai import check_repository  # the `oai` extra's, checked by plan

            ok = check_repository(s, echo)
    if req.refresh:
        echo(f"--refresh: would add what is new to the dataset in {req.out} (a new version); "
             "its rows, splits and files would stay as they are")
    echo(f"would write the dataset, report and state into {req.out}; nothing was written")
    return ok


def check_manifest(path: Path, limit: int | None, echo: Echo,
                   split_mode: str = "chronological") -> bool:
    counts: Counter[str] = Counter()
    bad = BadRecords()
    for line in read_manifest(path, split_mode):
        if limit is not None and counts["lines"] >= limit:
            break
        counts["lines"] += 1
        item = line.item
        if isinstance(item, Candidate):
            fault = check_pdf_file(Path(item.pdf_path or ""))
            if fault is None:
                counts["ready"] += 1
                continue
            echo(f"{path}:{line.number}: {item.id}: {fault.cls.value}: {fault.message} "
                 f"({item.pdf_path})")
            counts[fault.cls.value] += 1
        else:
            counts[item.cls] += 1
            if item.bad_record:  # names no document: shown as a build's report shows it
                bad.add(item.cls, item.message)
                if not bad.shown(item.cls):
                    continue
            echo(f"{item.message} [{item.cls}]")
    faults = {k: v for k, v in counts.items() if k not in ("lines", "ready")}
    summary = ", ".join(f"{k} {v:,}" for k, v in sorted(faults.items())) or "no faults"
    hidden = bad.hidden
    if hidden:
        echo(f"{path}: {hidden:,} more lines naming no document not shown (the first "
             f"{bad.keep} of each class are)")
    echo(f"{path}: {counts['lines']:,} lines, {counts['ready']:,} ready to build; {summary}")
    return not faults

"""The run report: `report.json` (the numbers, source of truth), `report.md` (rendered from
it, verdict first) and optional PNG plots in `report/`.

Why small typed inputs: the finish hands over its `DocTable` (a few numbers per kept
document), never whole documents, so a report over 350 K papers stays cheap, and the
report can be regenerated from the state without re-extracting anything.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import atomic_text, write_text_atomic
from ..failures import BadRecords, FailureClass
from ..labels import LABELS
from ..paths import REPORT_DIR
from ..records import Outcome
from ..reportfile import SCHEMA_VERSION as REPORT_SCHEMA
from ..splits import SPLITS
from .doctable import DocTable

MAX_EXAMPLES = 5
MAX_LISTED_LEAKS = 100
LEAK_BINS = 20


@dataclass(frozen=True, slots=True)
class RunFacts:
    """The run as a whole: funnel in stage order, thresholds, one outcome per input id."""

    name: str
    source: str
    funnel: Sequence[tuple[str, int]]
    thresholds: Mapping[str, Any]
    outcomes: Mapping[str, Outcome]
    leak_threshold: float
    leak_ngram: int
    language: str | None = None
    split_rule: str = ""
    duplicates: Sequence[Mapping[str, Any]] = ()  # corpus/duplicates.py `Duplicate.to_json`
    bad_records: BadRecords = field(default_factory=BadRecords)  # inputs that name no document
    extra: Mapping[str, Any] = field(default_factory=dict)  # version, git sha, elapsed ...
    stopped: str | None = None  # why the harvest stopped early, when it did


def describe(values: Sequence[float] | np.ndarray) -> dict[str, float] | None:
    """Mean / median / p90 (numpy's linear interpolation), the paper's Tables 1-2."""
    if len(values) == 0:
        return None
    a = np.asarray(values, dtype=float)
    return {"mean": float(np.mean(a)), "median": float(np.median(a)),
            "p90": float(np.percentile(a, 90)), "min": float(a.min()), "max": float(a.max())}


def _split_order(docs: DocTable, outcomes: Mapping[str, Outcome]) -> list[str]:
    seen = list(SPLITS)
    for s in [*dict.fromkeys(docs.splits), *(o.split for o in outcomes.values() if o.split)]:
        if s and s not in seen:
            seen.append(s)
    return seen


def split_stats(docs: DocTable, order: Sequence[str]
                ) -> dict[str, dict[str, Any]]:
    cols = docs
    out: dict[str, dict[str, Any]] = {}
    for split in order:
        shares = cols.column("language_share", split)
        out[split] = {
            "count": int(sum(1 for s in cols.splits if s == split)),
            "article_words": describe(cols.column("article_words", split)),
            "summary_words": describe(cols.column("summary_words", split)),
            "pages": describe(cols.column("pages", split)),
            "language_share_mean": float(np.mean(shares)) if len(shares) else None,
            "language_share_n": len(shares),
        }
    return out


def drop_table(outcomes: Mapping[str, Outcome]) -> list[dict[str, Any]]:
    """Drops grouped by failure class, biggest first, with the first few examples."""
    groups: dict[str, list[tuple[str, Outcome]]] = {}
    for doc_id, o in outcomes.items():
        if o.status != "kept":
            groups.setdefault(o.cls or "unknown", []).append((doc_id, o))
    total = len(outcomes) or 1
    rows = []
    for cls, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rows.append({
            "class": cls, "count": len(items), "share": len(items) / total,
            "stages": sorted({o.stage or "?" for _, o in items}),
            "examples": [{"id": i, "stage": o.stage, "message": o.message}
                         for i, o in items[:MAX_EXAMPLES]],
        })
    return rows


def refusing_hosts(outcomes: Mapping[str, Outcome]) -> list[dict[str, Any]]:
    """Hosts that answered 403, with how many records each refused, most first."""
    from ..http import forbidden_host

    counts: dict[str, int] = {}
    for o in outcomes.values():
        if o.cls == FailureClass.FORBIDDEN.value:
            host = forbidden_host(o.message or "") or "unknown host"
            counts[host] = counts.get(host, 0) + 1
    return [{"host": h, "count": n} for h, n in sorted(counts.items(), key=lambda kv: (-kv[1],
                                                                                     kv[0]))]


def leakage(docs: DocTable, threshold: float, ngram: int
            ) -> dict[str, Any]:
    """Every (document, abstract language) share; a leak is a share strictly above threshold."""
    cols = docs
    shares = np.asarray(cols.leak_share, dtype=float)
    rows = cols.leak_rows()
    leaks = sorted(((cols.ids[rows[j]], cols.leak_lang[j], cols.leak_share[j])
                    for j in np.flatnonzero(shares > threshold)),
                   key=lambda p: (-p[2], p[0], p[1]))
    counts, edges = np.histogram(np.clip(shares, 0, 1), bins=LEAK_BINS, range=(0.0, 1.0))
    return {
        "threshold": threshold, "ngram": ngram, "checked": len(shares),
        "above_threshold": len(leaks),
        "by_language": {lang: sum(1 for _, lg, _ in leaks if lg == lang)
                        for lang in sorted(set(cols.leak_lang))},
        "distribution": describe(shares.tolist()),
        "histogram": {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]},
        "leaks": [{"id": i, "language": lg, "share": s} for i, lg, s in leaks[:MAX_LISTED_LEAKS]],
    }


def glyph_repairs(docs: DocTable) -> dict[str, Any]:
    """Words whose ligature codes were repaired and words still holding U+FFFD: totals, and
    per document for the documents that have any (most have none, so the list stays short)."""
    per_doc = {i: {"repaired": r, "unrepaired": u}
               for i, r, u in zip(docs.ids, docs.words_repaired, docs.words_unrepaired)
               if r or u}
    return {"words_repaired": sum(v["repaired"] for v in per_doc.values()),
            "words_unrepaired": sum(v["unrepaired"] for v in per_doc.values()),
            "documents": per_doc}


def ocr_counts(docs: DocTable) -> dict[str, Any]:
    """The kept documents whose words came (in part) from OCR: their pages and the time
    Tesseract took, totals and per document (born-digital documents are not listed)."""
    per_doc = {i: {"pages": n, "seconds": s}
               for i, n, s in zip(docs.ids, docs.ocr_pages, docs.ocr_seconds) if n}
    return {"pages": sum(v["pages"] for v in per_doc.values()),
            "seconds": round(sum(v["seconds"] for v in per_doc.values()), 3),
            "documents": per_doc}


def _md_ocr(data: Mapping[str, Any]) -> list[str]:
    o = data.get("ocr")
    if not o or not o["documents"]:
        return []
    per_page = o["seconds"] / o["pages"] if o["pages"] else 0.0
    return ["## OCR", "",
            f"{o['pages']:,} pages of {len(o['documents']):,} kept documents were read by "
            f"Tesseract (`ocr`), in {o['seconds']:.1f} s ({per_page:.1f} s a page); "
            "`ocr_pages` names them in each row.", ""]


def label_shares(docs: DocTable) -> dict[str, Any]:
    """The share of the kept words per label (group/labels.py), over all and per document
    language, and how many words the `drop_labels` setting left out."""
    n = len(LABELS)
    counts = np.asarray(docs.label_words, dtype=np.int64).reshape(-1, n)
    langs = np.asarray(docs.languages, dtype=object)
    out: dict[str, Any] = {"by_language": {}, "words": {},
                           "dropped_by_label": int(sum(docs.dropped_by_label))}
    groups = [("all", np.ones(len(langs), dtype=bool))]
    groups += [(str(lang), langs == lang) for lang in sorted(set(docs.languages))]
    for name, mask in groups:
        per = counts[mask].sum(axis=0)
        total = int(per.sum())
        out["words"][name] = total
        out["by_language"][name] = {LABELS[k]: round(int(c) / total, 4)
                                    for k, c in enumerate(per.tolist()) if c and total}
    return out


def _md_labels(data: Mapping[str, Any]) -> list[str]:
    lab = data.get("labels")
    if not lab or not lab["words"].get("all"):
        return []
    langs = [g for g in lab["by_language"] if g != "all"]
    cols = ["all", *langs] if len(langs) > 1 else ["all"]
    names = [name for name in LABELS if name in lab["by_language"]["all"]]
    rows = [(name, *(f"{100 * lab['by_language'][g].get(name, 0):.1f}%" for g in cols))
            for name in names]
    rows.append(("words", *(f"{lab['words'][g]:,}" for g in cols)))
    lines = ["## Labels", "", "Share of the kept words per block label (VILA's S2-VL "
             "categories, from layout rules: docs/layout-groups.md), per language.", ""]
    lines += _table(("label", *cols), rows)
    if lab["dropped_by_label"]:
        lines += [f"{lab['dropped_by_label']:,} words left out by `drop_labels`.", ""]
    return lines


def licenses_of(license_ids: Iterable[str]) -> dict[str, int]:
    """Kept documents per licence id (one id per kept document), most first (ties by id)."""
    counts: dict[str, int] = {}
    for lid in license_ids:
        counts[lid] = counts.get(lid, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def duplicates_of(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every duplicate dropped, with the document kept in its place, counted by kind."""
    by_kind: dict[str, int] = {}
    for p in pairs:
        by_kind[str(p["kind"])] = by_kind.get(str(p["kind"]), 0) + 1
    return {"count": len(pairs), "by_kind": dict(sorted(by_kind.items())),
            "pairs": [dict(p) for p in pairs]}


def _md_licenses_duplicates(data: Mapping[str, Any]) -> list[str]:
    lines = ["## Licences", ""]
    if data["licenses"]:
        lines += _table(("licence", "kept documents"), data["licenses"].items())
    else:
        lines += ["No document kept.", ""]
    dup = data["duplicates"]
    lines += ["## Duplicates", "",
              f"{dup['count']:,} documents dropped as the same paper as another "
              + (f"({', '.join(f'{k} {n:,}' for k, n in dup['by_kind'].items())})."
                 if dup["by_kind"] else "(none)."), ""]
    if dup["pairs"]:
        lines += _table(("dropped", "kept", "kind", "similarity"),
                        [(p["id"], p["kept"] or p.get("dataset") or "–", p["kind"],
                          round(p["similarity"], 3)) for p in dup["pairs"][:30]])
    return lines


def bad_records_lines(bad: Mapping[str, Any], what: str) -> list[str]:
    """The report's section of bad input records (`BadRecords.to_json`), for every build."""
    counts = bad["counts"]
    lines = [f"## Bad records ({sum(counts.values()):,})", ""]
    if counts:
        lines += [what, ""]
    for cls, n in counts.items():
        lines.append(f"- **{cls}** ({n:,}):")
        lines += [f"  - {e}" for e in bad["examples"][cls]]
    return lines


def _md_glyphs(data: Mapping[str, Any]) -> list[str]:
    g = data.get("glyphs")
    if not g or not g["documents"]:
        return []
    lines = ["## Glyph repair", "",
             f"{g['words_repaired']:,} words repaired (ligature codes of fonts without a "
             f"Unicode map), {g['words_unrepaired']:,} words still holding U+FFFD, in "
             f"{len(g['documents']):,} documents.", ""]
    worst = sorted(g["documents"].items(), key=lambda kv: -kv[1]["unrepaired"])[:20]
    return lines + _table(("id", "repaired", "still U+FFFD"),
                          [(i, v["repaired"], v["unrepaired"]) for i, v in worst])


def verdict(kept: int, total: int, leaks: int, drops: Sequence[Mapping[str, Any]],
            bad_records: int = 0) -> str:
    """One line that tells at a glance whether the run went well."""
    dropped = sum(int(r["count"]) for r in drops)
    classes = ", ".join(f"{r['class']} {r['count']}" for r in drops)
    flag = "OK" if kept > 0 and leaks == 0 else "CHECK"
    line = f"{flag}: {kept:,} kept of {total:,}; {leaks:,} leaks; {dropped:,} dropped"
    line = f"{line} ({classes})" if classes else line
    return f"{line}; {bad_records:,} bad input records" if bad_records else line


def run_warnings(run: RunFacts, docs: DocTable, drops: Sequence[Mapping[str, Any]],
                 hosts: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the user should do something about: inconsistent inputs, papers to fetch again."""
    kept_ids = {i for i, o in run.outcomes.items() if o.status == "kept"}
    warnings = []
    if run.outcomes and kept_ids != set(docs.ids):
        warnings.append(f"{len(kept_ids):,} outcomes say kept but {len(docs):,} documents "
                        "were described: the report's inputs disagree")
    retry = sum(int(r["count"]) for r in drops if r["class"] == FailureClass.UNREACHABLE.value)
    if retry:
        warnings.append(f"{retry:,} documents could not be fetched for now (network errors, "
                        "timeouts, 429/5xx after retries): rerun the same command to try them "
                        "again")
    warnings += split_warnings(docs)
    if hosts:
        named = ", ".join(f"{h['host']} {h['count']}" for h in hosts[:5])
        warnings.append(f"{sum(h['count'] for h in hosts):,} documents refused (HTTP 403) by "
                        f"{len(hosts)} host(s): {named}; they are not asked again unless you "
                        "rerun the same command with `--retry forbidden`")
    return warnings


# an evaluation split smaller than this gives scores that say little (a warning, not a rule)
SMALL_SPLIT = 100
EVALUATION = ("validation", "test")


def split_warnings(docs: DocTable) -> list[str]:
    """Splits a user would not want to report a score on: empty or tiny evaluation splits,
    and an evaluation split of one language when the dataset has several."""
    counts = Counter(s for s in docs.splits if s)
    if not counts:
        return []
    out = []
    empty = [s for s in EVALUATION if not counts[s]]
    if empty:
        out.append(f"{' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty "
                   f"({counts['train']:,} documents in train): nothing to evaluate on")
    tiny = [f"{s} {counts[s]:,}" for s in EVALUATION if 0 < counts[s] < SMALL_SPLIT]
    if tiny:
        out.append(f"small evaluation splits ({', '.join(tiny)} documents): a score on fewer "
                   f"than {SMALL_SPLIT} papers says little")
    languages = sorted(set(docs.languages))
    if len(languages) > 1:
        for split in EVALUATION:
            held = sorted({lang for lang, s in zip(docs.languages, docs.splits, strict=True)
                           if s == split})
            if len(held) == 1:
                out.append(f"{split} holds only {held[0]} papers of the dataset's "
                           f"{len(languages)} languages ({', '.join(languages)}): "
                           "`split_mode: chronological_by_language` splits each language "
                           "alike")
    return out


def build_report(run: RunFacts, docs: DocTable) -> dict[str, Any]:
    """All the figures, as JSON-ready data; the markdown is rendered from this alone."""
    data = _report_body(run, docs)
    data["documents"] = {i: o.to_json() for i, o in run.outcomes.items()}
    return data


def _report_body(run: RunFacts, docs: DocTable) -> dict[str, Any]:
    """Everything but the per-document outcomes, which `write_report` streams."""
    order = _split_order(docs, run.outcomes)
    drops = drop_table(run.outcomes)
    leak = leakage(docs, run.leak_threshold, run.leak_ngram)
    total = len(run.outcomes) or (run.funnel[0][1] if run.funnel else len(docs))
    hosts = refusing_hosts(run.outcomes)
    warnings = run_warnings(run, docs, drops, hosts)
    if run.stopped:
        warnings.insert(0, f"the harvest stopped early: {run.stopped}")
    stats = split_stats(docs, order)
    return {
        "schema_version": REPORT_SCHEMA,
        "verdict": verdict(len(docs), total, leak["above_threshold"], drops,
                           run.bad_records.total),
        **({"stopped": run.stopped} if run.stopped else {}),
        "warnings": warnings,
        "dataset": run.name, "source": run.source, "language": run.language,
        "split_rule": run.split_rule,
        "funnel": [{"stage": s, "count": int(n)} for s, n in run.funnel],
        "drops": drops,
        "refusing_hosts": hosts,
        "thresholds": dict(run.thresholds),
        "splits": {s: v for s, v in stats.items() if v["count"] or s in SPLITS},
        "leakage": leak,
        "glyphs": glyph_repairs(docs),
        "ocr": ocr_counts(docs),
        "labels": label_shares(docs),
        "licenses": licenses_of(docs.licenses),
        "duplicates": duplicates_of(run.duplicates),
        "bad_records": run.bad_records.to_json(),
        "run": dict(run.extra),
    }


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 10 or v == int(v) else f"{v:.3f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_fmt(c) for c in r) + " |" for r in rows]
    return lines + [""]


def _image(data: Mapping[str, Any], key: str) -> list[str]:
    path = data.get("plots", {}).get("files", {}).get(key)
    return [f"![{key}]({path})", ""] if path else []


def _md_funnel_drops(data: Mapping[str, Any]) -> list[str]:
    first = data["funnel"][0]["count"] if data["funnel"] else 0
    rows: list[tuple[Any, ...]] = []
    prev = None
    for f in data["funnel"]:
        lost = None if prev is None else prev - f["count"]
        rows.append((f["stage"], f["count"], lost, f"{f['count'] / first:.1%}" if first else None))
        prev = f["count"]
    lines = ["## Funnel", "", *_table(("stage", "documents", "lost", "of input"), rows)]
    lines += _image(data, "funnel") + ["## Drops by class", ""]
    if not data["drops"]:
        return lines + ["No document was dropped.", ""]
    lines += _table(("class", "stages", "count", "share"),
                    [(r["class"], ", ".join(r["stages"]), r["count"], f"{r['share']:.1%}")
                     for r in data["drops"]])
    for r in data["drops"]:
        lines.append(f"- **{r['class']}**: " + "; ".join(
            f"`{e['id']}` ({e['stage']}: {e['message']})" for e in r["examples"]))
    return lines + [""]


def _md_splits(data: Mapping[str, Any]) -> list[str]:
    rows = []
    for split, s in data["splits"].items():
        a, m, pg = s["article_words"] or {}, s["summary_words"] or {}, s["pages"] or {}
        rows.append((split, s["count"], a.get("mean"), a.get("median"), a.get("p90"),
                     m.get("mean"), m.get("median"), m.get("p90"), pg.get("mean"),
                     s["language_share_mean"]))
    head = ("split", "docs", "article mean", "article median", "article p90", "summary mean",
            "summary median", "summary p90", "pages mean", "main-language share")
    lines = ["## Splits", "", "Lengths are in words (whitespace tokens).", ""]
    lines += _table(head, rows)
    return lines + _image(data, "article_words") + _image(data, "summary_words") \
        + _image(data, "language_share")


def _md_leakage(data: Mapping[str, Any]) -> list[str]:
    lk = data["leakage"]
    lines = ["## Leakage audit", "",
             f"Share of each abstract's {lk['ngram']}-grams still found in the body, per "
             f"document and abstract language: {lk['checked']:,} checked, "
             f"**{lk['above_threshold']:,} above {lk['threshold']}**.", ""]
    dist = lk["distribution"]
    if dist:
        lines += [f"Mean {dist['mean']:.3f}, median {dist['median']:.3f}, "
                  f"p90 {dist['p90']:.3f}, max {dist['max']:.3f}.", ""]
    lines += _image(data, "leakage")
    if lk["leaks"]:
        lines += _table(("id", "language", "share"),
                        [(x["id"], x["language"], x["share"]) for x in lk["leaks"][:20]])
    return lines


def _md_slowest(slowest: Sequence[Mapping[str, Any]]) -> list[str]:
    """Which papers the run spent its time on (a slow source, a PDF worth excluding)."""
    if not slowest:
        return []
    rows = [(s["id"], f"{s['seconds']:.2f}", s["pages"] if s["pages"] is not None else "-",
             f"{s['seconds'] / s['pages']:.3f}" if s["pages"] else "-", s["slowest_step"] or "-")
            for s in slowest]
    return ["## Slowest documents", "",
            *_table(("id", "seconds", "pages", "seconds per page", "slowest step"), rows)]


def render_markdown(data: Mapping[str, Any]) -> str:
    """report.md from report.json's data alone, verdict first."""
    lines = [f"# Build report: {data['dataset']}", "", f"**{data['verdict']}**", ""]
    lines += [f"> warning: {w}" for w in data["warnings"]]
    lines += [""] if data["warnings"] else []
    lines += [f"Source: {data['source']}" + (f"; language `{data['language']}`"
                                             if data["language"] else ""), ""]
    lines += _md_funnel_drops(data)
    lines += bad_records_lines(data["bad_records"], "Input records that name no document "
                               "(manifest lines that are not JSON, have no usable id or "
                               "repeat one), counted by class, the first few shown; the "
                               "other lines went on.") + [""]
    lines += ["## Thresholds", ""]
    lines += _table(("threshold", "value"), data["thresholds"].items()) \
        if data["thresholds"] else ["None applied.", ""]
    if data.get("split_rule"):
        lines += [f"Split rule: {data['split_rule']}", ""]
    lines += _md_splits(data) + _md_leakage(data) + _md_licenses_duplicates(data) \
        + _md_glyphs(data) + _md_ocr(data) + _md_labels(data)
    run = {k: v for k, v in data["run"].items() if k != "slowest_documents"}
    if run:
        lines += ["## Run", "", *_table(("key", "value"), run.items())]
    lines += _md_slowest(data["run"].get("slowest_documents") or [])
    err = data.get("plots", {}).get("error")
    if err:
        lines += [f"Plots were not drawn: {err}.", ""]
    lines.append("Per-document outcomes are in `report.json` under `documents`.")
    return "\n".join(lines) + "\n"


def _write_json_streamed(path: Path, data: Mapping[str, Any],
                         outcomes: Mapping[str, Outcome]) -> None:
    """`json.dumps(data, indent=1)` with `documents` (placed before `plots`) written one
    outcome at a time: the same bytes without a second copy of every outcome in memory."""
    shape = {k: v for k, v in data.items() if k != "plots"}
    shape.update(documents=_HOLE, plots=data["plots"])
    text = json.dumps(shape, indent=1, ensure_ascii=False)
    head, tail = text.split(json.dumps(_HOLE), 1)
    with atomic_text(path) as f:
        f.write(head)
        sep = "{\n"
        for doc_id, o in outcomes.items():
            body = json.dumps(o.to_json(), indent=1, ensure_ascii=False).replace("\n", "\n  ")
            f.write(f"{sep}  {json.dumps(doc_id, ensure_ascii=False)}: {body}")
            sep = ",\n"
        f.write("{}" if sep == "{\n" else "\n }")
        f.write(tail + "\n")


_HOLE = "\x00documents\x00"


def write_report(out_dir: str | Path, run: RunFacts, docs: DocTable,
                 *, plots: bool = True) -> dict[str, Any]:
    """Write report.json, report.md and report/*.png; returns the JSON data without the
    per-document outcomes (those are in report.json, streamed from `run.outcomes`).

    Plotting is best effort: if matplotlib is missing or fails, the report is written
    without images and says why, because the numbers matter more than the pictures.
    """
    from .plots import make_plots

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cols = docs
    data = _report_body(run, cols)
    images: dict[str, str] = {}
    error = "plots disabled" if not plots else None
    if plots:
        images, error = make_plots(out / REPORT_DIR, data, cols)
    data["plots"] = {"files": {k: f"{REPORT_DIR}/{v}" for k, v in images.items()},
                     "error": error}
    _write_json_streamed(out / "report.json", data, run.outcomes)
    write_text_atomic(out / "report.md", render_markdown(data))
    return data

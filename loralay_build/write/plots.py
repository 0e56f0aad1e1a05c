"""PNG plots for the report, drawn with matplotlib's Agg canvas.

Why no pyplot: pyplot keeps global figure state and may pick an interactive backend;
`Figure` + `FigureCanvasAgg` draws headless on clusters and in tests and frees memory
when the figure goes out of scope. Every plot is best effort: a failure is reported,
never raised, because the report's numbers must be written regardless.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..atomic import refuse_link, write_atomic
from ..extras import missing_modules
from .doctable import DocTable

_BINS = 30


def _figure(title: str, xlabel: str, ylabel: str = "documents") -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig, ax


def _funnel(data: Mapping[str, Any], docs: DocTable) -> Any:
    fig, ax = _figure("Documents at each stage", "documents", "")
    stages = [f["stage"] for f in data["funnel"]][::-1]
    counts = [f["count"] for f in data["funnel"]][::-1]
    ax.barh(stages, counts, color="#4c72b0")
    for y, c in enumerate(counts):
        ax.annotate(f"{c:,}", (c, y), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=8)
    return fig


def _per_split_hist(attr: str, title: str, xlabel: str) -> Callable[..., Any]:
    def draw(data: Mapping[str, Any], docs: DocTable) -> Any:
        import numpy as np

        fig, ax = _figure(title, xlabel)
        per_split = {s: docs.column(attr, s) for s in data["splits"]}
        everything = np.concatenate([np.empty(0), *per_split.values()])
        bins = np.histogram_bin_edges(everything, bins=_BINS) if len(everything) else _BINS
        for split, values in per_split.items():  # same bins, so the splits compare
            if len(values):
                ax.hist(values, bins=bins, histtype="step", linewidth=1.5,
                        label=f"{split} (n={len(values):,})")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        return fig
    return draw


def _leakage(data: Mapping[str, Any], docs: DocTable) -> Any:
    lk = data["leakage"]
    fig, ax = _figure(f"Abstract {lk['ngram']}-grams left in the body", "share",
                      "(document, language) pairs")
    edges, counts = lk["histogram"]["edges"], lk["histogram"]["counts"]
    ax.stairs(counts, edges, fill=True, color="#55a868")
    ax.axvline(lk["threshold"], color="#c44e52", linestyle="--",
               label=f"threshold {lk['threshold']}")
    ax.legend(fontsize=8)
    return fig


PLOTS: dict[str, Callable[..., Any]] = {
    "funnel": _funnel,
    "article_words": _per_split_hist("article_words", "Article length", "words"),
    "summary_words": _per_split_hist("summary_words", "Summary length", "words"),
    "language_share": _per_split_hist("language_share", "Main-language share of the body",
                                      "share"),
    "leakage": _leakage,
}


def make_plots(folder: Path, data: Mapping[str, Any],
               docs: DocTable) -> tuple[dict[str, str], str | None]:
    """Draw every plot it can; returns {key: file name} and the first error, if any."""
    if missing_modules("plots"):  # an optional extra: the numbers are the report
        return {}, "matplotlib not installed: pip install 'loralay-build[plots]' for the plots"
    try:
        import matplotlib  # noqa: F401
    except Exception as e:  # a broken install
        return {}, f"matplotlib unavailable ({type(e).__name__}: {e})"
    refuse_link(folder)  # a link is the run's refusal, never one plot's error
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    errors: list[str] = []
    for key, draw in PLOTS.items():
        try:
            fig = draw(data, docs)
            png = io.BytesIO()
            fig.savefig(png, format="png")
            write_atomic(folder / f"{key}.png", png.getvalue())
            files[key] = f"{key}.png"
        except Exception as e:  # one bad plot must not cost the report
            errors.append(f"{key}: {type(e).__name__}: {e}")
    return files, ("; ".join(errors) or None)

"""The optional extras: which feature needs which distributions, and the one line a run
says when they are missing.

Why: a `--source local` build used to install Scrapy, Twisted, nltk, rouge-score,
matplotlib and sickle, which only other sources and commands use. Each lives in an extra
of the package metadata (pyproject.toml, kept equal to this map by tests/test_install.py);
a source, option or command whose extra is missing is refused before any work, naming
the extra, instead of failing on an import in the middle of a run. `find_spec` only looks
for the module: nothing heavy is imported to ask.
"""

from __future__ import annotations

from importlib.util import find_spec

from .errors import ConfigError

# extra -> the top-level modules it provides (its distributions' import names)
EXTRAS: dict[str, tuple[str, ...]] = {
    "crawl": ("scrapy", "twisted"),  # SciELO and KoreaScience crawls
    "oai": ("sickle",),  # OAI-PMH sources (oai, pubmed)
    "arxiv": ("pylatexenc",),  # arXiv metadata's LaTeX to text
    "citesum": ("pysbd", "rouge_score", "nltk"),  # CiteSum, `eval`, `export cohan`
    "images": ("PIL",),  # `images: true`, `loralay show`
    "ocr": ("PIL",),  # `ocr: auto|always`: a skewed scan turned upright (and tesseract)
    "plots": ("matplotlib",),  # report/*.png
}


def missing_modules(extra: str) -> list[str]:
    """The extra's modules this environment cannot import."""
    return [m for m in EXTRAS[extra] if find_spec(m) is None]


def require(extra: str, what: str) -> None:
    """Raise the one line naming the extra `what` needs, if any of its modules is missing."""
    gone = missing_modules(extra)
    if gone:
        raise ConfigError(f"{what} needs the optional `{extra}` extra ({', '.join(gone)} "
                          f"not installed): pip install 'loralay-build[{extra}]'")

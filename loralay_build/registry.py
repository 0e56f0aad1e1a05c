"""The sources the tool builds from: one entry each, the only place a source is named.

Why one registry: the names used to be written in the settings, the fetchers, the CLI's
help and the Makefile, and `run/` tested for `"local"` and `"citesum"` by name; every new
source meant finding them all. Everything a part of the tool needs to know about a source
is a field here, and that part reads the field, never the name.

Standard library only: the Makefile runs this file (`python3 loralay_build/registry.py
--network`) to list its per-source targets before any package is installed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Source:
    name: str
    settings: str  # the class in `loralay_build.conf.sources` holding its keys
    pipeline: str  # "pdf" (fetch, extract, strip, ...) or "citesum" (S2ORC shards)
    # the module whose `fetch(ctx)` proposes candidates (sources/__init__.py has the
    # contract); None for a pipeline that reads the files its settings name
    fetcher: str | None
    network: bool  # talks to a public service: needs a real `contact`
    # the fetch proposes every candidate on each run (a manifest, read whole): a candidate
    # it no longer proposes leaves the run, and each shard of a sharded run fetches itself
    relists: bool = False
    # the fetch reads its input files whole on each run (id lists, a metadata snapshot):
    # their bad lines are counted anew each run, not added to an earlier run's count
    rereads_inputs: bool = False
    summary: str = ""  # one line for `--help`
    title: str = ""  # how the card names where the papers come from ("HAL", ...)


SOURCES: dict[str, Source] = {s.name: s for s in (
    Source("local", "LocalSettings", "pdf", "loralay_build.sources.local", network=False,
           relists=True, summary="your PDFs, listed in a JSON-lines manifest",
           title="a local manifest of PDFs"),
    Source("hal", "HalSettings", "pdf", "loralay_build.sources.hal", network=True,
           summary="HAL's search API (French articles with a file)", title="HAL"),
    Source("arxiv", "ArxivSettings", "pdf", "loralay_build.sources.arxiv", network=True,
           rereads_inputs=True,
           summary="arXiv-Lay: Cohan et al.'s ids, the metadata snapshot, the PDF bucket",
           title="arXiv"),
    Source("pubmed", "PubmedSettings", "pdf", "loralay_build.sources.pubmed", network=True,
           rereads_inputs=True,
           summary="PubMed-Lay: PMC OAI-PMH front matter, the PMC cloud bucket",
           title="PubMed Central"),
    Source("scielo-es", "ScieloSettings", "pdf", "loralay_build.sources.scielo",
           network=True, summary="SciELO ArticleMeta, Spanish articles", title="SciELO"),
    Source("scielo-pt", "ScieloSettings", "pdf", "loralay_build.sources.scielo",
           network=True, summary="SciELO ArticleMeta, Portuguese articles", title="SciELO"),
    Source("koreascience", "KoreaScienceSettings", "pdf",
           "loralay_build.sources.koreascience", network=True,
           summary="KoreaScience search pages, Korean articles", title="KoreaScience"),
    Source("oai", "OaiSettings", "pdf", "loralay_build.sources.oai", network=True,
           summary="any OAI-PMH repository (oai_dc, oai_openaire, jpcoar, xMetaDissPlus, dim)",
           title="an OAI-PMH repository"),
    Source("citesum", "CiteSumSettings", "citesum", None, network=False,
           summary="CiteSum from S2ORC shards on disk", title="S2ORC"),
)}


class UnknownSource(ValueError):
    pass


def source(name: str) -> Source:
    try:
        return SOURCES[name]
    except KeyError:
        raise UnknownSource(f"unknown source {name!r} (known: {', '.join(SOURCES)})") from None


def names() -> list[str]:
    return list(SOURCES)


def _main(argv: list[str]) -> int:
    """`--network`: the names of the sources with a Makefile target of their own."""
    chosen = [s for s in SOURCES.values() if s.network or "--network" not in argv]
    print(" ".join(s.name for s in chosen))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

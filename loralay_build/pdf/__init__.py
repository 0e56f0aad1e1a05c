"""The PDF pipeline, every PDF source's build: the fetch, the per-document steps in
bounded workers, the corpus-wide finish (decisions, dataset, report). Beside `citesum/`,
below the executors (`run/`), on the shared machinery (`machinery/`)."""

"""What both pipelines (the PDF one in `pdf/`, CiteSum in `citesum/`) run on, below them:
the bounded task pool, the ledger of what is done and current, the request and result
records and the `Pipeline`/`Executor` interfaces, progress lines. It knows no pipeline and
no executor, so neither pipeline reaches into the other through it."""

"""The run's SQLite files, one module per kind, each owning its tables' DDL, every query on
them, its schema version (`PRAGMA user_version`, checked on open: `base.py`) and the typed
rows it reads back:

- `fetch`: `state/fetch.sqlite`, candidates, fetch outcomes, harvest checkpoints;
- `shard`: `state/shard-K-of-N.sqlite`, processed documents and their ledger entries;
- `finish`: `state/finish.sqlite`, the decisions, the published base's, their facts;
- `checksums`: `state/pdf-checksums.sqlite`, the PDFs' sha256;
- `images`: `state/images-K-of-N.sqlite`, the shard's rendered pages;
- `citesum`: `state/citesum.sqlite` (ledger, tallies) and the passes' two indexes.

`ledger` and `checkpoints` are tables more than one kind holds. No SQL is written
anywhere else in the package.
"""

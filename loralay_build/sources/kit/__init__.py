"""The kit every source is built from, below the sources themselves (they import it; it
imports none of them):

- `harvest`: one paged harvest (a cursor or token checkpointed after each page with the
  query's fingerprint, a retry pass over recorded failures, skip-known, the limit) and
  the one retry rule for a request whose answer could not be used (`attempts`);
- `oai`: one OAI-PMH client (`GetRecord`, `ListRecords` page by page with resumption
  tokens, OAI error codes, an error body behind an HTTP 4xx, a broken record costing
  only itself), over the project's polite HTTP client;
- `jsonl`: one reader of JSON-lines files, plain or gzipped, whose bad lines are counted
  (`Rejection.bad_record`, the report's bad input records) instead of each reader
  keeping its own policy.
"""

"""Page images with the abstract redacted (`images: true`): render, paint white, store.

render.py  pypdfium2 pages -> JPEG files, removed words painted white (in the worker)
redact.py  which pages, which boxes (the words the body lost, a dropped cover page)
store.py   each shard's pages in SQLite, tied to the result they were rendered for
The `images` config's Parquet shards are written by `write/images.py`, from the finish
(`pdf/finish_images.py`).
"""

"""The sample corpus under `data/sample/`: its documents as data (`model`), drawn as PDFs
(`render`, needs fpdf2 from the `dev` extra) and assembled with the manifest (`make`).

    python -m loralay_build.samples [--texts data/sample/texts] [--out data/sample]

Importing this package needs none of the rendering tools; only `make.build` does.
"""

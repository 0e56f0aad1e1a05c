"""Re-make the sample corpus `data/sample/` from its texts `data/sample/texts/*.yaml`.

The work is in `scripts/samples/` (a development tool, not shipped in the wheel: it needs
the `dev` extra's fpdf2 and Pillow, and qpdf): `make install` first, then
`.venv/bin/python scripts/make_sample.py`.
"""

from samples.make import main

if __name__ == "__main__":
    main()

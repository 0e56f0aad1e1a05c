"""Re-make the sample corpus `data/sample/` from its texts `data/sample/texts/*.yaml`.

Kept as the documented entry point; the work is in `loralay_build.samples` (an ordinary
import of the installed package: `make install` or `pip install -e '.[dev]'` first).
Same as `python -m loralay_build.samples`.
"""

from loralay_build.samples.make import main

if __name__ == "__main__":
    main()

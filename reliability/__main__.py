"""``python -m reliability [--quick] [--seed N] [--sections ...]``: run the suite, write the report.

Exit status 1 when any failure was found (each is listed with a one-line
reproduction in ``reliability/report.md``).
"""

from __future__ import annotations

import sys

from .runner import main

if __name__ == "__main__":
    sys.exit(main())

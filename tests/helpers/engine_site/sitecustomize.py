"""Started processes of a test run with MEMGROVE_TEST_ENGINE use that engine (see engine_choice.py)."""

import os

if os.environ.get("MEMGROVE_TEST_ENGINE"):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    try:
        import engine_choice
    finally:
        sys.path.pop(0)
    engine_choice.apply()

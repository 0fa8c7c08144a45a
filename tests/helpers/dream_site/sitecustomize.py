"""Started processes of a test whose dream scans to given candidates (``dream_scan.site_env``); the
suite's engine choice (``engine_site``) is kept, this file taking its place on ``PYTHONPATH``."""

import os

if os.environ.get("MEMGROVE_TEST_SCAN") or os.environ.get("MEMGROVE_TEST_ENGINE"):
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    try:
        import dream_scan
        import engine_choice
    finally:
        sys.path.pop(0)
    if os.environ.get("MEMGROVE_TEST_ENGINE"):
        engine_choice.apply()
    if os.environ.get("MEMGROVE_TEST_SCAN"):
        from memgrove.tree.findings import Candidate

        spec = json.loads(Path(os.environ["MEMGROVE_TEST_SCAN"]).read_text(encoding="utf-8"))
        dream_scan.install([Candidate.from_dict(d) for d in spec])

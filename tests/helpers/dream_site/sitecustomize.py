"""Started processes of a test whose dream scans to given candidates (``dream_scan.site_env``); the
suite's engine and meaning choices (``engine_site``) are kept, this file taking its place on ``PYTHONPATH``."""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
try:
    import dream_scan
    import engine_choice
    import meaning_choice
finally:
    sys.path.pop(0)
meaning_choice.apply()
if os.environ.get("MEMGROVE_TEST_ENGINE"):
    engine_choice.apply()
if os.environ.get("MEMGROVE_TEST_SCAN"):
    from memgrove.tree.hygiene.findings import Candidate

    spec = json.loads(Path(os.environ["MEMGROVE_TEST_SCAN"]).read_text(encoding="utf-8"))
    dream_scan.install([Candidate.from_dict(d) for d in spec])

"""Started processes of a test run use its engine and rank without meaning unless told
(see engine_choice.py and meaning_choice.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
try:
    import engine_choice
    import meaning_choice
finally:
    sys.path.pop(0)
if engine_choice.chosen() != "whoosh":
    engine_choice.apply()
meaning_choice.apply()

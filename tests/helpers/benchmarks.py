"""For the benchmark tests: load a file of ``benchmarks/`` (not a package) as a module, a module of its
harness (``benchmarks/harness/``, imported as ``harness.<name>``, as the scripts import it), and a tiny
LoCoMo-format conversation."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_harness(name: str) -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(f"harness.{name}")


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module, with ``benchmarks/`` on ``sys.path`` (where a script run as
    ``python benchmarks/<name>.py`` finds ``harness`` and its sibling modules)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"memgrove_bench_{name}", BENCHMARKS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses and pydantic resolve annotations through the module
    spec.loader.exec_module(mod)
    return mod


def tiny_locomo_conversation(turns_per_session: int = 5) -> dict:
    """A LoCoMo ``conversation`` object: Ana and Ben, two sessions of up to 5 turns, a date key with
    no session (as in conv-26), and a photo caption on the 4th turn of session 2."""
    s1 = [("Ana", "Hi Ben! I just adopted a greyhound named Pepper from the shelter."),
          ("Ben", "Congratulations Ana! How old is Pepper?"),
          ("Ana", "She is four, and she loves long walks along the riverside."),
          ("Ben", "I started learning the cello last month, my teacher is very patient."),
          ("Ana", "That sounds lovely, music is good for the soul.")]
    s2 = [("Ben", "My cello recital is next Saturday at the community hall."),
          ("Ana", "Wonderful! Pepper and I will come and cheer for you."),
          ("Ben", "Thanks! I will play a suite by Bach, the first one."),
          ("Ana", "I painted a watercolour of the lake for my mother's birthday."),
          ("Ben", "Your mother must have loved the painting.")]
    conv = {"speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023", "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_3_date_time": "a date with no session (as in conv-26)"}
    for n, turns in ((1, s1), (2, s2)):
        conv[f"session_{n}"] = [{"speaker": sp, "dia_id": f"D{n}:{i}", "text": t}
                                for i, (sp, t) in enumerate(turns[:turns_per_session], 1)]
    conv["session_2"][3]["blip_caption"] = "a photo of a watercolour painting of a lake"
    return conv

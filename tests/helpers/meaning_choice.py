"""Ranking by meaning is off in the suite unless a test turns it on (``semantic_weight``).

The product's default is "auto": on where the model is installed, as it is in the test venv
(Makefile MODEL). Off, a test's searches load no model and start no background embedder, so the
suite stays fast (``MEMGROVE_TEST_MEANING=auto`` leaves the product's default, to look at what
changes: tests that pin a ranking by the words, or count vectors, assume meaning off).
Like ``engine_choice``, it changes only the constructor's default, in this process (conftest) and,
through ``engine_site/sitecustomize.py`` on ``PYTHONPATH``, in the processes the tests start: the
documented default (the dataclass field, which the README and the ``config.toml`` template show)
stays "auto". A test turns meaning on by naming a weight, ``semantic_weight = "auto"`` included,
or runs the product's default with ``product_default``.
"""

from __future__ import annotations

import os

try:
    from .engine_choice import set_default
except ImportError:          # the sites' sitecustomize imports these as top-level modules
    from engine_choice import set_default

VARIABLE = "MEMGROVE_TEST_MEANING"


def chosen() -> str:
    return os.environ.get(VARIABLE, "") or "off"


def _set_default(value: float) -> None:
    set_default("semantic_weight", value)


def apply() -> None:
    """Trees whose settings do not name a ``semantic_weight`` rank without meaning."""
    if chosen() not in ("off", "auto"):
        raise SystemExit(f"{VARIABLE}={chosen()!r}: use off or auto")
    if chosen() == "off":
        _set_default(0.0)
    # and no detached background job (tree/meaning/embed_job.py) outlives a test that turns meaning on
    # without an embedder: a test that wants one names ``embed_job = true``
    set_default("embed_job", False)


def product_default(monkeypatch) -> None:
    """For one test: trees get the product's default ("auto") back."""
    from memgrove.tree.settings import AUTO, TreeSettings

    monkeypatch.setattr(TreeSettings.__init__, "__defaults__", TreeSettings.__init__.__defaults__)
    _set_default(AUTO)

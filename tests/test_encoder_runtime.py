"""The sentence encoder on ONNX Runtime (tree/meaning/embedding.py): the pinned model file checked by
its hash before use, a folder the user names (its hash in the encoder's name, so vectors of another
model are never read), agreement with the NumPy forward pass memgrove ran before (reference vectors
in tests/data, computed by benchmarks/harness/minilm_numpy.py), one thread, and fork while encoding."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")

from memgrove.tree.base import model_files  # noqa: E402
from memgrove.tree.base.errors import MemgroveError  # noqa: E402
from memgrove.tree.meaning import embedding  # noqa: E402

pytestmark = pytest.mark.skipif(not model_files.model_available(), reason="the embedding model is not installed")

REFERENCE = Path(__file__).parent / "data" / "minilm_reference_vectors.json"


@pytest.fixture
def fresh_loads():
    """Encoders loaded anew (a test before may have loaded the pinned one)."""
    embedding._loaded.cache_clear()
    yield
    embedding._loaded.cache_clear()


def user_folder(at: Path) -> Path:
    """A folder as a user would name it: the same model.onnx and a tokenizer.json."""
    at.mkdir(parents=True, exist_ok=True)
    os.link(model_files.pinned_folder() / "model.onnx", at / "model.onnx")
    (at / "tokenizer.json").write_bytes(gzip.decompress(embedding.TOKENIZER.read_bytes()))
    return at


def test_vectors_agree_with_the_numpy_encoders():
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    want = np.array(ref["vectors"], dtype=np.float32)
    enc = embedding.load_encoder("")
    got = enc.encode(ref["texts"])
    assert got.dtype == np.float32 and got.shape == want.shape == (len(ref["texts"]), enc.dim)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cos = (got * want).sum(1)
    assert cos.min() >= 0.99, dict(zip(ref["texts"], cos.round(4)))
    # the same text alone or in a batch of others (batches are padded to their longest): the same vector
    alone = np.stack([enc.encode([t])[0] for t in ref["texts"]])
    assert np.allclose(alone, got, atol=1e-4)
    assert enc.encode([]).shape == (0, enc.dim)


def test_the_pinned_file_is_checked_before_its_first_use(tmp_path, fresh_loads, monkeypatch):
    monkeypatch.setattr(embedding, "PINNED_SHA256", "0" * 64)      # as if the file had changed
    with pytest.raises(MemgroveError, match=r"model\.onnx is damaged or not the pinned model") as err:
        embedding.load_encoder("")
    assert str(model_files.pinned_folder() / "model.onnx") in str(err.value)
    monkeypatch.undo()
    # a damaged copy in the package's place: named, never run
    damaged = tmp_path / "pkg"
    damaged.mkdir()
    data = bytearray((model_files.pinned_folder() / "model.onnx").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (damaged / "model.onnx").write_bytes(bytes(data))
    with pytest.raises(MemgroveError, match=f"{damaged / 'model.onnx'} is damaged"):
        embedding.MiniLM(damaged, pinned=True)
    assert embedding.load_encoder("").name == "minilm-l6-int8-" + embedding.PINNED_SHA256[:12]


def test_a_folder_the_user_names(tmp_path, fresh_loads):
    pinned = embedding.load_encoder("")
    mine = embedding.load_encoder(str(user_folder(tmp_path / "mine")))
    assert mine is not pinned and mine.name.startswith("onnx-") and mine.name != pinned.name
    texts = ["who owns billing?", "We will go with Postgres for the orders service."]
    assert np.allclose(mine.encode(texts), pinned.encode(texts), atol=1e-6)   # the same file, the same vectors
    # another tokenizer (or another model.onnx) is another name: its vectors never mix with these
    other = user_folder(tmp_path / "other")
    tok = json.loads((other / "tokenizer.json").read_text(encoding="utf-8"))
    tok["added_tokens"][0]["content"] = "[PAD ]"
    (other / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")
    assert embedding.load_encoder(str(other)).name not in (mine.name, pinned.name)


def test_a_folder_missing_a_file_or_holding_a_broken_one_says_which(tmp_path, fresh_loads):
    half = user_folder(tmp_path / "half")
    (half / "tokenizer.json").unlink()
    with pytest.raises(MemgroveError, match=f"cannot load all-MiniLM-L6-v2 from {half}: no tokenizer.json"):
        embedding.load_encoder(str(half))
    broken = user_folder(tmp_path / "broken")
    (broken / "model.onnx").unlink()
    (broken / "model.onnx").write_bytes(b"not a graph")
    with pytest.raises(MemgroveError, match=f"cannot load all-MiniLM-L6-v2 from {broken}"):
        embedding.load_encoder(str(broken))
    safetensors_only = tmp_path / "old"
    safetensors_only.mkdir()
    (safetensors_only / "model.safetensors").write_bytes(b"")
    with pytest.raises(MemgroveError, match=r"no model.onnx \(model.safetensors is no longer read\)"):
        embedding.load_encoder(str(safetensors_only))


def test_a_download_of_the_models_repository_as_laid_out(tmp_path, fresh_loads):
    # sentence-transformers/all-MiniLM-L6-v2 keeps its graph in onnx/model.onnx beside tokenizer.json
    repo = user_folder(tmp_path / "all-MiniLM-L6-v2")
    (repo / "onnx").mkdir()
    (repo / "model.onnx").rename(repo / "onnx" / "model.onnx")
    assert embedding.load_encoder(str(repo)).encode(["who owns billing?"]).shape == (1, 384)


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_the_runtime_starts_no_threads_to_encode():
    # one intra-op thread, sequential: ONNX Runtime runs the graph in the calling thread, so no
    # pool of its own spins for cores or is left behind to break fork()
    enc = embedding.load_encoder("")
    enc.encode(["warm up the tokenizer and the session"] * 20)
    before = _threads()
    enc.encode(["who owns billing?"])
    enc.encode([f"entry {i} about the billing service " * (i + 1) for i in range(40)])
    assert _threads() == before


FORK_WHILE_ENCODING = """
import os, sys, threading, time
from memgrove.tree.meaning.embedding import load_encoder

enc = load_encoder("")
enc.encode(["warm"])
paragraph = "The orders service moved from MySQL to Postgres in March after the lock waits. " * 30
stop = threading.Event()
done = [0]

def encode():
    while not stop.is_set():
        enc.encode([paragraph] * 8 + ["who owns billing?"])
        done[0] += 1

t = threading.Thread(target=encode)
t.start()
children = []
for i in range(6):
    time.sleep(0.05 * (i % 3))
    pid = os.fork()                       # the other thread is (most likely) inside a session run
    if pid == 0:
        try:
            v = enc.encode(["the child encodes too", paragraph])
            ok = v.shape == (2, 384) and abs(float((v[0] ** 2).sum()) - 1) < 1e-4
            v2 = load_encoder("").encode(["and again"])
            os._exit(0 if ok and v2.shape == (1, 384) else 3)
        except BaseException:
            os._exit(4)
    children.append(pid)
codes = [os.waitpid(pid, 0)[1] for pid in children]
stop.set()
t.join()
print(codes, done[0])
sys.exit(0 if all(c == 0 for c in codes) and done[0] > 0 else 1)
"""


def test_fork_while_another_thread_encodes_and_the_child_encodes_too(tmp_path):
    # in a process of its own: a hang in fork() or in a child is for ever, so it is bounded here
    script = tmp_path / "fork_while_encoding.py"
    script.write_text(textwrap.dedent(FORK_WHILE_ENCODING), encoding="utf-8")
    try:
        p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail("fork while encoding hung (parent or child)")
    assert p.returncode == 0, (p.stdout, p.stderr[-3000:])

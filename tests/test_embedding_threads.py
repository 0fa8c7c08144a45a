"""One thread (tree/meaning/embedding.py). The encoder runs on ONNX Runtime with one intra-op thread
and no pools (tests/test_encoder_runtime.py: no thread is started to encode); NumPy's BLAS, which
ranking by meaning's other arithmetic may call, is held to one thread while any thread of the process
asks (``_one_blas_thread``): OpenBLAS's spinning threads made a question 7x and a batch 4x slower on a
busy machine. The setting is the library's again afterwards."""

from __future__ import annotations

import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")
np = pytest.importorskip("numpy")

from memgrove.tree.meaning import embedding  # noqa: E402


def _blas_threads() -> int:
    return max(i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas")


def test_overlapping_users_keep_one_thread_until_the_last_leaves():
    # a search's arithmetic beside the background embedder's: the first one out must not restore the
    # library's threads under the other, nor the last one leave one thread for good
    (np.ones((64, 64)) @ np.ones((64, 64))).sum()       # BLAS loaded
    before = _blas_threads()
    first, second = embedding._one_blas_thread(), embedding._one_blas_thread()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert _blas_threads() == 1
    second.__exit__(None, None, None)
    assert _blas_threads() == before

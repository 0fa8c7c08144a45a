"""Every encoding runs on one BLAS thread (tree/meaning/embedding.py): a question's matrices are too small to
share out, and OpenBLAS's spinning threads made a question 7x and a batch 4x slower on a busy
machine. The setting is the library's again afterwards."""

from __future__ import annotations

import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

from memgrove.tree.meaning import embedding  # noqa: E402


def _blas_threads() -> int:
    return max(i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas")


def test_a_question_and_a_batch_run_on_one_blas_thread(monkeypatch):
    enc = embedding.load_encoder("")
    enc.encode(["load numpy's BLAS"])
    before = _blas_threads()
    seen: list[int] = []
    forward = enc._forward

    def spy(ids, mask):
        seen.append(_blas_threads())
        return forward(ids, mask)

    monkeypatch.setattr(enc, "_forward", spy)
    one = enc.encode(["who owns billing?"])
    many = enc.encode([f"entry number {i} about the billing service" for i in range(embedding.FEW + 1)])
    assert seen == [1, 1]                          # the question and the batch: one thread
    assert _blas_threads() == before               # restored
    assert one.shape == (1, 384) and many.shape == (embedding.FEW + 1, 384)
    # the same vector whatever the threads
    monkeypatch.setattr(enc, "_forward", forward)
    assert abs(float(enc._encode(["who owns billing?"], 16)[0] @ one[0]) - 1.0) < 1e-5


def test_overlapping_users_keep_one_thread_until_the_last_leaves():
    # the background embedder encodes beside searches: the first one out must not restore the
    # library's threads under the other, nor the last one leave one thread for good
    embedding.load_encoder("").encode(["load numpy's BLAS"])
    before = _blas_threads()
    first, second = embedding._one_blas_thread(), embedding._one_blas_thread()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert _blas_threads() == 1
    second.__exit__(None, None, None)
    assert _blas_threads() == before

"""Ranking by meaning, the tree's side: the texts entries are embedded from, the encoder, the
question's vector (once per search), the dense leg's nearest entries and the cosines ranking asks
for (``dense_k``, tree/ranking/dense.py; ``semantic_weight``, tree/ranking/by_meaning.py), both from
the matrix of every entry's vector (tree/meaning/matrix.py), what the background embedder is handed
(``_indexed_anew``, tree/meaning/embedder.py), how many entries have their vector
(``vector_counts``), and every vector computed at once (``embed``, reindex).
``Meaning`` is one of the parts ``ContextTree`` is made of (see store.py)."""

from __future__ import annotations

from typing import Any, Callable

from .embedder import Embedder
from .embedding import Encoder, load_encoder
from ..entries.entry import Entry
from ..base.errors import MemgroveError
from ..index.sync import MEANING_CHARS, meaning_text  # noqa: F401 - MEANING_CHARS: read by hygiene
from .matrix import Matrix
from .vector_claims import CLAIMS, NO_VECTOR, SEARCH_EMBEDS, Claimed, ready_vectors
from .vectors import key_of


class Meaning:
    """Sentence embeddings of entries (state lives on ``ContextTree``: ``encoder``, ``vectors``)."""
    _readable: Callable[..., dict[str, tuple[Entry, str]]]
    embedder: Embedder | None

    def _meaning_texts(self, paths: list[str], read: dict | None = None) -> dict[str, str]:
        """What an entry's sentence embedding is made of (``index.sync.meaning_text``: its title and
        indexed body, the first ``MEANING_CHARS``). ``read``: the search's entries read so far
        (``ContextTree._readable``)."""
        return {p: meaning_text(e, kind) for p, (e, kind) in self._readable(paths, read).items()}

    def meaning_encoder(self) -> Encoder:
        """The sentence encoder of ``semantic_model``, loaded at first use (MemgroveError if absent);
        one given beforehand (``tree.encoder = ...``) is kept, even while the background loads."""
        encoder = self.encoder
        if encoder is None:
            loaded = load_encoder(self.settings.semantic_model)
            with self._encoder_mutex:
                if self.encoder is None:
                    self.encoder = loaded
                encoder = self.encoder
        return encoder

    def _indexed_anew(self, paths: list[str]) -> None:
        """Entries whose indexed text changed (a write, a hand edit): their vectors are computed
        ahead by the background embedder, if this tree runs one (``embed_ahead``)."""
        if self.embedder is not None and paths and self.settings.semantic_weight > 0:
            self.embedder.written(paths)

    def _vector_matrix(self) -> Matrix:
        """The matrix of every entry's vector (tree/meaning/matrix.py), up to date."""
        matrix = self.__dict__.get("_matrix")
        if matrix is None:
            with self._encoder_mutex:
                matrix = self.__dict__.setdefault("_matrix", Matrix(self.catalog, self.vectors))
        encoder = self.meaning_encoder()
        matrix.refresh(encoder.name, encoder.dim)
        return matrix

    def _question(self, query: str, asked: dict[str, Any]) -> Any:
        """The question's unit vector, computed once per search (``asked``: the search's)."""
        if query not in asked:
            asked[query] = self.meaning_encoder().encode([query])[0]
        return asked[query]

    def _meaning_reads(self, read: dict) -> tuple[Callable[[str, list[str]], dict[str, float]],
                                                  Callable[[str, int], list[tuple[str, float]]]]:
        """What one search's ranking reads of meaning (``RankingInputs.cosines`` and ``.dense``),
        sharing the question's vector and the entries read."""
        asked: dict[str, Any] = {}
        return (lambda q, ps: self._cosines(q, ps, read, asked)), (lambda q, k: self._nearest(q, k, asked))

    def _nearest(self, query: str, k: int, asked: dict[str, Any] | None = None) -> list[tuple[str, float]]:
        """The dense leg (tree/ranking/dense.py): the ``k`` entries whose vector is closest to the
        question's, best first, as (path, cosine); an entry without its vector yet is not among them."""
        matrix = self._vector_matrix()
        return matrix.top(self._question(query, {} if asked is None else asked), k)

    def _cosines(self, query: str, paths: list[str], read: dict | None = None,
                 asked: dict[str, Any] | None = None) -> dict[str, float]:
        """The cosine between the question's sentence embedding and each entry's (``with_meaning``),
        ``NO_VECTOR`` for an entry without one yet. Entries' vectors come from the matrix (no file
        read); of the missing ones, the search computes a few (``SEARCH_EMBEDS``, the best-ranked
        first: ``paths`` come best first) and none another thread is computing
        (tree/meaning/vector_claims.py); the rest go to the background embedder, if this tree runs one."""
        if not paths:
            return {}
        q = self._question(query, {} if asked is None else asked)
        got = self._vector_matrix().cosines(q, paths)
        left = [p for p in paths if p not in got]
        if not left:
            return got
        encoder = self.meaning_encoder()
        with CLAIMS.coming(str(self.vectors.file)):      # the background embedder lets it claim first
            texts = self._meaning_texts(left, read)
            job = Claimed(list(texts.values()), encoder, self.vectors, SEARCH_EMBEDS)
        with job:
            rows = job.vectors()
        if missing := [p for p, t in texts.items() if t not in rows]:
            self._indexed_anew(missing)
        got.update({p: float(rows[t] @ q) if t in rows else NO_VECTOR for p, t in texts.items()})
        return {p: got[p] for p in paths if p in got}

    def vector_counts(self) -> dict[str, int]:
        """How many ``entries`` the index holds (context files too: they are ranked), how many have
        the vector of their current text (``with_vector``) and how many do not yet (``pending``):
        two cheap looks when nothing changed (tree/meaning/matrix.py). Loads the encoder (its name
        is part of each vector's key); MemgroveError without the model."""
        entries, ready = self._vector_matrix().counts()
        return {"entries": entries, "with_vector": ready, "pending": entries - ready}

    def vector_state(self, exact: bool = False) -> dict[str, Any]:
        """How far entries' vectors are (``Memory.stats``, ``doctor``, the server's ``/health``):
        ``entries`` the index holds (context files too: they are ranked), what this process is
        ``computing``, and its background embedder's ``backlog`` (queued, unchecked, dropped; None
        without one). ``exact`` also counts the entries whose text has its vector (``with_vectors``)
        and ``missing``: it reads every entry and loads the model, so not for ``/health``."""
        on = self.settings.semantic_weight > 0
        state: dict[str, Any] = {"meaning": on, "entries": self.catalog.count(),
                                 "computing": CLAIMS.count(str(self.vectors.file)),
                                 "backlog": self.embedder.backlog() if self.embedder is not None else None}
        if exact and on:
            try:
                name = self.meaning_encoder().name
            except MemgroveError as exc:      # no model: the searches say so; a report still answers
                return {**state, "error": str(exc)}
            keys = [key_of(name, t) for t in self._meaning_texts(sorted(self.catalog.files())).values()]
            stored = self.vectors.get_many(sorted(set(keys)))
            have = sum(k in stored for k in keys)
            state.update(with_vectors=have, missing=len(keys) - have)
        return state

    def embed(self, progress: Callable[[int, int], None] | None = None, batch: int = 64) -> tuple[int, int]:
        """Compute the sentence embedding of every entry that lacks one and drop the vectors of texts
        the tree no longer holds, so that no search pays for them (``memgrove reindex`` with meaning
        on). No lock: vectors are keyed by their text, and a search computes any
        that are missing. Returns (entries with a vector, vectors dropped)."""
        encoder = self.meaning_encoder()
        self.ensure_fresh()
        paths = sorted(self.catalog.files())
        texts = self._meaning_texts(paths)
        keep = set()
        values = list(texts.values())
        for s in range(0, len(values), batch):
            ready_vectors(values[s:s + batch], encoder, self.vectors)   # none another thread computes
            keep.update(key_of(encoder.name, t) for t in values[s:s + batch])
            if progress is not None:
                progress(min(s + batch, len(values)), len(values))
        dropped = self.vectors.prune(keep)
        self.vectors.checkpoint()
        return len(texts), dropped


"""Ranking by meaning, the tree's side: the texts entries are embedded from, the encoder, the
cosines ranking asks for (``semantic_weight``, tree/ranking/by_meaning.py) and the dense leg's
nearest entries (``dense_k``, tree/ranking/dense.py), both from the matrix of every entry's vector
(tree/meaning/matrix.py) and the question's vector (once per search), what the background embedder
is handed (``_indexed_anew``, tree/meaning/embedder.py) or, in a process without one, left for the
background job (``unembedded``, ``vectors_ahead``, tree/meaning/embed_job.py), how far the vectors
are (``vector_counts``, ``vector_state``), and every vector computed at once (``embed``, reindex).
``Meaning`` is one of the parts ``ContextTree`` is made of (see store.py)."""

from __future__ import annotations

import sqlite3
from typing import Any, Callable

from . import embed_job
from .embedder import QUEUE_MAX, Embedder
from .embedding import Encoder, load_encoder
from ..entries.entry import Entry
from ..base.errors import MemgroveError
from ..index.sync import MEANING_CHARS, meaning_text  # noqa: F401 - MEANING_CHARS: read by hygiene
from .matrix import Matrix
from .vector_claims import CLAIMS, NO_VECTOR, SEARCH_EMBEDS, Claimed, ready_vectors
from .vectors import key_of

# what a search computes itself while a background job (tree/meaning/embed_job.py), or a background
# embedder with more than a search's share to do (``Embedder.behind``), computes the rest: none. Each is about 0.1 s of a one-shot search on this machine's contended core (benchmarks/
# results/cli_ahead.md); the job has them within a minute or two, ranked by their words meanwhile
SEARCH_EMBEDS_BESIDE_JOB = 0
# a process without an embedder (a CLI command) loads the model for a search only once no background
# job runs and this share of the tree's entries have a vector (counted cheaply: vectors stored /
# entries indexed): loading it costs a one-shot search 0.5-1.7 s on a loaded machine (0.25 s idle;
# benchmarks/results/cli_ahead.md), and re-sorting a part of the candidates by meaning is not worth
# that; meanwhile the job is started if none runs, and the search ranks by words
MIN_SHARE = 0.5


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
        ahead by the background embedder, if this tree runs one (``embed_ahead``); else they are
        kept in ``unembedded`` for whoever computes them ahead (the CLI at a command's end,
        memgrove/cli/vectors_ahead.py; a search's background job, ``_vectors_wanted``)."""
        if not paths or self.settings.semantic_weight <= 0:
            return
        if self.embedder is not None:
            self.embedder.written(paths)
        else:
            self.unembedded.update(paths)

    @property
    def unembedded(self) -> set[str]:
        """Entries this process wrote or searched whose vectors it left to be computed (no embedder)."""
        left = self.__dict__.get("_unembedded")
        if left is None:
            left = self.__dict__["_unembedded"] = set()
        return left

    def _vectors_wanted(self) -> bool:
        """No embedder here, vectors missing: a background job computes them (``embed_job``, unless
        the setting is off); True if one runs now."""
        if not self.settings.embed_job or self.settings.semantic_weight <= 0:
            return False
        return embed_job.start_job(self.home) or embed_job.job_state(self.home) is not None

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
        question's, best first, as (path, cosine); an entry without its vector yet is not among them,
        and none while this process ranks by words only (``_by_words_now``)."""
        if self._by_words_now():
            return []
        matrix = self._vector_matrix()
        return matrix.top(self._question(query, {} if asked is None else asked), k)

    def _cosines(self, query: str, paths: list[str], read: dict | None = None,
                 asked: dict[str, Any] | None = None) -> dict[str, float]:
        """The cosine between the question's sentence embedding and each entry's (``with_meaning``),
        ``NO_VECTOR`` for an entry without one yet. Entries' vectors come from the matrix (no file
        read); of the missing ones, the search computes a few (``SEARCH_EMBEDS``, the best-ranked
        first: ``paths`` come best first; none while a background job or a busy embedder computes
        them, ``SEARCH_EMBEDS_BESIDE_JOB``) and none another thread is computing
        (tree/meaning/vector_claims.py); the rest go to the background embedder, if this tree runs
        one, else to a background job (``_vectors_wanted``). Without an embedder, while a background
        job runs or fewer vectors are stored than ``MIN_SHARE`` of the entries, the model is not even
        loaded: every entry is ranked by its words (``_by_words_now``)."""
        if not paths:
            return {}
        if self._by_words_now():
            return {p: NO_VECTOR for p in paths}
        budget = SEARCH_EMBEDS
        if self.embedder is None and self.settings.embed_job and embed_job.job_state(self.home) is not None:
            budget = SEARCH_EMBEDS_BESIDE_JOB
        elif self.embedder is not None and self.embedder.behind():
            budget = SEARCH_EMBEDS_BESIDE_JOB
        q = self._question(query, {} if asked is None else asked)
        got = self._vector_matrix().cosines(q, paths)
        left = [p for p in paths if p not in got]
        if not left:
            return got
        encoder = self.meaning_encoder()
        with CLAIMS.coming(str(self.vectors.file)):      # the background embedder lets it claim first
            texts = self._meaning_texts(left, read)
            job = Claimed(list(texts.values()), encoder, self.vectors, budget)
        with job:
            rows = job.vectors()
        missing = [p for p, t in texts.items() if t not in rows]
        if missing and self.embedder is not None:
            self.embedder.written(missing)
        elif missing:
            self._vectors_wanted()
        got.update({p: float(rows[t] @ q) if t in rows else NO_VECTOR for p, t in texts.items()})
        return {p: got[p] for p in paths if p in got}

    def _by_words_now(self) -> bool:
        """A process without an embedder (a CLI command) does not load the model for a search while a
        background job computes the vectors or fewer than ``MIN_SHARE`` of the entries have one: it
        starts the job if none runs, and the search ranks by words (neither leg of meaning runs)."""
        if self.embedder is not None or not self.settings.embed_job or self.encoder is not None:
            return False
        if embed_job.job_state(self.home) is None and self._vector_share() >= MIN_SHARE:
            return False
        self._vectors_wanted()
        return True

    def vector_counts(self) -> dict[str, int]:
        """How many ``entries`` the index holds (context files too: they are ranked), how many have
        the vector of their current text (``with_vector``) and how many do not yet (``pending``):
        two cheap looks when nothing changed (tree/meaning/matrix.py). Loads the encoder (its name
        is part of each vector's key); MemgroveError without the model."""
        entries, ready = self._vector_matrix().counts()
        return {"entries": entries, "with_vector": ready, "pending": entries - ready}

    def vectors_ahead(self, paths: list[str] | None = None) -> dict[str, Any]:
        """Have the missing vectors of these entries (of every entry without ``paths``) computed in
        the background: by this process's embedder, else by a background job. Which (``by``:
        "embedder", "job" or None: meaning off, or no job allowed)."""
        if self.settings.semantic_weight <= 0:
            return {"by": None}
        if self.embedder is not None:
            if paths is None or len(paths) > QUEUE_MAX:
                self.embedder.catch_up()
            else:
                self.embedder.written(paths)
            return {"by": "embedder", "queued": len(paths) if paths is not None and len(paths) <= QUEUE_MAX else None}
        return {"by": "job" if self._vectors_wanted() else None}

    def _vector_share(self) -> float:
        """Vectors stored per entry indexed, at most 1 (stale ones count too: cheap, not exact)."""
        try:
            return min(1.0, self.vectors.count() / max(1, self.catalog.count()))
        except sqlite3.DatabaseError:      # busy, damaged: the search finds out what it can
            return 1.0

    def vector_state(self, exact: bool = False) -> dict[str, Any]:
        """How far entries' vectors are (``Memory.stats``, ``doctor``, ``memgrove status``, the server's
        ``/health``): ``entries`` the index holds (context files too: they are ranked), what this
        process is ``computing``, its background embedder's ``backlog`` (queued, unchecked, dropped;
        None without one), the tree's background ``job`` (tree/meaning/embed_job.py: pid, ``found``
        missing, ``done``; None when none runs), and ``pending``: what those two have yet to do (the
        embedder's queue and catch-up still to look at, the job's found and not done; None when
        neither runs). All of it cheap: no entry read, no model loaded. ``exact`` also counts the
        entries whose current text has its vector (``with_vectors``) and ``missing``
        (``vector_counts``: no entry read, but it needs the model, whose name is part of each
        vector's key); without ``exact`` (``/health``) they are counted only where the model is
        loaded already (a server's, by its embedder), never loading it."""
        on = self.settings.semantic_weight > 0
        backlog = self.embedder.backlog() if self.embedder is not None else None
        job = embed_job.job_state(self.home) if on else None
        pending = None
        if backlog is not None and backlog["running"]:
            pending = backlog["queued"] + max(backlog["unchecked"], 0)
        if job is not None:
            pending = (pending or 0) + max(int(job.get("found", 0)) - int(job.get("done", 0)), 0)
        state: dict[str, Any] = {"meaning": on, "entries": self.catalog.count(),
                                 "computing": CLAIMS.count(str(self.vectors.file)),
                                 "backlog": backlog, "job": job, "pending": pending}
        if on and (exact or self.encoder is not None):
            try:
                counts = self.vector_counts()
            except MemgroveError as exc:      # no model: the searches say so; a report still answers
                return {**state, "error": str(exc)}
            state.update(with_vectors=counts["with_vector"], missing=counts["pending"])
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
        self.unembedded.clear()        # every one computed: nothing left for a background job
        return len(texts), dropped


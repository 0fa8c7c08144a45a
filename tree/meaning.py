"""Ranking by meaning, the tree's side: the texts entries are embedded from, the encoder, the
cosines ``ranking.rank`` asks for (``semantic_weight``), what the background embedder is handed
(``_indexed_anew``, tree/embedder.py), and every vector computed at once (``embed``, reindex).
``Meaning`` is one of the parts ``ContextTree`` is made of (see store.py)."""

from __future__ import annotations

from typing import Callable

from .embedder import Embedder
from .embedding import Encoder, load_encoder
from .entry import Entry
from .index_sync import indexed_body
from .searchable import searchable
from .vectors import key_of, vectors_of

# the most of an entry's text its sentence embedding is made from: the model reads 256 tokens
MEANING_CHARS = 4000


class Meaning:
    """Sentence embeddings of entries (state lives on ``ContextTree``: ``encoder``, ``vectors``)."""
    _readable: Callable[..., dict[str, tuple[Entry, str]]]
    embedder: Embedder | None

    def _meaning_texts(self, paths: list[str], read: dict | None = None) -> dict[str, str]:
        """What an entry's sentence embedding is made of: its title and indexed body (the model reads
        the first 256 tokens, so the first ``MEANING_CHARS`` characters are plenty). ``read``: the
        search's entries read so far (``ContextTree._readable``)."""
        return {p: (e.title + "\n" + searchable(indexed_body(e, kind)))[:MEANING_CHARS].strip()
                for p, (e, kind) in self._readable(paths, read).items()}

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

    def _cosines(self, query: str, paths: list[str], read: dict | None = None) -> dict[str, float]:
        """The cosine between the question's sentence embedding and each entry's (``with_meaning``);
        entries' vectors come from ``vectors.db``, the missing ones are computed and kept."""
        encoder = self.meaning_encoder()
        texts = self._meaning_texts(paths, read)
        if not texts:
            return {}
        q = encoder.encode([query])[0]
        rows = vectors_of(list(texts.values()), encoder, self.vectors)
        return dict(zip(texts, (float(c) for c in rows @ q)))

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
            vectors_of(values[s:s + batch], encoder, self.vectors)
            keep.update(key_of(encoder.name, t) for t in values[s:s + batch])
            if progress is not None:
                progress(min(s + batch, len(values)), len(values))
        dropped = self.vectors.prune(keep)
        self.vectors.checkpoint()
        return len(texts), dropped


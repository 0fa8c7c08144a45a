"""What a scan of the tree proposes: one ``Candidate`` per finding, with the operations that would
carry it out. Scanning never writes; ``memgrove dream`` applies, asks the model about, or queues
each candidate, and the review queue keeps them by ``key``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

KINDS = ("duplicate", "near_duplicate", "superseded", "link", "archive")
ACTIONS = ("MERGE", "SUPERSEDE", "LINK", "ARCHIVE", "SKIP")


@dataclass(frozen=True)
class Candidate:
    """One finding. ``paths`` are the entries involved, the one kept or current first where that
    applies (a duplicate's kept entry, a superseded fact's newer entry); ``ops`` are curate
    operations (the same dicts ``Memory.curate`` takes) that carry out ``action``; ``evidence``
    says what made it a candidate (shared words, the values that differ, the dates, a similarity)."""

    kind: str
    paths: tuple[str, ...]
    action: str
    ops: tuple[dict[str, Any], ...]
    reason: str
    confidence: float
    evidence: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown finding kind {self.kind!r} (one of {', '.join(KINDS)})")
        if self.action not in ACTIONS:
            raise ValueError(f"unknown action {self.action!r} (one of {', '.join(ACTIONS)})")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence {self.confidence!r} is not between 0 and 1")

    @property
    def key(self) -> str:
        """The same finding found again has the same key, whatever its reason's wording or
        confidence: a rejected one is not proposed again."""
        ident = json.dumps([self.kind, self.action, sorted(self.paths)], ensure_ascii=False)
        return hashlib.sha256(ident.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "paths": list(self.paths), "action": self.action,
                "ops": [dict(op) for op in self.ops], "reason": self.reason,
                "confidence": round(self.confidence, 3), "evidence": self.evidence}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Candidate":
        return cls(kind=str(d["kind"]), paths=tuple(str(p) for p in d["paths"]), action=str(d["action"]),
                   ops=tuple(dict(op) for op in d.get("ops", ())), reason=str(d.get("reason", "")),
                   confidence=float(d.get("confidence", 0.0)), evidence=dict(d.get("evidence") or {}))

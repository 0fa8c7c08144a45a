"""When Whoosh merges segments: tiered, with a bound on what one commit rewrites.

Every incremental write is one commit, and a commit adds a segment. Whoosh's default policy
(``MERGE_SMALL``) sorts the segments by size and merges while their running total stays under
a Fibonacci bound of their rank; once enough segments pile up, that bound overtakes the largest
ones, so a commit now and then rewrites most of the index: on the scale benchmark's tree, built
by batches of 250, the 57th commit rewrites 11,270 documents and the 103rd (25,500 entries)
22,770 (at a few hundred documents a second, the 57 s first curation a server applied just after a
25,000-entry build). A build paid those rewrites at commits the policy chose, larger as it grew.

``pick_merges`` is a tiered (log-structured) policy instead: a segment's tier is the power of
``FANOUT`` its live documents reach; when ``FANOUT`` segments share a tier, they (and every
smaller one) are merged into the commit's new segment, one tier up. Each document is rewritten
about log_FANOUT(N / batch) times in all, and no merge makes a segment past ``MAX_MERGED_DOCS``:
larger segments are left alone (so one commit never rewrites more than that). Segments: at most
``FANOUT - 1`` per tier below that bound, and one per ``MAX_MERGED_DOCS / FANOUT`` documents or
more above it. Built in batches of 250, 100,000 entries end in 16 segments (19 at most on the
way), no commit rewrites more than 10,500 documents, and merging rewrites 177,000 in all
(``MERGE_SMALL``: 501,250). Only to purge deleted documents is
a large segment rewritten: one whose share of them passes ``PURGE_SHARE`` (a delete is never
resurrected: merging copies live documents only).
"""

from __future__ import annotations

import math
from typing import Sequence

FANOUT = 6               # segments of one tier merged together
MAX_MERGED_DOCS = 12_000  # no merge makes a segment larger than this (bounds one commit's work)
PURGE_SHARE = 0.3        # a segment with this share of deleted documents is rewritten


def pick_merges(segments: Sequence[tuple[int, int]]) -> set[int]:
    """Indexes of the segments to merge, given each one's ``(documents, deleted documents)``."""
    fanout, max_merged, purge_share = FANOUT, MAX_MERGED_DOCS, PURGE_SHARE
    live = [max(total - deleted, 0) for total, deleted in segments]
    picked = {i for i, (total, deleted) in enumerate(segments)
              if total and (deleted / total >= purge_share or live[i] == 0)}
    small = sorted((i for i in range(len(segments)) if live[i] < max_merged and i not in picked),
                   key=lambda i: live[i])
    by_tier: dict[int, list[int]] = {}
    for i in small:
        by_tier.setdefault(int(math.log(max(live[i], 1), fanout)), []).append(i)
    below: list[int] = []
    chosen: list[int] = []
    for t in sorted(by_tier):
        below += by_tier[t]
        if len(by_tier[t]) >= fanout:
            if sum(live[i] for i in below) > max_merged:
                break  # that merge would pass the bound: this tier and larger ones stay
            chosen = list(below)
    return picked | set(chosen)


def tiered_merge(writer, segments):
    """A Whoosh ``mergetype``: merge the segments ``pick_merges`` names into the writer's new
    segment; returns those left as they are."""
    from whoosh.reading import SegmentReader

    merge = pick_merges([(s.doc_count_all(), s.deleted_count()) for s in segments])
    unchanged = []
    for i, seg in enumerate(segments):
        if i in merge:
            reader = SegmentReader(writer.storage, writer.schema, seg)
            writer.add_reader(reader)
            reader.close()
        else:
            unchanged.append(seg)
    return unchanged

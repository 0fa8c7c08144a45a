"""The analyzer keeps apart word families the stemmer joins to an unrelated word: a question
about publications does not find the bus to work ("public transport")."""

from __future__ import annotations

from memgrove import Memory
from memgrove.tree.index.whoosh_engine import analyzer
from memgrove.tree.text.word_forms import STEMS


def _terms(text: str) -> list[str]:
    return [t.text for t in analyzer()(text)]


def test_stem_exceptions_keep_families_apart_and_their_forms_together() -> None:
    assert _terms("publications") == _terms("publication") != _terms("public")
    assert _terms("universities") == _terms("university") != _terms("universe")
    assert _terms("business") != _terms("busy")
    assert _terms("organisations") == _terms("organization") != _terms("organ")
    assert _terms("painted") == _terms("paint")          # every other word: Porter2 as before
    assert all(form == form.lower() and " " not in form for form in STEMS)


def test_a_search_for_publications_skips_public_transport(mem: Memory) -> None:
    # two conversations: no link between the two messages lends one's score to the other
    mem.ingest(conversation={"id": "c1", "messages": [
        {"id": "1", "speaker": "Ana", "text": "I take public transport to work every day.", "time": "2024-03-15"}]})
    mem.ingest(conversation={"id": "c2", "messages": [
        {"id": "1", "speaker": "Ana", "text": "My two publications came out in a journal.", "time": "2024-03-15"}]})
    hits = [h.path for h in mem.tree.search("which publications") if h.kind == "entry"]
    assert hits == ["conversations/c2/session_2024_03_15/1.md"]

"""benchmarks/answer_first.py and answer_first_beam.py: what "the first sentence the user reads" is, and how a
BEAM gold answer is matched (the definitions the issue-44 targets are measured by)."""

from __future__ import annotations

from helpers.benchmarks import load_benchmark

af = load_benchmark("answer_first")
beam = load_benchmark("answer_first_beam")


def test_the_first_sentence_keeps_the_attribution_that_closes_the_answer():
    shown = "I ran a charity race last Saturday. It was rewarding. (Melanie, 25 May 2023; last Saturday = 20 May 2023)"
    assert af.first_sentence(shown) == "I ran a charity race last Saturday. (Melanie, 25 May 2023; last Saturday = 20 May 2023)"
    assert af.first_sentence(shown, who=False) == "I ran a charity race last Saturday."
    # nested groups (a long message's part) and a closed fact's label are attribution too
    assert af.attribution("Port is 6543. Since May. (ops, 2 May 2026 (part 1 of 2)) (until 3 May)") == \
        ("Port is 6543. Since May.", "(ops, 2 May 2026 (part 1 of 2)) (until 3 May)")
    # "3.50" and "e.g. the" end no sentence; a table row is one sentence under its header
    assert af.first_sentence("The fee is 3.50 EUR per job. Paid weekly.") == "The fee is 3.50 EUR per job."
    assert af.first_sentence("| flag | default |\n|---|---|\n| retries | 2 |") == "| flag | default |\n|---|---|\n| retries | 2 |"
    assert af.first_sentence("(whole)") == "(whole)" and af.first_sentence("") == ""


def test_a_miss_is_not_found_or_found_not_picked():
    def rec(first, top3, reachable, chosen=False):
        return {"hit": {"first": first, "top3": top3, "reachable": reachable}, "evidence_chosen": chosen}
    assert af.miss_kind(rec(True, False, False)) == "hit"
    assert af.miss_kind(rec(False, True, True)) == "in top 3, not picked"
    assert af.miss_kind(rec(False, False, True)) == "in entries 4–5, not picked"
    assert af.miss_kind(rec(False, False, False)).startswith("not found: no evidence")
    assert af.miss_kind(rec(False, False, False, True)).startswith("not found: an evidence message chosen")
    assert af.every_word("in 2022", "(Deborah, 22 February 2023; last year = 2022)")


def test_beam_values_are_the_gold_values_that_stand_in_the_evidence():
    assert beam.values_of("Around 250ms due to caching") == [["250ms", "250"]]
    assert beam.values_of("April 22, 2024 at 11 AM") == [["april 22"], ["11"]]
    assert beam.values_of("Three days a week") == [["three"]]
    # "250ms" written "250 ms" in the message: its number; a value the evidence lacks does not count
    assert beam.key_values("Around 250ms, 2 days later", ["now averaging around 250 ms"]) == ["250"]
    assert beam.key_values("1,200 calls per day", ["quota adjusted to 1,200 calls per day"]) == ["1200"]


def test_beam_current_and_old_messages():
    texts = {str(i): "x" for i in range(200)}
    assert beam.current_and_old("knowledge_update", {"original_info": [86], "updated_info": [114]}, texts) == \
        (["114"], ["86"])
    # BEAM's first_statement is not always the earlier: the later message is the current one
    assert beam.current_and_old("contradiction_resolution", {"first_statement": [58], "second_statement": [24]},
                                texts) == (["58"], ["24"])
    assert beam.current_and_old("contradiction_resolution", {"first_statement": [66], "second_statement": [66]},
                                texts) == (["66"], [])
    assert beam.current_and_old("temporal_reasoning", {"first_event": [2], "second_event": [0]}, texts) == \
        (["2", "0"], [])

"""The current value first, in an answer without a model (issue 44).

Of statements (sentences, clauses) of the chosen entries that give one subject different values,
a question about now is answered by the newest, one about the past by the value that held then,
on any memory, whether or not ``memgrove dream`` recorded a supersession:

- ``when``: what a question asks of time (now, the past, a time it names) and when an entry's
  statements were made;
- ``statements``: the statements, which of them are about one subject with a value changed, and
  the plan an answer is picked by (what is left out, which entry leads);
- ``recorded``: what replaced a value, as an answer quotes it ("(until 2 May 2026; since then:
  6543)"), from a closed entry or from what ``dream`` recorded on an open one.

Plain functions over texts and times; ``graphs/tiers.py`` and ``graphs/evidence.py`` call them.
"""

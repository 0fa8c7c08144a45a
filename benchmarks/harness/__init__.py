"""The benchmarks' one harness: what every benchmark shares, so that a benchmark script holds only what is
particular to its dataset or its question.

- ``datasets``: loaders of LoCoMo, BEAM and LongMemEval, each into the same conversation shape;
- ``retrievers``: the systems compared (memgrove in its variants, flat BM25 baselines) behind one interface,
  ``retrieve(question) -> Retrieved``;
- ``metrics``: evidence recall at k and at a word budget, answer in context (one rule for every system);
- ``machine``: the machine line every report opens with (date, seed, cores, versions, commit);
- ``report``: writing a report (JSON + markdown) and the number formats of its tables;
- ``stats``, ``resources``, ``workers``: percentiles, a profiler, RSS and disk, one size per child process;
- ``synthetic`` and ``tier_runs``: the seeded corpus and questions of the scale and tier benchmarks;
- ``plots``: the figures (scale curve, recall against word budget, tier shares);
- ``paired``: paired per-question differences between two runs of one benchmark.

Scripts run as ``python benchmarks/<name>.py`` put ``benchmarks/`` on ``sys.path`` and import ``harness.*``.
"""

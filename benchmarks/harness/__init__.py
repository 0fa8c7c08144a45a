"""The benchmarks' one harness: what every benchmark shares, so that a benchmark script holds only what is
particular to its dataset or its question.

- ``datasets``: loaders of LoCoMo, BEAM and LongMemEval, each into the same conversation shape;
- ``retrievers``: the systems compared (memgrove in its variants, flat BM25 baselines) behind one interface,
  a callable ``retriever(question) -> Retrieved``, closed after its conversation;
- ``metrics``: evidence recall at k and at a word budget, answer in context (one rule for every system);
- ``machine``: the machine line every report opens with (date, seed, cores, versions, commit);
- ``report`` and ``cli``: writing a report (JSON + markdown), the number formats of its tables, and the
  command-line options and start and end of a conversational benchmark's run;
- ``tokens``: counting tokens as the reports do (tiktoken when it loads, else characters / 4);
- ``stats``, ``resources``, ``workers``: percentiles, timed calls, a profiler, RSS and disk, one size per child
  process (with the options and report head of the sized benchmarks);
- ``served``: a started ``memgrove serve`` for the server benchmarks (serve_load, replicas, remote, store);
- ``synthetic`` and ``tier_runs``: the seeded corpus, its questions and tree builds, and the tier rounds of the
  scale and tier benchmarks;
- ``plots``: the figures (scale curve, recall against word budget, tier shares);
- ``paired``: paired per-question differences between two runs of one benchmark;
- ``shape``: the benchmarks' own shape (module sizes, import cycles, share of the code).

Scripts run as ``python benchmarks/<name>.py`` have ``benchmarks/`` on ``sys.path`` (Python puts a script's
folder there; the tests' loader does the same) and import ``harness.*``.
"""

"""The standing reliability suite (issue 13): ``make reliability`` or ``python -m reliability``.

Sections, one module each: ``concurrency`` (writers and readers in parallel),
``crashes`` (seeded SIGKILLs), ``faults`` (disk full, read-only, damaged derived
files), ``hostile`` (a generated corpus of bad inputs through the API, the CLI
and the tools), ``fuzz`` (hypothesis). ``report`` writes
``reliability/report.{md,json}``; ``runner`` holds the command line.
"""

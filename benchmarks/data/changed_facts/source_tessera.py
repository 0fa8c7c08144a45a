"""Conversation "tessera-maintainers": maintainers of an open-source library, January to July 2026 (written for this set)."""

ID = "tessera-maintainers"
TITLE = "tessera maintainers"
SPLIT = "dev"

MESSAGES = [
    ("ts-01", "2026-01-09T16:00", "Kai",
     "Happy new year, maintainers. Where we stand: the latest release is 2.3.1, shipped on December 18, and "
     "the minimum supported Python is 3.8. The CI timeout is 30 minutes per job, which the Windows jobs "
     "barely make. I still maintain the CLI module."),
    ("ts-02", "2026-01-09T16:25", "Noor",
     "Thanks Kai. Our maintainers' sync stays on Thursdays at 16:00 UTC, same video link. Felix is the "
     "maintainer of the parser module and I keep the docs, which are hosted on Read the Docs. We have 86 "
     "contributors so far according to the graph."),
    ("ts-03", "2026-01-21T10:40", "Felix",
     "The parser rewrite is halfway. I'd like to drop Python 3.8 soon, the new typing features would save "
     "us a lot of code. Benchmarks show the new parser is 30% faster on large files. Sister project "
     "tessera-cli released 1.2.0 yesterday."),
    ("ts-04", "2026-02-05T17:10", "Kai",
     "We agreed on the call, so it's official: the minimum supported Python is 3.10 starting with the next "
     "minor release. I'll write the deprecation notice. The Windows jobs keep timing out, so I'm looking "
     "at caching."),
    ("ts-05", "2026-02-19T09:30", "Noor",
     "Released 2.4.0 this morning with the new parser behind a flag and the Python 3.10 requirement. "
     "Release notes are on the blog. Thanks to the 14 first-time contributors in this cycle."),
    ("ts-06", "2026-02-26T11:05", "Kai",
     "Caching helped but wasn't enough, so the CI timeout is 45 minutes per job as of today. If a job "
     "needs more than that, it's a bug in the test, not the limit. Linux jobs finish in 12 minutes."),
    ("ts-07", "2026-03-12T15:45", "Felix",
     "Personal news: I'm starting a new job next month and won't have time for the parser, so Noor is "
     "taking over as maintainer of the parser module. I'll stay around for reviews. Kai keeps the CLI "
     "module."),
    ("ts-08", "2026-03-26T16:05", "Noor",
     "Two things from the sync. The sync moves to Tuesdays at 15:00 UTC because of Felix's new job, same "
     "link. And the docs move to GitHub Pages, Read the Docs builds keep failing on the new theme. The "
     "redirects are in place."),
    ("ts-09", "2026-04-09T10:20", "Kai",
     "Patch release 2.4.2 is out with the fixes for the two parser regressions; 2.4.1 was yanked because of "
     "a packaging mistake. The latest release is the one to use. tessera-cli is still on 1.2.0."),
    ("ts-10", "2026-04-30T13:30", "Noor",
     "Contributor graph says 112 contributors so far, the hackathon brought a lot of them. The parser docs "
     "are rewritten. I'm planning 2.5.0 for June."),
    ("ts-11", "2026-05-14T09:50", "Felix",
     "Still lurking. The CI timeout of 45 minutes looks generous now, most jobs end in 20. Noor, the parser "
     "module looks great in your hands. The Tuesday sync time works for me."),
    ("ts-12", "2026-06-11T18:00", "Kai",
     "2.5.0 slipped to July because of the plugin API review. Until then, please point users at 2.4.2. The "
     "minimum Python stays 3.10 for 2.5.0 as well."),
]

FACTS = [
    {"id": "ts-latest-release", "subject": "latest release",
     "now": "What is the latest release of tessera?",
     "before": "What was the latest release in January?",
     "before_value": 0,
     "values": [("2.3.1", ["ts-01"]), ("2.4.0", ["ts-05"]), ("2.4.2", ["ts-09", "ts-12"])]},
    {"id": "ts-min-python", "subject": "minimum supported Python",
     "now": "What is the minimum supported Python version?",
     "before": "What was the minimum supported Python before the change?",
     "values": [("3.8", ["ts-01"]), ("3.10", ["ts-04", "ts-05", "ts-12"])]},
    {"id": "ts-ci-timeout", "subject": "CI timeout per job",
     "now": "What is the CI timeout per job?",
     "before": "What was the CI timeout per job originally?",
     "values": [("30 minutes", ["ts-01"]), ("45 minutes", ["ts-06", "ts-11"])]},
    {"id": "ts-contributors", "subject": "contributors so far",
     "now": "How many contributors does tessera have so far?",
     "before": "How many contributors did tessera have in January?",
     "values": [("86", ["ts-02"]), ("112", ["ts-10"])]},
    {"id": "ts-sync", "subject": "maintainers' sync day",
     "now": "When is the maintainers' sync?",
     "before": "When was the maintainers' sync before Felix's new job?",
     "values": [("Thursday", ["ts-02"]), ("Tuesday", ["ts-08", "ts-11"])]},
    {"id": "ts-docs-hosting", "subject": "docs hosting",
     "now": "Where are the docs hosted?",
     "before": "Where were the docs hosted originally?",
     "values": [("Read the Docs", ["ts-02"]), ("GitHub Pages", ["ts-08"])]},
    {"id": "ts-parser-maintainer", "subject": "parser module maintainer",
     "now": "Who maintains the parser module?",
     "before": "Who maintained the parser module before Noor?",
     "values": [("Felix", ["ts-02"]), ("Noor", ["ts-07", "ts-11"])]},
]

STABLE = ["CLI module maintainer Kai (ts-01, ts-07)", "tessera-cli release 1.2.0 (ts-03, ts-09)"]

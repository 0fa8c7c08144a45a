"""Imported by the benchmarks of the engines, caches, server, hygiene and curation cost: they rank by
words alone, in their process and the processes they start (``MEMGROVE_SEMANTIC=off`` keeps
``semantic_weight``'s "auto" default at 0). Their trees are synthetic words or measure a cost, where
meaning finds nothing real and its model's time would hide what they measure; the cost of meaning is
``embed_ahead.py``'s and its gain the retrieval benchmarks' (LoCoMo, BEAM, LongMemEval), which run the
product's default. A script asks for meaning by naming a weight (``cold_query.py --semantic``)."""

import os

from memgrove.tree.settings import SEMANTIC_ENV

os.environ[SEMANTIC_ENV] = "off"

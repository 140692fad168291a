# Every target sets up .venv from nothing (only python3 needed) and reinstalls when
# pyproject.toml changes.
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp
TICKET  := Customer says order \#12345 was charged twice. What happened and what can we do?

.PHONY: setup demo test test-fast check lint typecheck pytest bench eval studio notebook reset clean distclean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) ## create .venv and install Muster with its dev extras

demo: $(STAMP) ## run the demo ticket against the real servers, policy server broken
	MUSTER_POLICY_MODE=broken $(VENV)/bin/muster run "$(TICKET)"; \
	status=$$?; [ $$status -eq 0 ] || [ $$status -eq 3 ] || [ $$status -eq 5 ]

lint: $(STAMP)
	$(VENV)/bin/ruff check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Four pytest-xdist workers on this 2-core machine, not one per core: about half the suite's
# wall time is real-time waiting (slow offline models, servers starting, a worker killed and
# its job retried), which more workers overlap. Quiet machine, 2026-12-01: 3 min 40 s with
# -n 4 (415 CPU-s in all) against 5-10 min with -n auto.
pytest: $(STAMP) ## the whole suite, spread over four workers (plain `pytest` runs it serially)
	sh scripts/ensure_chromium.sh  # the timeline's browser test; installs only if missing
	$(VENV)/bin/pytest -n 4

check: lint typecheck ## ruff and mypy

test: lint typecheck pytest ## ruff, mypy and the whole test suite

test-fast: $(STAMP) ## fast unit tier only: no real MCP servers, no slow tests (make test runs all)
	$(VENV)/bin/pytest -m "not slow and not integration"

eval: $(STAMP) ## score the readers on every split of both packs' corpora (the test splits: scores only), then whole threads (--lifecycle)
	for split in train dev test; do $(VENV)/bin/muster eval --split $$split --no-misses || exit 1; done
	for set in dev_b dev_c dev_d dev_e dev_f dev_g dev_h; do \
		$(VENV)/bin/muster eval domains/support/$$set/tickets.jsonl --no-misses || exit 1; done
	for split in train dev test; do \
		$(VENV)/bin/muster eval --domain incidents --split $$split --no-misses || exit 1; done
	for set in dev_b dev_c dev_d dev_e dev_f; do \
		$(VENV)/bin/muster eval --domain incidents domains/incidents/$$set/pages.jsonl --no-misses || exit 1; done
	$(VENV)/bin/muster eval --lifecycle --check  # whole threads: final answer and data
	$(VENV)/bin/muster eval --lifecycle --domain incidents --check

bench: $(STAMP) ## benchmarks (never run as tests); results go in docs/benchmarks.md
	$(PY) bench/hub_latency.py
	$(PY) bench/fanout.py
	$(PY) bench/batch.py

studio: $(STAMP) ## LangGraph Studio on a free local port (langgraph dev, in-memory server)
	port=$$($(PY) -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	echo "Studio API on http://127.0.0.1:$$port"; \
	$(VENV)/bin/langgraph dev --no-browser --host 127.0.0.1 --port $$port --no-reload

NOTEBOOK_STAMP := $(VENV)/.notebook-stamp

$(NOTEBOOK_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,notebook]'
	touch $(NOTEBOOK_STAMP)

notebook: $(NOTEBOOK_STAMP) ## open examples/quickstart.ipynb in Jupyter (installs the front end once); its python3 kernel is .venv
	$(VENV)/bin/jupyter notebook examples/quickstart.ipynb

reset: ## restore the demo data (orders re-seeded on the next start; threads, traces and batch answers gone); keeps .venv
	rm -rf var checkpoints/*.sqlite* checkpoints/*.answers.jsonl examples/*.answers.jsonl
	@echo "demo data reset: order 12345 is unrefunded again on the next run"

clean: reset ## reset, plus caches and build output; keeps .venv
	rm -rf .mypy_cache .ruff_cache .pytest_cache build dist

distclean: clean ## everything, .venv included (the next make target reinstalls)
	rm -rf $(VENV)

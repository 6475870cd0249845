# The README's commands. `make run` and `make test` install what they need first.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
# `make run HOST=0.0.0.0 PORT=8001` serves elsewhere than the default 127.0.0.1:8000.
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test lint format bench clean

# Installed by uv (pinned), which fetches and unpacks in parallel: on a clean clone 27-32 s against
# pip's 128-197 s, the same 187 packages at the same versions (docs/decisions/0028-test-suite-cost.md).
# uv reads no pip configuration: .ci/uv_pip_args.py hands it the indexes, wheel folders and
# constraints pip is configured with.
$(BIN)/.installed: pyproject.toml hatch_build.py .ci/uv_pip_args.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check uv==0.13.8
	eval "$(BIN)/uv pip install --quiet --python $(BIN)/python $$($(BIN)/python .ci/uv_pip_args.py) -e '.[dev]'"
	touch $@

install: $(BIN)/.installed

run: install  ## install and serve on the embedded defaults (SQLite file, in-process worker)
	$(BIN)/atrium serve --host $(HOST) --port $(PORT)

test: install  ## the whole test suite
	$(BIN)/pytest

lint: install  ## ruff, mypy (strict on src/), and the generated sync client is not stale
	$(BIN)/ruff check src tests bench examples hatch_build.py
	$(BIN)/ruff format --check src tests bench examples hatch_build.py
	$(BIN)/mypy
	$(BIN)/python -m atrium.client._unasync --check

bench: install  ## every benchmark (long: loads 1,000,000 rows; figures in docs/benchmarks.md)
	$(BIN)/python bench/domains_bench.py
	$(BIN)/python bench/analytics_bench.py
	$(BIN)/python bench/agent_loop_bench.py
	$(BIN)/python bench/runs_bench.py
	$(BIN)/python bench/streaming_bench.py
	$(BIN)/python bench/api_bench.py
	$(BIN)/python bench/worker_bench.py
	$(BIN)/python bench/scaleout_bench.py
	$(BIN)/python bench/startup_bench.py

format: install  ## ruff fixes and formats; regenerates the sync client and the generated guides (configuration, API reference)
	$(BIN)/ruff check --fix src tests bench examples hatch_build.py
	$(BIN)/ruff format src tests bench examples hatch_build.py
	$(BIN)/python -m atrium.client._unasync
	$(BIN)/python -m tests.docs.configuration
	$(BIN)/python -m tests.docs.reference

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

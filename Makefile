# Two commands for a fresh machine: `make app` starts the app, `make test` runs every check.
# Both create .venv and install the pinned requirements on first use (and again when they change).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: app test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.app-deps: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev-deps: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@ $(VENV)/.app-deps

app: $(VENV)/.app-deps
	@$(BIN)/python -m memeval_core sync --if-empty || echo "memeval: some public results could not be downloaded (offline?); the app starts with what is there. Run \`python -m memeval_core sync\` again later, or point MEMEVAL_RESULTS at a local copy."
	$(BIN)/streamlit run app.py --server.port $(PORT)

lint: $(VENV)/.dev-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

# `make bench` runs every benchmark (several minutes); `make bench QUICK=1` only checks that they run.
bench: $(VENV)/.dev-deps
	$(BIN)/python -m bench $(if $(QUICK),--quick)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

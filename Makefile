# Two entry points: `make run` (the app with a demo user) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export XDG_RUNTIME_DIR ?= /tmp

.PHONY: run test check install browser

run: $(VENV)/.installed
	DEBUG=true $(BIN)/python manage.py migrate --noinput
	DEBUG=true $(BIN)/python manage.py seed_demo
	DEBUG=true $(BIN)/python manage.py serve

test: $(VENV)/.installed browser
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest

# Lint and type checks, then the tests (which start with the import contracts).
check: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .
	$(MAKE) test

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

browser:
	scripts/ensure-chromium.sh $(BIN)/python

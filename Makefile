# Two entry points: `make run` (the app with a demo user) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export XDG_RUNTIME_DIR ?= /tmp

.PHONY: run test check install browser

# `make run PORT=8101` (or HOST=0.0.0.0) serves elsewhere; links in emails follow unless SITE_URL is set.
HOST ?= 127.0.0.1
PORT ?= 8000

run: $(VENV)/.installed
	DEBUG=true $(BIN)/python manage.py migrate --noinput
	DEBUG=true $(BIN)/python manage.py seed_demo
	DEBUG=true SITE_URL="$${SITE_URL:-http://$(HOST):$(PORT)}" $(BIN)/python manage.py serve $(HOST):$(PORT)

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

# Two entry points for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Touched after a successful install: `make run` reinstalls only when pyproject.toml changed.
INSTALLED := $(VENV)/.installed

.PHONY: install run demo doctor test test-fast lint docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(INSTALLED): pyproject.toml clients/python/pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]' -e clients/python
	$(BIN)/agentbank models install
	touch $@

install: $(INSTALLED)

# Set up and serve the API on the embedded defaults (make run PORT=8080 HOST=0.0.0.0);
# an empty bank is seeded with the demo interviews.
run: install
	$(BIN)/agentbank serve --host $(HOST) --port $(PORT)

# Set up and build a small bank in the terminal, surveying each agent as it is built.
demo: install
	$(BIN)/agentbank demo

# Set up, create the schema and check every component.
doctor: install
	$(BIN)/agentbank db upgrade
	$(BIN)/agentbank doctor

# Set up and run the whole suite: the fast tests on two workers (a database each), then the slow
# real-model, browser and process tests one at a time, since two real models at once on a small
# machine would only measure each other. A worker that runs out of tests takes some of the other's
# (worksteal): with plain load balancing one worker ran the last minutes of command-line tests alone.
test: install
	$(BIN)/python -m pytest -m "not slow" -n 2 --dist worksteal --durations=20
	$(BIN)/python -m pytest -m slow --durations=20

test-fast: install
	$(BIN)/python -m pytest -m "not slow" -n 2 --dist worksteal --durations=20

# Build the documentation site into site/ (open site/index.html; it reads offline), strict: a page left
# out of the navigation, a broken link or anchor, or a reference the code cannot fill fails the build.
docs: install
	$(BIN)/mkdocs build --strict

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) build site *.egg-info

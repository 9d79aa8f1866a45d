# Two commands on a fresh machine: `make lab` (JupyterLab rooted at the project, 00 open) and `make test`.
# Both create .venv and install ragkit the first time; later runs skip straight to the job.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of torch (the default Linux wheel on PyPI bundles CUDA, several GB).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
STAMP := $(VENV)/.installed
# Jupyter refuses to start as root unless told to (containers, this kind of machine)
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test bench models clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-deps torch==2.13.0 --extra-index-url $(TORCH_INDEX)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

lab: $(STAMP)
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	$(BIN)/jupyter lab $(LAB_FLAGS) --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/notebooks/00-start-here.ipynb

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

models: $(STAMP)
	$(BIN)/python -m ragkit models

clean:
	rm -rf $(VENV) .ragkit-cache

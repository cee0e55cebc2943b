# The two commands a newcomer needs: `make demo` (install, then run the embedded default sweep)
# and `make test` (install, start what the tests need, run them). .ci/run calls `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test docker-up image

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	# torch pinned to the CPU build on local disk; a bare `torch` would pull a multi-GB CUDA build.
	# --no-compile: bytecode is written as modules are first imported, for the few thousand of the
	# packages' files that are ever imported, instead of all of them at install.
	bash scripts/step.sh torch $(PY) -m pip install -q --no-compile torch==2.13.0
	bash scripts/step.sh install $(PY) -m pip install -q --no-compile -e '.[all,dev,web,ray]'
	touch $(STAMP)

install: $(STAMP)

docker-up: install
	bash scripts/docker_up.sh

image: docker-up
	$(VENV)/bin/kernelarena sandbox build-image

demo: install
	-bash scripts/docker_up.sh && $(VENV)/bin/kernelarena sandbox build-image
	$(VENV)/bin/kernelarena sweep examples/demo.toml

test:
	bash scripts/test_up.sh
	bash scripts/ci_checks.sh

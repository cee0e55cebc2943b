# The two commands a newcomer needs: `make demo` (install, then run the embedded default sweep)
# and `make test` (install, start what the tests need, run them). .ci/run calls `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Where pip puts packages (computed when a recipe uses it, after the venv exists).
SITE = $$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')

.PHONY: install demo test docker-up image

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	# torch pinned to the CPU build on local disk; a bare `torch` would pull a multi-GB CUDA build.
	# --no-compile: pip writes bytecode one file at a time; the step below writes it on every core.
	bash scripts/step.sh torch $(PY) -m pip install -q --no-compile torch==2.13.0
	# pip installs on one core: torch's bytecode is written on the other meanwhile.
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m compileall -q -q $(SITE)/torch >/dev/null 2>&1 & \
		bash scripts/step.sh install $(PY) -m pip install -q --no-compile -e '.[all,dev,web,ray]'; \
		rc=$$?; wait; exit $$rc
	# The bytecode of every installed module and of the repo, written once here with both cores.
	# Where PYTHONDONTWRITEBYTECODE is set (this 2-core box, CI) no import writes it, so each of the
	# test run's hundreds of processes compiled torch again: `import torch` took 4.0 s of CPU
	# without it and 1.6 s with it, a scoring 12.4 and 5.2. A few files in site-packages are
	# syntax for newer Pythons that nothing imports here, so compileall's status is not the step's.
	bash scripts/step.sh bytecode env -u PYTHONDONTWRITEBYTECODE $(PY) -m compileall -q -q -j0 \
		$(SITE) kernelarena orchestrator harnesses sandbox scorer suites tests benchmarks scripts || true
	touch $(STAMP)

install: $(STAMP)

docker-up: install
	bash scripts/docker_up.sh

image: docker-up
	$(VENV)/bin/kernelarena sandbox build-image

demo:
	bash scripts/disk_check.sh 4 0
	$(MAKE) --no-print-directory install
	-bash scripts/docker_up.sh && bash scripts/disk_check.sh 0 7 && $(VENV)/bin/kernelarena sandbox build-image
	$(VENV)/bin/kernelarena sweep examples/demo.toml

test:
	bash scripts/test_up.sh
	bash scripts/ci_checks.sh

#!/usr/bin/env bash
# Downloads, into the ignored .whl/, the wheels a lent GPU machine lacks (it reaches no registry;
# scripts/gpu_check.sh installs them there): its image has torch, triton, nvcc, typer, rich and
# pytest, on CPython 3.12. Usage: bash scripts/device_wheels.sh, then carry ".whl" with the call.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
# pydantic..docker: the scorer and orchestrator; pyseccomp: the wall's filter; einops: the real
# corpus's KDA reference; pytest-asyncio: the GPU-marked async sandbox tests.
for p in pydantic pydantic-core annotated-types typing-inspection typing-extensions structlog tenacity docker \
         pyseccomp einops pytest-asyncio; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl "$p"
done
ls .whl

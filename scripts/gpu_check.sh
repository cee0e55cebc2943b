#!/usr/bin/env bash
# One call on a lent GPU machine: install the carried wheels (no network there), then run every
# GPU check and benchmark (scripts/gpu_check.py). Usage: bash scripts/gpu_check.sh [--parts ...]
# The run's record, $OUT/gpu_latest.json, names KA_COMMIT=<hash> where the device's copy has no .git.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/gpu_check}"
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "wheel install failed"; exit 1; }
  export PYTHONPATH="/tmp/site:$PWD"
else
  export PYTHONPATH="$PWD"
fi
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{ nvidia-smi; python3 -c 'import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__, torch.cuda.get_device_name(0))'; } >"$OUT/env.txt" 2>&1
head -20 "$OUT/env.txt" | grep -E "H200|Driver|^2\." || true
python3 scripts/gpu_check.py --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu_check.log"
# Eight files come back from a device call: everything, logs and per-part JSON, in one archive, and
# beside it only what is read first (an evening H100 run had fourteen, and the archive, past the
# eighth by name, stayed behind with the one traceback it needed).
tar -czf /tmp/gpu_check_results.tar.gz -C "$OUT" --exclude='*.pt' --exclude='*.so' . \
  && find "$OUT" -mindepth 1 -maxdepth 1 ! -name gpu_check.log ! -name summary.txt ! -name gpu_latest.json \
       ! -name env.txt -exec rm -rf {} + \
  && mv /tmp/gpu_check_results.tar.gz "$OUT/results.tar.gz"

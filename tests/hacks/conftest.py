"""GPU-marked tests in this folder skip cleanly where torch sees no CUDA device."""

from __future__ import annotations

import os

import pytest
import torch

from scorer.poison import perturb_environment

# Workers inherit os.environ; glibc's MALLOC_PERTURB_ makes CPU poisoning deterministic (every
# malloc'd block comes back filled, whichever block it is). scorer/workerproc.py is meant to set
# this in child_environment itself; until it does, the corpus sets it here so CPU partial-write
# attacks are judged the way production will judge them.
for _key, _value in perturb_environment().items():
    os.environ.setdefault(_key, _value)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords and str(item.fspath).startswith(str(config.rootpath / "tests" / "hacks")):
            item.add_marker(skip)

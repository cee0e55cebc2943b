"""CUDA IPC descriptors from the kernel's process are validated before anything opens them
(scorer/workers/device_share.py); the opening itself is tested on a GPU (tests/scorer/test_gpu.py)."""

from __future__ import annotations

import pytest
import torch

from scorer.workers.device_share import ShareError, open_shared

CUDA0 = torch.device("cuda", 0)


def _desc(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {"shape": [4, 4], "stride": [4, 1], "offset": 0, "dtype": "torch.float32", "device": 0,
                               "handle": "00" * 64, "size": 64, "offset_bytes": 0,
                               "rc_handle": b"/torch_123_456_0".hex(), "rc_offset": 3, "event": ""}
    base.update(changes)
    return base


@pytest.mark.parametrize("changes, why", [
    ({"shape": [1 << 20, 4]}, "views"),  # more than the storage holds
    ({"offset": 60}, "views"),
    ({"stride": [4]}, "fit together"),
    ({"shape": [-1, 4]}, "non-negative"),
    ({"dtype": "torch.qint8"}, "dtype"),
    ({"device": 1}, "device"),
    ({"rc_handle": b"/dev/shm/other".hex()}, "reference counter"),
    ({"rc_handle": b"/torch_1_2_3/../../x".hex()}, "reference counter"),
    ({"rc_offset": 10000}, "reference counter"),
    ({"rc_handle": "zz"}, "hex"),
])
def test_forged_descriptors_are_refused_before_opening(changes: dict[str, object], why: str) -> None:
    with pytest.raises(ShareError, match=why):
        open_shared([_desc(**changes)], CUDA0)


def test_not_a_list_or_object_is_refused() -> None:
    with pytest.raises(ShareError):
        open_shared({"0": _desc()}, CUDA0)
    with pytest.raises(ShareError):
        open_shared(["x"], CUDA0)


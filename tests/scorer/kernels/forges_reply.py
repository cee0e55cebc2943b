"""Writes a well-framed reply of the protocol's version, but ill-formed, into the scorer's channel,
then hangs."""
import json
import os
import struct
import sys
import time

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out_fd = int(sys.argv[sys.argv.index("--out-fd") + 1])
        header = json.dumps({"ok": True, "calls": 42, "findings": "none", "v": 3}).encode()
        os.write(out_fd, struct.pack(">I", len(header)) + header)
        time.sleep(3600)

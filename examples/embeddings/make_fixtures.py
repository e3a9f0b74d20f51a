#!/usr/bin/python3
"""Writes the embeddings project's fixed inputs, once: data/inputs.csv and weights.pt.

  /usr/bin/python3 make_fixtures.py

data/inputs.csv holds 32 identified inputs (doc-000 ... doc-031), 64 features each, from a
fixed NumPy seed. weights.pt is the encoder's state_dict at torch.manual_seed(1234), in the
layout train.py writes (encoder.* and head.*), so embed.py reads either. Both are committed:
a run of this script on another machine may differ in the last bits, which is exactly what a
reference's hashes are there to catch.
"""
import os

import numpy as np
import torch

from embed import FEATURES, Encoder

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((32, FEATURES)).astype(np.float32)
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
    with open(os.path.join(HERE, "data", "inputs.csv"), "w") as f:
        f.write("id," + ",".join(f"f{i}" for i in range(FEATURES)) + "\n")
        for i, row in enumerate(x):
            f.write(f"doc-{i:03d}," + ",".join(f"{v:.6f}" for v in row) + "\n")
    torch.manual_seed(1234)
    torch.save(Encoder().state_dict(), os.path.join(HERE, "weights.pt"))


if __name__ == "__main__":
    main()

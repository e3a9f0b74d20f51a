#!/usr/bin/python3
"""The embeddings project's entry point: identified inputs -> float32 (N, 16) embeddings.

  python embed.py --inputs data/inputs.csv --weights weights.pt --out out

reads a CSV of `id,f0..f63` rows, encodes each row with the encoder of a state_dict (as
make_fixtures.py or train.py writes it) and writes OUT/embeddings.npy (float32, one row per
input, in input order) and OUT/ids.txt (one id a line, the same order). CPU, one thread,
deterministic algorithms, so that a replay on the same machine gives the same bits.

Debian's python3-torch (torch 1.13) and python3-numpy; no network.
"""
import argparse
import csv
import os

import numpy as np
import torch

FEATURES, HIDDEN, DIM, CLASSES = 64, 32, 16, 8


class Encoder(torch.nn.Module):
    """64 features -> 16-dim embedding, plus the classification head train.py trains it with."""

    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(
            torch.nn.Linear(FEATURES, HIDDEN), torch.nn.Tanh(), torch.nn.Dropout(0.1), torch.nn.Linear(HIDDEN, DIM))
        self.head = torch.nn.Linear(DIM, CLASSES)

    def forward(self, x):
        return self.head(self.encoder(x))


def read_inputs(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    if header[0] != "id" or len(header) != FEATURES + 1:
        raise SystemExit(f"{path}: expected a header 'id,f0..f{FEATURES - 1}'")
    ids = [r[0] for r in rows]
    x = np.array([[float(v) for v in r[1:]] for r in rows], dtype=np.float32)
    return ids, torch.from_numpy(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", required=True, help="CSV of id,f0..f63")
    ap.add_argument("--weights", required=True, help="a state_dict with the encoder's parameters (.pt)")
    ap.add_argument("--out", required=True, help="folder for embeddings.npy and ids.txt")
    args = ap.parse_args()

    torch.manual_seed(1234)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    ids, x = read_inputs(args.inputs)
    model = Encoder()
    model.load_state_dict(torch.load(args.weights, map_location="cpu"))
    model.eval()
    with torch.no_grad():
        emb = model.encoder(x).numpy().astype(np.float32)
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "embeddings.npy"), emb)
    with open(os.path.join(args.out, "ids.txt"), "w") as f:
        f.write("\n".join(ids) + "\n")
    print(f"{len(ids)} embeddings of dimension {emb.shape[1]} written to {args.out}")


if __name__ == "__main__":
    main()

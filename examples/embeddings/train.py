#!/usr/bin/python3
"""Trains the embeddings project's encoder: 64 input features -> float32 16-dim embeddings.

A small training loop as projects write them, made resumable:

  train.py --steps N [--save-at K --checkpoint FILE] [--resume FILE] --out DIR

trains to global step N and writes the final weights to DIR/weights.pt (the model's
state_dict, as torch.save writes it). With --save-at K it writes a checkpoint after step K; with --resume it continues from one. A resumed
run ends with the same weights as a straight run, bit for bit on CPU, because the checkpoint
holds everything the trajectory depends on:

  model, optimizer (Adam moments), scheduler (StepLR) and step   -> parameters, LR
  torch_rng (dropout), numpy_rng (input noise), py_rng (masking) -> the random draws
  data_rng and epoch_perm (the shuffled order of the current epoch) -> the data order

`kernodeck resume check --cmd` checks exactly that (README, "resume check --cmd"):

  kernodeck resume check --steps 12 --at 5 --weights weights.pt -- /usr/bin/python3 train.py \
    --steps {steps} --save-at {save_at} --checkpoint {checkpoint} --resume {resume} --out {out}

Debian's python3-torch (torch 1.13) and python3-numpy; CPU only, no network.
"""
import argparse
import os
import random

import numpy as np
import torch

from embed import CLASSES, FEATURES, Encoder  # the model embed.py serves

SEED = 1234
SAMPLES, BATCH = 256, 32


def training_data():
    """A fixed synthetic corpus: features and the labels a hidden projection gives them."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
    y = (x @ rng.standard_normal((FEATURES, CLASSES)).astype(np.float32)).argmax(1)
    return torch.from_numpy(x), torch.from_numpy(y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, required=True, help="train until this global step")
    ap.add_argument("--save-at", type=int, default=0, help="write a checkpoint after this step (0: none)")
    ap.add_argument("--checkpoint", default="", help="the checkpoint file --save-at writes")
    ap.add_argument("--resume", default="", help="continue from this checkpoint (empty: start afresh)")
    ap.add_argument("--out", required=True, help="folder for weights.pt")
    args = ap.parse_args()

    # Seeds and determinism, as the reference records them.
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    x, y = training_data()
    model = Encoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
    data_rng = torch.Generator().manual_seed(SEED)
    batches = SAMPLES // BATCH
    step, perm = 0, None

    if args.resume:
        state = torch.load(args.resume)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step = state["step"]
        torch.set_rng_state(state["torch_rng"])
        np.random.set_state(state["numpy_rng"])
        random.setstate(state["py_rng"])
        data_rng.set_state(state["data_rng"])
        perm = state["epoch_perm"]
        print(f"resumed at step {step} from {args.resume}")

    model.train()
    while step < args.steps:
        if step % batches == 0:  # a new epoch: a new shuffled order
            perm = torch.randperm(SAMPLES, generator=data_rng)
        idx = perm[(step % batches) * BATCH:(step % batches + 1) * BATCH]
        inputs = x[idx] + torch.from_numpy(np.random.normal(0, 0.05, (BATCH, FEATURES)).astype(np.float32))
        inputs[:, random.sample(range(FEATURES), 4)] = 0  # feature masking
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), y[idx])
        loss.backward()
        optimizer.step()
        scheduler.step()
        step += 1
        print(f"step {step} loss {loss.item():.6f} lr {scheduler.get_last_lr()[0]:.6f}")
        if step == args.save_at and args.checkpoint:
            torch.save({
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "step": step,
                "torch_rng": torch.get_rng_state(),
                "numpy_rng": np.random.get_state(),
                "py_rng": random.getstate(),
                "data_rng": data_rng.get_state(),
                "epoch_perm": perm,
            }, args.checkpoint)
            print(f"checkpoint at step {step}: {args.checkpoint}")

    os.makedirs(args.out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out, "weights.pt"))


if __name__ == "__main__":
    main()

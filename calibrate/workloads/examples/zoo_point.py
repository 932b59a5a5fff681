"""A zoo point (MODEL:BATCH:IMAGE) trained forever with colo's own worker recipe (train.py's
training_step: synthetic data, SGD, fp32), as a plain command, to co-run beside users' programs."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import train  # noqa: E402


def main():
    model, batch, image = sys.argv[1].split(":")
    torch.backends.cudnn.benchmark = True
    step = train.training_step(torch, model, int(batch), int(image))
    while True:
        step()


if __name__ == "__main__":
    main()

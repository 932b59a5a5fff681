"""BERT-base masked language modelling in a plain loop: autocast bf16, foreach AdamW, masking on the GPU."""
import argparse

import torch
from transformers import BertConfig, BertForMaskedLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--steps", type=int, default=100000)
    args = parser.parse_args()
    config = BertConfig()
    model = BertForMaskedLM(config).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    mask_id = 103
    for step in range(args.steps):
        ids = torch.randint(1000, config.vocab_size, (args.batch, args.seq), device="cuda")
        labels = ids.clone()
        masked = torch.rand(ids.shape, device="cuda") < 0.15
        labels[~masked] = -100
        inputs = ids.masked_fill(masked, mask_id)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(inputs, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 200 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()

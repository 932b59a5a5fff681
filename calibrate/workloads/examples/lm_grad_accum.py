"""A Llama-style 250M LM from a LlamaConfig: micro-batches of 4 from a DataLoader, gradient
accumulation 4 (16 sequences per optimizer step), bf16 autocast, fused AdamW, gradient clipping."""
import argparse

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import LlamaConfig, LlamaForCausalLM


class RandomTokens(Dataset):
    def __init__(self, n, seq, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (1024, seq), generator=g)
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.ids[i % 1024]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--micro-batch", type=int, default=4)
    parser.add_argument("--accumulate", type=int, default=4)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--steps", type=int, default=100000)
    args = parser.parse_args()
    config = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=12,
                         num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
                         max_position_embeddings=args.seq)
    model = LlamaForCausalLM(config).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    loader = DataLoader(RandomTokens(10_000_000, args.seq, config.vocab_size), batch_size=args.micro_batch)
    for micro, ids in enumerate(loader):
        if micro >= args.steps * args.accumulate:
            break
        ids = ids.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss / args.accumulate
        loss.backward()
        if (micro + 1) % args.accumulate == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
        if micro % 400 == 0:
            print(f"micro-step {micro} loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()

"""GPT-2 small fine-tuned with the Hugging Face Trainer on synthetic tokens (bf16, fused AdamW)."""
import argparse
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class RandomTokens(Dataset):
    def __init__(self, n, seq, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--steps", type=int, default=100000)
    args = parser.parse_args()
    config = GPT2Config(n_positions=args.seq)
    model = GPT2LMHeadModel(config)
    out = tempfile.mkdtemp(prefix="hf_gpt2_")
    training = TrainingArguments(
        output_dir=out, per_device_train_batch_size=args.batch, max_steps=args.steps,
        bf16=True, optim="adamw_torch_fused", learning_rate=3e-4, logging_steps=100,
        save_strategy="no", report_to=[], dataloader_num_workers=0, disable_tqdm=True,
    )
    Trainer(model=model, args=training, train_dataset=RandomTokens(4096, args.seq, config.vocab_size)).train()


if __name__ == "__main__":
    main()

"""ResNet-18 on 128px crops, fed by 4 DataLoader workers doing CPU augmentation: data-bound."""
import argparse

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


class AugmentedImages(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.images = torch.randint(0, 256, (256, 3, 160, 160), dtype=torch.uint8, generator=g)
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = self.images[i % 256]
        top, left = torch.randint(0, 33, (2,)).tolist()
        crop = img[:, top:top + 128, left:left + 128].float() / 255.0
        if torch.rand(()) < 0.5:
            crop = crop.flip(-1)
        crop = (crop - 0.45) / 0.225
        crop = crop + 0.01 * torch.randn_like(crop)  # a little noise, as colour jitter costs
        return crop, i % 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=100000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = torchvision.models.resnet18().cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = DataLoader(AugmentedImages(10_000_000), batch_size=args.batch, num_workers=args.workers,
                        pin_memory=True, persistent_workers=True)
    for step, (x, y) in enumerate(loader):
        if step >= args.steps:
            break
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()

"""ResNet-50 trained with PyTorch Lightning in bf16-mixed precision, data from 2 DataLoader workers."""
import argparse

import lightning as L
import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


class RandomImages(Dataset):
    def __init__(self, n, image):
        g = torch.Generator().manual_seed(0)
        self.images = torch.randn(64, 3, image, image, generator=g)
        self.labels = torch.randint(0, 1000, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i % 64], self.labels[i]


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.resnet50()
        self.loss = torch.nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=100000)
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    loader = DataLoader(RandomImages(64 * 2000, 224), batch_size=args.batch, num_workers=2,
                        pin_memory=True, shuffle=True, persistent_workers=True)
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="bf16-mixed", max_steps=args.steps,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Classifier(), loader)


if __name__ == "__main__":
    main()

"""A timm-style loop: timm ResNet-26d, AdamW, autocast fp16 with GradScaler, channels-last."""
import argparse

import timm
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet26d")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--steps", type=int, default=100000)
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    model = timm.create_model(args.model, num_classes=1000).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    scaler = torch.amp.GradScaler("cuda")
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
    x = torch.randn(args.batch, 3, args.image, args.image, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (args.batch,), device="cuda")
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        if step % 200 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()

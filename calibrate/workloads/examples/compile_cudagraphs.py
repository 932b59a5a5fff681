"""A small, launch-bound ResNet-18 (32x32 images) compiled with mode="reduce-overhead": CUDA graphs."""
import argparse

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=100000)
    args = parser.parse_args()
    model = torchvision.models.resnet18(num_classes=10).cuda().train()
    compiled = torch.compile(model, mode="reduce-overhead")
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(args.batch, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (args.batch,), device="cuda")
    for step in range(args.steps):
        torch.compiler.cudagraph_mark_step_begin()
        loss = torch.nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 500 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()

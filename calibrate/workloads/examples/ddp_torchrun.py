"""ResNet-50 under DistributedDataParallel, started with torchrun --nproc_per_node 1 (NCCL)."""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=100000)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    torch.backends.cudnn.benchmark = True
    model = torch.nn.parallel.DistributedDataParallel(torchvision.models.resnet50().cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(args.batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (args.batch,), device="cuda")
    try:
        for step in range(args.steps):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if step % 200 == 0 and dist.get_rank() == 0:
                print(f"step {step} loss {loss.item():.3f}", flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Gavel's ResNet-50 on ImageNet (model `py.gavel_resnet50:BATCH:224`), as Gavel's workload trains it.

From stanford-futuredata/gavel @ c4fa400, workloads/pytorch/image_classification/imagenet/main.py
(PyTorch's ImageNet example: torchvision's resnet50, SGD lr 0.1, momentum 0.9, weight decay 1e-4,
cross-entropy, 224x224 crops). Data: one random batch on the GPU (Gavel decodes JPEGs in 8
DataLoader workers; the host side is not reproduced). See README.md here.
"""

RECIPE = {"name": "gavel-imagenet", "optimizer": "SGD", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}


def training_step(torch, batch, image, device):
    import torchvision

    model = torchvision.models.resnet50().to(device).train()
    inputs = torch.randn(batch, 3, image, image, device=device)
    targets = torch.randint(0, 1000, (batch,), device=device)
    criterion = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    def step():
        opt.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        opt.step()

    return step

"""MISO's `resnet` job, ResNet-50 on CIFAR-10 (model `py.miso_resnet50:BATCH:32`), in PyTorch.

MISO (boringlee24/socc22-miso @ 39b1ee6, mps/models/resnet_train.py, MIT) trains Keras'
ResNet50 (no weights, no top, 32x32x3 input) + Flatten + Dense(10, softmax) with Adam (lr 1e-3)
and categorical cross-entropy in TensorFlow. Reproduced here with torchvision's resnet50 and 10
classes (the same layers; Keras' convolutions carry biases, torchvision's do not) and Adam: the
framework differs, so absolute times are not expected to match; the ratios between MIG slices are
the comparison. Data: one random batch on the GPU.
"""

RECIPE = {"name": "miso-keras-as-torch", "optimizer": "Adam", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}


def training_step(torch, batch, image, device):
    import torchvision

    model = torchvision.models.resnet50(num_classes=10).to(device).train()
    inputs = torch.randn(batch, 3, image, image, device=device)
    targets = torch.randint(0, 10, (batch,), device=device)
    criterion = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        criterion(model(inputs), targets).backward()
        opt.step()

    return step

"""MISO's `mobilenet` job, MobileNetV2 on CIFAR-10 (model `py.miso_mobilenet:BATCH:32`), in PyTorch.

MISO (boringlee24/socc22-miso @ 39b1ee6, mps/models/mobilenet_train.py, MIT) trains Keras'
MobileNetV2 (no weights, no top, 32x32x3) + Flatten + Dense(10, softmax) with Adam (lr 1e-3) in
TensorFlow. Reproduced with torchvision's mobilenet_v2 and 10 classes and Adam: absolute times
are not expected to match across frameworks; the ratios between MIG slices are the comparison.
"""

RECIPE = {"name": "miso-keras-as-torch", "optimizer": "Adam", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}


def training_step(torch, batch, image, device):
    import torchvision

    model = torchvision.models.mobilenet_v2(num_classes=10).to(device).train()
    inputs = torch.randn(batch, 3, image, image, device=device)
    targets = torch.randint(0, 10, (batch,), device=device)
    criterion = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        criterion(model(inputs), targets).backward()
        opt.step()

    return step

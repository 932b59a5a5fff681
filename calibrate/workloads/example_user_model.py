"""An example of a user's own model for colo's worker and tracer (model name `py.example_user_model`).

colo imports the module named after `py.` (from PYTHONPATH or the working folder) and calls
build(torch, batch, image, device), which returns (model, inputs, targets, loss_fn): the model
and both tensors on `device`, and a loss_fn(model(inputs), targets) that gives a scalar loss.
colo then trains it with SGD (momentum 0.9) as it trains every other model. `image` is whatever
the third part of MODEL:BATCH:IMAGE means for your model (here: the side of a square image).

    python3 calibrate/workloads/trace.py --points py.example_user_model:64:96 --out traces/
    colo calibrate trace py.example_user_model:64:96 --out traces/

A module that trains its own way (its optimiser, several models or losses) defines instead
training_step(torch, batch, image, device), returning a function that runs one whole step, and
optionally RECIPE, a dict such as {"name": ..., "optimizer": "Adam", "fused": False,
"param_dtype": "float32", "autocast": "off", "grad_scaler": False} recorded in its traces
(calibrate/workloads/external/ holds Gavel's and MISO's workloads written so).
"""


def build(torch, batch, image, device):
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
    ).to(device)
    inputs = torch.randn(batch, 3, image, image, device=device)
    targets = torch.randint(0, 10, (batch,), device=device)
    return model, inputs, targets, nn.CrossEntropyLoss()

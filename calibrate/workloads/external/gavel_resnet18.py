"""Gavel's ResNet-18 on CIFAR-10 (model `py.gavel_resnet18:BATCH:32`), as Gavel's workload trains it.

From stanford-futuredata/gavel @ c4fa400, workloads/pytorch/image_classification/cifar10/
(models/resnet.py, kuangliu's CIFAR ResNet, MIT; main.py: SGD lr 0.1, momentum 0.9, weight decay
5e-4, cross-entropy, 10 classes, 32x32 images). Data: one random batch on the GPU (Gavel reads
CIFAR-10 through 2 DataLoader workers doing random crops and flips; the host side is not
reproduced). See README.md here.
"""

RECIPE = {"name": "gavel-cifar10", "optimizer": "SGD", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}


def resnet18(torch):
    nn, F = torch.nn, torch.nn.functional

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, in_planes, planes, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.shortcut = nn.Sequential()
            if stride != 1 or in_planes != planes:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes)
                )

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += self.shortcut(x)
            return F.relu(out)

    class ResNet(nn.Module):
        def __init__(self, num_blocks=(2, 2, 2, 2), num_classes=10):
            super().__init__()
            self.in_planes = 64
            self.conv1 = nn.Conv2d(3, 64, 3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.layer1 = self._make_layer(64, num_blocks[0], 1)
            self.layer2 = self._make_layer(128, num_blocks[1], 2)
            self.layer3 = self._make_layer(256, num_blocks[2], 2)
            self.layer4 = self._make_layer(512, num_blocks[3], 2)
            self.linear = nn.Linear(512, num_classes)

        def _make_layer(self, planes, num_blocks, stride):
            layers = []
            for s in [stride] + [1] * (num_blocks - 1):
                layers.append(BasicBlock(self.in_planes, planes, s))
                self.in_planes = planes
            return nn.Sequential(*layers)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
            out = F.avg_pool2d(out, 4)
            return self.linear(out.view(out.size(0), -1))

    return ResNet()


def training_step(torch, batch, image, device):
    model = resnet18(torch).to(device).train()
    inputs = torch.randn(batch, 3, image, image, device=device)
    targets = torch.randint(0, 10, (batch,), device=device)
    criterion = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)

    def step():
        opt.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        opt.step()

    return step

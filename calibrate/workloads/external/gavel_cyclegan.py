"""Gavel's CycleGAN on monet2photo (model `py.gavel_cyclegan:1:256`), as Gavel trains it.

From stanford-futuredata/gavel @ c4fa400, workloads/pytorch/cyclegan/ (Erik Linder-Norén's
PyTorch-GAN, MIT: models.py GeneratorResNet with 9 residual blocks and the PatchGAN
Discriminator; cyclegan.py: batch 1, 256x256, Adam lr 2e-4 betas (0.5, 0.999) for the two
generators together and each discriminator, MSE GAN loss, L1 cycle (x10) and identity (x5)
losses, ground-truth tensors made on the host each step). Not reproduced: the 50-image replay
buffer of fakes (the current fakes are used) and the JPEG loading in 4 workers.
"""

RECIPE = {"name": "gavel-cyclegan", "optimizer": "Adam", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}


def networks(torch, channels=3, n_residual=9):
    nn = torch.nn

    class ResidualBlock(nn.Module):
        def __init__(self, f):
            super().__init__()
            self.block = nn.Sequential(
                nn.ReflectionPad2d(1), nn.Conv2d(f, f, 3), nn.InstanceNorm2d(f), nn.ReLU(inplace=True),
                nn.ReflectionPad2d(1), nn.Conv2d(f, f, 3), nn.InstanceNorm2d(f),
            )

        def forward(self, x):
            return x + self.block(x)

    def generator():
        f = 64
        layers = [nn.ReflectionPad2d(channels), nn.Conv2d(channels, f, 7), nn.InstanceNorm2d(f), nn.ReLU(inplace=True)]
        for _ in range(2):
            layers += [nn.Conv2d(f, f * 2, 3, stride=2, padding=1), nn.InstanceNorm2d(f * 2), nn.ReLU(inplace=True)]
            f *= 2
        layers += [ResidualBlock(f) for _ in range(n_residual)]
        for _ in range(2):
            layers += [nn.Upsample(scale_factor=2), nn.Conv2d(f, f // 2, 3, stride=1, padding=1),
                       nn.InstanceNorm2d(f // 2), nn.ReLU(inplace=True)]
            f //= 2
        layers += [nn.ReflectionPad2d(channels), nn.Conv2d(f, channels, 7), nn.Tanh()]
        return nn.Sequential(*layers)

    def discriminator():
        def block(i, o, normalize=True):
            layers = [nn.Conv2d(i, o, 4, stride=2, padding=1)]
            if normalize:
                layers.append(nn.InstanceNorm2d(o))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        return nn.Sequential(*block(channels, 64, normalize=False), *block(64, 128), *block(128, 256),
                             *block(256, 512), nn.ZeroPad2d((1, 0, 1, 0)), nn.Conv2d(512, 1, 4, padding=1))

    return generator(), generator(), discriminator(), discriminator()


def training_step(torch, batch, image, device):
    import itertools

    import numpy as np

    g_ab, g_ba, d_a, d_b = (m.to(device).train() for m in networks(torch))
    mse, l1 = torch.nn.MSELoss(), torch.nn.L1Loss()
    opt_g = torch.optim.Adam(itertools.chain(g_ab.parameters(), g_ba.parameters()), lr=2e-4, betas=(0.5, 0.999))
    opt_da = torch.optim.Adam(d_a.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_db = torch.optim.Adam(d_b.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real_a = torch.randn(batch, 3, image, image, device=device)
    real_b = torch.randn(batch, 3, image, image, device=device)
    patch = (batch, 1, image // 16, image // 16)

    def step():
        valid = torch.tensor(np.ones(patch), dtype=torch.float32).to(device)
        fake = torch.tensor(np.zeros(patch), dtype=torch.float32).to(device)
        opt_g.zero_grad()
        loss_id = (l1(g_ba(real_a), real_a) + l1(g_ab(real_b), real_b)) / 2
        fake_b, fake_a = g_ab(real_a), g_ba(real_b)
        loss_gan = (mse(d_b(fake_b), valid) + mse(d_a(fake_a), valid)) / 2
        loss_cycle = (l1(g_ba(fake_b), real_a) + l1(g_ab(fake_a), real_b)) / 2
        (loss_gan + 10.0 * loss_cycle + 5.0 * loss_id).backward()
        opt_g.step()
        for opt, d, real, fk in ((opt_da, d_a, real_a, fake_a), (opt_db, d_b, real_b, fake_b)):
            opt.zero_grad()
            ((mse(d(real), valid) + mse(d(fk.detach()), fake)) / 2).backward()
            opt.step()

    return step

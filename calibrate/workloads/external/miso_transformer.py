"""MISO's `transformer` job, Keras' time-series Transformer on FordA (model `py.miso_transformer:BATCH:500`).

MISO (boringlee24/socc22-miso @ 39b1ee6, mps/models/transformer_train.py, MIT) trains Keras'
"Timeseries classification with a Transformer" example: input (500, 1), 4 encoder blocks
(LayerNorm, MultiHeadAttention key_dim 256 x 4 heads, dropout 0.25, residual; LayerNorm,
Conv1D(4, 1, relu), Conv1D(1, 1), residual), global average pooling over the channel axis,
Dense(128, relu), dropout 0.4, Dense(2), Adam lr 1e-4, in TensorFlow. Reproduced layer for layer
in PyTorch: absolute times are not expected to match across frameworks; the ratios between MIG
slices are the comparison. Data: random series on the GPU.
"""

RECIPE = {"name": "miso-keras-as-torch", "optimizer": "Adam", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}


def build(torch, length, head_size=256, heads=4, ff_dim=4, blocks=4, dropout=0.25):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(1, eps=1e-6), nn.LayerNorm(1, eps=1e-6)
            self.q = nn.Linear(1, heads * head_size)
            self.k = nn.Linear(1, heads * head_size)
            self.v = nn.Linear(1, heads * head_size)
            self.o = nn.Linear(heads * head_size, 1)
            self.drop = nn.Dropout(dropout)
            self.ff1, self.ff2 = nn.Conv1d(1, ff_dim, 1), nn.Conv1d(ff_dim, 1, 1)

        def forward(self, x):
            b, n, _ = x.shape
            h = self.norm1(x)
            q, k, v = (p(h).view(b, n, heads, head_size).transpose(1, 2) for p in (self.q, self.k, self.v))
            a = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout if self.training else 0.0, scale=head_size ** -0.5)
            x = x + self.drop(self.o(a.transpose(1, 2).reshape(b, n, heads * head_size)))
            h = self.norm2(x).transpose(1, 2)
            h = self.ff2(self.drop(F.relu(self.ff1(h)))).transpose(1, 2)
            return x + h

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(*(Block() for _ in range(blocks)))
            self.head = nn.Sequential(nn.Linear(length, 128), nn.ReLU(), nn.Dropout(0.4), nn.Linear(128, 2))

        def forward(self, x):
            x = self.blocks(x)
            return self.head(x.mean(dim=2))  # pooling over channels: (b, n, 1) -> (b, n)

    return Model()


def training_step(torch, batch, length, device):
    model = build(torch, length).to(device).train()
    inputs = torch.randn(batch, length, 1, device=device)
    targets = torch.randint(0, 2, (batch,), device=device)
    criterion = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)

    def step():
        opt.zero_grad()
        criterion(model(inputs), targets).backward()
        opt.step()

    return step

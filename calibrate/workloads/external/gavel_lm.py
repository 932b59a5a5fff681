"""Gavel's LM, a word-level LSTM on WikiText-2 (model `py.gavel_lm:BATCH:35`), as Gavel trains it.

From stanford-futuredata/gavel @ c4fa400, workloads/pytorch/language_modeling/ (PyTorch's
word_language_model example: model.py RNNModel LSTM, main.py defaults emsize 200, nhid 200, 2
layers, dropout 0.2, untied, bptt 35 (the point's third number), plain SGD lr 20, gradient
clipping 0.25, hidden state carried over and detached between steps). Vocabulary: WikiText-2's
33,278 words (assumed from the dataset, not read from Gavel's run). Data: random tokens on the GPU.
"""

RECIPE = {"name": "gavel-wikitext2", "optimizer": "SGD", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}

VOCAB = 33278


def training_step(torch, batch, bptt, device):
    nn = torch.nn

    class RNNModel(nn.Module):
        def __init__(self, ntoken, ninp=200, nhid=200, nlayers=2, dropout=0.2):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)

        def forward(self, x, hidden):
            emb = self.drop(self.encoder(x))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output.view(output.size(0) * output.size(1), output.size(2)))
            return decoded, hidden

    model = RNNModel(VOCAB).to(device).train()
    data = torch.randint(0, VOCAB, (bptt, batch), device=device)
    targets = torch.randint(0, VOCAB, (bptt * batch,), device=device)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=20)
    zeros = torch.zeros(2, batch, 200, device=device)
    hidden = [(zeros, zeros.clone())]

    def step():
        h = tuple(t.detach() for t in hidden[0])
        model.zero_grad()
        output, hidden[0] = model(data, h)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()

    return step

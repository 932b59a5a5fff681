"""Gavel's Transformer, German-English translation on Multi30k (model `py.gavel_transformer:BATCH:LEN`).

From stanford-futuredata/gavel @ c4fa400, workloads/pytorch/translation/ (Yu-Hsiang Huang's
attention-is-all-you-need-pytorch, MIT: train.py defaults d_model 512, d_inner 2048, 6 encoder and
6 decoder layers, 8 heads, d_k = d_v = 64, dropout 0.1, `-proj_share_weight`; Adam betas
(0.9, 0.98), eps 1e-9; summed cross-entropy ignoring padding). BATCH is sentences per step, LEN
the padded length of source and target. Assumed, not read from Gavel's run: source and target
vocabularies of 3,000 words (Multi30k after the preprocessing's min count 5) and LEN 30 (the
longest sentence of a batch; Multi30k's mean is about 13 words). Data: random tokens, no padding.
"""

RECIPE = {"name": "gavel-multi30k", "optimizer": "Adam", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}

VOCAB = 3000


def build(torch, d_model=512, d_inner=2048, n_layers=6, n_head=8, d_k=64, d_v=64, dropout=0.1):
    nn, F = torch.nn, torch.nn.functional

    class MultiHeadAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.w_qs = nn.Linear(d_model, n_head * d_k)
            self.w_ks = nn.Linear(d_model, n_head * d_k)
            self.w_vs = nn.Linear(d_model, n_head * d_v)
            self.layer_norm = nn.LayerNorm(d_model)
            self.fc = nn.Linear(n_head * d_v, d_model)
            self.drop_attn = nn.Dropout(0.1)
            self.dropout = nn.Dropout(dropout)

        def forward(self, q, k, v, mask):
            b, lq, _ = q.size()
            lk = k.size(1)
            residual = q
            q = self.w_qs(q).view(b, lq, n_head, d_k).permute(2, 0, 1, 3).contiguous().view(-1, lq, d_k)
            k = self.w_ks(k).view(b, lk, n_head, d_k).permute(2, 0, 1, 3).contiguous().view(-1, lk, d_k)
            v = self.w_vs(v).view(b, lk, n_head, d_v).permute(2, 0, 1, 3).contiguous().view(-1, lk, d_v)
            attn = torch.bmm(q, k.transpose(1, 2)) / (d_k ** 0.5)
            if mask is not None:
                attn = attn.masked_fill(mask.repeat(n_head, 1, 1), float("-inf"))
            attn = self.drop_attn(F.softmax(attn, dim=2))
            out = torch.bmm(attn, v).view(n_head, b, lq, d_v).permute(1, 2, 0, 3).contiguous().view(b, lq, -1)
            return self.layer_norm(self.dropout(self.fc(out)) + residual)

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.w_1 = nn.Conv1d(d_model, d_inner, 1)
            self.w_2 = nn.Conv1d(d_inner, d_model, 1)
            self.layer_norm = nn.LayerNorm(d_model)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = self.w_2(F.relu(self.w_1(x.transpose(1, 2)))).transpose(1, 2)
            return self.layer_norm(self.dropout(out) + x)

    class EncoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.slf_attn, self.pos_ffn = MultiHeadAttention(), FeedForward()

        def forward(self, x, non_pad, mask):
            x = self.slf_attn(x, x, x, mask) * non_pad
            return self.pos_ffn(x) * non_pad

    class DecoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.slf_attn, self.enc_attn, self.pos_ffn = MultiHeadAttention(), MultiHeadAttention(), FeedForward()

        def forward(self, x, enc, non_pad, slf_mask, enc_mask):
            x = self.slf_attn(x, x, x, slf_mask) * non_pad
            x = self.enc_attn(x, enc, enc, enc_mask) * non_pad
            return self.pos_ffn(x) * non_pad

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb = nn.Embedding(VOCAB, d_model, padding_idx=0)
            self.tgt_emb = nn.Embedding(VOCAB, d_model, padding_idx=0)
            self.pos = nn.Embedding(201, d_model, padding_idx=0)
            self.pos.weight.requires_grad_(False)
            self.enc = nn.ModuleList(EncoderLayer() for _ in range(n_layers))
            self.dec = nn.ModuleList(DecoderLayer() for _ in range(n_layers))
            self.prj = nn.Linear(d_model, VOCAB, bias=False)
            self.prj.weight = self.tgt_emb.weight  # -proj_share_weight
            self.scale = d_model ** -0.5

        def forward(self, src, src_pos, tgt, tgt_pos):
            src_pad = src.eq(0).unsqueeze(1).expand(-1, src.size(1), -1)
            src_non_pad = src.ne(0).float().unsqueeze(-1)
            x = self.src_emb(src) + self.pos(src_pos)
            for layer in self.enc:
                x = layer(x, src_non_pad, src_pad)
            lt = tgt.size(1)
            subsequent = torch.triu(torch.ones(lt, lt, device=tgt.device, dtype=torch.uint8), diagonal=1)
            tgt_pad = tgt.eq(0).unsqueeze(1).expand(-1, lt, -1)
            slf_mask = (tgt_pad.byte() + subsequent.unsqueeze(0)).gt(0)
            enc_mask = src.eq(0).unsqueeze(1).expand(-1, lt, -1)
            y = self.tgt_emb(tgt) + self.pos(tgt_pos)
            tgt_non_pad = tgt.ne(0).float().unsqueeze(-1)
            for layer in self.dec:
                y = layer(y, x, tgt_non_pad, slf_mask, enc_mask)
            return (self.prj(y) * self.scale).view(-1, VOCAB)

    return Transformer()


def training_step(torch, batch, length, device):
    model = build(torch).to(device).train()
    src = torch.randint(1, VOCAB, (batch, length), device=device)
    tgt = torch.randint(1, VOCAB, (batch, length + 1), device=device)
    pos = torch.arange(1, length + 1, device=device).unsqueeze(0).expand(batch, -1)
    gold = tgt[:, 1:].reshape(-1)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, betas=(0.9, 0.98), eps=1e-9)

    def step():
        opt.zero_grad()
        pred = model(src, pos, tgt[:, :-1], pos)
        loss = torch.nn.functional.cross_entropy(pred, gold, ignore_index=0, reduction="sum")
        loss.backward()
        opt.step()

    return step

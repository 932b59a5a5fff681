"""MISO's `bert` job, BERT-base-cased fine-tuned on IMDB (model `py.miso_bert:BATCH:512`), in PyTorch.

MISO (boringlee24/socc22-miso @ 39b1ee6, mps/models/bert_train.py, MIT) fine-tunes Hugging Face's
TFAutoModelForSequenceClassification("bert-base-cased", num_labels=2) on IMDB reviews padded to
the tokenizer's max length (512), Adam lr 5e-5, in TensorFlow. Reproduced with
BertForSequenceClassification built from bert-base-cased's configuration (vocabulary 28,996; no
download) and Adam: absolute times are not expected to match across frameworks; the ratios between
MIG slices are the comparison. Data: random token ids.
"""

RECIPE = {"name": "miso-keras-as-torch", "optimizer": "Adam", "fused": False, "param_dtype": "float32",
          "autocast": "off", "grad_scaler": False}


def training_step(torch, batch, length, device):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=28996, num_labels=2)
    model = BertForSequenceClassification(config).to(device).train()
    ids = torch.randint(0, 28996, (batch, length), device=device)
    mask = torch.ones(batch, length, dtype=torch.long, device=device)
    labels = torch.randint(0, 2, (batch,), device=device)
    opt = torch.optim.Adam(model.parameters(), lr=5e-5)

    def step():
        opt.zero_grad()
        model(input_ids=ids, attention_mask=mask, labels=labels).loss.backward()
        opt.step()

    return step

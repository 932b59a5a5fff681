#!/usr/bin/env python3
"""colo calibration worker: trains real PyTorch models on synthetic data and measures them.

One process runs a LIST of points (MODEL:BATCH:IMAGE) in turn, so PyTorch's start-up is paid
once per process, not once per point. For each point it builds the model, warms up, waits at a
file barrier shared with its co-runners (every process of a set starts each measured window
together), trains for a fixed window, keeps training until every co-runner has closed its
window too (so the load stays constant until all are done), then prints one JSON line and frees
the model. A point that runs out of memory or fails is reported with status "oom"/"error" and
the worker goes on to the next point.

Barrier files in --barrier DIR (written by this script, read by its co-runners and the runner):
  s<k>.r<rank>  this rank reached the start of step k ("ok" or "fail")
  e<k>.r<rank>  this rank closed its window of step k
  gone.r<rank>  written by the runner when rank exited: it counts as arrived from then on

Models: any torchvision classification model by name (resnet50, vit_b_16, convnext_tiny, ...),
else any timm model (resnet26, deit_small_patch16_224, ...); lm_small / lm_medium, GPT-style causal
language models from torch.nn layers whose "image" is the sequence length; and py.MODULE, a user's
own model: a module exposing build(torch, batch, image, device) -> (model, inputs, targets, loss_fn)
(see calibrate/workloads/example_user_model.py). cudnn.benchmark = True.

Recipes: a model name may end in +RECIPE (resnet50+bf16-adamw:64:224), part of the point's name
and so of its identity in the store, the traces and the profile:
  fp32-sgd        (the default, no suffix) fp32, SGD with momentum 0.9: all data before 2026-12-05
  bf16-adamw      autocast bfloat16 over forward and loss, fused AdamW, fp32 parameters
  fp16-amp-adamw  autocast float16 with a GradScaler, fused AdamW, fp32 parameters
"""
import argparse
import gc
import json
import os
import resource
import sys
import time
import traceback

ENV_KEYS = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_MPS_PIPE_DIRECTORY",
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
)
# Language models: (layers, width, heads, vocabulary).
LM_SIZES = {"lm_small": (6, 512, 8, 32000), "lm_medium": (12, 768, 12, 32000)}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", required=True, help="comma-separated MODEL:BATCH:IMAGE")
    parser.add_argument("--warmup-s", type=float, default=1.5, help="warm-up after the first 2 iterations")
    parser.add_argument("--window-s", type=float, default=3.0, help="measured window")
    parser.add_argument("--barrier", required=True, help="barrier folder shared by the set")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--n-procs", type=int, default=1)
    parser.add_argument("--barrier-timeout-s", type=float, default=300.0)
    return parser.parse_args()


class Barrier:
    """File barrier: every rank writes its marker, then waits for all markers (or gone markers)."""

    def __init__(self, folder, rank, n_procs, timeout_s):
        self.folder, self.rank, self.n_procs, self.timeout_s = folder, rank, n_procs, timeout_s

    def _path(self, tag, rank):
        return os.path.join(self.folder, f"{tag}.r{rank}")

    def mark(self, tag, content="ok"):
        tmp = self._path(tag, self.rank) + ".tmp"
        with open(tmp, "w") as f:
            f.write(content)
        os.replace(tmp, self._path(tag, self.rank))

    def missing(self, tag):
        return [
            r for r in range(self.n_procs)
            if not os.path.exists(self._path(tag, r)) and not os.path.exists(self._path("gone", r))
        ]

    def wait(self, tag, work=None):
        """Waits for every rank's marker; calls work() while waiting (if given). Returns late ranks."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            late = self.missing(tag)
            if not late or time.monotonic() > deadline:
                return late
            if work is not None:
                work()
            else:
                time.sleep(0.001)

    def failed_ranks(self, tag):
        failed = []
        for r in range(self.n_procs):
            try:
                with open(self._path(tag, r)) as f:
                    if f.read().strip() != "ok":
                        failed.append(r)
            except OSError:
                failed.append(r)
        return failed


def build_lm(torch, name, seq_len):
    layers, width, heads, vocab = LM_SIZES[name]
    nn = torch.nn

    class CausalLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            self.pos = nn.Parameter(torch.zeros(1, seq_len, width))
            layer = nn.TransformerEncoderLayer(
                width, heads, 4 * width, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
            )
            self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq_len), persistent=False)

        def forward(self, tokens):
            x = self.embed(tokens) + self.pos
            x = self.blocks(x, mask=self.mask, is_causal=True)
            return self.head(self.norm(x))

    return CausalLM()


def build_vision_model(model_name, image):
    """Any torchvision classification model by name, else any timm model (1000 classes, no weights)."""
    import torchvision

    if model_name in torchvision.models.list_models(module=torchvision.models):
        kwargs = {"image_size": image} if model_name.startswith("vit_") else {}
        return torchvision.models.get_model(model_name, weights=None, num_classes=1000, **kwargs)
    try:
        import timm
    except ImportError as err:
        raise ValueError(f"unknown model `{model_name}`: not a torchvision classification model, and timm is not installed") from err
    if not timm.is_model(model_name):
        raise ValueError(
            f"unknown model `{model_name}`: neither torchvision nor timm has it; "
            "for your own model write a module exposing build(torch, batch, image, device) and name it py.MODULE"
        )
    kwargs = {"img_size": image} if "patch" in model_name else {}
    return timm.create_model(model_name, pretrained=False, num_classes=1000, **kwargs)


def user_module(module_name):
    """The module of a `py.MODULE` point, imported from PYTHONPATH or the working folder."""
    import importlib

    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    return importlib.import_module(module_name)


def build_user_model(torch, module_name, batch, image, dev):
    """A user's own model: `py.MODULE` imports MODULE (from PYTHONPATH or the working folder) and
    calls its build(torch, batch, image, device), which returns (model, inputs, targets, loss_fn)
    with model and tensors on `device`; loss_fn(model(inputs), targets) must give a scalar loss."""
    module = user_module(module_name)
    if not hasattr(module, "build"):
        raise ValueError(
            f"module `{module_name}` ({module.__file__}) has neither build(torch, batch, image, device) "
            "nor training_step(torch, batch, image, device)"
        )
    model, inputs, targets, loss_fn = module.build(torch, batch, image, dev)
    return model.to(dev), inputs, targets, loss_fn


def build(torch, model_name, batch, image):
    """Returns (model, inputs, targets, loss_fn) on the GPU."""
    dev = torch.device("cuda")
    if model_name in LM_SIZES:
        vocab = LM_SIZES[model_name][3]
        model = build_lm(torch, model_name, image)
        inputs = torch.randint(0, vocab, (batch, image), device=dev)
        targets = torch.randint(0, vocab, (batch, image), device=dev)
        ce = torch.nn.CrossEntropyLoss()
        return model.to(dev), inputs, targets, lambda out, y: ce(out.reshape(-1, vocab), y.reshape(-1))
    if model_name.startswith("py."):
        return build_user_model(torch, model_name[3:], batch, image, dev)
    model = build_vision_model(model_name, image)
    inputs = torch.randn(batch, 3, image, image, device=dev)
    targets = torch.randint(0, 1000, (batch,), device=dev)
    ce = torch.nn.CrossEntropyLoss()
    # googlenet and inception train with auxiliary heads: the loss is on the main logits.
    return model.to(dev), inputs, targets, lambda out, y: ce(getattr(out, "logits", out), y)


def warm_up(torch, train_step, warmup_s):
    """Two steps (cudnn.benchmark tries algorithms here), then steps for `warmup_s` seconds."""
    for _ in range(2):
        train_step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    while time.perf_counter() - t < warmup_s:
        train_step()
    torch.cuda.synchronize()


RECIPES = ("fp32-sgd", "bf16-adamw", "fp16-amp-adamw")


def split_recipe(model_name):
    """(model, recipe) of MODEL[+RECIPE]; an unknown recipe is an error naming the known ones.
    The default has no suffix, so each point has one name."""
    base, plus, recipe = model_name.partition("+")
    if not plus:
        return base, RECIPES[0]
    if recipe not in RECIPES[1:]:
        known = ", ".join("+" + r for r in RECIPES[1:])
        raise ValueError(f"unknown recipe `+{recipe}` in `{model_name}`; known: {known} (none: {RECIPES[0]})")
    return base, recipe


def own_step_module(model_name):
    """The module of a `py.MODULE` point that defines its own training_step (its optimiser, several
    models or losses: a published workload reproduced as its code trains), else None."""
    if not model_name.startswith("py.") or "+" in model_name:
        return None
    module = user_module(model_name[3:])
    return module if hasattr(module, "training_step") else None


def point_recipe_record(model_name):
    """The recipe a point trains with: its module's RECIPE (a dict in recipe_record's form) when the
    module brings its own step, else the `+RECIPE` suffix's."""
    module = own_step_module(model_name)
    if module is not None:
        return dict(getattr(module, "RECIPE", {"name": "module's own step"}))
    return recipe_record(split_recipe(model_name)[1])


def recipe_record(recipe):
    """The recipe as the traces of commands record theirs (colo's recipe_words reads it)."""
    if recipe == "fp32-sgd":
        return {"name": recipe, "optimizer": "SGD", "fused": False, "param_dtype": "float32",
                "autocast": "off", "grad_scaler": False}
    return {"name": recipe, "optimizer": "AdamW", "fused": True, "param_dtype": "float32",
            "autocast": "bfloat16" if recipe == "bf16-adamw" else "float16",
            "grad_scaler": recipe == "fp16-amp-adamw"}


def training_step(torch, model_name, batch, image):
    """Builds the point's model, inputs and optimiser on the GPU as its recipe says; returns one
    training step (forward, loss, backward, update), which holds them. A `py.MODULE` whose module
    defines training_step(torch, batch, image, device) gives its own step, which the recipe's
    optimiser does not wrap."""
    module = own_step_module(model_name)
    if module is not None:
        return module.training_step(torch, batch, image, torch.device("cuda"))
    base, recipe = split_recipe(model_name)
    model, inputs, targets, loss_fn = build(torch, base, batch, image)
    model.train()
    if recipe == "fp32-sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def train_step():
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            opt.step()

        return train_step
    dtype = torch.bfloat16 if recipe == "bf16-adamw" else torch.float16
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    scaler = torch.amp.GradScaler("cuda") if recipe == "fp16-amp-adamw" else None

    def amp_step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

    return amp_step


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure_point(torch, spec, args, barrier, step):
    """Runs one point; always passes both barriers of the step so co-runners never hang."""
    model_name, batch, image = spec.split(":")
    batch, image = int(batch), int(image)
    rec = {"kind": "colo_point", "step": step, "point": spec, "rank": args.rank, "status": "ok"}
    started = False
    try:
        rec["recipe"] = point_recipe_record(model_name)
        torch.cuda.reset_peak_memory_stats()
        train_step = training_step(torch, model_name, batch, image)

        t_warm = time.perf_counter()
        warm_up(torch, train_step, args.warmup_s)
        rec["warmup_s"] = time.perf_counter() - t_warm
        barrier.mark(f"s{step}")
        started = True
        rec["co_late_start"] = barrier.wait(f"s{step}")
        rec["co_failed"] = [r for r in barrier.failed_ranks(f"s{step}") if r != args.rank]
        torch.cuda.synchronize()
        cpu0, t0, wall0 = cpu_seconds(), time.perf_counter(), time.time()
        iters = 0
        while time.perf_counter() - t0 < args.window_s:
            train_step()
            iters += 1
        torch.cuda.synchronize()
        t1, cpu1, wall1 = time.perf_counter(), cpu_seconds(), time.time()
        barrier.mark(f"e{step}")
        rec["co_late_end"] = barrier.wait(f"e{step}", work=train_step)
        torch.cuda.synchronize()
        rec.update(
            iterations=iters,
            window_s=t1 - t0,
            samples_per_s=iters * batch / (t1 - t0),
            cpu_time_s=cpu1 - cpu0,
            t_start=wall0,
            t_end=wall1,
            peak_allocated_mib=torch.cuda.max_memory_allocated() / 2**20,
            peak_reserved_mib=torch.cuda.max_memory_reserved() / 2**20,
        )
    except Exception as err:  # noqa: BLE001 - every failure is data, the worker goes on
        oom = isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower()
        rec["status"] = "oom" if oom else "error"
        rec["error"] = f"{type(err).__name__}: {str(err)[:400]}"
        rec["peak_allocated_mib"] = torch.cuda.max_memory_allocated() / 2**20
        rec["peak_reserved_mib"] = torch.cuda.max_memory_reserved() / 2**20
        if not oom:
            traceback.print_exc(file=sys.stderr)
        if not started:
            barrier.mark(f"s{step}", "fail")
            barrier.wait(f"s{step}")
        barrier.mark(f"e{step}")
        barrier.wait(f"e{step}")
    finally:
        train_step = None  # noqa: F841 - drop the model, its inputs and optimiser
        gc.collect()
        torch.cuda.empty_cache()
    return rec


def main():
    args = parse_args()
    barrier = Barrier(args.barrier, args.rank, args.n_procs, args.barrier_timeout_s)
    import torch

    torch.backends.cudnn.benchmark = True
    # fp32 with PyTorch's default math settings (what users train with); recorded per point.
    torch.cuda.init()
    env = {k: os.environ.get(k) for k in ENV_KEYS}
    for step, spec in enumerate(p for p in args.points.split(",") if p):
        rec = measure_point(torch, spec, args, barrier, step)
        rec["env"] = env
        rec["torch"] = torch.__version__
        rec["tf32"] = {"matmul": torch.backends.cuda.matmul.allow_tf32, "cudnn": torch.backends.cudnn.allow_tf32}
        print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

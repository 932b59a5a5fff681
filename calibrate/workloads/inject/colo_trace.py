"""colo's tracer inside a user's own training command (`colo calibrate trace --cmd`).

colo runs the command unmodified with this folder first on PYTHONPATH; its sitecustomize.py
imports this module, which waits (an import hook, nothing imported eagerly) until the program
imports torch and then hooks in:

- iterations are optimizer steps: torch.optim's global step hook
  (torch.optim.optimizer.register_optimizer_step_post_hook), counted for the first optimizer
  that steps (a second optimizer's steps belong to the same iteration); a loop without
  torch.optim calls `colo_trace.step()` once per iteration instead (importable as it runs);
- samples per step: --samples-per-step if given, else the leading dimension of the batches the
  program takes from its DataLoaders between two steps (gradient accumulation included), else
  that of the first tensor each top-level training forward receives before the first step
  (positional arguments first, then keyword arguments). The median over the warm-up steps is
  used;
- the recipe it sees: parameter dtype, autocast and its dtype (at the top-level forward, or
  entered inside it, as Accelerate does), GradScaler, optimizer class and
  its fused/foreach flags, torch.compile (dynamo graphs) and CUDA graph launches, DataLoader
  workers, world size, peak memory, host CPU seconds per step (the process and its DataLoader
  workers).

Modes (COLO_TRACE_MODE):
- `trace`: after the warm-up (COLO_TRACE_WARMUP_STEPS steps and COLO_TRACE_WARMUP_S seconds
  from the first step) it times an unprofiled window (COLO_TRACE_WINDOW_S, at least 2 steps),
  then profiles COLO_TRACE_ITERATIONS steady steps with torch.profiler (CUDA activity only),
  writes the trace to COLO_TRACE_OUT (the "colo-kernel-trace" format of trace.py, point
  NAME:SAMPLES_PER_STEP:1) and ends the program with exit status 0 (SystemExit at the step; a
  watchdog ends it 30 s later if the program swallows it), unless COLO_TRACE_LET_FINISH=1.
- `progress`: prints `samples=<N>` (cumulative samples) on stdout after every step, for
  `colo calibrate profile --step-hook`; ends the program (exit status 0) at the first step
  COLO_STOP_AFTER_S seconds after the interpreter started, when that is set.

Events go to COLO_TRACE_EVENTS as JSON lines (`hooked`, `first_step`, `window`, `done`,
`failed`), which colo reads to report progress and failures. Only rank 0 of a distributed
job (RANK/LOCAL_RANK unset or 0) does anything.
"""
import gzip
import json
import os
import statistics
import sys
import tempfile
import threading
import time

_ENV = os.environ
_T_START = time.time()
_state = None


def step(samples=None):
    """Marks the end of one iteration for loops without a torch.optim optimizer."""
    if _state is not None:
        _state.on_step(samples=samples, explicit=True)


def _leading_dim(value, depth=0):
    """The leading dimension of the first tensor inside `value` (tensor, sequence, mapping)."""
    if depth > 4:
        return None
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return int(shape[0]) if len(shape) > 0 else None
    if isinstance(value, (list, tuple)):
        for item in value:
            dim = _leading_dim(item, depth + 1)
            if dim is not None:
                return dim
        return None
    if hasattr(value, "values") and hasattr(value, "keys"):
        for item in value.values():
            dim = _leading_dim(item, depth + 1)
            if dim is not None:
                return dim
    return None


def _cpu_seconds():
    """CPU seconds of this process and its live children (DataLoader workers), from /proc."""
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    try:
        pid = os.getpid()
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                for child in f.read().split():
                    with open(f"/proc/{child}/stat") as s:
                        fields = s.read().rsplit(")", 1)[1].split()
                    total += (int(fields[11]) + int(fields[12])) / tick
    except OSError:
        pass
    return total


class _Tracer:
    def __init__(self, torch):
        self.torch = torch
        self.mode = _ENV.get("COLO_TRACE_MODE", "trace")
        self.events_path = _ENV.get("COLO_TRACE_EVENTS")
        self.user_sps = int(_ENV["COLO_TRACE_SAMPLES_PER_STEP"]) if _ENV.get("COLO_TRACE_SAMPLES_PER_STEP") else None
        self.warmup_steps = int(_ENV.get("COLO_TRACE_WARMUP_STEPS", "10"))
        self.warmup_s = float(_ENV.get("COLO_TRACE_WARMUP_S", "10"))
        self.window_s = float(_ENV.get("COLO_TRACE_WINDOW_S", "5"))
        self.iterations = int(_ENV.get("COLO_TRACE_ITERATIONS", "4"))
        self.let_finish = _ENV.get("COLO_TRACE_LET_FINISH") == "1"
        stop_after = _ENV.get("COLO_STOP_AFTER_S")
        self.stop_at = _T_START + float(stop_after) if stop_after else None
        self.phase = "warmup"
        self.steps = 0
        self.primary = None
        self.loader_samples = 0
        self.loader_seen = False
        self.loader_workers = None
        self.forward_samples = 0
        self.forward_first = 0
        self.forward_depth = 0
        self.restore_call = lambda: None
        self.per_step = []
        self.samples_total = 0.0
        self.recipe = {"autocast": None, "grad_scaler": False, "optimizer": None}
        # Autocast entered anywhere while training (inside a model's forward too, as
        # Accelerate's wrapped forward does), as its dtype; None until seen.
        self.autocast_entered = None
        self.t_first = None
        self.window = None
        self.profiler = None
        self.profile_start = None
        self.profiled_steps = 0

    # -- events --------------------------------------------------------------------------
    def event(self, kind, **fields):
        if not self.events_path:
            return
        fields = dict(fields, event=kind, t=time.time())
        with open(self.events_path, "a") as f:
            f.write(json.dumps(fields) + "\n")

    # -- hooks -----------------------------------------------------------------------------
    def install(self):
        import importlib

        torch = self.torch
        # Submodules torch may load lazily: import them by name.
        optimizer = importlib.import_module("torch.optim.optimizer")
        dataloader = importlib.import_module("torch.utils.data.dataloader")
        optimizer.register_optimizer_step_post_hook(self._optimizer_step)
        # Until the first step, every module call is seen (keyword arguments too, as Hugging
        # Face models take them); the original __call__ is put back at the first step.
        module_class = torch.nn.Module
        original_call = module_class.__call__
        tracer = self

        def counting_call(module, *args, **kwargs):
            tracer._forward_enter(module, args, kwargs)
            try:
                return original_call(module, *args, **kwargs)
            finally:
                tracer.forward_depth = max(0, tracer.forward_depth - 1)

        module_class.__call__ = counting_call

        def restore():
            if module_class.__call__ is counting_call:
                module_class.__call__ = original_call

        self.restore_call = restore
        loader_iter = dataloader._BaseDataLoaderIter
        original_next = loader_iter.__next__

        def counted_next(it):
            batch = original_next(it)
            tracer.loader_seen = True
            tracer.loader_samples += _leading_dim(batch) or 0
            tracer.loader_workers = getattr(it, "_num_workers", None)
            return batch

        loader_iter.__next__ = counted_next
        try:
            scaler = importlib.import_module("torch.amp").GradScaler
        except (ImportError, AttributeError):
            scaler = None
        if scaler is not None:
            original_scale = scaler.scale

            def scale(sc, *args, **kwargs):
                tracer.recipe["grad_scaler"] = bool(getattr(sc, "_enabled", True))
                return original_scale(sc, *args, **kwargs)

            scaler.scale = scale
        self._hook_autocast()
        self.event("hooked", pid=os.getpid(), torch=torch.__version__)

    def _hook_autocast(self):
        # torch.autocast is torch.amp.autocast_mode.autocast; torch.cuda.amp.autocast calls its
        # __enter__. A CUDA autocast entered with grad enabled is the training recipe's, even
        # when entered inside forward where the top-level module call cannot see it.
        autocast = getattr(self.torch, "autocast", None)
        enter = getattr(autocast, "__enter__", None)
        if enter is None:
            return
        tracer = self

        def entered(ac, *args, **kwargs):
            result = enter(ac, *args, **kwargs)
            try:
                if (tracer.autocast_entered is None and getattr(ac, "_enabled", True)
                        and str(getattr(ac, "device", "cuda")) == "cuda"
                        and tracer.torch.is_grad_enabled()):
                    dtype = getattr(ac, "fast_dtype", None)
                    tracer.autocast_entered = str(dtype).replace("torch.", "")
            except Exception:  # noqa: BLE001 - the recipe note never breaks the user's job
                pass
            return result

        autocast.__enter__ = entered

    def _forward_enter(self, module, args, kwargs):
        self.forward_depth += 1
        # A top-level training forward of a module with parameters (not a loss module).
        if (self.forward_depth == 1 and module.training and self.torch.is_grad_enabled()
                and next(module.parameters(), None) is not None):
            self.forward_samples += _leading_dim(args) or _leading_dim(kwargs) or 0
            if self.recipe["autocast"] is None:
                self.recipe["autocast"] = self._autocast()

    def _autocast(self):
        torch = self.torch
        try:
            if torch.is_autocast_enabled("cuda"):
                return str(torch.get_autocast_dtype("cuda")).replace("torch.", "")
        except (TypeError, AttributeError):
            if torch.is_autocast_enabled():
                return str(torch.get_autocast_gpu_dtype()).replace("torch.", "")
        return "off"

    def _optimizer_step(self, optimizer, args, kwargs):
        if self.primary is None:
            self.primary = id(optimizer)
            self._note_optimizer(optimizer)
        if id(optimizer) == self.primary:
            self.on_step()

    def _note_optimizer(self, optimizer):
        defaults = getattr(optimizer, "defaults", {}) or {}
        dtype = None
        for group in getattr(optimizer, "param_groups", []):
            for p in group.get("params", []):
                dtype = str(p.dtype).replace("torch.", "")
                break
            if dtype:
                break
        self.recipe["optimizer"] = type(optimizer).__name__
        self.recipe["fused"] = bool(defaults.get("fused"))
        self.recipe["foreach"] = defaults.get("foreach")
        self.recipe["param_dtype"] = dtype

    # -- steps -------------------------------------------------------------------------------
    def step_samples(self, samples):
        if samples is not None:
            return float(samples)
        if self.user_sps is not None:
            return float(self.user_sps)
        if self.loader_seen:
            return float(self.loader_samples)
        return float(self.forward_first)

    def on_step(self, samples=None, explicit=False):
        now = time.perf_counter()
        self.steps += 1
        if self.steps == 1:
            self.forward_first = self.forward_samples
        got = self.step_samples(samples)
        self.loader_samples = 0
        self.forward_samples = 0
        if self.steps == 1:
            self.t_first = now
            self.restore_call()
            self.event("first_step", explicit=explicit)
        if self.steps > 1 and len(self.per_step) < 1000:
            self.per_step.append(got)
        self.samples_total += got
        if self.mode == "progress":
            print(f"samples={self.samples_total:.0f}", flush=True)
            if self.stop_at is not None and time.time() >= self.stop_at:
                self.finish_program()
            return
        try:
            self.advance(now)
        except Exception as err:  # noqa: BLE001 - a tracer failure is reported, never hidden
            self.event("failed", error=f"{type(err).__name__}: {str(err)[:400]}")
            self.phase = "failed"
            if not self.let_finish:
                self.finish_program(status=3)

    def samples_per_step(self):
        if self.user_sps is not None:
            return float(self.user_sps), "user"
        if not self.per_step:
            return 0.0, "none"
        source = "dataloader" if self.loader_seen else "forward"
        return float(statistics.median(self.per_step)), source

    def advance(self, now):
        torch = self.torch
        if self.phase == "warmup":
            if self.steps >= self.warmup_steps and now - self.t_first >= self.warmup_s:
                torch.cuda.synchronize()
                self.window = {"t0": time.perf_counter(), "steps0": self.steps, "cpu0": _cpu_seconds()}
                self.phase = "window"
        elif self.phase == "window":
            w = self.window
            if now - w["t0"] >= self.window_s and self.steps - w["steps0"] >= 2:
                torch.cuda.synchronize()
                elapsed = time.perf_counter() - w["t0"]
                steps = self.steps - w["steps0"]
                w.update(elapsed=elapsed, steps=steps, cpu=_cpu_seconds() - w["cpu0"])
                self.event("window", steps=steps, elapsed_s=elapsed)
                self.start_profiler()
        elif self.phase == "profile":
            self.profiler.step()
            self.profiled_steps += 1
            if self.profiled_steps == 2:
                torch.cuda.synchronize()
                self.profile_start = time.perf_counter()
            elif self.profiled_steps == 2 + self.iterations:
                torch.cuda.synchronize()
                profiled_s = time.perf_counter() - self.profile_start
                self.profiler.__exit__(None, None, None)
                self.write_trace(profiled_s)
                self.phase = "done"
                if not self.let_finish:
                    self.finish_program()

    def start_profiler(self):
        from torch.profiler import ProfilerActivity, profile, schedule

        sched = schedule(wait=1, warmup=1, active=self.iterations, repeat=1)
        self.profiler = profile(activities=[ProfilerActivity.CUDA], schedule=sched)
        self.profiler.__enter__()
        self.profiled_steps = 0
        self.phase = "profile"

    # -- output --------------------------------------------------------------------------------
    def write_trace(self, profiled_s):
        from kernel_trace_io import read_chrome_trace

        torch = self.torch
        sps, sps_source = self.samples_per_step()
        if sps <= 0:
            raise RuntimeError(
                "could not tell the samples per step: no DataLoader batch and no positional tensor "
                "reached a training forward; pass --samples-per-step N"
            )
        name = _ENV.get("COLO_TRACE_NAME", "cmd")
        batch = int(round(sps))
        w = self.window
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            chrome = tmp.name
        stats = {}
        try:
            self.profiler.export_chrome_trace(chrome)
            names, cols, syncs = read_chrome_trace(chrome, stats)
        finally:
            os.unlink(chrome)
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        recipe = dict(self.recipe)
        if recipe.get("autocast") in (None, "off") and self.autocast_entered:
            recipe["autocast"] = self.autocast_entered
            recipe["autocast_inside_forward"] = True
        recipe.update(
            samples_per_step=sps,
            samples_per_step_source=sps_source,
            dataloader_workers=self.loader_workers,
            world_size=int(_ENV.get("WORLD_SIZE", "1")),
            compiled=self._compiled(),
            cuda_graph_launches=stats.get("graph_launches", 0),
            host_cpu_s_per_step=w["cpu"] / w["steps"],
            wall_s_per_step=w["elapsed"] / w["steps"],
        )
        rec = {
            "format": "colo-kernel-trace",
            "version": 1,
            "point": f"{name}:{batch}:1",
            "model": name,
            "batch": batch,
            "image": 1,
            "status": "ok",
            "gpu_name": props.name,
            "gpu_uuid": str(getattr(props, "uuid", "")),
            "sm_count": props.multi_processor_count,
            "driver": _ENV.get("COLO_TRACE_DRIVER"),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "command": _ENV.get("COLO_TRACE_COMMAND"),
            "source": _ENV.get("COLO_TRACE_SOURCE", "measured"),
            "traced_at": time.time(),
            "recipe": recipe,
            "unprofiled": {
                "samples_per_s": w["steps"] * sps / w["elapsed"],
                "iterations": w["steps"],
                "window_s": w["elapsed"],
            },
            "profiled": {
                "samples_per_s": self.iterations * sps / profiled_s,
                "window_s": profiled_s,
                "n_iterations": self.iterations,
            },
            "peak_allocated_mib": torch.cuda.max_memory_allocated() / 2**20,
            "peak_reserved_mib": torch.cuda.max_memory_reserved() / 2**20,
            "names": names,
            "kernels": cols,
            "syncs": syncs,
        }
        out = _ENV["COLO_TRACE_OUT"]
        tmp = out + ".tmp"
        with gzip.open(tmp, "wt", compresslevel=9) as f:
            json.dump(rec, f, separators=(",", ":"))
        os.replace(tmp, out)
        self.event(
            "done",
            point=rec["point"],
            file=out,
            n_kernels=len(cols["name"]),
            unprofiled_samples_per_s=rec["unprofiled"]["samples_per_s"],
            profiled_samples_per_s=rec["profiled"]["samples_per_s"],
            recipe=recipe,
        )

    def _compiled(self):
        dynamo = sys.modules.get("torch._dynamo.utils")
        try:
            return int(dynamo.counters["stats"]["unique_graphs"]) > 0 if dynamo else False
        except Exception:  # noqa: BLE001
            return False

    def finish_program(self, status=0):
        sys.stdout.flush()
        sys.stderr.flush()

        def watchdog():
            time.sleep(30)
            os._exit(status)

        threading.Thread(target=watchdog, daemon=True).start()
        raise SystemExit(status)


def _on_torch_imported(torch):
    global _state
    _state = _Tracer(torch)
    try:
        _state.install()
    except Exception as err:  # noqa: BLE001 - reported to colo, the program runs on untraced
        _state.event("failed", error=f"cannot hook into torch {torch.__version__}: {type(err).__name__}: {err}")


class _TorchWatcher:
    """A meta-path finder that runs a callback once torch has finished importing."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module):
            original_exec(module)
            _on_torch_imported(module)

        loader.exec_module = exec_module
        return spec


def _rank_zero():
    for key in ("RANK", "LOCAL_RANK"):
        if _ENV.get(key) not in (None, "", "0"):
            return False
    return True


def activate():
    """Called by sitecustomize: hook in once torch is imported (rank 0 only)."""
    if not _ENV.get("COLO_TRACE_MODE") or not _rank_zero():
        return
    if "torch" in sys.modules:
        _on_torch_imported(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _TorchWatcher())

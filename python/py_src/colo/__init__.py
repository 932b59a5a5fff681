"""colo from Python: predict, pack and simulate deep-learning jobs sharing GPUs.

Every function calls the same Rust library code as the ``colo`` command line (PyO3
bindings; no second implementation) and returns pandas DataFrames whose columns are those
of ``colo predict --format json``, ``colo pack --format json`` and the result files of
``colo simulate`` (``jobs.csv``, ``placements.csv``, ``timeline.csv``). Every figure says
where it came from: the ``origin`` columns and ``attrs`` keys (``fitted``, ``measured``,
``emulated``, ``transferred``, ``default``/``provisional``), as the command line prints them.

>>> import colo
>>> df = colo.predict(["resnet50:64:224", "vit_b_16:32:224"], mode="mps")
>>> list(df["model"])
['resnet50', 'vit_b_16']

Errors raise :class:`ColoError` (a ``ValueError``) with colo's message, which names the
file, line and field at fault.
"""

from __future__ import annotations

import io
import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _colo
from ._colo import ColoError

__version__ = _colo.__version__
__all__ = ["ColoError", "predict", "pack", "simulate", "plan", "hardware", "SimulateResult"]

PathLike = Union[str, "os.PathLike[str]"]


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - exercised only without pandas
        raise ImportError("colo returns pandas DataFrames: pip install pandas") from e
    return pandas


def _paths(value: Union[None, PathLike, Sequence[PathLike]]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    return [os.fspath(v) for v in value]


def _job_texts(jobs: Union[str, Sequence[str]]) -> List[str]:
    if isinstance(jobs, str):
        return [jobs]
    return [str(j) for j in jobs]


def predict(
    jobs: Union[str, Sequence[str]],
    gpu: str = "h200",
    mode: str = "mps",
    sm_pct: Union[None, float, Sequence[float]] = None,
    layout: Optional[str] = None,
    model: str = "kernel",
    traces: Union[None, PathLike, Sequence[PathLike]] = None,
    profile: Union[None, PathLike, Sequence[PathLike]] = None,
    alone_rate: Optional[Mapping[str, float]] = None,
):
    """Per-job speed of a set of jobs sharing one GPU, as ``colo predict --format json``.

    Args:
        jobs: ``MODEL:BATCH:IMAGE`` per job, e.g. ``["resnet50:64:224", "vit_b_16:32:224"]``.
        gpu: GPU type (``colo.hardware()`` lists them).
        mode: ``exclusive``, ``timeslice``, ``mps`` or ``mig``.
        sm_pct: MPS SM budgets in percent, one for all jobs or one per job.
        layout: MIG layout for ``mode="mig"``, job i in slice i, e.g. ``"3g.71gb,4g.71gb"``.
        model: ``kernel`` (default), ``kernel-raw`` (the replay without the cap at alone
            speed, as ``colo calibrate fit`` fits it), ``parametric``, ``exclusive``,
            ``equal-share`` or ``fixed-slowdown``.
        traces: folders of your own kernel traces (``colo calibrate trace --out DIR``).
        profile: profile file(s) instead of the shipped one; ``"gavel:v100"`` for Gavel's table.
        alone_rate: ``{"POINT": samples_per_s}`` measured alone speeds of traced jobs.

    Returns:
        A DataFrame with one row per job and the columns of the JSON's ``jobs``
        (``model, batch, image, samples_per_s, exclusive_samples_per_s,
        fraction_of_exclusive, memory_gib, slice, sm_budget_pct, origin, uncertainty_pct,
        model_error_pct, noise_pct``). ``df.attrs`` holds the rest of the answer: ``gpu``,
        ``mode``, ``perf_model``, ``profile``, ``profile_origin``, the set's
        ``total_fraction``, ``memory_gib``, ``capacity_gib``, the verdict ``fits_memory``
        and ``power_w``, ``power_origin``, ``power_note``; ``df.attrs["notes"]`` what the
        command prints on stderr. Out of memory, speeds are NaN and ``fits_memory`` is False.
        A profile that holds no memory sizes (Gavel's) gives NaN (JSON null) memory.

    Example:
        >>> import colo
        >>> df = colo.predict(["resnet50:64:224", "resnet50:64:224"], mode="mps", model="equal-share")
        >>> df["fraction_of_exclusive"].tolist()
        [0.5, 0.5]
    """
    pd = _pandas()
    if sm_pct is None:
        budgets: List[float] = []
    elif isinstance(sm_pct, (int, float)):
        budgets = [float(sm_pct)]
    else:
        budgets = [float(p) for p in sm_pct]
    rates = [(str(k), float(v)) for k, v in (alone_rate or {}).items()]
    text, notes = _colo.predict_json(
        _job_texts(jobs), gpu, mode, budgets, layout, model, _paths(traces), _paths(profile), rates
    )
    answer = json.loads(text)
    df = pd.DataFrame(answer.pop("jobs"))
    # The job's point first, then the JSON's fields in their (alphabetical) order.
    first = ["model", "batch", "image"]
    df = df[first + [c for c in df.columns if c not in first]]
    df.attrs.update(answer)
    df.attrs["notes"] = notes
    for note in notes:
        if note.startswith("warning:"):
            warnings.warn(note[len("warning:"):].strip(), stacklevel=2)
    return df


def pack(
    jobs: Union[str, Sequence[str]],
    gpu: str = "h200",
    gpus: Optional[int] = None,
    max_per_gpu: Optional[int] = None,
    mode: Optional[str] = None,
    top: int = 5,
    profile: Union[None, PathLike, Sequence[PathLike]] = None,
    model: str = "kernel",
    traces: Union[None, PathLike, Sequence[PathLike]] = None,
):
    """The best packings of a few jobs on GPUs of one type, as ``colo pack --format json``.

    Args:
        jobs: ``MODEL:BATCH:IMAGE[@MIN]`` per job; ``@0.5``: the job accepts no less than half
            its alone speed.
        gpu: GPU type.
        gpus: use at most this many GPUs (default: the fewest that meet every minimum).
        max_per_gpu: most jobs on one GPU (default 4, as ``colo pack``).
        mode: keep only GPUs configured in this family (``exclusive``, ``timeslice``, ``mps``,
            ``mig``, ``mig+mps``); default: every family.
        top: how many of the best packings to list.
        profile: profile file(s) instead of the shipped one.
        model: ``kernel`` (default, as ``colo predict``; jobs without a kernel trace send their
            GPU sets to the parametric fallback, named in ``df.attrs["perf_model"]``) or
            ``parametric``.
        traces: folders of your own kernel traces (``colo calibrate trace --out DIR``; kernel
            model only).

    Returns:
        A DataFrame with one row per (packing, GPU, job): ``packing`` (0 is the best,
        ``"exclusive"`` one job per GPU, ``"single:FAMILY"`` the best using one family only),
        ``packing_total_fraction``, ``packing_samples_per_s``, ``gpus_used``, ``gpu``,
        ``config``, ``family``, ``gpu_total_fraction``, then the job's ``job, model,
        min_fraction, fraction_of_exclusive, samples_per_s, memory_gib, place, origin``.
        ``df.attrs`` holds the search (``search``, ``exhaustive``, ``configs_evaluated``,
        ``search_seconds``, ``gpus``, ``gpus_are_fewest``) and ``profile_origin``,
        ``figures_are``.

    Example:
        >>> import colo
        >>> df = colo.pack(["resnet50:64:224", "vit_b_16:32:224"], max_per_gpu=2)
        >>> sorted(df[df.packing == 0].model)
        ['resnet50:64:224', 'vit_b_16:32:224']
    """
    pd = _pandas()
    most = 4 if max_per_gpu is None else max_per_gpu
    text = _colo.pack_json(
        _job_texts(jobs), gpu, gpus, most, top, _paths(profile), model, _paths(traces)
    )
    answer = json.loads(text)
    packings = [(i, p) for i, p in enumerate(answer.pop("best"))]
    packings.append(("exclusive", answer.pop("exclusive")))
    for family, p in answer.pop("single_mode").items():
        if p is not None:
            packings.append((f"single:{family}", p))
    rows: List[Dict[str, Any]] = []
    for label, p in packings:
        for gpu_idx, g in enumerate(p["gpus"]):
            for job in g["jobs"]:
                rows.append(
                    {
                        "packing": label,
                        "packing_total_fraction": p["total_fraction"],
                        "packing_samples_per_s": p["samples_per_s"],
                        "gpus_used": p["gpus_used"],
                        "gpu": gpu_idx,
                        "config": g["config"],
                        "family": g["family"],
                        "gpu_total_fraction": g["total_fraction"],
                        **job,
                    }
                )
    df = pd.DataFrame(rows)
    if mode is not None and len(df):
        df = df[df["family"] == mode.lower()].reset_index(drop=True)
    answer["gpu_type"] = answer.pop("gpu")
    df.attrs.update(answer)
    return df


class SimulateResult(dict):
    """``colo.simulate``'s answer: a dict from variant name to :class:`Variant`."""

    def jobs(self):
        """Every variant's ``jobs`` in one DataFrame, with a ``variant`` column."""
        pd = _pandas()
        frames = [v.jobs.assign(variant=name) for name, v in self.items()]
        return pd.concat(frames, ignore_index=True)


class Variant:
    """One variant's results: ``jobs``, ``placements``, ``timeline`` (DataFrames with the
    columns of ``jobs.csv``, ``placements.csv``, ``timeline.csv``), ``summary`` (the dict of
    ``summary.json``) and ``dir`` (its result folder, or None when nothing was written)."""

    def __init__(self, name: str, raw: Dict[str, Any]):
        pd = _pandas()
        self.name = name
        self.dir = Path(raw["dir"]) if raw["dir"] is not None else None
        self.summary: Dict[str, Any] = json.loads(raw["summary"])
        self.jobs = pd.read_csv(io.BytesIO(raw["jobs"]))
        self.placements = pd.read_csv(io.BytesIO(raw["placements"]))
        self.timeline = pd.read_csv(io.BytesIO(raw["timeline"]))

    def __repr__(self) -> str:
        return f"<colo variant {self.name!r}: {len(self.jobs)} jobs>"


def _tqdm_progress(show: Optional[bool]) -> Optional[Callable[[int, int], None]]:
    if show is False:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    bar = tqdm(total=0, unit="job", desc="simulating", leave=False)

    def update(done: int, total: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total > 0:
            bar.close()

    return update


def simulate(
    scenario: Union[PathLike, Mapping[str, Any]],
    seed: Optional[int] = None,
    out: Optional[PathLike] = None,
    strict: bool = False,
    trace_limit: Optional[int] = None,
    jobs: Optional[int] = None,
    progress: Union[None, bool, Callable[[int, int], None]] = None,
    base_dir: Optional[PathLike] = None,
) -> SimulateResult:
    """Run a scenario, every sweep variant in parallel, as ``colo simulate``.

    Args:
        scenario: a scenario file (RON), or a dict in the same schema (``scenarios/README.md``):
            an enum variant with fields is ``{"Trace": {...}}``, one without is a string
            (``"Exclusive"``); an optional field is given bare or left out.
        seed: replaces the scenario's seed.
        out: result folder to write (as ``colo simulate --out``); default: write nothing
            (the run goes to a temporary folder that is removed).
        strict: read traces strictly (the first bad row is an error naming its line).
        trace_limit: read at most this many jobs of every trace workload.
        jobs: draw this many jobs in every synthetic workload.
        progress: a callable ``(jobs_done, jobs_total)``; ``None`` shows a tqdm bar when tqdm
            is installed, ``False`` shows nothing.
        base_dir: where a dict scenario's relative paths (profiles, traces) start; default the
            current folder.

    Returns:
        A :class:`SimulateResult`: ``{variant_name: Variant}`` with ``jobs``, ``placements``,
        ``timeline`` DataFrames and the ``summary`` dict (a scenario without a sweep has one
        variant, ``base``). The engine runs with the GIL released.

    Example:
        >>> import colo
        >>> res = colo.simulate("scenarios/traces/slurm.ron", progress=False)
        >>> res["mps"].summary["jobs"]
        6
    """
    callback = progress if callable(progress) else _tqdm_progress(progress)
    if isinstance(scenario, Mapping):
        path, text = None, json.dumps(scenario)
    else:
        path, text = os.fspath(scenario), None
    base = os.fspath(base_dir) if base_dir is not None else os.getcwd()
    out_dir = os.fspath(out) if out is not None else None
    raw = _colo.simulate(path, text, base, seed, out_dir, strict, trace_limit, jobs, callback)
    return SimulateResult((r["name"], Variant(r["name"], r)) for r in raw)


def plan(
    scenario: Union[PathLike, Mapping[str, Any]],
    target: str,
    progress: Optional[Callable[[int], None]] = None,
    base_dir: Optional[PathLike] = None,
):
    """The smallest cluster per candidate GPU group that meets ``target``, as ``colo plan``.

    Args:
        scenario: a scenario file with a ``plan`` section, or such a dict.
        target: ``METRIC OP VALUE``, e.g. ``"p95_jct <= 2h"`` or ``"throughput >= 5000"``
            (metrics as ``colo plan --help`` lists them).
        progress: a callable ``(simulations_done)``.
        base_dir: where a dict scenario's relative paths start; default the current folder.

    Returns:
        A DataFrame with the rows and columns of ``plan.csv`` (one row per candidate and
        cluster size tried; simulated figures). ``df.attrs`` holds ``target``, ``max_gpus``,
        ``simulations``, ``candidates`` (each one's ``label`` and ``smallest`` size meeting the
        target, None if none up to ``max_gpus``) and ``cheapest`` (a label, or None). Writes
        no files (``colo plan`` writes plan.csv and figures).

    Example:
        >>> import colo
        >>> df = colo.plan("scenarios/planning/mps-vs-exclusive.ron", "p95_jct <= 2h")  # doctest: +SKIP
        >>> [c["label"] for c in df.attrs["candidates"]]  # doctest: +SKIP
        ['h200 exclusive', 'h200 mps']
    """
    pd = _pandas()
    if isinstance(scenario, Mapping):
        path, text = None, json.dumps(scenario)
    else:
        path, text = os.fspath(scenario), None
    base = os.fspath(base_dir) if base_dir is not None else os.getcwd()
    csv, info = _colo.plan_csv(path, text, base, target, progress)
    df = pd.read_csv(io.BytesIO(csv))
    df.attrs.update(json.loads(info))
    return df


def hardware():
    """The GPU catalog, as ``colo hardware``: one row per GPU (``gpu, display_name, sms,
    memory_gib, memory_bandwidth_gbs, power_limit_w, mig_profiles, source``); the ``source``
    column says where each figure comes from.

    Example:
        >>> import colo
        >>> "h200" in set(colo.hardware().gpu)
        True
    """
    pd = _pandas()
    return pd.DataFrame(json.loads(_colo.hardware_json()))

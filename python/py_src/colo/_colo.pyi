"""Type stubs of the extension module ``colo._colo`` (PyO3). Use the ``colo`` package's
functions, which turn these answers into DataFrames."""

from os import PathLike
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__version__: str

class ColoError(ValueError):
    """An error colo reports: bad input (a file, line and field named) or a failed run."""

def predict_json(
    jobs: Sequence[str],
    gpu: str,
    mode: str,
    sm_pct: Sequence[float],
    layout: Optional[str],
    model: str,
    traces: Sequence[str | PathLike[str]],
    profile: Sequence[str | PathLike[str]],
    alone_rate: Sequence[Tuple[str, float]],
) -> Tuple[str, List[str]]:
    """``colo predict --format json``: the JSON text and the notes printed on stderr."""

def pack_json(
    jobs: Sequence[str],
    gpu: str,
    gpus: Optional[int],
    max_per_gpu: int,
    top: int,
    profile: Sequence[str | PathLike[str]],
    model: str,
    traces: Sequence[str | PathLike[str]],
) -> str:
    """``colo pack --format json``: the JSON text."""

def simulate(
    path: Optional[str | PathLike[str]],
    json: Optional[str],
    base_dir: str | PathLike[str],
    seed: Optional[int],
    out: Optional[str | PathLike[str]],
    strict: bool,
    trace_limit: Optional[int],
    jobs: Optional[int],
    progress: Optional[Callable[[int, int], Any]],
) -> List[Dict[str, Any]]:
    """``colo simulate``: per variant ``name``, ``dir`` (None without ``out``), ``summary``
    (JSON text) and the bytes of ``jobs``, ``placements`` and ``timeline`` CSV files."""

def plan_csv(
    path: Optional[str | PathLike[str]],
    json: Optional[str],
    base_dir: str | PathLike[str],
    target: str,
    progress: Optional[Callable[[int], Any]],
) -> Tuple[bytes, str]:
    """``colo plan``: the bytes of plan.csv and a JSON summary (target, sizes, cheapest)."""

def hardware_json() -> str:
    """The GPU catalog as JSON."""

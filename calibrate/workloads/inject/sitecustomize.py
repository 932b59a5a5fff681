"""Injected by colo (`colo calibrate trace --cmd`, `colo calibrate profile --step-hook`).

Python imports the first sitecustomize on its path; colo puts this folder first, so this file
activates colo's tracer (colo_trace.py, only when COLO_TRACE_MODE is set) and then runs the
sitecustomize the environment had before (a distribution's or a virtualenv's), if any.
"""
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))

try:
    import colo_trace

    colo_trace.activate()
except Exception as _err:  # noqa: BLE001 - never break the user's program
    sys.stderr.write(f"colo_trace: not active: {type(_err).__name__}: {_err}\n")

_rest = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _rest)
if _spec is not None and _spec.loader is not None:
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)

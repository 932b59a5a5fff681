"""pytest suite of colo's Python face, run by `cargo test` (python/tests/pytest.rs) over the
extension built in the same cargo build. Expected values are worked out by hand from the
definitions (a job alone runs at its alone speed; equal share gives 1/n; FIFO on one GPU runs
jobs one after another), not copied from colo's output."""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import colo

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "sim" / "tests" / "fixtures" / "traces"
PROFILE = "calibrate/profiles/h200.ron"

PREDICT_COLUMNS = [
    "model", "batch", "image", "samples_per_s", "exclusive_samples_per_s",
    "fraction_of_exclusive", "memory_gib", "slice", "sm_budget_pct", "origin",
    "uncertainty_pct", "model_error_pct", "noise_pct",
]
ORIGINS = {"measured", "fitted", "emulated", "transferred", "default", "provisional"}


def test_predict_has_the_json_columns_and_totals():
    df = colo.predict(["resnet50:64:224", "vit_b_16:32:224"], mode="mps")
    assert sorted(df.columns) == sorted(PREDICT_COLUMNS)
    assert list(df["model"]) == ["resnet50", "vit_b_16"]
    assert list(df["batch"]) == [64, 32]
    assert set(df["origin"]) <= ORIGINS
    # samples/s is the fraction of the job's alone speed times that speed.
    for _, row in df.iterrows():
        assert row.samples_per_s == pytest.approx(row.fraction_of_exclusive * row.exclusive_samples_per_s)
    assert df.attrs["mode"] == "mps" and df.attrs["gpu"] == "h200"
    assert df.attrs["perf_model"] == "kernel"
    assert df.attrs["total_fraction"] == pytest.approx(df["fraction_of_exclusive"].sum())
    assert df.attrs["memory_gib"] == pytest.approx(df["memory_gib"].sum(), rel=0.2)
    assert df.attrs["fits_memory"] is True
    assert df.attrs["power_origin"] in ORIGINS


def test_baselines_by_hand():
    # Each job as if alone: every fraction is 1.
    alone = colo.predict(["resnet50:64:224", "resnet18:128:32"], model="exclusive")
    assert list(alone["fraction_of_exclusive"]) == [1.0, 1.0]
    # Equal share of 4 jobs: 1/4 each, 1 in all.
    shared = colo.predict(["resnet50:64:224"] * 4, model="equal-share")
    assert list(shared["fraction_of_exclusive"]) == [0.25] * 4
    assert shared.attrs["total_fraction"] == pytest.approx(1.0)
    # Fixed slowdown 1 + 0.15 (n - 1) for 3 jobs: 1 / 1.3.
    slowed = colo.predict(["resnet50:64:224"] * 3, model="fixed-slowdown")
    assert slowed["fraction_of_exclusive"].tolist() == pytest.approx([1 / 1.3] * 3)


def test_budgets_and_layouts_reach_the_rows():
    df = colo.predict(["resnet50:64:224", "vit_b_16:32:224"], sm_pct=[30, 70], model="parametric")
    assert list(df["sm_budget_pct"]) == pytest.approx([30.0, 70.0])
    mig = colo.predict(["resnet50:64:224", "vit_b_16:32:224"], mode="mig", layout="3g.71gb,4g.71gb")
    assert [s.split("@")[0] for s in mig["slice"]] == ["3g.71gb", "4g.71gb"]


def test_out_of_memory_is_a_verdict_with_no_speeds():
    one = colo.predict(["vit_b_16:128:224"], mode="mps")
    n = int(one.attrs["capacity_gib"] // one["memory_gib"][0]) + 2
    assert n <= 48, "a set MPS can hold"
    df = colo.predict(["vit_b_16:128:224"] * n, mode="mps", model="parametric")
    assert df.attrs["fits_memory"] is False
    assert df["samples_per_s"].isna().all()


def test_errors_carry_colos_message():
    with pytest.raises(colo.ColoError, match="MODEL:BATCH:IMAGE"):
        colo.predict(["resnet50:64"])
    with pytest.raises(colo.ColoError, match="choose exclusive, timeslice, mps or mig"):
        colo.predict(["resnet50:64:224"], mode="shared")
    with pytest.raises(colo.ColoError, match="layout"):
        colo.predict(["resnet50:64:224"], mode="mig", layout="9g.1tb")
    with pytest.raises(colo.ColoError, match="unknown GPU|not in the catalog|h200"):
        colo.predict(["resnet50:64:224"], gpu="gtx480")
    assert issubclass(colo.ColoError, ValueError)


def test_pack_lists_each_job_once_per_packing():
    jobs = ["resnet50:64:224", "vit_b_16:32:224", "resnet18:128:32", "mobilenet_v3_large:128:224"]
    df = colo.pack(jobs, max_per_gpu=4, top=3)
    for label, rows in df.groupby(df["packing"].astype(str)):
        assert sorted(rows["job"]) == [0, 1, 2, 3], label
    # One job per GPU: four GPUs, each job alone at its full speed.
    excl = df[df["packing"] == "exclusive"]
    assert excl["gpus_used"].iloc[0] == 4
    assert list(excl["fraction_of_exclusive"]) == [1.0] * 4
    assert set(excl["family"]) == {"exclusive"}
    # The best packing uses no more GPUs than one job per GPU, at least as fast in total.
    best = df[df["packing"] == 0]
    assert best["gpus_used"].iloc[0] <= 4
    assert set(df["origin"]) <= ORIGINS
    mps_only = colo.pack(jobs, mode="mps")
    assert set(mps_only["family"]) == {"mps"}


def test_pack_and_predict_give_a_pair_the_same_answer():
    # One answer everywhere (issue 35): pack's best plain-MPS packing of a pair on one GPU
    # is the pair under MPS, which predict answers with the same kernel model.
    pair = ["resnet50:64:224", "vit_b_16:32:224"]
    packed = colo.pack(pair, gpus=1, mode="mps")
    assert packed.attrs["perf_model"] == "kernel"
    single = packed[packed["packing"] == "single:mps"]
    predicted = colo.predict(pair, mode="mps")
    assert abs(single["packing_total_fraction"].iloc[0] - predicted.attrs["total_fraction"]) < 1e-6
    parametric = colo.pack(pair, gpus=1, mode="mps", model="parametric")
    assert parametric.attrs["perf_model"] == "parametric"


def two_job_scenario(trace: Path):
    # Jobs a (arrives 0 s, runs 100 s) and b (arrives 10 s, runs 50 s) on one GPU, one job
    # at a time, first come first served: a runs 0-100; b waits until 100 and runs 100-150.
    return {
        "name": "two",
        "profiles": [PROFILE],
        "cluster": [{"gpu": "h200", "count": 1, "mode": "Exclusive"}],
        "workload": {"Trace": {
            "format": "Colo",
            "path": str(trace),
            "models": {"Rules": [{"model": "resnet18:128:32"}]},
        }},
        "policy": {"order": "Fifo"},
    }


def test_simulate_a_dict_worked_by_hand(tmp_path, monkeypatch):
    trace = tmp_path / "two.csv"
    trace.write_text("name,arrival_s,duration_s,gpus\na,0,100,1\nb,10,50,1\n")
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    calls = []
    res = colo.simulate(two_job_scenario(trace), progress=lambda done, total: calls.append((done, total)),
                        base_dir=ROOT)
    assert list(res) == ["base"]
    jobs = res["base"].jobs.set_index("name")
    assert jobs.loc["a", "start_s"] == pytest.approx(0.0)
    assert jobs.loc["a", "end_s"] == pytest.approx(100.0)
    assert jobs.loc["b", "start_s"] == pytest.approx(100.0)
    assert jobs.loc["b", "end_s"] == pytest.approx(150.0)
    assert jobs.loc["b", "wait_s"] == pytest.approx(90.0)
    assert jobs.loc["b", "jct_s"] == pytest.approx(140.0)
    summary = res["base"].summary
    assert summary["jobs"] == 2
    assert summary["makespan_s"] == pytest.approx(150.0)
    assert calls and calls[-1] == (2, 2)
    # No file was written without `out`.
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert res["base"].dir is None
    # With `out`, the result files are there, with the same columns.
    out = tmp_path / "res"
    written = colo.simulate(two_job_scenario(trace), out=out, progress=False, base_dir=ROOT)
    assert (out / "jobs.csv").is_file() and (out / "summary.json").is_file()
    assert list(written["base"].jobs.columns) == (out / "jobs.csv").read_text().splitlines()[0].split(",")
    assert list(written["base"].timeline.columns)[0] == "time_s"
    assert list(written["base"].placements.columns) == ["job", "gpu", "slice", "start_s", "end_s"]


def test_simulate_errors_name_the_field_and_line(tmp_path):
    scenario = two_job_scenario(FIXTURES / "colo_bad_rows.csv")
    scenario["clusterr"] = []
    with pytest.raises(colo.ColoError, match="clusterr"):
        colo.simulate(scenario, base_dir=ROOT, progress=False)
    slurm = two_job_scenario(FIXTURES / "slurm_sacct.txt")
    slurm["workload"]["Trace"]["format"] = "Slurm"
    with pytest.raises(colo.ColoError, match=r"slurm_sacct.txt:12: field `End`"):
        colo.simulate(slurm, base_dir=ROOT, strict=True, progress=False)


def test_the_shipped_slurm_replay():
    res = colo.simulate(ROOT / "scenarios" / "traces" / "slurm.ron", progress=False)
    assert list(res) == ["exclusive", "timeslice", "mps", "mig"]
    # The example holds 6 jobs that ran (all_states: true), 9 rows skipped.
    assert res["mps"].summary["jobs"] == 6
    assert sorted(res["mps"].jobs["gpus"]) == [1, 1, 2, 2, 4, 8]
    assert len(res.jobs()) == 4 * 6


def test_plan_worked_by_hand(tmp_path):
    # The two jobs above: on 1 GPU the last ends at 150 s; on 2 GPUs both start on arrival
    # (a: 0-100, b: 10-60), so the makespan is 100 s. "makespan <= 120s" needs 2 GPUs.
    trace = tmp_path / "two.csv"
    trace.write_text("name,arrival_s,duration_s,gpus\na,0,100,1\nb,10,50,1\n")
    scenario = two_job_scenario(trace)
    scenario["plan"] = {"candidates": [{"name": "one per gpu", "gpu": "h200", "mode": "Exclusive"}],
                        "max_gpus": 4}
    df = colo.plan(scenario, "makespan <= 120s", base_dir=ROOT)
    assert df.attrs["candidates"] == [{"label": "one per gpu", "gpu": "h200", "smallest": 2}]
    assert df.attrs["cheapest"] is None  # no prices given
    sizes = df.set_index("gpus")
    assert sizes.loc[1, "makespan_s"] == pytest.approx(150.0)
    assert sizes.loc[2, "makespan_s"] == pytest.approx(100.0)
    assert not (tmp_path / "results").exists()
    with pytest.raises(colo.ColoError, match="target|metric"):
        colo.plan(scenario, "speed >= 3", base_dir=ROOT)


def test_hardware_catalog():
    df = colo.hardware().set_index("gpu")
    assert df.loc["h200", "sms"] == 132
    assert "a100-40gb" in df.index


def test_quickstart_runs(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", COLO_QUICKSTART_OUT=str(tmp_path))
    run = subprocess.run([sys.executable, str(ROOT / "python" / "examples" / "quickstart.py")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "jct_cdf.png").stat().st_size > 1000
    assert "fraction_of_exclusive" in run.stdout and "best packing:" in run.stdout


def test_the_engine_runs_without_the_gil():
    # A Python thread spinning beside a run keeps counting only if the run released the GIL
    # (a run holding it would block the spinner for its whole length).
    import threading
    import time

    count = 0
    stop = False

    def spin():
        nonlocal count
        while not stop:
            count += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    time.sleep(0.05)
    before, started = count, time.perf_counter()
    colo.simulate(ROOT / "scenarios" / "traces" / "itp.ron", trace_limit=500, progress=False)
    seconds, counted = time.perf_counter() - started, count - before
    stop = True
    spinner.join()
    assert seconds > 0.01
    assert counted > 10_000, f"{counted} counts in {seconds:.3f} s"

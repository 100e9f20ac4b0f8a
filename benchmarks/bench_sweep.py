"""Benchmark: a 40-run sweep of 10 simulated seconds each (worlds/sweeps/friction.sweep.yaml: 4 friction values x 10
seeds, a robot driving to a goal with a 2D lidar) on Ray with 1 and with 2 local workers, against the same runs in
one process without Ray.

Prints a Markdown table. Columns: wall = the whole sweep, Ray's start included (``ray.init`` of a fresh local
instance, shut down after); runs = the sum of the runs' own wall time inside the workers (world load, the steps,
control, metrics: the rows' ``wall_s``); CPU per run = the worker's CPU time in a run (``cpu_s``: below the run's wall
time when other processes share the cores); overhead/run = (workers x (wall - ray.init) - runs) / number of runs: what
each run costs beyond itself — handing it out, a fresh worker's start (imports, loading the compiled kernels from
numba's cache), sending the row back, writing it to Parquet, and workers idle while the last runs finish.

    .venv/bin/python benchmarks/bench_sweep.py [--duration S] [--out DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
os.environ["MVSIM_OFFLINE"] = "1"
sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(
    os.pathsep))])  # Ray's local workers import this checkout too

from mvsim_core.sweep.execute import execute_run  # noqa: E402
from mvsim_core.sweep.expand import expand  # noqa: E402
from mvsim_core.sweep.ray_runner import run_sweep  # noqa: E402
from mvsim_core.sweep.results import read_results  # noqa: E402
from mvsim_core.sweep.spec import load_spec  # noqa: E402

SPEC = REPO / "worlds" / "sweeps" / "friction.sweep.yaml"


def in_process(spec) -> dict[str, float]:
    """Every run in this process, after one untimed run (kernels loaded)."""
    runs = list(expand(spec))
    execute_run(spec, runs[0])
    t = time.perf_counter()
    rows = [execute_run(spec, r) for r in runs]
    wall = time.perf_counter() - t
    return {"wall": wall, "runs": sum(r["wall_s"] for r in rows), "cpu": sum(r["cpu_s"] for r in rows) / len(rows)}


def on_ray(spec, workers: int, out: Path) -> dict[str, float]:
    t = time.perf_counter()
    s = run_sweep(spec, out, workers=workers, progress=False, say=lambda text: None)
    wall = time.perf_counter() - t
    rows = read_results(out).to_pylist()
    assert s.ran == len(rows) == spec.run_count and s.all_ok, (s, len(rows))
    runs = sum(r["wall_s"] for r in rows)
    n = len(rows)
    return {"wall": wall, "init": s.init_s, "runs": runs, "mean": runs / n, "cpu": sum(r["cpu_s"] for r in rows) / n,
            "overhead": (workers * (wall - s.init_s) - runs) / n,
            "first_load": statistics.mean(sorted(r["load_s"] for r in rows)[-workers:]),
            "load": statistics.median(r["load_s"] for r in rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=None, help="simulated seconds per run (default: the spec's, 10)")
    ap.add_argument("--out", default=None, help="folder for the results files (default: a temporary one)")
    args = ap.parse_args()
    spec = load_spec(SPEC)
    if args.duration is not None:
        spec = dataclasses.replace(spec, duration=args.duration)
    n = spec.run_count
    folder = Path(args.out or tempfile.mkdtemp(prefix="bench_sweep_"))
    folder.mkdir(parents=True, exist_ok=True)
    for f in folder.glob("w*.parquet"):
        f.unlink()
    print(f"{n} runs x {spec.duration:g} s simulated ({SPEC.name}); {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} at the start")
    serial = in_process(spec)
    ray1 = on_ray(spec, 1, folder / "w1.parquet")
    ray2 = on_ray(spec, 2, folder / "w2.parquet")
    print()
    print("| how | wall (s) | ray.init (s) | runs, sum (s) | mean run (s) | CPU per run (s) | overhead/run (ms) | "
          "speed-up vs 1 worker |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| one process, no Ray | {serial['wall']:.1f} | – | {serial['runs']:.1f} | {serial['runs'] / n:.3f} | "
          f"{serial['cpu']:.3f} | – | – |")
    for name, r in (("Ray, 1 worker", ray1), ("Ray, 2 workers", ray2)):
        print(f"| {name} | {r['wall']:.1f} | {r['init']:.1f} | {r['runs']:.1f} | {r['mean']:.3f} | {r['cpu']:.3f} | "
              f"{1000 * r['overhead']:.0f} | {ray1['wall'] / r['wall']:.2f} |")
    print()
    print(f"world load + start in a worker: first run {ray2['first_load']:.2f} s (imports, kernels from the cache), "
          f"later runs {ray2['load']:.3f} s (median); load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()

"""Benchmark: world load time for every shipped world (goal: each < 0.5 s).

Prints a Markdown table: warm = median of repeated loads in one process (modules imported, mesh cache warm);
cold = first load in a fresh interpreter, imports included (median of 3 processes after an untimed one, with
bytecode cached as for an installed package); cold load + start = the same up to ``World.start()`` (physics built,
kernels loaded from numba's cache): what a user waits for before the first step. Remote models are not fetched
(MVSIM_OFFLINE=1), so the figures measure our loader, not the network.

    .venv/bin/python benchmarks/bench_load.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
os.environ["MVSIM_OFFLINE"] = "1"
sys.path.insert(0, str(REPO))

import mvsim_core as mv  # noqa: E402

COLD = ("import sys, time; sys.path.insert(0, {repo!r}); t = time.perf_counter(); import mvsim_core as mv; "
        "w = mv.load_world({world!r}); t1 = time.perf_counter(); w.start(); t2 = time.perf_counter(); "
        "print(t1 - t, t2 - t)")


def worlds() -> list[Path]:
    out = [REPO / "worlds" / "demo.world.xml"]
    out += sorted((SHARED / "worlds").rglob("*.world.xml"))
    return [p for p in out if p.is_file()]


def cold_load(world: Path) -> tuple[float, float]:
    """(load, load + start) in s, imports included: medians of 3 fresh interpreters, after one untimed run.
    Bytecode caching is on (``PYTHONDONTWRITEBYTECODE`` dropped), as for an installed package: the figures are
    imports plus the work, not compiling our sources."""
    code = COLD.format(repo=str(REPO), world=str(world))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["MVSIM_OFFLINE"] = "1"
    load, started = [], []
    for i in range(4):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        if i:
            a, b = r.stdout.strip().splitlines()[-1].split()
            load.append(float(a))
            started.append(float(b))
    return statistics.median(load), statistics.median(started)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10, help="warm loads per world (default 10)")
    args = ap.parse_args()
    print("| world | vehicles | blocks | elements | warm load (ms) | cold load incl. imports (ms) | cold load + start "
          "(ms) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for f in worlds():
        w = mv.load_world(f)
        samples = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            mv.load_world(f)
            samples.append(time.perf_counter() - t)
        warm = statistics.median(samples)
        cold, started = cold_load(f)
        worst = max(worst, warm, cold)
        name = f.name if f.parent.name != "worlds" or f.parent.parent != REPO else f"worlds/{f.name} (ours)"
        print(f"| {name} | {len(w.vehicles)} | {len(w.blocks)} | {len(w.elements)} | {warm * 1000:.1f} | "
              f"{cold * 1000:.0f} | {started * 1000:.0f} |")
    print(f"\nslowest: {worst * 1000:.0f} ms (goal < 500 ms per world)")


if __name__ == "__main__":
    main()

"""Benchmark: sim-s/s of demo_many_robots (25 robots, 25 lidars) as fast as possible, with and without recording every
topic to MCAP (mvsim_core.record.mcap_recorder), and the file size per simulated minute. Each case runs in a fresh
process; the warm-up (load, numba compilation, 0.5 s of simulation) is outside the timing.

    .venv/bin/python benchmarks/bench_record.py [--seconds S]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
WORLD = SHARED / "worlds/mvsim_tutorial/demo_many_robots.world.xml"


def one(record: bool, seconds: float) -> dict:
    """Run in this process: {'rate': sim-s/s, 'mb_per_min': MB per simulated minute or 0}."""
    import mvsim_core as mv
    from mvsim_core.record.mcap_recorder import Recorder

    world = mv.load_world(WORLD).start()
    path = Path(tempfile.mkdtemp()) / "bench.mcap"
    if record:  # the recorder's kernels loaded (compiled once per machine) in the warm-up too
        with Recorder(world, path.with_name("warm-up.mcap")):
            world.run(0.5)
    else:
        world.run(0.5)
    rec = None
    if record:
        rec = Recorder(world, path)
    t0 = time.perf_counter()
    world.run(seconds)
    if rec is not None:
        rec.close()
    wall = time.perf_counter() - t0
    size = path.stat().st_size if record else 0
    return {"rate": seconds / wall, "mb_per_min": size / 1e6 * 60.0 / (seconds + 0.5)}


CASES = {"plain": False, "record": True}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=5, help="pairs of fresh processes (plain, recording)")
    ap.add_argument("--child", choices=list(CASES), default=None)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(one(CASES[a.child], a.seconds)))
        return
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    res: dict[str, list[dict]] = {}
    for _ in range(a.repeat):
        for case in CASES:
            out = subprocess.run([sys.executable, __file__, "--child", case, "--seconds", str(a.seconds)], env=env,
                                 capture_output=True, text=True, check=True).stdout
            res.setdefault(case, []).append(json.loads(out.strip().splitlines()[-1]))
    best = {case: max(r["rate"] for r in runs) for case, runs in res.items()}
    ratios = sorted(r["rate"] / p["rate"] for p, r in zip(res["plain"], res["record"], strict=True))
    print(f"demo_many_robots, {a.seconds:g} simulated s, {a.repeat} pairs of fresh processes (plain, recording)")
    print(f"  without recording:  {best['plain']:6.2f} sim-s/s (best)")
    print(f"  recording all:      {best['record']:6.2f} sim-s/s (best), "
          f"{res['record'][0]['mb_per_min']:.1f} MB per simulated minute (zstd chunks)")
    print(f"  recording / plain, pair by pair: median {100 * statistics.median(ratios):.0f} % "
          f"(range {100 * ratios[0]:.0f}-{100 * ratios[-1]:.0f} %); "
          f"best / best {100 * best['record'] / best['plain']:.0f} %")

if __name__ == "__main__":
    main()

"""Benchmark of world snapshots (``World.snapshot`` / ``World.restore``, :mod:`mvsim_core.world_state`).

For each world, after 500 steps with the robots driving (touching a wall at the snapshot): the time of ``snapshot()``,
of ``restore()`` into the same world (what a Gymnasium ``reset()`` by restore costs; median of N), of the first
``restore()`` into a world just loaded and started (another process), the pickled size, and ``reset()`` for
comparison. Worlds: a small room (one differential robot with a 181-ray 2D lidar and an IMU, 5 ms steps; the
acceptance target is a restore ≤ 5 ms) and ``worlds/demo.world.xml``.

    .venv/bin/python benchmarks/bench_snapshot.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("MVSIM_OFFLINE", "1")
sys.path.insert(0, str(REPO))

import mvsim_core as mv  # noqa: E402

ROOM = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <walls>
    <shape>
      <pt>-2 -2</pt><pt>2 -2</pt> <pt>2 -2</pt><pt>2 2</pt> <pt>2 2</pt><pt>-2 2</pt> <pt>-2 2</pt><pt>-2 -2</pt>
    </shape>
    <height>0.5</height> <thickness>0.1</thickness>
  </walls>
  <vehicle name="r1">
    <init_pose>0 0 20</init_pose>
    <dynamics class="differential">
      <controller class="twist_pid"><KP>10</KP><KI>2</KI><max_torque>20</max_torque></controller>
    </dynamics>
    <sensor class="laser" name="laser1">
      <pose_3d>0.2 0 0.3 0 0 0</pose_3d> <nrays>181</nrays> <sensor_period>0.05</sensor_period>
      <range_std_noise>0.02</range_std_noise>
    </sensor>
    <sensor class="imu" name="imu1"><sensor_period>0.02</sensor_period></sensor>
  </vehicle>
</mvsim_world>
"""
COMMANDS = {"room": {"r1": (1.0, 0.0, 0.0)}, "demo": {"bot1": (1.0, 0.0, -0.45), "car1": (2.5, 0.0, 0.0)}}


def median_ms(fn: Callable[[], object], n: int) -> float:
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3


def bench(name: str, path: Path, repeat: int) -> None:
    w = mv.load_world(path, seed=1)
    for v, twist in COMMANDS[name].items():
        w.vehicles[v].set_twist(*twist)
    for _ in range(500):
        w.step()
    state = w.snapshot()
    size = len(pickle.dumps(state))
    snap = median_ms(w.snapshot, repeat)
    restore = median_ms(lambda: w.restore(state), repeat)
    other = mv.load_world(path, seed=1)
    other.start()
    t = time.perf_counter()
    other.restore(state)
    first = (time.perf_counter() - t) * 1e3
    reset = median_ms(w.reset, max(5, repeat // 10))
    print(f"{name:5s}  snapshot {snap:6.2f} ms   restore {restore:6.2f} ms   first restore into a new world "
          f"{first:6.2f} ms   pickled {size / 1024:7.1f} KiB   (reset(): {reset:6.2f} ms)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=200, help="calls per median (default 200)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        room = Path(tmp) / "room.world.xml"
        room.write_text(ROOM)
        bench("room", room, args.repeat)
    bench("demo", REPO / "worlds" / "demo.world.xml", args.repeat)


if __name__ == "__main__":
    main()

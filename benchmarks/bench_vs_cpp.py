"""Benchmark: our engine beside the C++ MVSim engine, case by case, in simulated seconds per wall second.

Cases (64 simulated seconds each, physics steps of 5 ms, each run in a fresh process):

* one: the reference world (``../shared/reference-trajectories/ref_diff_small_robot.world.xml``: one small_robot,
  twist_pid, on a plane), driven 1 m/s straight until t = 3 s, then 0.5 m/s at 0.5 rad/s;
* lidar: the same robot carrying a 181-ray 2D lidar at 20 Hz (``lidar2d.sensor.xml``: 180°, 30 m, noise on), four
  walls 10 m away for its rays to hit;
* many: ``demo_many_robots.world.xml`` (25 differential robots, each with its 100-ray 2D lidar), every robot at
  0.5 m/s, 0.3 rad/s;
* hundred: 100 small_robots on a plane, each at 0.5 m/s, 0.3 rad/s (no C++ figure recorded).

For each case three figures:

* steady: simulated seconds per wall second after the first simulated second;
* run: the whole stepping loop, first simulated second (``start()`` and the kernels' first calls) included -- what
  issue 20's table calls "whole run" and what the C++ driver's loop time measures;
* first second: the wall time of the first simulated second, ``start()`` and the kernels' first calls included, and
  before it the import and the load of the world (both in ms);
* whole: 64 simulated seconds over the wall time of the whole process, from its launch by this script to its exit.

Then two command-line figures: ``mvsim check worlds/demo.world.xml`` and ``mvsim launch --headless`` of the demo world
for one step (``--duration 0.005 --realtime-factor 0 --no-server``), wall time from launch to exit, best of the
rounds.

The C++ engine: set ``MVSIM_CPP_BENCH`` to a driver built against upstream MVSim (through its public C++ API, as the
reference trajectories were recorded) that takes ``WORLD SECONDS SCHEDULE`` and prints, as its last line, the wall
seconds of its stepping loop. ``SCHEDULE`` is ``t_end,vx,wz;...`` with absolute end times (the format of
``cpp-1.2.0/cases.txt``), set as a twist on every vehicle. Each round then runs our case and the C++ case one after the
other, so that both meet the same load; the C++ whole-process figure is timed here the same way. Without a driver the
C++ column shows the figures recorded side by side on this kind of machine (issue 20), marked "recorded".

    .venv/bin/python benchmarks/bench_vs_cpp.py [--rounds R] [--seconds S] [--case one|lidar|many|hundred ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
DEFS = SHARED / "worlds" / "definitions"

RECORDED = {  # C++ MVSim 1.2.0, sim-s per wall-s, recorded side by side with ours on this kind of machine (issue 20)
    "one": {"steady": "110–145", "whole": "110–145"},
    "lidar": {"steady": "46–51", "whole": "46–51"},
    "many": {"steady": "0.25–0.35", "whole": "0.25–0.35"},
}

LIDAR_WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <element class="horizontal_plane"><x_min>-30</x_min><x_max>30</x_max><y_min>-30</y_min><y_max>30</y_max></element>
  <include file="{defs}/small_robot.vehicle.xml"/>
  <vehicle name="r1" class="small_robot">
    <init_pose>0 0 0</init_pose>
    <include file="{defs}/lidar2d.sensor.xml" sensor_x="0.1" sensor_z="0.3" sensor_period_sec="0.05"
             sensor_nrays="181" sensor_custom_visual="false"/>
  </vehicle>
  {walls}
</mvsim_world>
"""

WALL = ('<block name="wall{k}"><static>true</static><init_pose>{x} {y} {yaw}</init_pose><zmin>0</zmin><zmax>1</zmax>'
        '<shape><pt>-10 -0.1</pt><pt>10 -0.1</pt><pt>10 0.1</pt><pt>-10 0.1</pt></shape></block>')

CIRCLES = "64,0.5,0.3"
CASES = {  # name -> (world file, or a template to write; schedule)
    "one": (SHARED / "reference-trajectories" / "ref_diff_small_robot.world.xml", "3,1.0,0;64,0.5,0.5"),
    "lidar": ("lidar", "3,1.0,0;64,0.5,0.5"),
    "many": (SHARED / "worlds" / "mvsim_tutorial" / "demo_many_robots.world.xml", CIRCLES),
    "hundred": ("hundred", CIRCLES),
}


def world_file(case: str, folder: Path) -> Path:
    """The world file of ``case`` (written into ``folder`` when the case makes its own)."""
    world, _ = CASES[case]
    if isinstance(world, Path):
        return world
    path = folder / f"{case}.world.xml"
    if world == "lidar":
        walls = "\n  ".join(WALL.format(k=k, x=x, y=y, yaw=yaw)
                            for k, (x, y, yaw) in enumerate([(10, 0, 90), (-10, 0, 90), (0, 10, 0), (0, -10, 0)]))
        path.write_text(LIDAR_WORLD.format(defs=DEFS, walls=walls))
    else:
        from bench_physics import HUNDRED  # the 100 robots of bench_physics (iii)

        path.write_text(HUNDRED.format(defs=DEFS))
    return path


def parse_schedule(text: str) -> list[tuple[float, float, float]]:
    """``t_end,vx,wz;...`` -> [(t_end, vx, wz), ...]."""
    return [tuple(float(x) for x in part.split(",")) for part in text.split(";") if part]  # type: ignore[misc]


def child(world: str, seconds: float, schedule: str) -> dict:
    """Our engine, in this fresh process: import, load, the first simulated second, then the steady state."""
    t0 = time.perf_counter()
    import mvsim_core as mv

    t1 = time.perf_counter()
    w = mv.load_world(world)
    t2 = time.perf_counter()
    legs = parse_schedule(schedule)
    vehicles = list(w.vehicles.values())
    dt = w.timestep
    n = round(seconds / dt)
    first = round(1.0 / dt)
    leg, t_first = 0, 0.0
    t_steps = time.perf_counter()
    for k in range(n):
        if k == first:
            t_first = time.perf_counter()
        t = k * dt
        if leg < len(legs) and (k == 0 or t >= legs[leg][0] - 1e-9):
            if k > 0:
                leg += 1
            if leg < len(legs):
                for v in vehicles:
                    v.set_twist(legs[leg][1], 0.0, legs[leg][2])
        w.step()
    t_end = time.perf_counter()
    return {"import_ms": 1e3 * (t1 - t0), "load_ms": 1e3 * (t2 - t1), "first_s": t_first - t_steps,
            "steady": (n - first) * dt / (t_end - t_first), "run": n * dt / (t_end - t_steps)}


def _env() -> dict[str, str]:
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as for an installed package
    return env


def run_ours(world: Path, seconds: float, schedule: str) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--child", str(world), "--seconds", str(seconds),
                          "--schedule", schedule],
                         env=_env(), capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t0
    res = json.loads(out.strip().splitlines()[-1])
    res["whole"] = seconds / wall
    return res


def run_cpp(driver: str, world: Path, seconds: float, schedule: str) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run([*shlex.split(driver), str(world), str(seconds), schedule], capture_output=True, text=True,
                         check=True).stdout
    wall = time.perf_counter() - t0
    loop = float(out.strip().splitlines()[-1])
    return {"steady": seconds / loop, "whole": seconds / wall}


def command_wall(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(args, env=_env(), capture_output=True, check=True, cwd=REPO)
    return time.perf_counter() - t0


def span(values: list[float], fmt: str = "{:.0f}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="fresh processes per case (default %(default)s)")
    ap.add_argument("--seconds", type=float, default=64.0, help="simulated seconds per run (default %(default)s)")
    ap.add_argument("--case", action="append", choices=list(CASES), default=[], help="only these cases")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--schedule", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.seconds, a.schedule)))
        return
    driver = os.environ.get("MVSIM_CPP_BENCH")
    cases = a.case or list(CASES)
    print(f"{a.seconds:g} simulated s per run, {a.rounds} rounds, {os.cpu_count()} CPUs; C++: "
          f"{driver or 'figures recorded in issue 20 (set MVSIM_CPP_BENCH to run a driver)'}\n")
    print("| case | ours: steady | ours: run (first second included) | ours: whole process | "
          "ours: import + load, first sim-second (ms) | C++: steady | C++: whole process | steady ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            world = world_file(case, Path(tmp))
            schedule = CASES[case][1]
            ours, cpp = [], []
            for _ in range(a.rounds):
                ours.append(run_ours(world, a.seconds, schedule))
                if driver:
                    cpp.append(run_cpp(driver, world, a.seconds, schedule))
            steady = span([r["steady"] for r in ours], "{:.1f}" if case in ("many", "hundred") else "{:.0f}")
            whole = span([r["whole"] for r in ours], "{:.1f}" if case in ("many", "hundred") else "{:.0f}")
            run = span([r["run"] for r in ours], "{:.1f}" if case in ("many", "hundred") else "{:.0f}")
            start = span([r["import_ms"] + r["load_ms"] for r in ours])
            first = span([1e3 * r["first_s"] for r in ours])
            if cpp:
                c_steady = span([r["steady"] for r in cpp], "{:.2f}")
                c_whole = span([r["whole"] for r in cpp], "{:.2f}")
                ratio = span([o["steady"] / c["steady"] for o, c in zip(ours, cpp, strict=True)], "{:.2f}") + "×"
            elif case in RECORDED:
                c_steady, c_whole = RECORDED[case]["steady"] + " (recorded)", RECORDED[case]["whole"] + " (recorded)"
                lo, hi = (float(x) for x in RECORDED[case]["steady"].split("–"))
                mine = [r["steady"] for r in ours]
                ratio = f"{min(mine) / hi:.2f}–{max(mine) / lo:.2f}× (against recorded)"
            else:
                c_steady = c_whole = ratio = "—"
            print(f"| {case} | {steady} | {run} | {whole} | {start}, {first} | {c_steady} | {c_whole} | {ratio} |")
    demo = str(REPO / "worlds" / "demo.world.xml")
    mvsim = [sys.executable, "-m", "mvsim_core.cli"]
    check = [command_wall([*mvsim, "check", demo]) for _ in range(a.rounds)]
    launch = [command_wall([*mvsim, "launch", "--headless", "--duration", "0.005", "--realtime-factor", "0",
                            "--no-server", demo]) for _ in range(a.rounds)]
    print(f"\nmvsim check worlds/demo.world.xml: {span(check, '{:.2f}')} s; mvsim launch --headless, one step: "
          f"{span(launch, '{:.2f}')} s (wall, launch to exit; goal < 0.5 s each)")


if __name__ == "__main__":
    main()

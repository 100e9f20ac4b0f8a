"""Benchmark: loading a fleet — N differential robots with a 2D lidar each (the load budget's sizing case).

Writes a world of N instances of upstream's ``small_robot`` class (``../shared/worlds/definitions``), each with
upstream's ``lidar2d.sensor.xml`` included, into a temporary folder — as a ``<for>`` loop (``--form loop``) or as N
``<vehicle>`` elements (``--form flat``) — and runs ``mvsim check`` on it in a fresh interpreter. Prints the wall
and CPU time and the child's peak RSS; ``--start`` also times ``World.start()``, one ``World.step()`` and
``World.run(0.1)`` in that process (they count in its peak RSS). Remote models are not fetched (MVSIM_OFFLINE=1).

    .venv/bin/python benchmarks/bench_fleet.py [--robots 1000 10000] [--form loop flat] [--start] [--profile]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
DEFS = SHARED / "worlds" / "definitions"

STEP = ("import sys, time; sys.path.insert(0, {repo!r}); import mvsim_core as mv; t = time.perf_counter(); "
        "w = mv.load_world({world!r}); t1 = time.perf_counter(); w.start(); t2 = time.perf_counter(); w.step(); "
        "t3 = time.perf_counter(); w.run(0.1); t4 = time.perf_counter(); "
        "print(len(w.vehicles), t1 - t, t2 - t1, t3 - t2, t4 - t3)")


def fleet_world(folder: Path, robots: int, form: str) -> Path:
    """A world of ``robots`` small_robots 3 m apart on a grid of 100 per row, each with a lidar2d (181 rays)."""
    head = (f'<mvsim_world version="1.0">\n<simul_timestep>0.01</simul_timestep>\n'
            f'<include file="{DEFS / "small_robot.vehicle.xml"}"/>\n')
    lidar = f'<include file="{DEFS / "lidar2d.sensor.xml"}" sensor_x="0.25" sensor_z="0.3"/>'
    if form == "loop":
        rows = -(-robots // 100)
        body = (f'<for var="r" from="0" to="{rows - 1}">\n<for var="c" from="0" to="99">\n'
                f'<if condition="$f{{${{r}}*100+${{c}} < {robots}}}">\n'
                f'<vehicle name="r${{r}}_${{c}}" class="small_robot">\n'
                f'<init_pose>$f{{3*${{c}}}} $f{{3*${{r}}}} 0</init_pose>\n{lidar}\n</vehicle>\n</if>\n</for>\n</for>\n')
    else:
        body = "".join(f'<vehicle name="r{i}" class="small_robot"><init_pose>{3 * (i % 100)} {3 * (i // 100)} 0'
                       f'</init_pose>{lidar}</vehicle>\n' for i in range(robots))
    path = folder / f"fleet_{robots}_{form}.world.xml"
    path.write_text(head + body + "</mvsim_world>\n")
    return path


def run_child(args: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MiB, stdout) of a child process (its own rusage, from ``os.wait4``)."""
    env = dict(os.environ, MVSIM_OFFLINE="1")
    with tempfile.TemporaryFile("w+") as out:
        t = time.perf_counter()
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, text=True, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {p.returncode}:\n{text}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--form", nargs="+", default=["loop", "flat"], choices=["loop", "flat"])
    ap.add_argument("--start", action="store_true", help="also time World.start(), one step and 0.1 s more")
    ap.add_argument("--profile", action="store_true", help="cProfile the load, top 25 by cumulative time")
    args = ap.parse_args()
    mvsim = str(Path(sys.executable).with_name("mvsim"))
    with tempfile.TemporaryDirectory() as tmp:
        print("| robots | form | world file (KiB) | mvsim check wall (s) | CPU (s) | peak RSS (MiB) |")
        print("|---:|---|---:|---:|---:|---:|")
        for n in sorted(args.robots):
            for form in args.form:
                path = fleet_world(Path(tmp), n, form)
                wall, cpu, rss, _ = run_child([mvsim, "check", str(path)])
                print(f"| {n} | {form} | {path.stat().st_size / 1024:.0f} | {wall:.1f} | {cpu:.1f} | {rss:.0f} |",
                      flush=True)
        if args.start:
            print("\n| robots | load (s) | start (s) | first step (s) | next 0.1 s (s) | peak RSS (MiB) |")
            print("|---:|---:|---:|---:|---:|---:|")
            for n in sorted(args.robots):
                path = fleet_world(Path(tmp), n, "loop")
                _, _, rss, out = run_child([sys.executable, "-c", STEP.format(repo=str(REPO), world=str(path))])
                count, load, start, step, step2 = out.split()[-5:]
                print(f"| {count} | {float(load):.1f} | {float(start):.1f} | {float(step):.2f} | {float(step2):.2f} "
                      f"| {rss:.0f} |", flush=True)
        if args.profile:
            path = fleet_world(Path(tmp), max(args.robots), args.form[0])
            prof = Path(tmp) / "load.prof"
            code = (f"import sys, cProfile, pstats; sys.path.insert(0, {str(REPO)!r}); import mvsim_core as mv; "
                    f"cProfile.run({f'mv.load_world({str(path)!r})'!r}, {str(prof)!r}); "
                    f"pstats.Stats({str(prof)!r}).sort_stats('cumulative').print_stats(30)")
            print(run_child([sys.executable, "-c", code])[3])


if __name__ == "__main__":
    main()

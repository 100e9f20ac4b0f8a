"""Benchmark: loading a fleet — N differential robots with a 2D lidar each (the load budget's sizing case).

Writes a world of N instances of upstream's ``small_robot`` class (``../shared/worlds/definitions``), each with
upstream's ``lidar2d.sensor.xml`` included, into a temporary folder — as a ``<for>`` loop (``--form loop``) or as N
``<vehicle>`` elements (``--form flat``) — and runs ``mvsim check`` on it in a fresh interpreter. Prints the wall
and CPU time and the child's peak RSS; ``--start`` also times ``World.start()``, one ``World.step()`` and
``World.run(0.1)`` in that process (they count in its peak RSS). Remote models are not fetched (MVSIM_OFFLINE=1).

``--run`` measures the run rate (issue 35): simulated seconds per wall second of N driving small_robots (each
commanded the same constant twist, so that they keep their places relative to each other and never touch) 8 m apart,
100 to a row, on an 800 m × 800 m horizontal plane, with no sensors and with upstream's lidar2d (its ``sensor_nrays``
set to 100; its period 0.05 s), for each N of ``--run-robots``. Each case runs in a fresh process: the load (default
object and memory limits unless the environment sets them), ``World.start()`` and ``--warmup`` simulated seconds
(numba's cache load or compilation, the first steps and scans) are timed apart, then whole blocks of 0.1 simulated s
run until ``--seconds`` of wall time have passed. ``--profile-run N`` times the phases of the step for N robots from the
outside (perf_counter around the step's calls, wrapped in the child process; no simulation code changes): Box2D's
``b2World.Step``, the friction/force kernel (``vehicle_forces``), the controller batch, the read-back, the sensors
and the rest. ``--threads 1 2`` runs every case once per ``MVSIM_THREADS`` value (the 1-vs-2-core scaling);
``--plot PNG`` draws the sim-s/s-against-robots curves, ``--json FILE`` keeps the figures.

    .venv/bin/python benchmarks/bench_fleet.py [--robots 1000 10000] [--form loop flat] [--start] [--profile]
    .venv/bin/python benchmarks/bench_fleet.py --run [--run-robots 1 10 100 1000 10000] [--sensors none lidar]
        [--threads 1 2] [--plot scaling.png] [--json out.json] [--seconds 3] [--warmup 0.2] [--dt 0.01]
        [--skip-after 120]
    .venv/bin/python benchmarks/bench_fleet.py --profile-run 4000 [--sensors none]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mvsim_core.world import World

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
DEFS = SHARED / "worlds" / "definitions"

STEP = ("import sys, time; sys.path.insert(0, {repo!r}); import mvsim_core as mv; t = time.perf_counter(); "
        "w = mv.load_world({world!r}); t1 = time.perf_counter(); w.start(); t2 = time.perf_counter(); w.step(); "
        "t3 = time.perf_counter(); w.run(0.1); t4 = time.perf_counter(); "
        "print(len(w.vehicles), t1 - t, t2 - t1, t3 - t2, t4 - t3)")


def fleet_world(folder: Path, robots: int, form: str, *, rays: int | None = 181, spacing: float = 3.0,
                plane: float | None = None, dt: float = 0.01) -> Path:
    """A world of ``robots`` small_robots ``spacing`` m apart on a grid of 100 per row (from the origin along +x, rows
    along +y), each with a lidar2d of ``rays`` rays (None: no sensor), physics steps of ``dt`` s; ``plane``: a
    horizontal plane ``plane`` m on a side under the grid's centre (None: none)."""
    head = (f'<mvsim_world version="1.0">\n<simul_timestep>{dt:g}</simul_timestep>\n'
            f'<include file="{DEFS / "small_robot.vehicle.xml"}"/>\n')
    if plane is not None:
        cx, cy = spacing * (min(robots, 100) - 1) / 2, spacing * (-(-robots // 100) - 1) / 2
        h = plane / 2
        head += (f'<element class="horizontal_plane"><x_min>{cx - h:g}</x_min><x_max>{cx + h:g}</x_max>'
                 f'<y_min>{cy - h:g}</y_min><y_max>{cy + h:g}</y_max></element>\n')
    lidar = ""
    if rays is not None:
        nrays = "" if rays == 181 else f' sensor_nrays="{rays}"'
        lidar = f'<include file="{DEFS / "lidar2d.sensor.xml"}" sensor_x="0.25" sensor_z="0.3"{nrays}/>'
    if form == "loop":
        rows = -(-robots // 100)
        body = (f'<for var="r" from="0" to="{rows - 1}">\n<for var="c" from="0" to="99">\n'
                f'<if condition="$f{{${{r}}*100+${{c}} < {robots}}}">\n'
                f'<vehicle name="r${{r}}_${{c}}" class="small_robot">\n'
                f'<init_pose>$f{{{spacing:g}*${{c}}}} $f{{{spacing:g}*${{r}}}} 0</init_pose>\n{lidar}\n</vehicle>\n'
                f'</if>\n</for>\n</for>\n')
    else:
        body = "".join(f'<vehicle name="r{i}" class="small_robot"><init_pose>{spacing * (i % 100):g} '
                       f'{spacing * (i // 100):g} 0</init_pose>{lidar}</vehicle>\n' for i in range(robots))
    tag = "" if (rays, spacing, plane, dt) == (181, 3.0, None, 0.01) else f"_{rays}rays_{spacing:g}m_{plane}_{dt:g}"
    path = folder / f"fleet_{robots}_{form}{tag}.world.xml"
    path.write_text(head + body + "</mvsim_world>\n")
    return path


def run_child(args: list[str], threads: int | None = None) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MiB, stdout) of a child process (its own rusage, from ``os.wait4``); ``threads``:
    its ``MVSIM_THREADS`` (None: this process's environment)."""
    env = dict(os.environ, MVSIM_OFFLINE="1")
    if threads is not None:
        env["MVSIM_THREADS"] = str(threads)
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


RUN_SPACING = 8.0  # m between neighbours: 100 to a row span 792 m
RUN_PLANE = 800.0  # m, the side of the horizontal plane
RUN_RAYS = 100  # rays of the lidar2d in the "lidar" cases
TWIST = (0.5, 0.0, 0.25)  # m/s, m/s, rad/s: every robot the same, a 2 m circle


def _driving_fleet(spec: dict) -> tuple[World, dict]:
    """In the child: the fleet world of ``spec`` loaded, started and every robot commanded :data:`TWIST`; the load
    and start wall times (s)."""
    sys.path.insert(0, str(REPO))
    import mvsim_core as mv

    rays = RUN_RAYS if spec["sensors"] == "lidar" else None
    path = fleet_world(Path(spec["folder"]), spec["robots"], "loop", rays=rays, spacing=RUN_SPACING,
                       plane=RUN_PLANE, dt=spec["dt"])
    t0 = time.perf_counter()
    world = mv.load_world(path)
    t1 = time.perf_counter()
    world.start()
    t2 = time.perf_counter()
    for veh in world.vehicles.values():
        veh.set_twist(*TWIST)
    from mvsim_core.threads import threads

    return world, {"robots": len(world.vehicles), "load_s": t1 - t0, "start_s": t2 - t1, "threads": threads()}


def _timed_blocks(world: World, seconds: float) -> tuple[int, float]:
    """Whole blocks of 0.1 simulated s until ``seconds`` of wall time have passed: (steps, wall s)."""
    block = max(1, round(0.1 / world.timestep))
    steps = 0
    t0 = time.perf_counter()
    while True:
        for _ in range(block):
            world.step()
        steps += block
        wall = time.perf_counter() - t0
        if wall >= seconds:
            return steps, wall


def _scans_check(world: World, since: float) -> int:
    """How many lidars have a scan stamped after ``since`` (sim s) with the expected ray count (all of them, or
    the case measured nothing)."""
    fresh = 0
    for veh in world.vehicles.values():
        for sensor in veh.sensors.values():
            obs = sensor.last
            if obs is not None and obs.stamp > since and len(obs.ranges) == RUN_RAYS:
                fresh += 1
    return fresh


def child_run(spec: dict) -> dict:
    """In the child: one run-rate case (see the module's docstring)."""
    world, out = _driving_fleet(spec)
    t0 = time.perf_counter()
    world.run(spec["warmup"])
    out["warmup_s"] = time.perf_counter() - t0
    x0, sim0 = world.vehicles[next(iter(world.vehicles))].pose[0], world.time
    steps, wall = _timed_blocks(world, spec["seconds"])
    sim = steps * world.timestep
    out.update(steps=steps, wall_s=wall, rate=sim / wall, step_ms=1e3 * wall / steps,
               moved_m=abs(world.vehicles[next(iter(world.vehicles))].pose[0] - x0),
               fresh_scans=_scans_check(world, sim0) if spec["sensors"] == "lidar" else None)
    return out


def _timer(table: dict[str, float], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped so that its wall time (s) adds up in ``table[key]``."""
    def timed(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            table[key] += time.perf_counter() - t
    return timed


# (key, owner, attribute, parent key): the calls timed by --profile-run, as "module:Class" or "module" (a kernel
# looked up as a module global by its caller); a child's time is part of its parent's
PHASES = [
    ("animate", "mvsim_core.dynamics.physics:Physics", "animate", None),
    ("fit_terrain", "mvsim_core.dynamics.physics:Physics", "fit_terrain", None),
    ("run_controllers", "mvsim_core.dynamics.physics:Physics", "run_controllers", None),
    ("apply_friction", "mvsim_core.dynamics.physics:Physics", "apply_friction", None),
    ("vehicle_forces kernel", "mvsim_core.dynamics.physics", "vehicle_forces", "apply_friction"),
    ("vehicle_forces_threaded kernel", "mvsim_core.dynamics.physics", "vehicle_forces_threaded", "apply_friction"),
    ("BoundBodies.apply (forces into Box2D)", "mvsim_core.dynamics.bodies:BoundBodies", "apply", "apply_friction"),
    ("box2d_step (b2World.Step)", "mvsim_core.dynamics.physics:Physics", "box2d_step", None),
    ("post_step", "mvsim_core.dynamics.physics:Physics", "post_step", None),
    ("BoundBodies.read_states", "mvsim_core.dynamics.bodies:BoundBodies", "read_states", "post_step"),
    ("post_update kernel", "mvsim_core.dynamics.physics", "post_update", "post_step"),
    ("post_update_threaded kernel", "mvsim_core.dynamics.physics", "post_update_threaded", "post_step"),
    ("collisions", "mvsim_core.dynamics.physics:Physics", "_collisions", "post_step"),
    ("sensors (scheduler.run)", "mvsim_core.sensors.scheduler:SensorScheduler", "run", None),
    ("loggers", "mvsim_core.world:World", "_write_logs", None),
]


def child_profile(spec: dict) -> dict:
    """In the child: the per-phase times of the steps of one case, the calls of :data:`PHASES` wrapped after the
    warm-up (their wrappers cost about a microsecond a call)."""
    import importlib

    world, out = _driving_fleet(spec)
    world.run(spec["warmup"])
    table = dict.fromkeys([p[0] for p in PHASES], 0.0)
    for key, owner, attr, _ in PHASES:
        mod_name, _, cls_name = owner.partition(":")
        target = importlib.import_module(mod_name)
        if cls_name:
            target = getattr(target, cls_name)
        setattr(target, attr, _timer(table, key, getattr(target, attr)))
    steps, wall = _timed_blocks(world, spec["seconds"])
    out.update(steps=steps, wall_s=wall, rate=steps * world.timestep / wall, phases=table)
    return out


def run_cases(args: argparse.Namespace, folder: Path) -> list[dict]:
    """The run-rate table: one fresh process per (sensors, threads, N); a case after one that took longer than
    ``--skip-after`` s (wall, whole process) with the same sensors and threads and fewer robots is skipped. Returns
    the cases' results (what ``--json`` writes and ``--plot`` draws)."""
    print(f"\n| robots | sensors | threads | load (s) | start (s) | warm-up {args.warmup:g} sim-s (s) | step (ms) "
          f"| sim-s per wall-s | peak RSS (MiB) | process wall (s) |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    results = []
    for sensors, threads in [(s, t) for s in args.sensors for t in args.threads or [None]]:
        skip = False
        shown = "env" if threads is None else threads
        for n in sorted(args.run_robots):
            label = f"{RUN_RAYS}-ray lidar2d" if sensors == "lidar" else "none"
            if skip:
                print(f"| {n} | {label} | {shown} | skipped (the case before took > {args.skip_after:g} s) "
                      "||||||||", flush=True)
                continue
            r, wall, rss = child(args, folder, "run", n, sensors, threads)
            if sensors == "lidar" and r["fresh_scans"] != r["robots"]:
                sys.exit(f"{n} robots: only {r['fresh_scans']} of {r['robots']} lidars scanned in the timing")
            if r["moved_m"] < 0.01:
                sys.exit(f"{n} robots: the first robot did not move ({r['moved_m']:.3g} m) in the timing")
            print(f"| {r['robots']} | {label} | {r['threads']} | {r['load_s']:.2f} | {r['start_s']:.2f} "
                  f"| {r['warmup_s']:.2f} | {r['step_ms']:.2f} | {r['rate']:.2f} | {rss:.0f} | {wall:.0f} |",
                  flush=True)
            results.append(dict(r, sensors=sensors, peak_rss_mib=rss, process_wall_s=wall))
            skip = wall > args.skip_after
    return results


def plot_scaling(results: list[dict], path: Path) -> None:
    """The scaling curve: sim-s per wall-s against robots (log-log), a line per (sensors, threads), and the real-time
    line; written to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for key in sorted({(r["sensors"], r["threads"]) for r in results}):
        rows = sorted((r["robots"], r["rate"]) for r in results if (r["sensors"], r["threads"]) == key)
        sensors, threads = key
        label = (f"{'no sensors' if sensors == 'none' else f'{RUN_RAYS}-ray lidar each'}, "
                 f"{threads} thread{'' if threads == 1 else 's'}")
        ax.plot([n for n, _ in rows], [v for _, v in rows], "o-" if sensors == "none" else "s--", label=label)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.text(1.0, 1.0, " real time", va="bottom", color="grey", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("small_robots driving (full wheel-ground dynamics)")
    ax.set_ylabel("simulated s per wall s")
    ax.set_title("Fleet scaling (benchmarks/bench_fleet.py --run)")
    ax.grid(True, which="both", lw=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    print(f"\nplot: {path}")


def profile_case(args: argparse.Namespace, folder: Path) -> None:
    """The per-phase table of one case."""
    sensors = args.sensors[0]
    r, _, _ = child(args, folder, "profile", args.profile_run, sensors)
    step_s = r["wall_s"] / r["steps"]
    print(f"\n{r['robots']} robots, sensors: {sensors}, dt {args.dt:g} s: {r['steps']} steps in {r['wall_s']:.1f} s "
          f"= {r['rate']:.2f} sim-s/s, {1e3 * step_s:.2f} ms per step\n")
    print("| phase | ms per step | % of a step |")
    print("|---|---:|---:|")
    top = 0.0
    for key, _, _, parent in PHASES:
        t = r["phases"][key]
        if parent is None:
            top += t
        name = f"&nbsp;&nbsp;↳ {key}" if parent else key
        print(f"| {name} | {1e3 * t / r['steps']:.3f} | {100 * t / r['wall_s']:.1f} |")
    rest = r["wall_s"] - top
    print(f"| rest (World.step's own code, the loop) | {1e3 * rest / r['steps']:.3f} "
          f"| {100 * rest / r['wall_s']:.1f} |")


def child(args: argparse.Namespace, folder: Path, kind: str, robots: int, sensors: str,
          threads: int | None = None) -> tuple[dict, float, float]:
    """(the child's result, its wall s, its peak RSS MiB) of one case in a fresh interpreter (``MVSIM_THREADS`` =
    ``threads``; None: as in this process's environment)."""
    spec = {"kind": kind, "robots": robots, "sensors": sensors, "dt": args.dt, "warmup": args.warmup,
            "seconds": args.seconds, "folder": str(folder)}
    wall, _, rss, text = run_child([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                                   threads)
    return json.loads(text.strip().splitlines()[-1]), wall, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--form", nargs="+", default=["loop", "flat"], choices=["loop", "flat"])
    ap.add_argument("--start", action="store_true", help="also time World.start(), one step and 0.1 s more")
    ap.add_argument("--profile", action="store_true", help="cProfile the load, top 25 by cumulative time")
    ap.add_argument("--run", action="store_true", help="the run-rate table (no loading table unless --robots)")
    ap.add_argument("--run-robots", type=int, nargs="+", default=[1, 10, 100, 1000, 10000])
    ap.add_argument("--sensors", nargs="+", default=["none", "lidar"], choices=["none", "lidar"])
    ap.add_argument("--profile-run", type=int, metavar="N", help="per-phase times of a step with N robots")
    ap.add_argument("--seconds", type=float, default=3.0, help="wall seconds timed per case (default %(default)s)")
    ap.add_argument("--warmup", type=float, default=0.2, help="simulated seconds before the timing")
    ap.add_argument("--dt", type=float, default=0.01, help="physics step, s (default %(default)s)")
    ap.add_argument("--skip-after", type=float, default=120.0,
                    help="skip the larger cases once a case's process took longer (s)")
    ap.add_argument("--threads", type=int, nargs="+", metavar="N",
                    help="run each case with MVSIM_THREADS=N, for each N given (default: as the environment says)")
    ap.add_argument("--plot", type=Path, metavar="PNG", help="with --run: draw the scaling curve into PNG")
    ap.add_argument("--json", type=Path, metavar="FILE", help="with --run: write the cases' results to FILE")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        spec = json.loads(args.child)
        print(json.dumps((child_run if spec["kind"] == "run" else child_profile)(spec)))
        return
    if args.run or args.profile_run:
        with tempfile.TemporaryDirectory() as tmp:
            if args.run:
                results = run_cases(args, Path(tmp))
                if args.json:
                    args.json.write_text(json.dumps(results, indent=1) + "\n")
                if args.plot:
                    plot_scaling(results, args.plot)
            if args.profile_run:
                profile_case(args, Path(tmp))
        if "--robots" not in sys.argv:
            return
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

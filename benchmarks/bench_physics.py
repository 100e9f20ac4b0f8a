"""Benchmark: simulated seconds per wall second of the physics step, as fast as possible.

(i)   the reference-trajectory world (one small_robot, twist_pid, dt 5 ms) with its command schedule
      (the C++ MVSim 1.2.0 ran it at 150–208 on this kind of machine);
(ii)  demo_many_robots (25 differential robots; sensors not simulated);
(iii) 100 small_robots on a plane, driving in circles;
(iv)  the Jackal with twist_pid on ice (cpp-1.2.0/worlds/jackal_pid_ice.world.xml, mu 0.15), 1 m/s for 4 s then
      stop, over and over: its wheels slip for most of each start and stop (the C++ MVSim 1.2.0 engine freezes it);
(v)   (ii) plus 20 walking actors and 20 keyframed blocks (issue 16: within 10 % of (ii) is the goal);
(vi)  (v) with the movers among the robots, so that Box2D simulates their bodies (awake) every step.

Each case: the wall time of its first simulated second (the world fresh from the case's setup: ``start()`` and the
first calls of the compiled kernels fall in it, except for the cases that start the world to turn its sensors off),
then, after 0.5 simulated seconds more, the steady state. All cases run in this one process, so the kernels' cache
is loaded by case (i) (see ``bench_vs_cpp.py`` for fresh processes and whole-process figures).

    .venv/bin/python benchmarks/bench_physics.py [--scale S] [--profile] [--case '(i)']
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
os.environ.setdefault("MVSIM_OFFLINE", "1")
sys.path.insert(0, str(REPO))

import mvsim_core as mv  # noqa: E402

HUNDRED = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <element class="horizontal_plane"><x_min>-60</x_min><x_max>60</x_max><y_min>-60</y_min><y_max>60</y_max></element>
  <include file="{defs}/small_robot.vehicle.xml"/>
  <for var="i" from="0" to="99">
    <vehicle class="small_robot"><init_pose>$f{{-45 + 10*floor(i/10)}} $f{{-45 + 10*(i%10)}} 0</init_pose></vehicle>
  </for>
</mvsim_world>
"""


def rate(world, seconds: float, schedule=None) -> tuple[float, float]:
    """(wall seconds of the first simulated second, simulated seconds per wall second in the steady state over
    ``seconds`` of simulated time). The first second starts from the world as the case left it (most cases have not
    started it: ``start()`` and the kernels' first calls fall in it); the steady state follows 0.5 simulated seconds
    more of warm-up."""
    dt = world.timestep
    t0 = time.perf_counter()
    for _ in range(round(1.0 / dt)):
        if schedule is not None:
            schedule(world)
        world.step()
    first = time.perf_counter() - t0
    for _ in range(round(0.5 / dt)):
        if schedule is not None:
            schedule(world)
        world.step()
    n = round(seconds / dt)
    t0 = time.perf_counter()
    for _ in range(n):
        if schedule is not None:
            schedule(world)
        world.step()
    wall = time.perf_counter() - t0
    return first, n * dt / wall


def reference_world():
    ref = SHARED / "reference-trajectories"
    w = mv.load_world(ref / "ref_diff_small_robot.world.xml")
    v = w.vehicles["r1"]

    def schedule(world):
        if world.time < 3.0:
            v.set_twist(1.0, 0.0, 0.0)
        else:
            v.set_twist(0.5, 0.0, 0.5)

    return w, schedule


def many_robots():
    w = mv.load_world(SHARED / "worlds/mvsim_tutorial/demo_many_robots.world.xml")
    w.start().sensor_scheduler.enabled = False  # physics only: bench_sensors part (iv) measures it with the lidars
    for v in w.vehicles.values():
        v.set_twist(0.5, 0.0, 0.3)
    return w, None


def hundred_robots():
    d = tempfile.mkdtemp()
    p = Path(d) / "hundred.world.xml"
    p.write_text(HUNDRED.format(defs=SHARED / "worlds/definitions"))
    w = mv.load_world(p)
    for v in w.vehicles.values():
        v.set_twist(0.5, 0.0, 0.3)
    return w, None


def jackal_on_ice():
    w = mv.load_world(SHARED / "reference-trajectories/cpp-1.2.0/worlds/jackal_pid_ice.world.xml")
    v = w.vehicles["r1"]

    def schedule(world):
        v.set_twist(1.0 if world.time % 7.0 < 4.0 else 0.0, 0.0, 0.0)

    return w, schedule


def many_robots_and_movers(y_actors: float = 9.0, y_blocks: float = -10.0):
    w, _ = many_robots()
    for i in range(20):
        x0, y0 = -12.0 + 1.2 * i, y_actors
        w.spawn(f'<actor name="walker{i}"><walking_speed>1.2</walking_speed><path loop="true">'
                f'<waypoint>{x0} {y0} 0</waypoint><waypoint pause="0.5">{x0 + 2} {y0} 0</waypoint>'
                f'<waypoint>{x0 + 2} {y0 + 2} 0</waypoint><waypoint>{x0} {y0 + 2} 0</waypoint></path></actor>')
        w.spawn(f'<block name="mover{i}"><init_pose>{x0} {y_blocks} 0</init_pose><mass>3</mass><zmax>0.5</zmax>'
                '<shape><pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape>'
                '<animation type="keyframes"><time_pose>0 0 0 0</time_pose><time_pose>2 1 0 90</time_pose>'
                '<time_pose>4 0 0 0</time_pose></animation></block>')
    w.start().sensor_scheduler.enabled = False  # physics only, as in (ii) (spawning rebuilt the scheduler)
    return w, None


def movers_among_robots():
    """(v) with the actors and blocks walking and sliding through the robots' area (all their bodies awake)."""
    return many_robots_and_movers(y_actors=1.0, y_blocks=4.0)


CASES = [("(i) reference world, 1 robot, schedule", reference_world, 8.0, "≥ 200"),
         ("(ii) demo_many_robots, 25 robots", many_robots, 4.0, "≥ 50"),
         ("(iii) 100 robots", hundred_robots, 2.0, "≥ 10"),
         ("(iv) Jackal, twist_pid on ice, 1 m/s and stop", jackal_on_ice, 7.0, "—"),
         ("(v) (ii) + 20 walking actors + 20 keyframed blocks", many_robots_and_movers, 4.0, "≥ 0.9 × (ii)"),
         ("(vi) (v) with the movers among the robots", movers_among_robots, 4.0, "—")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the simulated durations")
    ap.add_argument("--profile", action="store_true", help="print the top functions of each case")
    ap.add_argument("--case", action="append", default=[],
                    help="run only the cases whose label starts with this, e.g. --case '(ii)' (repeatable)")
    args = ap.parse_args()
    print("| case | timestep (ms) | first simulated second: wall ms | steady: simulated s / wall s | goal (steady) |")
    print("|---|---:|---:|---:|---:|")
    for label, make, seconds, goal in CASES:
        if args.case and not any(label.startswith(c) for c in args.case):
            continue
        world, schedule = make()
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
        first, r = rate(world, seconds * args.scale, schedule)
        if args.profile:
            prof.disable()
        print(f"| {label} | {world.timestep * 1000:g} | {1000 * first:.0f} | {r:.1f} | {goal} |")
        if args.profile:
            pstats.Stats(prof).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()

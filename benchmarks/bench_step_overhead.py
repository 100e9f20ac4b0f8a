"""Benchmark: the fixed cost of one ``World.step()`` in a small world, and where it goes.

Two worlds, each measured in fresh processes (``--rounds`` of them; the figure printed is the median over the
processes of each process's median over its blocks):

* goal: the world of ``mvsim/GoalReaching-v0`` (``mvsim_core/gym/worlds/goal_room.world.xml``: one differential
  robot with a 181-ray 2D lidar at 10 Hz in a 6 m room), made by the environment itself and reset with seed 0, the
  robot driven on a small circle (0.2 m/s, 1 rad/s);
* one: the "one" case of ``benchmarks/bench_vs_cpp.py`` (``ref_diff_small_robot.world.xml``: one small_robot,
  twist_pid, no sensors), driven at 0.5 m/s, 0.5 rad/s.

Figures:

* µs per World.step: after 1 simulated second of warm-up, blocks of ``--steps`` steps, wall time over steps;
* µs per env.step (goal only): one ``MvsimEnv`` (``gymnasium.make("mvsim/GoalReaching-v0")``, 20 physics steps of 5 ms
  per env step), actions drawn from the action space seeded with 0, episodes reset when they end (the resets are not
  timed), after 20 env steps of warm-up;
* the per-stage breakdown (``--profile``): the stages of the step and some of their calls wrapped with perf_counter
  timers (a child's time is part of its parent's), µs per step; every wrapper adds its own cost (measured and printed
  as "timer cost per call"), so the wrapped step is slower than the plain one.

    .venv/bin/python benchmarks/bench_step_overhead.py [--rounds 5] [--steps 4000] [--world goal one] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mvsim_core.world import World

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
ONE_WORLD = SHARED / "reference-trajectories" / "ref_diff_small_robot.world.xml"
TWISTS = {"goal": (0.2, 0.0, 1.0), "one": (0.5, 0.0, 0.5)}  # m/s, m/s, rad/s
BLOCKS = 5  # timed blocks per process

# (key, owner, attribute, parent key): the calls timed by --profile, "module:Class" or "module" (a kernel looked up
# as a module global by its caller); a child's time is part of its parent's
PHASES = [
    ("animate", "mvsim_core.dynamics.physics:Physics", "animate", None),
    ("fit_terrain", "mvsim_core.dynamics.physics:Physics", "fit_terrain", None),
    ("run_controllers", "mvsim_core.dynamics.physics:Physics", "run_controllers", None),
    ("TwistPidBatch.run", "mvsim_core.dynamics.controllers.twist_pid_batch:TwistPidBatch", "run", "run_controllers"),
    ("apply_friction", "mvsim_core.dynamics.physics:Physics", "apply_friction", None),
    ("vehicle_forces kernel", "mvsim_core.dynamics.physics", "vehicle_forces", "apply_friction"),
    ("BoundBodies.apply", "mvsim_core.dynamics.bodies:BoundBodies", "apply", "apply_friction"),
    ("box2d_step", "mvsim_core.dynamics.physics:Physics", "box2d_step", None),
    ("post_step", "mvsim_core.dynamics.physics:Physics", "post_step", None),
    ("BoundBodies.read_states", "mvsim_core.dynamics.bodies:BoundBodies", "read_states", "post_step"),
    ("post_update kernel", "mvsim_core.dynamics.physics", "post_update", "post_step"),
    ("_collisions", "mvsim_core.dynamics.physics:Physics", "_collisions", "post_step"),
    ("scheduler.run", "mvsim_core.sensors.scheduler:SensorScheduler", "run", None),
    ("_write_logs", "mvsim_core.world:World", "_write_logs", None),
]


def goal_env() -> Any:
    """``gymnasium.make("mvsim/GoalReaching-v0")``, its action space seeded with 0, reset with seed 0."""
    sys.path.insert(0, str(REPO))
    import gymnasium

    import mvsim_core  # noqa: F401  (registers the ids)

    env = gymnasium.make("mvsim/GoalReaching-v0")
    env.action_space.seed(0)
    env.reset(seed=0)
    return env


def world_of(case: str) -> World:
    """The started world of ``case``, its vehicles commanded :data:`TWISTS`."""
    if case == "goal":
        world = goal_env().unwrapped.world
    else:
        sys.path.insert(0, str(REPO))
        import mvsim_core as mv

        world = mv.load_world(ONE_WORLD)
        world.start()
    for veh in world.vehicles.values():
        veh.set_twist(*TWISTS[case])
    return world


def timed_steps(world: World, steps: int) -> list[float]:
    """µs per World.step of :data:`BLOCKS` blocks of ``steps`` steps, after 1 simulated second of warm-up."""
    world.run(1.0)
    out = []
    step = world.step
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        out.append(1e6 * (time.perf_counter() - t0) / steps)
    return out


def timed_env_steps(steps: int) -> list[float]:
    """µs per env.step of :data:`BLOCKS` blocks of ``steps`` env steps (resets not timed), after 20 of warm-up."""
    env = goal_env()
    space = env.action_space

    def block(n: int) -> float:
        wall = 0.0
        for _ in range(n):
            action = space.sample()
            t0 = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            wall += time.perf_counter() - t0
            if terminated or truncated:
                env.reset()
        return wall

    block(20)
    return [1e6 * block(steps) / steps for _ in range(BLOCKS)]


def _timer(table: dict[str, float], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped so that its wall time (s) adds up in ``table[key]``."""
    def timed(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            table[key] += time.perf_counter() - t
    return timed


def timer_cost() -> float:
    """µs a :func:`_timer` wrapper adds to one call (of a no-op), median of 5 blocks."""
    table = {"x": 0.0}
    wrapped = _timer(table, "x", lambda: None)
    plain = lambda: None  # noqa: E731
    costs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(100_000):
            wrapped()
        t1 = time.perf_counter()
        for _ in range(100_000):
            plain()
        t2 = time.perf_counter()
        costs.append(10.0 * ((t1 - t0) - (t2 - t1)))  # µs per call: s / 1e5 * 1e6
    return statistics.median(costs)


def profile(case: str, steps: int) -> dict[str, Any]:
    """µs per step of each phase of :data:`PHASES` (wrapped after the warm-up) and of the wrapped step."""
    import importlib

    world = world_of(case)
    world.run(1.0)
    table = dict.fromkeys([p[0] for p in PHASES], 0.0)
    for key, owner, attr, _ in PHASES:
        mod_name, _, cls_name = owner.partition(":")
        target = importlib.import_module(mod_name)
        if cls_name:
            target = getattr(target, cls_name)
        setattr(target, attr, _timer(table, key, getattr(target, attr)))
    n = steps * BLOCKS
    t0 = time.perf_counter()
    for _ in range(n):
        world.step()
    wall = time.perf_counter() - t0
    return {"step_us": 1e6 * wall / n, "phases": {k: 1e6 * v / n for k, v in table.items()},
            "timer_us": timer_cost()}


def child(spec: dict[str, Any]) -> dict[str, Any]:
    if spec["kind"] == "step":
        return {"us": timed_steps(world_of(spec["case"]), spec["steps"])}
    if spec["kind"] == "env":
        return {"us": timed_env_steps(spec["steps"])}
    return profile(spec["case"], spec["steps"])


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)], env=env,
                         capture_output=True, text=True, check=True).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def figures(kind: str, case: str, steps: int, rounds: int) -> tuple[float, list[float]]:
    """(median over processes of each one's median µs, the per-process medians)."""
    medians = [statistics.median(run_child({"kind": kind, "case": case, "steps": steps})["us"])
               for _ in range(rounds)]
    return statistics.median(medians), medians


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="fresh processes per figure (default %(default)s)")
    ap.add_argument("--steps", type=int, default=4000, help="World.steps per timed block (default %(default)s)")
    ap.add_argument("--env-steps", type=int, default=200, help="env.steps per timed block (default %(default)s)")
    ap.add_argument("--world", action="append", choices=list(TWISTS), default=[], help="only these worlds")
    ap.add_argument("--profile", action="store_true", help="print the per-stage breakdown too")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(json.loads(a.child))))
        return
    cases = a.world or list(TWISTS)
    print(f"{a.rounds} fresh processes per figure, {BLOCKS} blocks each, {os.cpu_count()} CPUs; "
          f"median of the processes' medians (the per-process medians in brackets)\n")
    print("| world | µs per World.step | µs per env.step |")
    print("|---|---:|---:|")
    for case in cases:
        step, per = figures("step", case, a.steps, a.rounds)
        cell = f"{step:.1f} [{', '.join(f'{x:.1f}' for x in per)}]"
        env_cell = "—"
        if case == "goal":
            env_us, env_per = figures("env", case, a.env_steps, a.rounds)
            env_cell = f"{env_us:.0f} [{', '.join(f'{x:.0f}' for x in env_per)}]"
        print(f"| {case} | {cell} | {env_cell} |")
    if not a.profile:
        return
    for case in cases:
        r = run_child({"kind": "profile", "case": case, "steps": a.steps})
        print(f"\n{case}: wrapped step {r['step_us']:.1f} µs; timer cost per call {r['timer_us']:.2f} µs "
              f"(included in every row)\n")
        print("| phase | µs per step |")
        print("|---|---:|")
        top = 0.0
        for key, _, _, parent in PHASES:
            t = r["phases"][key]
            if parent is None:
                top += t
            print(f"| {'&nbsp;&nbsp;↳ ' + key if parent else key} | {t:.2f} |")
        print(f"| rest (World.step's own code) | {r['step_us'] - top:.2f} |")


if __name__ == "__main__":
    main()

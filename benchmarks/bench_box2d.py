"""Benchmark: what one Box2D step costs per body at 1k-10k bodies (issue 35, fleets), Box2D v2 or v3.

What it measures: N bodies shaped as :mod:`mvsim_core.dynamics.bodies` builds upstream's ``small_robot`` (the
chassis hexagon, 15 kg, plus two 0.4 m x 0.2 m wheel boxes, 4 kg each, in collision category 0x0002), 100 to a row,
gravity (0, 0), ``dt`` 0.01 s, in the cases of :data:`CASES`: at rest (allowed to sleep, or not), moving at 0.5 m/s
along +x (all the same velocity, so that they keep their places and never touch) with 1, 2 or 3 fixtures per body,
far apart (8 m, as ``bench_fleet.py --run``) or close (1.25 m: the wheels of neighbours in a column 5 cm apart, so
that every robot has broad-phase pairs and non-touching contacts), with the robots' filter set so that they never
collide with each other (mask without their own category) or the default one, fewer solver iterations, continuous
collision off, and the two wheel fixtures made anew every step (as upstream does). Every (backend, case, N) runs
``--repeat`` times, each in a fresh process: the bodies are built, ``--warmup`` steps run (so that bodies at rest
fall asleep: Box2D needs 0.5 s), then steps in blocks of 10 until ``--seconds`` of wall time have passed; the table
shows the median of the repeats: CPU µs per step and per body (the process's time, all threads of a v3 pool
together: on a shared machine it is steadier than wall time) and wall µs per step, with the bodies awake and the
contacts (v2) after the timing as a check.

    .venv/bin/python benchmarks/bench_box2d.py [--backend v2] [--bodies 1000 2000 5000 10000] [--cases ...]
        [--repeat 3] [--seconds 1] [--warmup 60]
    /tmp/b2d3/bin/python benchmarks/bench_box2d.py --backend v3 [--threads 0 1 2]   # a venv with pyb2d3 and numpy

``--backend v2`` is pybox2d (``import Box2D``, Box2D 2.3), as the simulator uses it; ``--backend v3`` is pyb2d3
(Box2D 3.x), with ``--threads 0`` (no task system: Box2D runs everything on the calling thread) and ``1``/``2``
(pyb2d3's ``ThreadPool`` of that many workers); its solver's ``sub_step_count`` is 4 (v3's default) unless the case
says otherwise. Nothing of mvsim_core is imported: the bodies are made here, so that either venv runs it.

Findings (dev machine: 2 shared AMD EPYC cores, 2 MiB L2 each, 32 MiB L3; CPU µs per step, median of 3 fresh
processes, 1k / 10k bodies; other people's jobs ran beside it, so expect ±30 %, more at 10k):

* v2, what a body costs: asleep 9 / 133 (0.01 µs per body), awake at rest 332 / 4323, moving with 1, 2, 3 fixtures
  292 / 3393, 339 / 4184, 379 / 5385: an awake body costs 0.3-0.5 µs, each fixture 0.05-0.1 µs more. A perf profile
  (10k moving, 3 fixtures) splits the step into 35 % ``b2Timer`` (``gettimeofday``: Box2D 2.3's ``b2Island::Solve``
  times every island, and a body that touches nothing is an island of its own), 35 % fixture AABBs
  (``b2Fixture::Synchronize``, two ``ComputeAABB`` per fixture), 12 % broad-phase tree (moves, queries), 11 %
  islands, solver and TOI. pybox2d holds the GIL through ``Step``.
* v2 and v3, turning at 0.25 rad/s as well (as ``bench_fleet.py``'s robots; measured later, on a busier machine,
  beside move-3 of the same run): v2 497 / 7330 against 413 / 7137, v3 (no pool) 258 / 9088 against 187 / 6895: a
  turning body's boxes leave their fattened AABBs sooner.
* v2, what does not matter far apart: the robot-robot filter (5794 against 5385: Box2D filters a pair after finding
  it, and 8 m apart there are none), 1/1 iterations (5619: nothing to iterate without contacts), continuous collision
  off (5291).
* v2, what matters close (1.25 m, 29,900 non-touching contacts at 10k): 602 / 13410; filtering robot-robot pairs
  out 420 / 6350; 1/1 iterations 591 / 11803.
* v2, re-making the two wheel fixtures every step (upstream does so for every wheel): 20931 / 256813, 21-26 µs per
  body, 50 times the step (the simulator re-makes a wheel box only when its steering turned it, bodies.py).
* v3 (pyb2d3 0.11.1, Box2D >= 3.1, built for SSE2: no AVX2 instruction in the wheel; 4 sub-steps), moving with 3
  fixtures: no task system 173 / 5786, 2.2 times faster than v2 up to 2k bodies but no faster at 10k (5k: 1067);
  its profile (10k) has 29 % of the samples on one load of a shape's type in the AABB update: by all appearances a
  cache miss, the shapes of 10k bodies no longer in cache.
  ``ThreadPool(1)`` is slower than none everywhere (386 / 10789); ``ThreadPool(2)`` takes 268 / 3137 µs of wall time
  (5581 CPU) at 10k. Asleep: 0 µs without a pool. 1 sub-step instead of 4: 154 / 4412. Close: 272 / 6861, 201 / 4636
  with the filter.
* For the simulator (issue 35): ``bench_fleet.py --run`` with 10k small_robots spends 6.3 of its 9.3 ms step in
  ``b2World.Step``, about "move-3" here (5.4 ms): that world has exactly 3 fixtures per robot, no contact, no joint,
  and no fixture is made or destroyed while it runs, so Box2D does nothing there that we could leave out without
  changing what it computes. Fewer fixtures (move-1: -2 ms at 10k) would change the robots' outline and mass
  distribution; sleeping saves 97 % of a parked body, but the forces applied every step wake every vehicle (as
  upstream's ``ApplyForceToCenter(wake=true)`` does), a body put to sleep loses its residual velocity, and the fleet
  drives: neither is a safe cut. v3 would save about 2 ms of the 9.3 ms fleet step at 10k with 2 workers, nothing
  single-threaded, more for fleets of 1-2k, and it simulates differently from v2 (soft-step solver), which the C++
  reference trajectories come from.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

DT = 0.01  # s per step
PER_ROW = 100
CHASSIS = [(0.6, -0.3), (0.6, 0.3), (0.4, 0.5), (-0.4, 0.5), (-0.4, -0.5), (0.4, -0.5)]
"""small_robot's chassis polygon (m, body frame): the default outline of a differential vehicle."""
CHASSIS_MASS, WHEEL_MASS = 15.0, 4.0  # kg
WHEEL_HALF = (0.2, 0.1)  # m: half of the 0.4 m diameter and of the 0.2 m width
WHEEL_Y = 0.5  # m: the wheels' lateral position (left +, right -)
CHASSIS_FRICTION, CHASSIS_RESTITUTION = 0.0, 0.01  # as mvsim_core.dynamics.bodies
WHEEL_FRICTION, WHEEL_RESTITUTION = 0.5, 0.05  # as mvsim_core.dynamics.fixtures
ROBOT_CATEGORY = 0x0002  # mvsim_core.dynamics.fixtures.VEHICLE_CATEGORY
NOT_ROBOTS = 0xFFFF & ~ROBOT_CATEGORY
FAR, CLOSE = 8.0, 1.25  # m between neighbours
SPEED = 0.5  # m/s


@dataclass(frozen=True)
class Case:
    """One scene: how the N bodies are made and stepped."""

    name: str
    text: str
    fixtures: int = 3  # chassis, + left wheel, + right wheel
    speed: float = SPEED  # m/s along +x, every body (its centre of mass)
    spin: float = 0.0  # rad/s, every body
    spacing: float = FAR  # m between neighbours
    sleep: bool = True  # bodies allowed to sleep
    no_robot_pairs: bool = False  # mask without the robots' category: they never collide with each other
    vel_iters: int = 8  # v2 solver iterations (velocity / position)
    pos_iters: int = 3
    substeps: int = 4  # v3 solver sub-steps
    continuous: bool = True
    remake_wheels: bool = False  # destroy and create the wheel fixtures every step (v2 only)


CASES = [
    Case("rest-sleep", "at rest, allowed to sleep", speed=0.0),
    Case("rest-awake", "at rest, never asleep", speed=0.0, sleep=False),
    Case("move-1", "moving, chassis only (1 fixture)", fixtures=1),
    Case("move-2", "moving, chassis + 1 wheel", fixtures=2),
    Case("move-3", "moving, chassis + 2 wheels (small_robot)"),
    Case("spin-3", "moving and turning 0.25 rad/s (as bench_fleet's robots)", spin=0.25),
    Case("move-3-nopairs", "moving, robots never collide with each other", no_robot_pairs=True),
    Case("close-3", f"moving, {CLOSE:g} m apart (broad-phase pairs)", spacing=CLOSE),
    Case("close-3-nopairs", f"moving, {CLOSE:g} m apart, robots never collide", spacing=CLOSE, no_robot_pairs=True),
    Case("move-3-iters1", "moving, 1/1 iterations (v2), 1 sub-step (v3)", vel_iters=1, pos_iters=1, substeps=1),
    Case("close-3-iters1", f"moving, {CLOSE:g} m apart, 1/1 iterations, 1 sub-step", spacing=CLOSE, vel_iters=1,
         pos_iters=1, substeps=1),
    Case("move-3-noccd", "moving, continuous collision off", continuous=False),
    Case("move-3-remake", "moving, wheel fixtures made anew every step (upstream)", remake_wheels=True),
]
BY_NAME = {c.name: c for c in CASES}


def _grid(n: int, spacing: float) -> list[tuple[float, float]]:
    """Origins (m, world frame) of n bodies ``spacing`` m apart, :data:`PER_ROW` to a row along +x, rows along +y."""
    return [(spacing * (i % PER_ROW), spacing * (i // PER_ROW)) for i in range(n)]


class V2Scene:
    """The case on a pybox2d ``b2World``, bodies and fixtures made as the simulator makes them."""

    def __init__(self, case: Case, n: int) -> None:
        import Box2D

        self.case = case
        self.world = Box2D.b2World(gravity=(0.0, 0.0), doSleep=True)
        self.world.continuousPhysics = case.continuous
        mask = NOT_ROBOTS if case.no_robot_pairs else 0xFFFF
        self.filt = {"categoryBits": ROBOT_CATEGORY, "maskBits": mask}
        chassis_density = CHASSIS_MASS / _area(CHASSIS)
        self.bodies = []
        self.wheels: list[list[Any]] = []
        for x, y in _grid(n, case.spacing):
            b = self.world.CreateDynamicBody(position=(x, y), angle=0.0, allowSleep=case.sleep)
            b.CreatePolygonFixture(vertices=CHASSIS, density=chassis_density, friction=CHASSIS_FRICTION,
                                   restitution=CHASSIS_RESTITUTION, **self.filt)
            self.wheels.append([self._wheel(b, side) for side in (1.0, -1.0)[:case.fixtures - 1]])
            b.linearVelocity = (case.speed, 0.0)
            b.angularVelocity = case.spin
            self.bodies.append(b)

    def _wheel(self, body: Any, side: float) -> Any:
        hx, hy = WHEEL_HALF
        return body.CreatePolygonFixture(box=(hx, hy, (0.0, side * WHEEL_Y), 0.0),
                                         density=WHEEL_MASS / (4 * hx * hy), friction=WHEEL_FRICTION,
                                         restitution=WHEEL_RESTITUTION, **self.filt)

    def step(self) -> None:
        """One ``b2World.Step`` of :data:`DT` (after re-making the wheel fixtures, when the case says so)."""
        if self.case.remake_wheels:
            for b, fixtures in zip(self.bodies, self.wheels, strict=True):
                for i, side in enumerate((1.0, -1.0)[:len(fixtures)]):
                    b.DestroyFixture(fixtures[i])
                    fixtures[i] = self._wheel(b, side)
        self.world.Step(DT, self.case.vel_iters, self.case.pos_iters)

    def x0(self) -> float:
        """x (m, world frame) of the first body's centre of mass."""
        return float(self.bodies[0].worldCenter[0])

    def awake(self) -> int:
        return sum(b.awake for b in self.bodies)

    def contacts(self) -> int | None:
        return int(self.world.contactCount)


class V3Scene:
    """The case on a pyb2d3 world (Box2D 3.x): the same shapes, densities, materials and filters."""

    def __init__(self, case: Case, n: int, threads: int) -> None:
        import pyb2d3 as b2

        self.case = case
        self.pool = b2.ThreadPool(threads) if threads > 0 else None
        self.world = (b2.World(thread_pool=self.pool, gravity=(0.0, 0.0)) if self.pool is not None
                      else b2.World(gravity=(0.0, 0.0)))
        self.world.continuous_enabled = case.continuous
        mask = NOT_ROBOTS if case.no_robot_pairs else 0xFFFFFFFFFFFFFFFF
        filt = b2.Filter()
        filt.category_bits, filt.mask_bits = ROBOT_CATEGORY, mask
        hx, hy = WHEEL_HALF
        chassis_def = b2.shape_def(density=CHASSIS_MASS / _area(CHASSIS), filter=filt,
                                   material=b2.surface_material(friction=CHASSIS_FRICTION,
                                                                restitution=CHASSIS_RESTITUTION))
        wheel_def = b2.shape_def(density=WHEEL_MASS / (4 * hx * hy), filter=filt,
                                 material=b2.surface_material(friction=WHEEL_FRICTION, restitution=WHEEL_RESTITUTION))
        chassis = b2.polygon(CHASSIS)
        wheels = [b2.box(hx, hy, center=(0.0, side * WHEEL_Y)) for side in (1.0, -1.0)[:case.fixtures - 1]]
        self.bodies = []
        for x, y in _grid(n, case.spacing):
            b = self.world.create_dynamic_body(position=(x, y), linear_velocity=(case.speed, 0.0),
                                               angular_velocity=case.spin,
                                               enable_sleep=case.sleep)
            b.create_shape(chassis_def, chassis)
            for w in wheels:
                b.create_shape(wheel_def, w)
            self.bodies.append(b)

    def step(self) -> None:
        """One v3 world step of :data:`DT` in the case's sub-steps."""
        self.world.step(DT, self.case.substeps)

    def x0(self) -> float:
        """x (m, world frame) of the first body's centre of mass."""
        return float(self.bodies[0].world_center_of_mass()[0])

    def awake(self) -> int:
        return sum(b.awake for b in self.bodies)

    def contacts(self) -> int | None:
        return None  # pyb2d3 0.11 does not expose the contact count


def _area(poly: list[tuple[float, float]]) -> float:
    """Area (m²) of a simple CCW polygon."""
    return 0.5 * sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1], strict=True))


def child(spec: dict) -> dict:
    """In the child: build one case, warm up, time whole blocks of steps (see the module's docstring)."""
    case = Case(**spec["case"])
    if case.remake_wheels and spec["backend"] == "v3":
        return {"skipped": "pyb2d3 0.11 cannot destroy a shape"}
    n = spec["bodies"]
    t0 = time.perf_counter()
    scene = V2Scene(case, n) if spec["backend"] == "v2" else V3Scene(case, n, spec["threads"])
    build_s = time.perf_counter() - t0
    for _ in range(spec["warmup"]):
        scene.step()
    x0 = scene.x0()
    steps = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while True:
        for _ in range(10):
            scene.step()
        steps += 10
        wall = time.perf_counter() - t0
        if wall >= spec["seconds"]:
            break
    cpu = time.process_time() - c0
    moved = scene.x0() - x0
    want = case.speed * steps * DT
    if abs(moved - want) > 1e-3 * max(1.0, want):
        raise SystemExit(f"{case.name}: the first body moved {moved:.4f} m in {steps} steps, expected {want:.4f}")
    return {"us_step": 1e6 * cpu / steps, "wall_us_step": 1e6 * wall / steps, "steps": steps, "build_s": build_s,
            "awake": scene.awake(), "contacts": scene.contacts()}


def run_case(args: argparse.Namespace, case: Case, n: int, threads: int) -> list[dict]:
    """``--repeat`` results of one (case, N, threads), each in a fresh interpreter."""
    spec = {"backend": args.backend, "case": asdict(case), "bodies": n, "threads": threads, "warmup": args.warmup,
            "seconds": args.seconds}
    out = []
    for _ in range(args.repeat):
        p = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"case {case.name}, {n} bodies failed (exit {p.returncode}):\n{p.stdout}{p.stderr}")
        out.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["v2", "v3"], default="v2")
    ap.add_argument("--bodies", type=int, nargs="+", default=[1000, 2000, 5000, 10000])
    ap.add_argument("--cases", nargs="+", default=[c.name for c in CASES], choices=list(BY_NAME), metavar="CASE",
                    help=f"some of: {', '.join(BY_NAME)}")
    ap.add_argument("--threads", type=int, nargs="+", default=[0, 1, 2],
                    help="v3: 0 = no task system, k = a ThreadPool of k workers (default %(default)s)")
    ap.add_argument("--repeat", type=int, default=3, help="fresh processes per case; the median is shown")
    ap.add_argument("--seconds", type=float, default=1.0, help="wall seconds timed per process")
    ap.add_argument("--warmup", type=int, default=60, help="steps before the timing (sleep takes 50)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    module = "Box2D" if args.backend == "v2" else "pyb2d3"
    if importlib.util.find_spec(module) is None:
        hint = "pip install pyb2d3" if args.backend == "v3" else "pip install box2d-py (pybox2d)"
        print(f"{module} is not installed: {hint}", file=sys.stderr)
        sys.exit(2)
    threads = args.threads if args.backend == "v3" else [0]
    print(f"Box2D {args.backend}, dt {DT:g} s, median of {args.repeat} fresh processes, {args.seconds:g} s timed "
          f"each after {args.warmup} steps\n")
    print("| case | what | threads | bodies | CPU µs per step | CPU µs per body | wall µs per step | awake "
          "| contacts |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.cases:
        case = BY_NAME[name]
        for th in threads:
            for n in sorted(args.bodies):
                rs = run_case(args, case, n, th)
                if "skipped" in rs[0]:
                    print(f"| {name} | {case.text} | {th if args.backend == 'v3' else '-'} | {n} "
                          f"| {rs[0]['skipped']} |||||", flush=True)
                    break
                us = statistics.median(r["us_step"] for r in rs)
                wall = statistics.median(r["wall_us_step"] for r in rs)
                contacts = rs[0]["contacts"]
                print(f"| {name} | {case.text} | {th if args.backend == 'v3' else '-'} | {n} | {us:.0f} "
                      f"| {us / n:.3f} | {wall:.0f} | {rs[0]['awake']} | {'-' if contacts is None else contacts} |",
                      flush=True)


if __name__ == "__main__":
    main()

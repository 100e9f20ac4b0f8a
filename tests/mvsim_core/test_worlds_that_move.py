"""Every upstream example world (``../shared/worlds``, searched recursively) with keyframe animations or walking
actors shows them moving (issue 16): 5 s of simulation, sampled every 0.25 s, each animated block and each actor
with a path is where its keyframes / path say (positions computed here, independently of the engine's tracks), and
its largest displacement from where it started is the one those positions give.

New example worlds with ``<animation`` or ``<actor`` are picked up without editing this file; finding none at all is
a failure (the example that should be there, ``mvsim_tutorial/demo_jackal.world.xml``, went missing).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv

DURATION = 5.0  # s of simulation per world
SAMPLE = 0.25  # s between samples
TOL = 0.01  # m: positions (Box2D is not involved: tracks are exact; this allows for the engine's own arithmetic)
MOVERS = re.compile(r"<animation\b|<actor\b")
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", Path(__file__).resolve().parents[2].parent / "shared"))
"""The shared data folder, as the ``shared_dir`` fixture finds it (the world list is needed at collection)."""


def moving_worlds() -> list[str]:
    """Example worlds whose text has an ``<animation`` or an ``<actor``, relative to the worlds folder."""
    root = SHARED / "worlds"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.world.xml") if MOVERS.search(p.read_text(
        errors="replace")))


WORLDS = moving_worlds() if (SHARED / "worlds").is_dir() else []


def test_some_example_world_has_moving_objects(worlds_dir):
    assert WORLDS, f"no *.world.xml under {worlds_dir} has <animation> or <actor>: demo_jackal's block is gone"
    assert "mvsim_tutorial/demo_jackal.world.xml" in WORLDS


# ---------------------------------------------------------------------------------------------- expected motion
def keyframe_xy(init: tuple[float, ...], frames: list, t: float) -> tuple[float, float]:
    """(x, y) (m, world) of a block with initial pose ``init`` (x, y, z, yaw, ...) and keyframes (t, (x, y, z, yaw,
    ...)) at time t: the keyframe offsets interpolated linearly at fmod(t, last keyframe time), turned by the initial
    yaw and added to the initial position (reference §1.13)."""
    times = np.array([f.t for f in frames])
    u = math.fmod(t, times[-1]) if times[-1] > 0 else 0.0
    ox = float(np.interp(u, times, [f.pose[0] for f in frames]))
    oy = float(np.interp(u, times, [f.pose[1] for f in frames]))
    c, s = math.cos(init[3]), math.sin(init[3])
    return init[0] + c * ox - s * oy, init[1] + s * ox + c * oy


def path_xy(actor, t: float) -> tuple[float, float]:
    """(x, y) of a walking actor at time t (reference §1.15): from its start (init pose, else its first waypoint)
    in straight legs to each waypoint at walking_speed (running_speed towards animation="run" ones), waiting
    ``pause`` s at each; looping back to the first waypoint and round again, or staying at the last one."""
    p = actor.params
    start = actor.sim.pose if actor.has_init_pose else actor.path[0].pose
    legs: list[tuple[tuple[float, float], tuple[float, float], float]] = []  # from, to, duration

    def go(a: tuple[float, float], wp) -> tuple[float, float]:
        b = (wp.pose[0], wp.pose[1])
        speed = float(p["running_speed"] if wp.animation == "run" else p["walking_speed"])
        legs.append((a, b, math.dist(a, b) / speed))
        if wp.pause > 0:
            legs.append((b, b, wp.pause))
        return b

    here = go((start[0], start[1]), actor.path[0])
    lead_in = sum(d for _, _, d in legs)
    periodic = actor.loop and len(actor.path) > 1
    for wp in actor.path[1:] + ([actor.path[0]] if periodic else []):
        here = go(here, wp)
    total = sum(d for _, _, d in legs)
    if periodic and t > lead_in:
        t = lead_in + math.fmod(t - lead_in, total - lead_in)
    for k, (a, b, d) in enumerate(legs):
        if t <= d or k == len(legs) - 1:
            f = min(t / d, 1.0) if d > 0 else 1.0
            return a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])
        t -= d
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------------------------- the worlds
@pytest.mark.parametrize("rel", WORLDS)
def test_animated_blocks_and_walking_actors_move_as_written(worlds_dir, rel):
    w = mv.load_world(worlds_dir / rel)
    movers: list[tuple[str, object, object]] = []  # (label, object, expected (x, y) at t)
    for b in w.blocks.values():
        if b.is_animated and not b.is_intangible:
            movers.append((f"block {b.name}", b, lambda t, b=b: keyframe_xy(b.sim.pose, b.sim.keyframes, t)))
    for a in w.actors.values():
        if a.path:
            movers.append((f"actor {a.name}", a, lambda t, a=a: path_xy(a, t)))
    assert movers, f"{rel} mentions <animation> or <actor> but loads no animated block or walking actor"
    w.start().sensor_scheduler.enabled = False  # the motion only: the sensors' views of it have their own tests
    start = {label: np.array(obj.pose[:2]) for label, obj, _ in movers}
    for label, _, want in movers:
        assert start[label] == pytest.approx(want(0.0), abs=TOL), label
    seen = {label: 0.0 for label, _, _ in movers}
    expect = {label: 0.0 for label, _, _ in movers}
    for k in range(1, round(DURATION / SAMPLE) + 1):
        t = k * SAMPLE
        w.run(t - w.time)
        for label, obj, want in movers:
            xy, ex = np.array(obj.pose[:2]), np.array(want(t))
            assert xy == pytest.approx(ex, abs=TOL), (label, t)
            seen[label] = max(seen[label], float(np.linalg.norm(xy - start[label])))
            expect[label] = max(expect[label], float(np.linalg.norm(ex - start[label])))
    for label, _, _ in movers:
        assert expect[label] > 0.1, f"{label} is written to move less than 10 cm in {DURATION} s"
        assert seen[label] == pytest.approx(expect[label], abs=TOL), label


def test_the_expected_motion_helpers_on_known_cases(tmp_path):
    """The helpers above, on motions worked out by hand: a keyframed block turned by its initial yaw, and a walker
    with a run leg, a pause and a loop."""
    (tmp_path / "w.world.xml").write_text(
        '<mvsim_world version="1.0"><block name="b"><init_pose>1 1 90</init_pose><animation type="keyframes">'
        '<time_pose>0 0 0 0</time_pose><time_pose>2 2 0 0</time_pose></animation></block>'
        '<actor name="a"><walking_speed>1</walking_speed><running_speed>2</running_speed><path>'
        '<waypoint>0 0 0</waypoint><waypoint pause="1" animation="run">4 0 0</waypoint><waypoint>4 3 0</waypoint>'
        '</path></actor></mvsim_world>')
    w = mv.load_world(tmp_path / "w.world.xml")
    b, a = w.blocks["b"], w.actors["a"]
    assert keyframe_xy(b.sim.pose, b.sim.keyframes, 1.0) == pytest.approx((1.0, 2.0))  # +x turned by 90°: +y
    assert keyframe_xy(b.sim.pose, b.sim.keyframes, 2.5) == pytest.approx((1.0, 1.5))  # period 2 s
    # (0,0) -run 2 s-> (4,0), pause 1 s, -walk 3 s-> (4,3), -walk 5 s-> (0,0); period 11 s
    for t, want in ((1.0, (2, 0)), (2.5, (4, 0)), (4.0, (4, 1)), (8.5, (2, 1.5)), (12.0, (2, 0)), (22.0, (0, 0))):
        assert path_xy(a, t) == pytest.approx(want), t


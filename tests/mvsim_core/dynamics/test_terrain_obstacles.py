"""Steep terrain steps act as walls (reference §2.1 step 1, last part): :class:`TerrainObstacles` puts static Box2D
squares on ground that rises more than 0.55 wheel diameters above a vehicle's ground, so a robot stops at the edge of
a raised platform or at an elevation-map cliff instead of driving through it.

The class is driven here by hand, ``update(state, z, pitch, roll)`` before each ``world.step()``, with the arrays of
``world.physics``. The default differential robot: chassis x ∈ [−0.4, 0.6] m, y ∈ [−0.5, 0.5] m, zmax 0.6 m (so
ground is looked for up to 0.63 m), wheels of 0.4 m diameter (step threshold 0.22 m) at y = ±0.5 m, 0.2 m wide.
Box2D 2.3 keeps touching polygons 2 cm apart (two 1 cm skins).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.dynamics.outline_band import BAND, band_samples, polygon_signed_distance
from mvsim_core.dynamics.terrain_obstacles import CELL, HALF_SIZE, SKIN_GAP, TerrainObstacles
from mvsim_core.objects.vehicles.base import Vehicle
from mvsim_core.objects.vehicles.differential import DIFFERENTIAL_CHASSIS

DT = 0.005
EDGE = 3.0  # m: x of the step edge in every world below
SKIN = 0.02
CHASSIS_FRONT = 0.6


def make_world(tmp_path: Path, body: str, name: str = "w.xml", dt: float = DT) -> mv.World:
    path = tmp_path / name
    path.write_text(f'<mvsim_world version="1.0">\n<simul_timestep>{dt}</simul_timestep>\n<gravity>9.81</gravity>\n'
                    f'{body}\n</mvsim_world>\n')
    return mv.load_world(path)


def robot(name: str, x: float, y: float = 0.0, *, ctrl: str = "twist_pid", cls: str = "differential",
          shape: str = "", yaw_deg: float = 0.0) -> str:
    return (f'<vehicle name="{name}"><dynamics class="{cls}"><chassis linear_damping="0" angular_damping="0">'
            f'{shape}</chassis>'
            f'<controller class="{ctrl}"><KP>30</KP><max_torque>100</max_torque></controller></dynamics>'
            f'<init_pose>{x} {y} {yaw_deg:g}</init_pose></vehicle>\n')


def plane(x_min: float, x_max: float, z: float, y_half: float = 5.0) -> str:
    return (f'<element class="horizontal_plane"><x_min>{x_min}</x_min><x_max>{x_max}</x_max><y_min>{-y_half}</y_min>'
            f'<y_max>{y_half}</y_max><z>{z}</z></element>\n')


def elevation(height) -> str:
    """An elevation map over x ∈ [−2, 8], y ∈ [−3, 3] at 0.1 m resolution with heights ``height(x)`` (rows ↔ +X)."""
    xs = -2.0 + 0.1 * np.arange(101)
    rows = [" ".join([f"{height(x):.6g}"] * 61) for x in xs]
    return (f'<element class="elevation_map"><resolution>0.1</resolution><corner_min_x>-2</corner_min_x>'
            f'<corner_min_y>-3</corner_min_y><elevation_data_matrix>[{"; ".join(rows)}]</elevation_data_matrix>'
            f'</element>\n')


TERRAINS = {
    # name: (world elements, x (m) where the ground first rises more than the 0.22 m threshold)
    # a 1 m platform next to the ground plane: taller than the chassis, so only "no ground up to the chassis top,
    # ground above it" makes it a wall
    "platform_1m": (plane(-10.0, EDGE, 0.0) + plane(EDGE, 10.0, 1.0), EDGE),
    # the same as an elevation-map cliff: it rises over the last 0.1 m cell before x = 3
    "cliff_1m": (elevation(lambda x: 1.0 if x >= EDGE - 1e-9 else 0.0), EDGE - 0.1 + 0.1 * 0.22 / 1.0),
    # a 0.4 m step: above the 0.22 m threshold, below the 0.63 m chassis top
    "step_0.4m": (elevation(lambda x: 0.4 if x >= EDGE - 1e-9 else 0.0), EDGE - 0.1 + 0.1 * 0.22 / 0.4),
}


def front_x(v: Vehicle) -> float:
    """World x (m) of the chassis vertex furthest along +x."""
    x, y, _, yaw, _, _ = v.pose
    fp = np.asarray(v.chassis.footprint, dtype=float)
    return float(np.max(x + math.cos(yaw) * fp[:, 0] - math.sin(yaw) * fp[:, 1]))


def obstacles_for(w: mv.World) -> TerrainObstacles:
    """The world's own terrain obstacles once the physics makes them, else a new set driven by :func:`step`."""
    p = w.start().physics
    own = getattr(p, "terrain_obstacles", None)
    return own if own is not None else TerrainObstacles(p.bodies, p.terrain, p.vehicles)


def without_obstacles(w: mv.World) -> mv.World:
    """``w`` with the physics' own terrain obstacles (if it has them) switched off."""
    own = getattr(w.start().physics, "terrain_obstacles", None)
    if own is not None:
        own.enabled = False
    return w


def step(w: mv.World, obs: TerrainObstacles | None, n: int = 1) -> None:
    """``n`` world steps, each after ``obs.update`` (for the physics' own set, the step's own call then finds
    nothing to do)."""
    p = w.start().physics
    for _ in range(n):
        if obs is not None:
            obs.update(p.state, p.z, p.pitch, p.roll)
        w.step()


# ---------------------------------------------------------------------------------------------- steps are walls
@pytest.mark.parametrize(("terrain", "ctrl"), [
    ("platform_1m", "twist_pid"),
    ("platform_1m", "twist_ideal"),
    ("cliff_1m", "twist_pid"),
    ("step_0.4m", "twist_pid"),
])
def test_vehicle_stops_before_a_step(tmp_path, terrain, ctrl):
    """A robot driven at 1 m/s towards a step whose top edge is x = 3 m: with the terrain obstacles no chassis
    vertex ever passes the edge, and it ends stopped, in contact, at the wall: the first cell whose centre lies
    where the ground is over the threshold starts within half a cell of that place, and the skins keep the chassis
    2 cm short of it. Without the obstacles the same robot drives on past the edge."""
    elements, x_step = TERRAINS[terrain]
    w = make_world(tmp_path, elements + robot("r", 0.0, ctrl=ctrl))
    obs = obstacles_for(w)
    assert not obs.flat
    v = w.vehicles["r"]
    v.set_twist(1.0, 0.0, 0.0)
    front = -math.inf
    for k in range(800):  # 4 s: 2.4 m to go at 1 m/s
        step(w, obs)
        front = max(front, front_x(v))
        assert front <= EDGE, (w.time, front)
        if k == 699:
            x_before = v.pose[0]
    assert x_step - HALF_SIZE - SKIN - 0.005 <= front <= x_step + HALF_SIZE - SKIN + 0.005
    assert v.pose[0] < EDGE - CHASSIS_FRONT
    assert abs(v.pose[0] - x_before) < 1e-3  # stopped (an ideal controller still reports its commanded twist)
    assert v.collision and obs.count > 0

    w2 = without_obstacles(make_world(tmp_path, elements + robot("r", 0.0, ctrl=ctrl), name="w2.xml"))
    v2 = w2.vehicles["r"]
    v2.set_twist(1.0, 0.0, 0.0)
    step(w2, None, 800)
    assert v2.pose[0] > EDGE + 0.5  # the reference point itself is well past the edge


@pytest.mark.parametrize("ctrl", ["twist_pid", "twist_ideal"])
@pytest.mark.parametrize("yaw_deg", [45.0, 80.0])
def test_fast_glancing_approach_does_not_get_through(tmp_path, ctrl, yaw_deg):
    """At 6 m/s and dt = 10 ms (6 cm per step) towards the platform edge at 45° and at a glancing 80°: the robot
    hits the wall and slides along it, and no chassis vertex ever passes x = 3 m."""
    body = plane(-100.0, EDGE, 0.0, 100.0) + plane(EDGE, 100.0, 1.0, 100.0) + robot("r", -1.0, ctrl=ctrl,
                                                                                   yaw_deg=yaw_deg)
    w = make_world(tmp_path, body, dt=0.01)
    obs = obstacles_for(w)
    v = w.vehicles["r"]
    v.set_twist(6.0, 0.0, 0.0)
    front = -math.inf
    for _ in range(600):
        step(w, obs)
        front = max(front, front_x(v))
    assert EDGE - 0.05 < front <= EDGE
    assert v.had_collision


def test_ceiling_is_no_wall(tmp_path):
    """A plane 1 m up over a floor that goes on under it (a table top, an upper storey) is above the 0.63 m chassis
    top with drivable ground below: the robot passes under it and no square is ever made."""
    w = make_world(tmp_path, plane(-10.0, 10.0, 0.0) + plane(EDGE, 10.0, 1.0) + robot("r", 0.0))
    obs = obstacles_for(w)
    v = w.vehicles["r"]
    v.set_twist(1.0, 0.0, 0.0)
    for _ in range(800):
        step(w, obs)
        assert obs.count == 0
    assert v.pose[0] > EDGE + 0.5
    assert obs.evaluations > 50  # the bands were evaluated all along


def test_gentle_slope_creates_no_fixture(tmp_path):
    """A 10 % slope rises 0.08 m over the 0.8 m from the robot's reference point to the far edge of its band, well
    under the 0.22 m threshold: the robot drives 3 m up it without a single square."""
    w = make_world(tmp_path, elevation(lambda x: 0.1 * (x + 2.0)) + robot("r", 0.0))
    obs = obstacles_for(w)
    v = w.vehicles["r"]
    v.set_twist(1.0, 0.0, 0.0)
    for _ in range(600):
        step(w, obs)
        assert obs.count == 0
    assert v.pose[0] > 2.5 and v.pose[2] > 0.4
    assert obs.evaluations > 50


def test_constant_steep_slope_needs_the_tilted_reference(tmp_path):
    """A four-wheel robot standing on a constant 30 % slope (rise 0.24 m over the 0.8 m to the front of its band,
    above its 0.22 m threshold): measured from its tilted ground plane (pitch and roll given) nothing is a step;
    measured from the level through its reference point (upstream's mean wheel height) the slope ahead would be."""
    w = make_world(tmp_path, elevation(lambda x: 0.3 * (x - 1.0)) + robot("r", 1.0, ctrl="twist_ideal",
                                                                           cls="differential_4_wheels"))
    p = w.start().physics
    step(w, None, 2)
    assert p.pitch[0] == pytest.approx(-math.atan(0.3), abs=1e-6)
    tilted, level = (TerrainObstacles(p.bodies, p.terrain, p.vehicles) for _ in range(2))
    tilted.update(p.state, p.z, p.pitch, p.roll)
    level.update(p.state, p.z)
    assert tilted.count == 0
    assert level.count > 0
    assert (level.centers()[:, 0] > p.state[0, 0] + CHASSIS_FRONT).all()  # uphill, ahead of the chassis


# ---------------------------------------------------------------------------------------------- bookkeeping
def chassis_distance(w: mv.World, name: str, pts: np.ndarray) -> np.ndarray:
    """Distance (m) of world points to the chassis polygon of ``name`` (negative inside)."""
    x, y, _, yaw, _, _ = w.vehicles[name].pose
    c, s = math.cos(yaw), math.sin(yaw)
    d = pts - (x, y)
    local = np.column_stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]])
    return polygon_signed_distance(local, np.asarray(w.vehicles[name].chassis.footprint, dtype=float))


def test_fixtures_only_near_the_vehicle_and_removed_after_it_leaves(tmp_path):
    """Driven against the platform edge, the robot gets squares only over the step (x >= 3) and only within its
    band (0.2 m beyond its outline, wheels included, + a cell diagonal); backing off 1 m removes every one."""
    w = make_world(tmp_path, TERRAINS["platform_1m"][0] + robot("r", 0.0))
    obs = obstacles_for(w)
    v = w.vehicles["r"]
    v.set_twist(1.0, 0.0, 0.0)
    step(w, obs, 700)
    centers = obs.centers()
    n = obs.count
    assert n > 10
    assert (centers[:, 0] > EDGE).all()
    assert (centers[:, 0] < EDGE + CELL).all()  # one column: the step cells behind it are shielded by it
    # wheels reach y = ±(0.5 + 0.224): nothing beyond the band around them
    assert (np.abs(centers[:, 1]) < 0.5 + math.hypot(0.2, 0.1) + BAND + CELL).all()
    assert (chassis_distance(w, "r", centers) < BAND + CELL * math.sqrt(2)).all()
    assert sum(obs.refcount.values()) == n and set(obs.refcount) == set(obs.fixtures)
    v.set_twist(-1.0, 0.0, 0.0)
    step(w, obs, 200)
    assert v.pose[0] < EDGE - CHASSIS_FRONT - 0.8
    assert obs.count == 0 and not obs.refcount
    assert not obs.body.fixtures


def test_cells_shared_by_two_vehicles_are_reference_counted(tmp_path):
    """Two robots with square-cornered chassis (x ∈ [−0.4, 0.6], y ∈ [−0.5, 0.5]) side by side, 0.3 m apart,
    facing the platform edge with their fronts 5 cm from it: the cells in front of the gap lie in both bands and
    count twice; moving one robot away keeps the other's squares, moving the other away clears all."""
    box = "<shape><pt>-0.4 -0.5</pt><pt>0.6 -0.5</pt><pt>0.6 0.5</pt><pt>-0.4 0.5</pt></shape>"
    body = (TERRAINS["platform_1m"][0] + robot("a", 2.35, 0.0, ctrl="twist_ideal", shape=box)
            + robot("b", 2.35, 1.3, ctrl="twist_ideal", shape=box))
    w = make_world(tmp_path, body)
    p = w.start().physics
    obs = obstacles_for(w)
    obs.update(p.state, p.z, p.pitch, p.roll)
    both = obs.count
    assert both > 0
    shared = {c for c, k in obs.refcount.items() if k == 2}
    assert shared and shared == obs.near[0] & obs.near[1]
    w.set_pose("b", -5.0, 1.3, 0.0)
    obs.update(p.state, p.z, p.pitch, p.roll)
    assert 0 < obs.count < both and set(obs.fixtures) == obs.near[0]
    assert set(obs.refcount.values()) == {1}
    assert (chassis_distance(w, "a", obs.centers()) < BAND + CELL * math.sqrt(2)).all()
    w.set_pose("a", -5.0, -1.0, 0.0)
    obs.update(p.state, p.z, p.pitch, p.roll)
    assert obs.count == 0


def test_no_square_is_made_on_top_of_a_vehicle(tmp_path):
    """A robot placed with its front 0.1 m over the platform edge: the step cells that would touch it get no square
    (every square keeps the 2 cm skin gap), the ones further out do, and the robot is not shoved."""
    w = make_world(tmp_path, TERRAINS["platform_1m"][0] + robot("r", EDGE + 0.1 - CHASSIS_FRONT, ctrl="twist_ideal"))
    p = w.start().physics
    obs = obstacles_for(w)
    x0 = p.state[0, 0]
    step(w, obs, 50)
    assert obs.count > 0
    # a square reaches half a diagonal from its centre
    assert (chassis_distance(w, "r", obs.centers()) >= HALF_SIZE * math.sqrt(2) + SKIN_GAP - 1e-9).all()
    assert abs(p.state[0, 0] - x0) < 1e-3


def test_no_square_is_made_under_another_vehicle(tmp_path):
    """Robot b stands on the platform, its back 5 cm beyond the edge and 0.6 m to the left, over the left part of
    where robot a (below, front 5 cm before the edge) would put its wall: a gets the right part only, no square
    touches b, and b is not shoved."""
    body = (TERRAINS["platform_1m"][0] + robot("a", EDGE - 0.05 - CHASSIS_FRONT, ctrl="twist_ideal")
            + robot("b", 0.0, ctrl="twist_ideal").replace("<init_pose>0.0 0.0 0</init_pose>",
                                                         f"<init_pose3d>{EDGE + 0.05 + 0.4} 0.6 1 0 0 0</init_pose3d>"))
    w = make_world(tmp_path, body)
    p = w.start().physics
    assert p.z.tolist() == [0.0, 1.0]
    obs = obstacles_for(w)
    b0 = p.state[1, :3].copy()
    step(w, obs, 50)
    assert obs.count > 0 and obs.near[0] and not obs.near[1]
    centers = obs.centers()
    assert centers[:, 1].min() < -0.2 and centers[:, 1].max() < 0.1
    assert (chassis_distance(w, "b", centers) >= HALF_SIZE * math.sqrt(2) + SKIN_GAP - 1e-9).all()
    assert np.abs(p.state[1, :3] - b0).max() < 1e-3


def test_band_samples_cover_the_band():
    """Samples lie outside the outline and at most BAND from it; and, for the (convex) chassis alone, every 5 cm
    world cell whose corners are all between one cell and BAND away from the outline (so the cell lies wholly in the
    band) holds one, whatever the yaw."""
    fp = np.array(DIFFERENTIAL_CHASSIS)
    pts, d = band_samples(fp, [(0.0, 0.5, math.hypot(0.2, 0.1)), (0.0, -0.5, math.hypot(0.2, 0.1))])
    assert len(pts) > 100 and d.min() >= 0.0 and d.max() <= BAND
    assert (polygon_signed_distance(pts, fp) >= 0.0).all()
    pts, _ = band_samples(fp, [])
    ij = np.stack(np.meshgrid(np.arange(-25, 25), np.arange(-25, 25), indexing="ij"), axis=-1).reshape(-1, 2)
    corners = (ij[:, None, :] + np.array([[0, 0], [1, 0], [0, 1], [1, 1]])[None]) * CELL  # (cells, 4, 2)
    for yaw in np.linspace(0.0, math.pi / 2, 7):
        c, s = math.cos(yaw), math.sin(yaw)
        world = np.column_stack([c * pts[:, 0] - s * pts[:, 1], s * pts[:, 0] + c * pts[:, 1]])
        hit = {(int(i), int(j)) for i, j in np.floor(world / CELL)}
        flat = corners.reshape(-1, 2)
        local = np.column_stack([c * flat[:, 0] + s * flat[:, 1], -s * flat[:, 0] + c * flat[:, 1]])
        dc = polygon_signed_distance(local, fp).reshape(-1, 4)
        inside = ((dc >= CELL) & (dc <= BAND)).all(axis=1)
        assert inside.sum() > 50
        missing = [tuple(x) for x in ij[inside].tolist() if tuple(x) not in hit]
        assert not missing, (yaw, missing)


# ---------------------------------------------------------------------------------------------- cost
def _per_call_us(obs: TerrainObstacles, w: mv.World, n: int = 20000) -> float:
    p = w.start().physics
    state, z, pitch, roll = p.state, p.z, p.pitch, p.roll
    obs.update(state, z, pitch, roll)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            obs.update(state, z, pitch, roll)
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def test_update_is_cheap_on_flat_ground(tmp_path):
    """On one level of ground (here: the implicit floor, and a static block whose top is ground for the attitude
    fit but which collides in Box2D anyway) ``update`` is a no-op; with steps about, a call where no robot moved
    is one compiled check. Timings are printed, not asserted."""
    wall = ('<block name="box"><static>true</static><init_pose>3 0 0</init_pose></block>')
    w = make_world(tmp_path, robot("r", 0.0) + wall)
    assert w.start().physics.terrain.flat_z is None  # the block top is terrain ...
    obs = obstacles_for(w)
    assert obs.flat  # ... but not ground these walls are made of
    assert obs._start.tolist() == [0, 0] and obs._xy.shape == (0, 2)  # (no bands sampled: never evaluated)
    flat_us = _per_call_us(obs, w)
    w2 = make_world(tmp_path, TERRAINS["platform_1m"][0] + robot("r", 2.3, ctrl="twist_ideal"), name="w2.xml")
    obs2 = obstacles_for(w2)
    idle_us = _per_call_us(obs2, w2)
    assert not obs2.flat and obs2.count > 0 and obs2.evaluations == 1 and obs2._start[-1] > 100
    print(f"\nTerrainObstacles.update: flat ground {flat_us:.2f} µs/call; steps about, nobody moved "
          f"{idle_us:.2f} µs/call")

"""The Box2D side of a world (mvsim_core.dynamics.bodies), on real Box2D: bodies, masses, friction joints, polygons,
vertical planes, joints, occupancy-grid obstacles, collisions and the batched state access."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import Box2D
import numpy as np
import pytest
from PIL import Image

import mvsim_core as mv
from mvsim_core.dynamics.bodies import Bodies
from mvsim_core.dynamics.box2d_raw import raw_layout_ok
from mvsim_core.dynamics.collision_flags import raw_contacts_ok
from mvsim_core.geometry.polygons import signed_area

DT = 0.005
G = 9.81
BOX04 = "<shape><pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape>"
RAW_MODES = [pytest.param(True, id="raw"), pytest.param(False, id="api")]


@pytest.fixture
def load(tmp_path: Path) -> Callable[[str], mv.World]:
    """``load(body)``: the world whose root holds ``body``, written to tmp_path."""

    def _load(body: str) -> mv.World:
        f = tmp_path / "w.xml"
        f.write_text(f'<mvsim_world version="1.0">\n{body}\n</mvsim_world>\n')
        return mv.load_world(f)

    return _load


def block(name: str, x: float, y: float, *, extra: str = "", shape: str = BOX04, mu: float = 0.0) -> str:
    return (f'<block name="{name}"><mass>10</mass><ground_friction>{mu}</ground_friction>'
            f'<linear_damping>0</linear_damping><angular_damping>0</angular_damping>{shape}{extra}'
            f'<init_pose>{x} {y} 0</init_pose></block>')


def run(b: Bodies, seconds: float, before: Callable[[], None] | None = None) -> None:
    for _ in range(int(round(seconds / DT))):
        if before is not None:
            before()
        b.step(DT)


# ------------------------------------------------------------------ vehicles
def test_vehicle_mass_com_inertia_and_damping(load):
    w = load('<vehicle name="v"><dynamics class="differential">'
             '<chassis mass="10" linear_damping="0.3" angular_damping="0.4"><shape><pt>-0.3 -0.3</pt><pt>0.7 -0.3</pt>'
             '<pt>0.7 0.3</pt><pt>-0.3 0.3</pt></shape></chassis>'
             '<l_wheel pos="0 0.5" mass="2" width="0.1" diameter="0.3"/>'
             '<r_wheel pos="0 -0.5" mass="3" width="0.1" diameter="0.3"/>'
             '</dynamics><init_pose>1 2 90</init_pose></vehicle>')
    b = Bodies(w)  # keep it: Box2D objects die with their b2World
    body = b.vehicle_bodies["v"]
    assert body.type == Box2D.b2_dynamicBody
    assert body.mass == pytest.approx(15.0, rel=1e-6)  # chassis + wheels
    # COM: chassis centroid (0.2, 0) x 10 kg, wheels at (0, ±0.5) x 2 / 3 kg
    assert tuple(body.localCenter) == pytest.approx((2.0 / 15, -0.5 / 15), abs=1e-6)
    # origin at the reference point, turned by the yaw
    assert tuple(body.position) == pytest.approx((1.0, 2.0)) and body.angle == pytest.approx(math.pi / 2)
    # rotational inertia about the origin: boxes m(a²+b²)/12 + m d²
    i_o = 10 * (1 + 0.36) / 12 + 10 * 0.2 ** 2 + 2 * 0.1 / 12 + 2 * 0.25 + 3 * 0.1 / 12 + 3 * 0.25
    assert body.inertia == pytest.approx(i_o, rel=1e-5)
    assert (body.linearDamping, body.angularDamping) == pytest.approx((0.3, 0.4))
    fx = {f.userData: f for f in body.fixtures}
    assert (fx["chassis"].friction, fx["chassis"].restitution) == pytest.approx((0.0, 0.01))
    assert (fx["l_wheel"].friction, fx["l_wheel"].restitution) == pytest.approx((0.5, 0.05))
    assert fx["l_wheel"].massData.mass == pytest.approx(2.0, rel=1e-6)


def test_initial_velocity_is_body_frame_of_the_reference_point(load):
    w = load('<vehicle name="v"><dynamics class="differential"/><init_pose>0 0 90</init_pose>'
             '<init_vel>1 0 30</init_vel></vehicle>')
    b = Bodies(w)
    body = b.vehicle_bodies["v"]
    assert body.localCenter.x != 0  # the default chassis puts the COM ahead of the axle
    x, y, yaw, vx, vy, om = b.read_states(["v"])[0]
    assert (vx, vy, om) == pytest.approx((0.0, 1.0, math.radians(30)), abs=1e-6)
    assert tuple(body.GetLinearVelocityFromWorldPoint(body.position)) == pytest.approx((0.0, 1.0), abs=1e-6)


def test_wheel_yaws_rebuild_only_changed_boxes(load):
    w = load('<vehicle name="car"><dynamics class="ackermann"/><init_pose>0 0 0</init_pose></vehicle>')
    b = Bodies(w)
    body = b.vehicle_bodies["car"]
    mass, lc, inertia = body.mass, tuple(body.localCenter), body.inertia
    wheels = w.vehicles["car"].wheels
    before = b.wheel_fixtures("car")
    yaws = np.array([wh.yaw for wh in wheels])
    assert not b.set_wheel_yaws("car", yaws + 5e-4)  # below the 1e-3 rad tolerance
    assert b.wheel_fixtures("car") == before
    steer = yaws.copy()
    steer[2:] += 0.3  # front wheels (fl, fr)
    assert b.set_wheel_yaws("car", steer)
    after = b.wheel_fixtures("car")
    assert after[:2] == before[:2] and all(a is not o for a, o in zip(after[2:], before[2:], strict=True))
    fl = wheels[2]
    v = np.array(after[2].shape.vertices)
    edge = v[1] - v[0]  # first edge runs along the wheel's local +x
    assert math.atan2(edge[1], edge[0]) == pytest.approx(0.3, abs=1e-5)
    assert v.mean(axis=0) == pytest.approx((fl.x, fl.y), abs=1e-5)
    # a box turned about its centre keeps the body's mass, COM and polar moment of inertia
    assert body.mass == pytest.approx(mass, rel=1e-6) and tuple(body.localCenter) == pytest.approx(lc, abs=1e-5)
    assert body.inertia == pytest.approx(inertia, rel=1e-5)
    assert len(body.fixtures) == len(before) + 1  # chassis + 4 wheels


# ------------------------------------------------------------------ blocks
def test_block_kinds(load):
    w = load(block("dyn", 0, 0, mu=0.5) + '<block name="st"><static>true</static><init_pose>5 0 0</init_pose></block>'
             '<block name="ghost"><intangible>true</intangible><init_pose>-5 0 0</init_pose></block>'
             '<walls><shape><pt>-10 -10</pt><pt>10 -10</pt></shape></walls>')
    b = Bodies(w)
    assert set(b.block_bodies) == {"dyn", "st", "wall_0001"}
    assert b.block_bodies["dyn"].type == Box2D.b2_dynamicBody
    assert b.block_bodies["dyn"].mass == pytest.approx(10.0, rel=1e-6)
    assert b.block_bodies["st"].type == Box2D.b2_staticBody
    assert b.block_bodies["wall_0001"].type == Box2D.b2_staticBody
    f = b.block_bodies["dyn"].fixtures[0]
    assert (f.friction, f.restitution) == pytest.approx((0.5, 0.01))
    assert list(b.friction_joints) == ["dyn"] and len(b.friction_joints["dyn"]) == 2
    r = math.hypot(0.2, 0.2)
    anchors = sorted(tuple(b.block_bodies["dyn"].GetLocalPoint(j.anchorB)) for j in b.friction_joints["dyn"])
    assert anchors == [pytest.approx((-r, 0.0), abs=1e-6), pytest.approx((r, 0.0), abs=1e-6)]
    assert all(j.maxForce == pytest.approx(0.5 * 0.5 * 10 * G) for j in b.friction_joints["dyn"])
    assert b.moving == ["dyn"]


def test_pushed_dynamic_block_moves_static_does_not(load):
    w = load(block("dyn", 0, 0) + '<block name="st"><static>true</static><init_pose>5 0 0</init_pose></block>')
    b = Bodies(w)
    run(b, 1.0, lambda: b.apply(["dyn", "st"], [20.0, 20.0], [0.0, 0.0], [0.0, 0.0]))
    s = b.read_states(["dyn", "st"])
    # a = F/m = 2 m/s² for 1 s
    assert s[0, 0] == pytest.approx(1.0, rel=0.02) and s[0, 3] == pytest.approx(2.0, rel=1e-3)
    assert s[1, :2] == pytest.approx((5.0, 0.0)) and s[1, 3] == 0.0


def test_ground_friction_brakes_a_pushed_block(load):
    mu, m, force = 0.5, 10.0, 100.0
    w = load(block("b", 0, 0, mu=mu, shape=""))
    b = Bodies(w)
    run(b, 1.0, lambda: b.apply(["b"], [force], [0.0], [0.0]))
    x0, _, _, v0, vy0, _ = b.read_states(["b"])[0]
    assert v0 == pytest.approx((force - mu * m * G) / m, rel=0.02)
    assert abs(vy0) < 1e-6
    run(b, 3.0)
    x1, _, yaw, v1, _, om = b.read_states(["b"])[0]
    assert abs(v1) < 1e-3 and abs(om) < 1e-6 and abs(yaw) < 1e-6
    assert x1 - x0 == pytest.approx(v0 ** 2 / (2 * mu * G), rel=0.10)


# ------------------------------------------------------------------ polygons
def test_big_and_non_convex_block_shapes_become_several_fixtures(load):
    a = np.arange(12) * math.pi / 6
    r = np.where(np.arange(12) % 2 == 0, 1.0, 0.4)
    star = np.column_stack([r * np.cos(a), r * np.sin(a)])  # 6 tips, not convex
    pts = "".join(f"<pt>{x:.6f} {y:.6f}</pt>" for x, y in star)
    w = load(block("star", 0, 0, shape=f"<shape>{pts}</shape>")
             + block("disc", 5, 0, shape='<geometry type="cylinder" radius="0.5" length="1" vertex_count="20"/>'))
    b = Bodies(w)
    body = b.block_bodies["star"]
    assert len(body.fixtures) >= 2
    area = sum(signed_area(np.array(f.shape.vertices)) for f in body.fixtures)
    assert area == pytest.approx(abs(signed_area(star)), rel=1e-5)
    assert body.mass == pytest.approx(10.0, rel=1e-5)
    disc = b.block_bodies["disc"]
    assert len(disc.fixtures) == 2 and disc.mass == pytest.approx(10.0, rel=1e-5)
    assert tuple(disc.localCenter) == pytest.approx((0.0, 0.0), abs=1e-6)


# ------------------------------------------------------------------ vertical planes, joints
def test_vertical_plane_door_lets_a_body_through_only_at_the_door(load):
    w = load('<element class="vertical_plane"><x0>2</x0><y0>-5</y0><x1>2</x1><y1>5</y1><thickness>0.1</thickness>'
             '<door position="0.5" width="1.2"/></element>' + block("thru", 0, 0) + block("blocked", 0, 3))
    b = Bodies(w)
    assert [len(p.fixtures) for p in b.plane_bodies] == [1, 1]  # the two pieces beside the door
    names = ["thru", "blocked"]
    run(b, 4.0, lambda: b.set_velocities(names, [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]))
    s = b.read_states(names)
    assert s[0, 0] == pytest.approx(4.0, abs=0.01)  # through the 1.2 m door
    assert 1.6 < s[1, 0] < 1.76  # stopped at the wall face (x = 1.95) minus its half size and the skins
    assert abs(s[1, 1] - 3.0) < 1e-3


def test_vertical_plane_far_from_the_origin_still_collides(load):
    """A plane's pieces are made about their centres: 10 km out, a 0.1 m thick wall used to have no area in Box2D's
    float32 and was dropped without a word."""
    w = load('<element class="vertical_plane"><x0>10002</x0><y0>-5</y0><x1>10002</x1><y1>5</y1>'
             '<thickness>0.1</thickness></element>' + block("b", 10000, 0))
    b = Bodies(w)
    assert len(b.plane_bodies[0].fixtures) == 1 and tuple(b.plane_bodies[0].position) == (10002.0, 0.0)
    assert np.abs(np.array(b.plane_bodies[0].fixtures[0].shape.vertices)).max() == pytest.approx(5.0)
    run(b, 2.0, lambda: b.set_velocities(["b"], [1.0], [0.0], [0.0]))
    assert 10001.6 < b.read_states(["b"])[0, 0] < 10001.76


def test_rope_joint_keeps_bodies_within_max_length(load):
    w = load(block("a", 0, 0) + block("b", 1.5, 0, extra="<init_vel>2 0 0</init_vel>")
             + '<joint type="rope" body_a="a" body_b="b" max_length="2"/>')
    b = Bodies(w)
    assert len(b.joints) == 1 and isinstance(b.joints[0], Box2D.b2RopeJoint)
    dists = []

    def measure() -> None:
        s = b.read_states(["a", "b"])
        dists.append(math.hypot(*(s[1, :2] - s[0, :2])))

    run(b, 2.0, measure)
    assert max(dists) == pytest.approx(2.0, abs=0.01)  # taut, never longer
    s = b.read_states(["a", "b"])
    assert s[0, 0] > 0.5  # a was pulled along
    assert s[0, 3] == pytest.approx(s[1, 3], abs=1e-3)  # moving together


def test_stiff_distance_joint_and_revolute_joint(load):
    w = load(block("a", 0, 0) + block("b", 1.5, 0) + block("c", 0, 5) + block("d", 1, 5, extra="<init_vel>0 1 0"
                                                                                         "</init_vel>")
             + '<joint type="distance" body_a="a" body_b="b" max_length="2" stiffness="100" damping="10"/>'
             + '<joint type="revolute" body_a="c" body_b="d" anchor_a="0.5 0" anchor_b="-0.5 0"/>')
    b = Bodies(w)
    dist, rope, rev = b.joints
    m_eff = 10 * 10 / 20
    assert dist.frequency == pytest.approx(math.sqrt(100 / m_eff) / (2 * math.pi), rel=1e-6)
    assert dist.dampingRatio == pytest.approx(10 / (2 * m_eff * math.sqrt(100 / m_eff)), rel=1e-6)
    assert dist.length == pytest.approx(2.0) and rope.maxLength == pytest.approx(2.0)
    run(b, 1.0)
    assert tuple(rev.anchorA) == pytest.approx(tuple(rev.anchorB), abs=5e-3)
    assert b.read_states(["d"])[0, 2] != pytest.approx(0.0, abs=0.05)  # d swung about the pin


# ------------------------------------------------------------------ occupancy grids
def _grid_world(load, tmp_path: Path, body: str) -> mv.World:
    img = Image.new("L", (40, 40), 255)
    for v in range(40):
        img.putpixel((30, v), 0)  # column at x in [1.0, 1.1] m
    img.save(tmp_path / "grid.png")
    w = load('<element class="occupancy_grid"><file>grid.png</file><resolution>0.1</resolution>'
             '<centerpixel_x>20</centerpixel_x><centerpixel_y>20</centerpixel_y></element>' + body)
    g = w.elements[0].grid
    assert (g.x_min, g.y_min, g.resolution) == pytest.approx((-2.0, -2.0, 0.1))
    return w


@pytest.mark.parametrize("raw", RAW_MODES)
def test_grid_cells_stop_a_moving_body(load, tmp_path, raw):
    w = _grid_world(load, tmp_path, block("b", 0, 0))
    b = Bodies(w, raw_access=raw)

    def pre() -> None:
        b.update_grid_obstacles()
        b.set_velocities(["b"], [1.0], [0.0], [0.0])

    run(b, 2.0, pre)
    x, y = b.read_states(["b"])[0, :2]
    assert 0.7 < x < 0.8  # the cells' face is at x = 1.0; half size 0.2 and the skins
    assert abs(y) < 1e-3


def test_grid_obstacles_only_near_moving_bodies(load, tmp_path):
    w = _grid_world(load, tmp_path, block("b", -1.5, 0) + block("b2", -1.5, 1.0)
                    + '<block name="st"><static>true</static><init_pose>0.8 1.5 0</init_pose></block>')
    b = Bodies(w)
    (g,) = b.grids
    assert g.fixtures == {} and len(g.body.fixtures) == 0  # nothing within reach of the moving block
    b.set_pose("b", 0.6, 0.0, 0.0)
    b.update_grid_obstacles()
    res = 0.1
    r = 1.5 * math.hypot(0.2, 0.2) + res
    centres = {k: g.cell_center(k) for k in g.fixtures}
    assert len(g.body.fixtures) == len(centres) > 0
    for cx, cy in centres.values():
        assert cx == pytest.approx(1.05)  # only occupied cells
        assert math.hypot(cx - 0.6, cy) <= r + res * math.sqrt(2)
    column = [(1.05, -2 + (iy + 0.5) * res) for iy in range(40)]
    must = {c for c in column if math.hypot(c[0] - 0.6, c[1]) <= r}
    assert len(must) >= 5  # completeness: every occupied cell within r has its square
    for c in must:
        assert any(math.hypot(c[0] - x, c[1] - y) < 1e-9 for x, y in centres.values())
    # the static block near the column does not pull obstacles around itself
    assert all(abs(y) < 1.0 for _, y in centres.values())
    kept = dict(g.fixtures)
    b.update_grid_obstacles()  # nothing moved: the same fixtures
    assert g.fixtures == kept
    f = next(iter(g.fixtures.values()))
    v = np.array(f.shape.vertices)
    assert np.ptp(v, axis=0) == pytest.approx((res, res))  # half-width 0.5 cell
    # a second moving body shares some cells; when the first leaves, only the second one's cells remain
    b.set_pose("b2", 0.6, 0.5, 0.0)
    b.update_grid_obstacles()
    both = set(g.fixtures)
    assert both > set(kept) and len(g.body.fixtures) == len(both)
    b.set_pose("b", -1.5, 0.0, 0.0)
    b.update_grid_obstacles()
    rest = {k: g.cell_center(k) for k in g.fixtures}
    assert rest and set(rest) < both and len(g.body.fixtures) == len(rest)
    assert all(math.hypot(cx - 0.6, cy - 0.5) <= r + res * math.sqrt(2) for cx, cy in rest.values())
    assert all(g.fixtures[k] is f for k, f in kept.items() if k in rest)  # shared cells were not rebuilt
    b.set_pose("b2", -1.5, 1.0, 0.0)
    b.update_grid_obstacles()
    assert g.fixtures == {} and g.refcount == {} and len(g.body.fixtures) == 0


# ------------------------------------------------------------------ collisions
@pytest.mark.parametrize("raw", RAW_MODES)
def test_collisions_flag_a_vehicle_pushed_against_a_wall(load, raw):
    w = load('<vehicle name="v"><dynamics class="differential"/><init_pose>0 0 0</init_pose></vehicle>'
             + block("far", 0, 10) + '<block name="ghost"><intangible>true</intangible><init_pose>0 -10 0</init_pose>'
             '</block><walls><shape><pt>3 -5</pt><pt>3 5</pt></shape><wallThickness>0.1</wallThickness></walls>')
    b = Bodies(w, raw_access=raw)
    b.step(DT)
    assert b.collisions(0.03) == {"v": False, "far": False, "ghost": False, "wall_0001": False}
    run(b, 3.0, lambda: b.apply(["v"], [200.0], [0.0], [0.0]))
    hit = b.collisions(0.03)
    assert hit["v"] and hit["wall_0001"] and not hit["far"] and not hit["ghost"]
    assert b.read_states(["v"])[0, 0] < 3 - 0.05 - 0.6 + 1e-3  # the chassis front (x + 0.6) stays out


@pytest.mark.parametrize("raw", RAW_MODES)
def test_collision_threshold_counts_near_misses(load, raw):
    # chassis front at x + 0.6; wall face at 2.95; cores 5 cm apart, skins (2 x 1 cm) 3 cm apart
    w = load('<vehicle name="v"><dynamics class="differential"/><init_pose>2.3 0 0</init_pose></vehicle>'
             '<walls><shape><pt>3 -5</pt><pt>3 5</pt></shape><wallThickness>0.1</wallThickness></walls>')
    b = Bodies(w, raw_access=raw)
    b.step(DT)
    assert not b.collisions(0.0)["v"]
    assert not b.collisions(0.02)["v"]
    assert b.collisions(0.04)["v"] and b.collisions(0.04)["wall_0001"]


def test_raw_and_api_collision_flags_agree(load, tmp_path):
    if not (raw_layout_ok() and raw_contacts_ok()):
        pytest.skip("this Box2D build has another layout")
    rng = np.random.default_rng(3)
    parts = []
    for i in range(10):
        x, y, yaw = rng.uniform(-2.5, 2.5), rng.uniform(-2.5, 2.5), rng.uniform(-180, 180)
        if i % 2:
            parts.append(f'<vehicle name="v{i}"><dynamics class="differential"/><init_pose>{x} {y} {yaw}</init_pose>'
                         '</vehicle>')
        else:
            parts.append(block(f"b{i}", x, y).replace(f"{x} {y} 0</init_pose>", f"{x} {y} {yaw}</init_pose>"))
    w = _grid_world(load, tmp_path, "".join(parts) + '<walls><shape><pt>-1.9 -1.9</pt><pt>1.9 -1.9</pt></shape>'
                    '</walls>')
    sims = [Bodies(w, raw_access=raw) for raw in (True, False)]
    assert sims[0]._contact_addrs is not None and sims[1]._contact_addrs is None
    seen, near_misses = set(), 0
    moving = sims[0].moving
    vel = rng.uniform(-2.0, 2.0, (3, len(moving)))
    for k in range(100):
        for sim in sims:
            sim.update_grid_obstacles()
            sim.set_velocities(moving, *vel)
            sim.step(DT)
        per_thr = []
        for thr in (0.0, 0.01, 0.03, 0.1):
            a, c = (sim.collisions(thr) for sim in sims)
            assert a == c, (k, thr)
            seen.add(tuple(a.values()))
            per_thr.append(a)
        near_misses += per_thr[0] != per_thr[-1]
    assert len(seen) > 5 and near_misses > 5  # contacts came and went, near misses among them


# ------------------------------------------------------------------ batched state access
@pytest.mark.parametrize("raw", RAW_MODES)
def test_read_states_set_velocities_round_trip_with_off_centre_com(load, raw):
    if raw and not raw_layout_ok():
        pytest.skip("this Box2D build has another b2Body layout")
    w = load('<vehicle name="v"><dynamics class="differential"/><init_pose>1 -2 23</init_pose></vehicle>'
             + block("b", 5, 5))
    b = Bodies(w, raw_access=raw)
    assert b.raw is raw
    body = b.vehicle_bodies["v"]
    assert body.localCenter.x == pytest.approx(0.0647, abs=1e-3)
    names = ["v", "b"]
    b.set_velocities(names, [0.7, -0.2], [-0.3, 0.1], [0.9, -0.4])
    want = [[1.0, -2.0, math.radians(23), 0.7, -0.3, 0.9], [5.0, 5.0, 0.0, -0.2, 0.1, -0.4]]
    assert b.read_states(names) == pytest.approx(np.array(want), abs=1e-6)
    b.b2world.Step(0.0, 8, 3)
    assert b.read_states(names) == pytest.approx(np.array(want), abs=1e-6)
    # the COM carries the rotation's share
    assert tuple(body.GetLinearVelocityFromWorldPoint(body.position)) == pytest.approx((0.7, -0.3), abs=1e-6)
    assert tuple(body.linearVelocity) != pytest.approx((0.7, -0.3), abs=1e-3)
    assert b.local_centers(["v"])[0] == pytest.approx(tuple(body.localCenter))


def test_raw_and_api_paths_simulate_alike(load):
    if not raw_layout_ok():
        pytest.skip("this Box2D build has another b2Body layout")
    xml = ('<vehicle name="v"><dynamics class="differential"/><init_pose>0 0 10</init_pose></vehicle>'
           + block("b", 1.5, 0.2, mu=0.5))
    sims = [Bodies(load(xml), raw_access=raw) for raw in (True, False)]
    names = ["v", "b"]
    for k in range(400):
        for s in sims:
            s.apply(names, [300.0, 0.0], [20.0, 0.0], [5.0 * math.sin(k / 50), 0.0])
            s.step(DT)
    a, c = (s.read_states(names) for s in sims)
    assert a == pytest.approx(c, abs=1e-6)
    assert a[1, 0] > 1.6  # the vehicle pushed the block


def test_sleeping_body_is_woken_by_apply(load):
    if not raw_layout_ok():
        pytest.skip("this Box2D build has another b2Body layout")
    b = Bodies(load(block("b", 0, 0)), raw_access=True)
    body = b.block_bodies["b"]
    body.awake = False
    b.apply(["b"], [10.0], [0.0], [0.0])
    assert body.awake
    b.step(0.1)
    assert b.read_states(["b"])[0, 3] == pytest.approx(0.1, rel=1e-4)


def test_unknown_names_are_errors(load):
    b = Bodies(load(block("b", 0, 0)))
    with pytest.raises(mv.MvsimError, match="no Box2D body named 'nope'"):
        b.read_states(["nope"])
    with pytest.raises(mv.MvsimError, match="no vehicle named"):
        b.set_wheel_yaws("b", [0.0])


@pytest.mark.parametrize("raw", RAW_MODES)
def test_bound_bodies_give_what_apply_and_read_states_into_give(load, raw):
    """Bodies.bind (what the physics calls every step): forces in, states out, the same to the bit as
    apply / read_states_into, with the arrays changed in place between calls, also when a body sleeps (the raw
    kernel declines, the body is woken) or is static (it ignores the force)."""
    xml = ('<vehicle name="v"><dynamics class="differential"/><init_pose>0 0 10</init_pose></vehicle>'
           + block("b", 1.5, 0.2, mu=0.5) + block("s", 0, 3, extra="<static>true</static>"))
    plain, bound = Bodies(load(xml), raw_access=raw), Bodies(load(xml), raw_access=raw)
    names = ["v", "b"]
    fx, fy, tq = np.zeros(2), np.zeros(2), np.zeros(2)
    out = np.zeros((2, 6))
    io = bound.bind(names, fx, fy, tq, out)
    wall_out = np.zeros((1, 6))
    wall = bound.bind(["s"], np.ones(1), np.ones(1), np.ones(1), wall_out)
    for k in range(300):
        if k == 150:  # asleep: apply must wake it in both
            for b in (plain, bound):
                b.block_bodies["b"].awake = False
        fx[:], fy[:], tq[:] = (300.0, 10.0 * k), (20.0, 0.0), (5.0 * math.sin(k / 50), 0.0)
        plain.apply(names, fx, fy, tq)
        io.apply()
        wall.apply()
        plain.step(DT)
        bound.step(DT)
        io.read_states()
        assert out.tolist() == plain.read_states(names).tolist(), k
        assert bound.block_bodies["b"].awake
    assert out[1, 0] > 1.6  # pushed by the vehicle
    wall.read_states()
    assert wall_out.tolist() == [[0.0, 3.0, 0.0, 0.0, 0.0, 0.0]]  # the static block stays put

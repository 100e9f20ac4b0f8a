"""Segment ray casting: polygon edges face outwards, the bucketed static set and the moving objects give the same
nearest hit as testing every edge, height ranges gate rays in 3D mode, and owners exclude their own vehicle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.sensors.raycast.segments import (
    SEEN_2D,
    SEEN_3D,
    MovingSegments,
    StaticSegments,
    cast_sets,
    polygon_edges,
    pseudo_angle,
    transform_polygon,
)

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])  # CCW unit square


def brute_force(seg: np.ndarray, ox: float, oy: float, ang: float, reach: float, h: float = 0.0,
                use_z: bool = False) -> float:
    """Nearest front-facing edge along the ray (every edge tested), or ``reach``."""
    dx, dy = math.cos(ang), math.sin(ang)
    ax, ay, ex, ey, z0, z1, modes = np.asarray(seg, dtype=float).reshape(-1, 7).T
    den = dx * ey - dy * ex
    with np.errstate(divide="ignore", invalid="ignore"):
        t = ((ax - ox) * ey - (ay - oy) * ex) / den
        u = ((ax - ox) * dy - (ay - oy) * dx) / den
    ok = (den < 0) & (t >= 0) & (t < reach) & (u >= 0) & (u <= 1)
    ok &= (modes.astype(int) & (SEEN_3D if use_z else SEEN_2D)) != 0
    if use_z:
        ok &= (z0 <= h) & (h <= z1)
    return float(t[ok].min()) if ok.any() else reach


def rays(n: int, ox, oy, ang, reach, h=0.0, use_z=False, visible=True, exclude=-1):
    """Keyword arguments of :func:`cast_sets` for n rays (scalars broadcast) and the ``out`` array (the reach)."""
    f = lambda v, dt=float: np.array(np.broadcast_to(np.asarray(v, dtype=dt), (n,)))
    ang = f(ang)
    return dict(ox=f(ox), oy=f(oy), dx=np.cos(ang), dy=np.sin(ang), height=f(h), use_z=f(use_z, np.bool_),
                visible=f(visible, np.bool_), exclude=f(exclude, np.int64)), f(reach)


def cast_static(s: StaticSegments, ox, oy, ang, reach, **kw) -> np.ndarray:
    n = np.size(ang) if np.ndim(ang) else max(np.size(ox), 1)
    r, out = rays(n, ox, oy, ang, reach, **kw)
    cast_sets(s, None, out=out, **r)
    return out


# ---------------------------------------------------------------------------------------------- polygon edges
def test_edges_are_counter_clockwise_whatever_the_input_order():
    ccw = polygon_edges(SQUARE, 0.0, 2.0)
    cw = polygon_edges(SQUARE[::-1], 0.0, 2.0)
    for rows in (ccw, cw):
        assert rows.shape == (4, 7)
        # CCW: the interior (0.5, 0.5) is on the left of every edge: cross(e, c − a) > 0
        cross = rows[:, 2] * (0.5 - rows[:, 1]) - rows[:, 3] * (0.5 - rows[:, 0])
        assert np.all(cross > 0)
        assert np.all(rows[:, 4] == 0.0) and np.all(rows[:, 5] == 2.0)


def test_modes_select_which_rays_see_a_segment():
    two_d = polygon_edges(SQUARE, 0.0, 1.0, SEEN_2D)
    three_d = polygon_edges(SQUARE + [0.0, 2.0], 0.0, 1.0, SEEN_3D)
    s = StaticSegments(np.vstack([two_d, three_d]))
    for y, use_z, expected in ((0.5, False, 1.0), (0.5, True, 10.0), (2.5, False, 10.0), (2.5, True, 1.0)):
        assert cast_static(s, -1.0, y, 0.0, 10.0, h=0.5, use_z=use_z)[0] == pytest.approx(expected)


def test_degenerate_polygon_is_seen_from_both_sides():
    line = np.array([[0.0, -1.0], [0.0, 1.0]])
    s = StaticSegments(polygon_edges(line))
    assert len(s.seg) == 4  # two edges (a→b, b→a), each in both orientations
    assert cast_static(s, -2.0, 0.0, 0.0, 10.0)[0] == pytest.approx(2.0)
    assert cast_static(s, 3.0, 0.0, math.pi, 10.0)[0] == pytest.approx(3.0)


def test_transform_polygon():
    p = transform_polygon(SQUARE, 2.0, 1.0, math.pi / 2)
    assert np.allclose(p, [[2, 1], [2, 2], [1, 2], [1, 1]])


# ---------------------------------------------------------------------------------------------- static set
def test_box_hits_from_outside_and_not_from_inside():
    s = StaticSegments(polygon_edges(SQUARE))
    assert cast_static(s, -1.0, 0.5, 0.0, 10.0)[0] == pytest.approx(1.0)
    a = math.radians(20)  # meets x = 0 at y = 0.86 < 1
    assert cast_static(s, -1.0, 0.5, a, 10.0)[0] == pytest.approx(1.0 / math.cos(a))
    assert cast_static(s, 0.5, 0.5, 0.3, 10.0)[0] == 10.0  # from inside: nothing (as Box2D)
    assert cast_static(s, -1.0, 0.5, math.pi, 10.0)[0] == 10.0  # away
    assert cast_static(s, -1.0, 0.5, 0.0, 0.9)[0] == 0.9  # out of reach
    assert cast_static(s, -1.0, 0.5, 0.0, 10.0, visible=False)[0] == 10.0  # invisible ray: untouched


def test_height_range_gates_rays_in_3d_mode_only():
    s = StaticSegments(polygon_edges(SQUARE, 0.0, 0.3))
    assert cast_static(s, -1.0, 0.5, 0.0, 10.0, h=0.5, use_z=True)[0] == 10.0  # passes over
    assert cast_static(s, -1.0, 0.5, 0.0, 10.0, h=0.3, use_z=True)[0] == pytest.approx(1.0)  # zmax inclusive
    assert cast_static(s, -1.0, 0.5, 0.0, 10.0, h=0.5, use_z=False)[0] == pytest.approx(1.0)  # 2D: infinitely tall


@pytest.mark.parametrize("bucket", [None, 0.3, 5.0, 1000.0])
def test_bucketed_static_set_matches_testing_every_edge(bucket):
    """300 random boxes (plus long diagonal walls) and 3000 random rays, in and around the set's extent, each from
    its own origin."""
    rng = np.random.default_rng(7)
    polys = []
    for _ in range(300):
        c = rng.uniform(-20, 20, 2)
        half = rng.uniform(0.05, 1.5, 2)
        yaw = rng.uniform(-math.pi, math.pi)
        box = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half
        polys.append(polygon_edges(transform_polygon(box, c[0], c[1], yaw), rng.uniform(-1, 0), rng.uniform(0, 2)))
    polys.append(polygon_edges(np.array([[-25.0, -25.0], [25.0, 24.0], [25.1, 24.0], [-24.9, -25.0]])))
    seg = np.vstack(polys)
    s = StaticSegments(seg, bucket_size=bucket)
    n = 3000
    ox, oy = rng.uniform(-30, 30, n), rng.uniform(-30, 30, n)
    ang = rng.uniform(-math.pi, math.pi, n)
    ang[:50] = rng.choice([0.0, math.pi / 2, -math.pi / 2, math.pi], 50)
    reach = rng.uniform(1.0, 60.0, n)
    h = rng.uniform(-0.5, 1.5, n)
    use_z = rng.random(n) < 0.5
    r, out = rays(n, ox, oy, ang, reach, h=h, use_z=use_z)
    cast_sets(s, None, out=out, **r)
    for i in range(n):
        ref = brute_force(seg, ox[i], oy[i], ang[i], reach[i], h[i], bool(use_z[i]))
        assert out[i] == pytest.approx(ref, abs=1e-9), i


def test_static_rows_that_are_not_finite_are_left_out():
    """A NaN or infinite segment (a bad pose slipping past the checks) is dropped when binning instead of making the
    bucket grid's size NaN (``int(nan)``: ValueError, issue 14); the finite ones are still hit."""
    bad = polygon_edges(SQUARE + 5.0)
    bad[0, 0], bad[1, 3], bad[2, 2] = math.nan, math.inf, -math.inf
    s = StaticSegments(np.vstack([polygon_edges(SQUARE), bad]))
    assert len(s.seg) == 4 + 1
    assert cast_static(s, -1.0, 0.5, 0.0, 10.0)[0] == pytest.approx(1.0)
    assert len(StaticSegments(bad[:3]).seg) == 0


def test_empty_static_set_changes_nothing():
    s = StaticSegments(np.zeros((0, 6)))
    assert cast_static(s, 0.0, 0.0, 0.0, 7.0)[0] == 7.0


# ---------------------------------------------------------------------------------------------- moving objects
def two_vehicles_and_a_block() -> MovingSegments:
    m = MovingSegments()
    chassis = np.array([[-0.4, -0.3], [0.6, -0.3], [0.6, 0.3], [-0.4, 0.3]])
    wheels = np.array([[0.0, 0.4, 0.2, 0.05, 0.0, 0.4], [0.0, -0.4, 0.2, 0.05, 0.0, 0.4]])
    m.add_object(chassis, 0.1, 0.5, owner=0, boxes=wheels)
    m.add_object(chassis, 0.1, 0.5, owner=1, boxes=wheels)
    m.add_object(SQUARE - 0.5, 0.0, 1.0)  # a dynamic block, no owner
    m.finish()
    return m


def cast_moving(m: MovingSegments, ox, oy, ang, reach, **kw) -> np.ndarray:
    n = np.size(ang)
    r, out = rays(n, ox, oy, ang, reach, **kw)
    cast_sets(None, m, out=out, **r)
    return out


def test_moving_objects_are_hit_at_their_placed_outline():
    m = two_vehicles_and_a_block()
    pose = np.array([[0.0, 0.0, 0.0], [5.0, 0.0, math.pi], [0.0, 4.0, math.pi / 4]])
    m.place(pose, np.zeros(3), np.zeros(4))
    # from vehicle 0's origin, heading +x: vehicle 1 (turned around) shows its front face x = 5 − 0.6; a ray that
    # starts inside vehicle 0 never sees its outline, excluded or not (its edges face away)
    d = cast_moving(m, 0.0, 0.0, [0.0, 0.0], 20.0, exclude=[0, -1])
    assert d[0] == pytest.approx(4.4) and d[1] == pytest.approx(4.4)
    # the block, turned 45° about (0, 4): a diamond whose lower-right edge is y = 4 − √½ + x
    # (vehicle 0's left wheel, y in [0.35, 0.45], is in the way unless excluded)
    d = cast_moving(m, 0.1, 0.0, [math.pi / 2, math.pi / 2], 20.0, exclude=[-1, 0])
    assert d[0] == pytest.approx(0.35) and d[1] == pytest.approx(4.0 - math.sqrt(0.5) + 0.1)


def test_own_vehicle_is_excluded_and_others_are_not():
    m = two_vehicles_and_a_block()
    m.place(np.array([[0.0, 0.0, 0.0], [5.0, 0.0, math.pi], [0.0, 4.0, 0.0]]), np.zeros(3), np.zeros(4))
    # a ray from outside vehicle 0, aimed at it: hit unless that vehicle is excluded
    d = cast_moving(m, -2.0, 0.0, [0.0, 0.0, 0.0], 20.0, exclude=[-1, 0, 1])
    assert d[0] == pytest.approx(1.6)  # back face x = −0.4
    assert d[1] == pytest.approx(7.0 - 0.6)  # through vehicle 0: vehicle 1's front face at x = 4.4
    assert d[2] == pytest.approx(1.6)


def test_wheels_turn_with_their_yaw():
    m = MovingSegments()
    m.add_object(np.zeros((0, 2)), 0.0, 0.0, owner=0, boxes=np.array([[0.0, 0.0, 0.5, 0.1, 0.0, 0.4]]))
    m.finish()
    m.place(np.array([[2.0, 0.0, 0.0]]), np.zeros(1), np.array([0.0]))
    assert cast_moving(m, 0.0, 0.0, [0.0], 10.0)[0] == pytest.approx(1.5)  # length along x
    m.place(np.array([[2.0, 0.0, 0.0]]), np.zeros(1), np.array([math.pi / 2]))
    assert cast_moving(m, 0.0, 0.0, [0.0], 10.0)[0] == pytest.approx(1.9)  # turned: width along x


def test_moving_heights_follow_the_object_z():
    m = two_vehicles_and_a_block()
    m.place(np.array([[0.0, 0.0, 0.0], [5.0, 0.0, math.pi], [20.0, 20.0, 0.0]]), np.array([0.0, 1.0, 0.0]),
            np.zeros(4))
    # vehicle 1 stands 1 m higher: chassis at z in [1.1, 1.5], wheels [1.0, 1.4]
    d = cast_moving(m, 0.0, 0.0, [0.0, 0.0, 0.0], 20.0, exclude=0, h=[0.3, 1.3, 1.3], use_z=[True, True, False])
    assert d[0] == 20.0 and d[1] == pytest.approx(4.4) and d[2] == pytest.approx(4.4)


def test_moving_set_matches_testing_every_edge():
    """20 vehicles and 10 blocks at random poses; 4000 rays from 40 origins (each a lidar's worth of rays)."""
    rng = np.random.default_rng(11)
    m = MovingSegments()
    chassis = np.array([[-0.4, -0.5], [-0.4, 0.5], [0.4, 0.5], [0.6, 0.3], [0.6, -0.3], [0.4, -0.5]])  # CW
    wheels = np.array([[0.0, 0.5, 0.2, 0.1, 0.0, 0.4], [0.0, -0.5, 0.2, 0.1, 0.0, 0.4]])
    for k in range(20):
        m.add_object(chassis, 0.05, 0.6, owner=k, boxes=wheels)
    for _ in range(10):
        m.add_object(SQUARE * rng.uniform(0.2, 2.0) - 0.3, 0.0, 1.0)
    m.finish()
    pose = np.column_stack([rng.uniform(-10, 10, 30), rng.uniform(-10, 10, 30), rng.uniform(-3, 3, 30)])
    z = rng.uniform(0, 0.5, 30)
    wyaw = rng.uniform(-0.6, 0.6, 40)
    m.place(pose, z, wyaw)
    n_orig, per = 40, 100
    ox = np.repeat(rng.uniform(-12, 12, n_orig), per)
    oy = np.repeat(rng.uniform(-12, 12, n_orig), per)
    excl = np.repeat(rng.integers(-1, 20, n_orig), per)
    reach = np.repeat(rng.uniform(2, 30, n_orig), per)
    h = np.repeat(rng.uniform(0, 1.2, n_orig), per)
    use_z = np.repeat(rng.random(n_orig) < 0.5, per)
    ang = rng.uniform(-math.pi, math.pi, n_orig * per)
    r, out = rays(n_orig * per, ox, oy, ang, reach, h=h, use_z=use_z, exclude=excl)
    cast_sets(None, m, out=out, **r)
    for i in range(n_orig * per):
        keep = np.ones(len(m.seg), dtype=bool)
        if excl[i] >= 0:
            keep[m.obj_start[excl[i]]:m.obj_start[excl[i] + 1]] = False
        ref = brute_force(m.seg[keep], ox[i], oy[i], ang[i], reach[i], h[i], bool(use_z[i]))
        assert out[i] == pytest.approx(ref, abs=1e-9), i


@pytest.mark.parametrize("n_sectors", [1, 7, 256, 4096])
def test_static_and_moving_together_from_shared_origins(n_sectors):
    """Runs of rays sharing an origin (as lidars cast them), against 150 static boxes and 25 moving objects, with
    rays at exactly the sector boundaries (axis directions) and through polygon vertices; any sector count gives the
    brute-force answer."""
    rng = np.random.default_rng(5)
    polys = []
    for _ in range(150):
        c = rng.uniform(-15, 15, 2)
        box = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * rng.uniform(0.1, 1.0, 2)
        polys.append(polygon_edges(transform_polygon(box, c[0], c[1], rng.uniform(-3, 3)), 0.0, rng.uniform(0.2, 2)))
    static = StaticSegments(np.vstack(polys))
    m = MovingSegments()
    for k in range(25):
        m.add_object(np.array([[-0.4, -0.3], [0.6, -0.3], [0.6, 0.3], [-0.4, 0.3]]), 0.1, 0.5, owner=k % 10,
                     boxes=np.array([[0.0, 0.35, 0.2, 0.05, 0.0, 0.4]]))
    m.finish()
    m.place(np.column_stack([rng.uniform(-15, 15, 25), rng.uniform(-15, 15, 25), rng.uniform(-3, 3, 25)]),
            rng.uniform(0, 0.3, 25), rng.uniform(-0.5, 0.5, 25))
    every = np.vstack([static.seg, m.seg])
    owner_of_row = np.concatenate([np.full(len(static.seg), -1), np.repeat(m.owner, np.diff(m.obj_start))])
    n_orig, per = 30, 240
    ox = np.repeat(rng.uniform(-16, 16, n_orig), per)
    oy = np.repeat(rng.uniform(-16, 16, n_orig), per)
    excl = np.repeat(rng.integers(-1, 10, n_orig), per)
    h = np.repeat(rng.uniform(0.0, 1.0, n_orig), per)
    use_z = np.repeat(rng.random(n_orig) < 0.5, per)
    ang = np.tile(np.linspace(-math.pi, math.pi, per), n_orig) + np.repeat(rng.uniform(-1, 1, n_orig), per)
    ang[::per] = 0.0  # exactly along +x, and +y: sector boundaries
    ang[1::per] = math.pi / 2
    verts = np.vstack([static.seg[:, :2], m.seg[:, :2]])
    for i in range(n_orig):  # one ray per origin through a vertex
        v = verts[rng.integers(len(verts))]
        ang[i * per + 2] = math.atan2(v[1] - oy[i * per], v[0] - ox[i * per])
    reach = np.repeat(rng.uniform(3, 25, n_orig), per)
    r, out = rays(n_orig * per, ox, oy, ang, reach, h=h, use_z=use_z, exclude=excl)
    cast_sets(static, m, out=out, n_sectors=n_sectors, **r)
    for i in range(n_orig * per):
        keep = (owner_of_row < 0) | (owner_of_row != excl[i])
        ref = brute_force(every[keep], ox[i], oy[i], ang[i], reach[i], h[i], bool(use_z[i]))
        assert out[i] == pytest.approx(ref, abs=1e-9), i


def test_rays_cut_short_by_nearer_hits_and_origins_inside_an_object():
    """Each ray of a run with its own reach (as an occupancy grid's nearer hits leave them), some zero; origins in
    a crowd of moving objects, some inside an object's bounding circle (next to a robot) and one inside an object:
    what a sector's rays can still reach decides what is filed there, and the answer stays the brute-force one."""
    rng = np.random.default_rng(23)
    m = MovingSegments()
    chassis = np.array([[-0.4, -0.3], [0.6, -0.3], [0.6, 0.3], [-0.4, 0.3]])
    for k in range(30):
        m.add_object(chassis, 0.0, 0.5, owner=k, boxes=np.array([[0.0, 0.35, 0.2, 0.05, 0.0, 0.4]]))
    m.finish()
    pose = np.column_stack([rng.uniform(-6, 6, 30), rng.uniform(-6, 6, 30), rng.uniform(-3, 3, 30)])
    m.place(pose, np.zeros(30), rng.uniform(-0.5, 0.5, 30))
    n_orig, per = 40, 120
    centres = pose[rng.integers(30, size=n_orig), :2]
    origins = rng.uniform(-7, 7, (n_orig, 2))
    origins[:15] = centres[:15] + rng.uniform(-0.7, 0.7, (15, 2))  # within the circles (and maybe the outlines)
    origins[15] = pose[3, :2]  # at an object's origin: inside its outline, which it cannot see
    ox, oy = np.repeat(origins[:, 0], per), np.repeat(origins[:, 1], per)
    ang = np.tile(np.linspace(-math.pi, math.pi, per, endpoint=False), n_orig) + rng.normal(0, 1e-3, n_orig * per)
    reach = rng.uniform(0.0, 12.0, n_orig * per)
    reach[rng.random(n_orig * per) < 0.05] = 0.0
    excl = np.repeat(rng.integers(-1, 30, n_orig), per)
    r, out = rays(n_orig * per, ox, oy, ang, reach, exclude=excl)
    cast_sets(None, m, out=out, **r)
    hits = 0
    for i in range(n_orig * per):
        keep = np.ones(len(m.seg), dtype=bool)
        if excl[i] >= 0:
            keep[m.obj_start[excl[i]]:m.obj_start[excl[i] + 1]] = False
        ref = brute_force(m.seg[keep], ox[i], oy[i], ang[i], reach[i])
        assert out[i] == pytest.approx(ref, abs=1e-9), i
        hits += ref < reach[i]
    assert hits > 500  # (the rays do meet the objects)


def test_interleaved_origins_give_the_same_answer():
    """Rays of two origins alternating (runs of length 1) read what they read when grouped."""
    static = StaticSegments(np.vstack([polygon_edges(transform_polygon(SQUARE, x, 0.0, 0.0)) for x in (2, 5, -4)]))
    ang = np.linspace(-math.pi, math.pi, 100)
    grouped = []
    for x0 in (0.0, 3.5):
        r, out = rays(100, x0, 0.5, ang, 10.0)
        cast_sets(static, None, out=out, **r)
        grouped.append(out)
    r, out = rays(200, np.tile([0.0, 3.5], 100), 0.5, np.repeat(ang, 2), 10.0)
    cast_sets(static, None, out=out, **r)
    assert np.array_equal(out[0::2], grouped[0]) and np.array_equal(out[1::2], grouped[1])


def test_pseudo_angle_is_monotonic_and_opposite_is_two_further():
    a = np.linspace(-math.pi, math.pi, 2001)[:-1]
    p = np.array([pseudo_angle(math.cos(t), math.sin(t)) for t in a])
    order = np.argsort(np.mod(a, 2 * math.pi))
    assert np.all(np.diff(p[order]) > 0)
    assert pseudo_angle(1.0, 0.0) == 0.0 and pseudo_angle(0.0, 1.0) == 1.0
    assert pseudo_angle(-1.0, 0.0) == 2.0 and pseudo_angle(0.0, -1.0) == 3.0
    for t in a[::50]:
        q = pseudo_angle(-math.cos(t), -math.sin(t))
        assert (q - pseudo_angle(math.cos(t), math.sin(t))) % 4.0 == pytest.approx(2.0)


# ---------------------------------------------------------------------------------------------- fleets
def test_runs_look_only_at_the_objects_within_reach_in_index_order():
    """The bins of moving objects (by their circles' centres) give each run every object its rays could reach --
    those whose circle comes nearer than the reach, and those whose circle is not finite -- sorted, once each, and
    in a fleet far fewer than all of them."""
    from mvsim_core.sensors.raycast.segments import _bin_objects, _near_objects

    rng = np.random.default_rng(3)
    n = 2000
    circle = np.column_stack([rng.uniform(-400, 400, n), rng.uniform(-300, 300, n), rng.uniform(0.1, 3.0, n)])
    circle[17, 0] = math.nan
    circle[400, 2] = math.inf
    circle[401, 2] = -1.0
    circle[:5, :2] = 0.0  # (several centres at one point)
    bins = _bin_objects(circle)
    near = np.empty(n, dtype=np.int64)
    sizes = []
    for q in range(400):
        x0, y0 = rng.uniform(-450, 450), rng.uniform(-350, 350)
        reach = {38: math.inf, 39: 1e12}.get(q % 40, rng.uniform(0.5, 40.0))  # (now and then: beyond the bins)
        m = _near_objects(*bins, x0, y0, reach, n, near)
        got = near[:m]
        assert (np.diff(got) > 0).all()
        with np.errstate(invalid="ignore"):
            gap = np.hypot(circle[:, 0] - x0, circle[:, 1] - y0) - circle[:, 2]
            must = np.flatnonzero((gap < reach) | ~np.isfinite(circle).all(axis=1) | (circle[:, 2] < 0))
        assert np.isin(must, got).all(), q
        assert {17, 400, 401} <= set(got.tolist())
        if math.isfinite(reach) and reach < 100:
            sizes.append(m)
        else:
            assert m == n
    assert np.mean(sizes) < 0.05 * n


def _fleet_scene(vehicles: int, origins: int, per: int):
    rng = np.random.default_rng(8)
    m = MovingSegments()
    chassis = np.array([[-0.4, -0.3], [0.6, -0.3], [0.6, 0.3], [-0.4, 0.3]])
    wheels = np.array([[0.0, 0.4, 0.2, 0.05, 0.0, 0.4], [0.0, -0.4, 0.2, 0.05, 0.0, 0.4]])
    for k in range(vehicles):
        m.add_object(chassis, 0.1, 0.5, owner=k, boxes=wheels)
    m.finish()
    side = int(math.sqrt(vehicles)) + 1
    pose = np.column_stack([4.0 * (np.arange(vehicles) % side) + rng.uniform(-1, 1, vehicles),
                            4.0 * (np.arange(vehicles) // side) + rng.uniform(-1, 1, vehicles),
                            rng.uniform(-3, 3, vehicles)])
    m.place(pose, np.zeros(vehicles), rng.uniform(-0.5, 0.5, 2 * vehicles))
    static = StaticSegments(np.vstack([polygon_edges(transform_polygon(SQUARE * 2, x, y, 0.3), 0.0, 1.0)
                                       for x, y in rng.uniform(0, 4.0 * side, (50, 2))]))
    who = rng.choice(vehicles, origins, replace=False)
    ang = np.tile(np.linspace(-math.pi, math.pi, per, endpoint=False), origins)
    r, out = rays(origins * per, np.repeat(pose[who, 0], per), np.repeat(pose[who, 1], per), ang, 12.0,
                  exclude=np.repeat(who, per))
    return static, m, r, out


def test_a_fleet_cast_is_bit_identical_on_one_and_two_threads():
    import mvsim_core.sensors.raycast.segments as sg
    from mvsim_core import threads

    static, m, r, out = _fleet_scene(900, 260, 80)
    assert out.size >= sg.THREADED_RAYS
    results = []
    try:
        for n in (1, 2):
            threads.set_threads(n)
            o = out.copy()
            cast_sets(static, m, out=o, **r)
            results.append(o)
    finally:
        threads.set_threads(None)
    assert len(getattr(sg.cast_segments_threaded, "signatures", ())) >= 1  # (the threaded kernel ran)
    assert results[0].tobytes() == results[1].tobytes()
    hit = results[0] < 12.0
    assert 0.3 < hit.mean() < 1.0

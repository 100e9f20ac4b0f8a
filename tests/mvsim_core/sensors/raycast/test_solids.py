"""3D solids: prisms (convex or not), ramps and elliptic cylinders in any 3D pose are hit where a ray first enters
them — checked against an independent method (every boundary crossing tested with an inside/outside predicate) — and
never from inside; placement composes parent poses and wheel turns."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.geometry.rotations import rotation
from mvsim_core.sensors.raycast.solids import (
    C_CIRCLE,
    C_R,
    C_T,
    C_ZHI,
    C_ZLO,
    SolidTable,
    hit_solid,
    place_solids,
)

L_SHAPE = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], dtype=float)  # non-convex, CCW


def inside_polygon(poly: np.ndarray, x: float, y: float) -> bool:
    inside = False
    for (xi, yi), (xj, yj) in zip(poly, np.roll(poly, 1, axis=0), strict=True):
        if (yi > y) != (yj > y) and x < xi + (y - yi) * (xj - xi) / (yj - yi):
            inside = not inside
    return inside


def reference_hit(inside, planes, quadric, o, d, best):
    """First t in [0, best) where the ray goes from outside to inside: candidates are the crossings of the boundary
    planes (n·q = c) and of the quadric (coefficients of t², t, 1), each checked by ``inside`` just before/after."""
    ts = []
    for n, c in planes:
        den = float(np.dot(n, d))
        if abs(den) > 1e-15:
            ts.append((c - float(np.dot(n, o))) / den)
    if quadric is not None:
        a, b, c = quadric(o, d)
        disc = b * b - 4 * a * c
        if a != 0 and disc >= 0:
            ts += [(-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)]
    eps = 1e-7
    for t in sorted(ts):
        if 0.0 <= t < best and inside(o + (t + eps) * d) and not inside(o + (t - eps) * d):
            return t
    return math.inf


def random_ray(rng, centre, spread, pose):
    """A ray near ``centre`` (solid frame): (world origin, world direction, local origin, local direction)."""
    q = centre + rng.uniform(-spread, spread, 3)
    e = centre + rng.uniform(-1.0, 1.0, 3) - q
    e /= np.linalg.norm(e)
    r = rotation(*pose[3:])
    return r @ q + np.array(pose[:3], dtype=float), r @ e, q, e


def one_solid(add):
    st = SolidTable()
    add(st)
    return st.arrays()


@pytest.mark.parametrize("pose", [(0, 0, 0, 0, 0, 0), (3.0, -1.0, 0.5, 0.7, 0.3, -0.4)])
def test_non_convex_prism_matches_the_reference(pose):
    tab, verts = one_solid(lambda st: st.add_prism(L_SHAPE[::-1], 0.2, 1.5, pose))  # given clockwise
    z0, z1 = 0.2, 1.5

    def inside(p):
        return z0 < p[2] < z1 and inside_polygon(L_SHAPE, p[0], p[1])

    planes = [((0, 0, 1), z0), ((0, 0, 1), z1)]
    for a, b in zip(L_SHAPE, np.roll(L_SHAPE, -1, axis=0), strict=True):
        n = np.array([b[1] - a[1], a[0] - b[0], 0.0])
        planes.append((n, float(n[:2] @ a)))
    rng = np.random.default_rng(3)
    centre = np.array([1.0, 1.0, 0.8])
    hits = 0
    for _ in range(600):
        o, d, q, e = random_ray(rng, centre, 3.0, pose)
        want = reference_hit(inside, planes, None, q, e, 20.0)
        got = hit_solid(tab, verts, 0, *o, *d, 20.0)
        assert got == pytest.approx(want, abs=1e-9) or (math.isinf(got) and math.isinf(want)), (o, d)
        hits += math.isfinite(want)
    assert hits > 200


def test_ramp_and_bump_and_wheel_match_the_reference():
    rng = np.random.default_rng(5)
    lx, ly, lz = 3.0, 2.0, 1.0
    pose = (1.0, 2.0, 0.1, 0.4, 0.0, 0.0)

    def ramp_inside(p):
        return 0 < p[0] < lx and 0 < p[1] < ly and 0 < p[2] < lz and p[2] * lx < lz * p[0]

    ramp_planes = [((1, 0, 0), 0), ((1, 0, 0), lx), ((0, 1, 0), 0), ((0, 1, 0), ly), ((0, 0, 1), 0),
                   ((0, 0, 1), lz), ((-lz, 0, lx), 0)]
    tab, verts = one_solid(lambda st: st.add_ramp(lx, ly, lz, 0.0, lz, pose))
    n_hits = 0
    for _ in range(500):
        o, d, q, e = random_ray(rng, np.array([1.5, 1.0, 0.5]), 3.0, pose)
        want = reference_hit(ramp_inside, ramp_planes, None, q, e, 20.0)
        got = hit_solid(tab, verts, 0, *o, *d, 20.0)
        assert got == pytest.approx(want, abs=1e-9) or (math.isinf(got) and math.isinf(want)), (o, d)
        n_hits += math.isfinite(want)
    assert n_hits > 100
    # semi-cylinder bump: x in [0, lx], ((y)/(ly/2))² + (z/lz)² ≤ 1, z ≥ 0; and a pitched/rolled pose
    pose = (-1.0, 0.5, 0.2, -0.3, 0.2, 0.1)
    box = (0.0, lx, -ly / 2, ly / 2, 0.0, lz)
    tab, verts = one_solid(lambda st: st.add_cylinder(box, 0.0, 0.0, ly / 2, lz, pose))

    def bump_inside(p):
        return 0 < p[0] < lx and p[2] > 0 and (p[1] / (ly / 2)) ** 2 + (p[2] / lz) ** 2 < 1

    def quadric(o, d):
        ay, az = ly / 2, lz
        return ((d[1] / ay) ** 2 + (d[2] / az) ** 2, 2 * (o[1] * d[1] / ay ** 2 + o[2] * d[2] / az ** 2),
                (o[1] / ay) ** 2 + (o[2] / az) ** 2 - 1)

    bump_planes = [((1, 0, 0), 0), ((1, 0, 0), lx), ((0, 0, 1), 0)]
    n_hits = 0
    for _ in range(500):
        o, d, q, e = random_ray(rng, np.array([1.5, 0.0, 0.5]), 3.0, pose)
        want = reference_hit(bump_inside, bump_planes, quadric, q, e, 20.0)
        got = hit_solid(tab, verts, 0, *o, *d, 20.0)
        assert got == pytest.approx(want, abs=1e-9) or (math.isinf(got) and math.isinf(want)), (o, d)
        n_hits += math.isfinite(want)
    assert n_hits > 100


def test_wheel_cylinder_read_at_its_radius():
    """A wheel (radius 0.2 m, width 0.1 m) of a vehicle at (5, 0) turned 90°: the axle runs along world x; a ray
    along −x at the axle height hits its flank at x = 5.05; a horizontal ray along +y, 0.1 m above the axle, meets
    the tyre at y = −sqrt(0.2² − 0.1²)."""
    st = SolidTable()
    r = 0.2
    st.add_cylinder((-0.05, 0.05, -r, r, 0.0, 2 * r), 0.0, r, r, r, (0, 0, 0, 0, 0, 0), owner=0)
    tab, verts = st.arrays()
    parent_pose = np.array([[5.0, 0.0, 0.0, math.pi / 2, 0.0, 0.0]])
    place_solids(tab, np.array([0]), np.array([0]), parent_pose, np.array([[0.0, 0.0, 0.0, math.pi / 2]]))
    assert tab[0, C_T:C_T + 3] == pytest.approx([5.0, 0.0, 0.0])
    assert hit_solid(tab, verts, 0, 8.0, 0.0, r, -1.0, 0.0, 0.0, 10.0) == pytest.approx(3.0 - 0.05)
    assert hit_solid(tab, verts, 0, 5.0, -2.0, r + 0.1, 0.0, 1.0, 0.0, 10.0) == pytest.approx(
        2.0 - math.sqrt(r * r - 0.01))
    assert math.isinf(hit_solid(tab, verts, 0, 5.0, -2.0, 2 * r + 0.01, 0.0, 1.0, 0.0, 10.0))  # over the tyre


def test_rays_from_inside_see_nothing_and_degenerate_polygons_are_two_sided():
    box = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float)
    flat = np.array([[0, -1], [0, 1]], dtype=float)  # a zero-area "polygon": a sheet at x = 0
    st = SolidTable()
    st.add_prism(box, 0.0, 2.0, (0, 0, 0, 0, 0, 0))
    st.add_ramp(2.0, 2.0, 1.0, 0.0, 1.0, (0, 0, 0, 0, 0, 0))
    st.add_prism(np.vstack([flat, flat[::-1]]), 0.0, 1.0, (5, 0, 0, 0, 0, 0))
    tab, verts = st.arrays()
    assert math.isinf(hit_solid(tab, verts, 0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 10.0))
    assert math.isinf(hit_solid(tab, verts, 0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 10.0))
    assert math.isinf(hit_solid(tab, verts, 1, 1.5, 1.0, 0.2, 0.0, 0.0, -1.0, 10.0))
    assert hit_solid(tab, verts, 1, 1.5, 1.0, 2.0, 0.0, 0.0, -1.0, 10.0) == pytest.approx(2.0 - 0.75)
    assert hit_solid(tab, verts, 2, 3.0, 0.0, 0.5, 1.0, 0.0, 0.0, 10.0) == pytest.approx(2.0)
    assert hit_solid(tab, verts, 2, 7.0, 0.0, 0.5, -1.0, 0.0, 0.0, 10.0) == pytest.approx(2.0)
    assert math.isinf(hit_solid(tab, verts, 0, -5.0, 0.0, 1.0, 1.0, 0.0, 0.0, 3.9))  # beyond best
    assert hit_solid(tab, verts, 0, -5.0, 0.0, 1.0, 1.0, 0.0, 0.0, 4.1) == pytest.approx(4.0)


def test_bounding_circle_and_height_range_follow_the_pose():
    st = SolidTable()
    st.add_prism(np.array([[0, 0], [4, 0], [4, 2], [0, 2]], dtype=float), 0.0, 1.0, (10, 20, 1.0, 0.5, 0.2, 0.1))
    tab, _ = st.arrays()
    rot = rotation(0.5, 0.2, 0.1)
    assert tab[0, C_R:C_R + 9] == pytest.approx(rot.ravel())
    corners = np.array([[x, y, z] for x in (0, 4) for y in (0, 2) for z in (0, 1)], dtype=float)
    world = corners @ rot.T + [10, 20, 1.0]
    assert tab[0, C_ZLO] == pytest.approx(world[:, 2].min(), abs=1e-8)
    assert tab[0, C_ZHI] == pytest.approx(world[:, 2].max(), abs=1e-8)
    cx, cy, rad = tab[0, C_CIRCLE:C_CIRCLE + 3]
    assert np.all(np.hypot(world[:, 0] - cx, world[:, 1] - cy) <= rad)

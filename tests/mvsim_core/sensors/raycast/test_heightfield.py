"""Heightfield ray casting: the pyramid walk finds the same first crossing as testing every triangle of the map, the
hit lies on the surface the terrain model uses, and rays that leave the map or stay above it miss."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.elements.elevation_map import triangle_height
from mvsim_core.sensors.raycast.heightfield import HeightfieldPyramid, HeightfieldSet, cast_heightfield


def brute_force(h: np.ndarray, x0: float, y0: float, res: float, o: np.ndarray, d: np.ndarray,
                t_max: float) -> float:
    """Nearest crossing of the ray with every triangle of the map (Möller–Trumbore on each), or inf."""
    rows, cols = h.shape
    i, j = np.meshgrid(np.arange(rows - 1), np.arange(cols - 1), indexing="ij")
    i, j = i.ravel(), j.ravel()

    def vert(a, b):
        return np.column_stack([x0 + a * res, y0 + b * res, h[a, b]])

    p00, p10, p01, p11 = vert(i, j), vert(i + 1, j), vert(i, j + 1), vert(i + 1, j + 1)
    best = math.inf
    for a, b, c in ((p00, p01, p11), (p00, p10, p11)):  # the two triangles, split by the diagonal 00-11
        e1, e2 = b - a, c - a
        pv = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, pv)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / det
            tv = o - a
            u = np.einsum("ij,ij->i", tv, pv) * inv
            qv = np.cross(tv, e1)
            v = (qv @ d) * inv
            t = np.einsum("ij,ij->i", e2, qv) * inv
        ok = (np.abs(det) > 1e-15) & (u >= -1e-12) & (v >= -1e-12) & (u + v <= 1 + 1e-12) & (t >= 0) & (t < t_max)
        if ok.any():
            best = min(best, float(t[ok].min()))
    return best


def make_set(h, x0=-3.0, y0=-2.0, res=0.5):
    return HeightfieldSet([HeightfieldPyramid(h, x0, y0, res)])


def cast(hs, o, d, t_max=100.0, m=0):
    d = np.asarray(d, dtype=float) / np.linalg.norm(d)
    return cast_heightfield(hs.meta, hs.levels, hs.heights, hs.bounds, m, *map(float, o), *map(float, d), t_max)


def test_pyramid_levels_bound_their_cells():
    rng = np.random.default_rng(1)
    h = rng.uniform(-1, 2, (13, 7))
    p = HeightfieldPyramid(h, 0.0, 0.0, 1.0)
    lo0, hi0 = p.levels[0]
    assert lo0.shape == (12, 6)
    np.testing.assert_array_equal(lo0[3, 2], min(h[3, 2], h[4, 2], h[3, 3], h[4, 3]))
    np.testing.assert_array_equal(hi0[3, 2], max(h[3, 2], h[4, 2], h[3, 3], h[4, 3]))
    assert [lv[0].shape for lv in p.levels] == [(12, 6), (6, 3), (3, 2), (2, 1), (1, 1)]
    assert p.levels[-1][0][0, 0] == h.min() and p.levels[-1][1][0, 0] == h.max()
    assert (p.zmin, p.zmax) == (h.min(), h.max())


@pytest.mark.parametrize("seed", range(4))
def test_random_rays_match_brute_force(seed):
    """400 rays from above, below and inside the height range, any direction: the walk and the brute force agree
    to 1e-9 m, and every hit lies on the triangle surface."""
    rng = np.random.default_rng(seed)
    h = rng.uniform(-1.0, 1.0, (17, 23)) + np.linspace(0, 2, 23)[None, :]
    x0, y0, res = -3.0, -2.0, 0.5
    hs = make_set(h, x0, y0, res)
    n_hits = 0
    for _ in range(400):
        o = np.array([rng.uniform(-5, 7), rng.uniform(-4, 11), rng.uniform(-1.5, 4.0)])
        d = rng.normal(size=3)
        if rng.uniform() < 0.5:  # aimed at a point of the map's height range: many grazing rays
            d = np.array([rng.uniform(-3, 5), rng.uniform(-2, 9), rng.uniform(-1, 3)]) - o
        d /= np.linalg.norm(d)
        t_max = rng.uniform(2.0, 30.0)
        got = cast(hs, o, d, t_max)
        want = brute_force(h, x0, y0, res, o, d, t_max)
        if math.isinf(want):
            assert math.isinf(got), (o, d, got)
            continue
        n_hits += 1
        assert got == pytest.approx(want, abs=1e-9), (o, d)
        p = o + got * d
        u, v = (p[0] - x0) / res, (p[1] - y0) / res
        i, j = min(int(u), h.shape[0] - 2), min(int(v), h.shape[1] - 2)
        z = triangle_height(h[i, j], h[i + 1, j], h[i, j + 1], h[i + 1, j + 1], u - i, v - j)
        assert p[2] == pytest.approx(z, abs=1e-9)
    assert n_hits > 150


def test_flat_map_reads_analytic_distance_and_misses_outside():
    h = np.full((11, 11), 0.25)  # 10 m × 10 m at 1 m, corner (0, 0)
    hs = make_set(h, 0.0, 0.0, 1.0)
    o = (2.0, 3.0, 1.25)
    for el_deg in (-5.0, -20.0, -60.0, -90.0):
        el = math.radians(el_deg)
        d = (math.cos(el), 0.0, math.sin(el))
        want = 1.0 / math.sin(-el)
        got = cast(hs, o, d)
        if 2.0 + want * math.cos(el) <= 10.0:
            assert got == pytest.approx(want, abs=1e-12)
        else:
            assert math.isinf(got)  # lands beyond the map's border: no skirt, no hit
    assert math.isinf(cast(hs, o, (1.0, 0.2, 0.01)))  # upward
    assert math.isinf(cast(hs, o, (1.0, 0.0, -0.1), t_max=9.9))  # hit at 10.0 m, beyond t_max
    assert cast(hs, (2.0, 3.0, -1.0), (0.3, 0.0, 1.0)) == pytest.approx(1.25 / (1.0 / math.hypot(0.3, 1.0)))


def test_vertical_ray_hits_the_height_under_it_and_several_maps_are_packed():
    h1 = np.array([[0.0, 1.0], [2.0, 3.0]])  # one cell, 2 m
    h2 = np.full((3, 3), -4.0)
    hs = HeightfieldSet([HeightfieldPyramid(h1, 0.0, 0.0, 2.0), HeightfieldPyramid(h2, 10.0, 10.0, 1.0)])
    assert len(hs) == 2
    # at (1.5, 0.5): fx = 0.75 > fy = 0.25, lower triangle: z = 0 + 0.75·2 + 0.25·(3 − 2) = 1.75
    assert cast(hs, (1.5, 0.5, 5.0), (0, 0, -1)) == pytest.approx(5.0 - 1.75, abs=1e-12)
    assert cast(hs, (11.0, 11.0, 0.0), (0, 0, -1), m=1) == pytest.approx(4.0, abs=1e-12)
    assert math.isinf(cast(hs, (11.0, 11.0, 0.0), (0, 0, -1), m=0))


def test_nan_heights_are_holes_and_nan_rays_miss():
    """A NaN vertex removes the (up to 4) cells around it; other cells are still hit; a NaN ray ends at once."""
    h = np.zeros((5, 5))
    h[2, 2] = np.nan  # cells (1..2, 1..2) touch it
    hs = make_set(h, 0.0, 0.0, 1.0)
    assert math.isinf(cast(hs, (1.5, 1.5, 1.0), (0, 0, -1)))
    assert math.isinf(cast(hs, (2.5, 2.5, 1.0), (0, 0, -1)))
    assert cast(hs, (0.5, 3.5, 1.0), (0, 0, -1)) == pytest.approx(1.0)
    assert cast(hs, (0.2, 0.2, 1.0), (1, 1, -0.3)) == pytest.approx(math.sqrt(2.09) / 0.3)  # lands at (3.5, 3.5)
    assert math.isinf(cast(hs, (0.2, 0.2, 1.0), (1, 1, -0.5)))  # would land at (2.2, 2.2): in the hole
    assert math.isinf(cast(hs, (np.nan, 0.5, 1.0), (0, 0, -1)))
    assert math.isinf(cast_heightfield(hs.meta, hs.levels, hs.heights, hs.bounds, 0, 0.5, 0.5, 1.0, np.nan, 0.0,
                                       -1.0, 10.0))
    all_nan = make_set(np.full((3, 3), np.nan), 0.0, 0.0, 1.0)
    assert math.isinf(cast(all_nan, (1.0, 1.0, 1.0), (0, 0, -1)))

"""Occupancy-grid ray casting: the distance code is a safe step, and marching + exact refinement returns the distance
at which a ray enters its first occupied cell (compared with analytic values and a plain cell-by-cell walk)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from mvsim_core.jit import dispatcher
from mvsim_core.sensors.raycast.grid import MAX_CODE, GridCaster, coarse_code, code_at, distance_code, tile_code


def reference_walk(occ: np.ndarray, x_min: float, y_min: float, res: float, ox: float, oy: float, ang: float,
                   reach: float) -> float:
    """Plain Amanatides–Woo walk over every cell (no distance field): distance (m) to the first occupied cell."""
    ny, nx = occ.shape
    dx, dy = math.cos(ang), math.sin(ang)
    px, py = (ox - x_min) / res, (oy - y_min) / res
    t0, t1 = 0.0, reach / res
    for p, d, n in ((px, dx, nx), (py, dy, ny)):
        if d == 0.0:
            if not 0.0 <= p < n:
                return math.inf
            continue
        ta, tb = sorted(((0.0 - p) / d, (n - p) / d))
        t0, t1 = max(t0, ta), min(t1, tb)
    if t0 > t1:
        return math.inf
    ix = min(max(int(math.floor(px + t0 * dx)), 0), nx - 1)
    iy = min(max(int(math.floor(py + t0 * dy)), 0), ny - 1)
    t = t0
    while True:
        if occ[iy, ix]:
            return t * res if t <= t1 else math.inf
        tbx = ((ix + (dx > 0)) - px) / dx if dx != 0 else math.inf
        tby = ((iy + (dy > 0)) - py) / dy if dy != 0 else math.inf
        if tbx < tby:
            t, ix = tbx, ix + (1 if dx > 0 else -1)
        else:
            t, iy = tby, iy + (1 if dy > 0 else -1)
        if t > t1 or not (0 <= ix < nx and 0 <= iy < ny):
            return math.inf


def cast(caster: GridCaster, ox, oy, ang, reach) -> np.ndarray:
    ang = np.atleast_1d(np.asarray(ang, dtype=float))
    n = len(ang)
    ox = np.broadcast_to(np.asarray(ox, dtype=float), (n,)).copy()
    oy = np.broadcast_to(np.asarray(oy, dtype=float), (n,)).copy()
    out = np.broadcast_to(np.asarray(reach, dtype=float), (n,)).copy()
    caster.cast(ox, oy, np.cos(ang), np.sin(ang), out)
    return out


def wall_grid() -> tuple[np.ndarray, GridCaster]:
    """100 × 100 cells of 0.1 m from (−5, −5); occupied column ix = 70 (x ∈ [2.0, 2.1)) and row iy = 10
    (y ∈ [−4.0, −3.9))."""
    occ = np.zeros((100, 100), dtype=np.float32)
    occ[:, 70] = 1.0
    occ[10, :] = 0.9
    occ[60, 20] = 0.5  # unknown: not an obstacle
    return occ, GridCaster(occ, -5.0, -5.0, 0.1)


# ---------------------------------------------------------------------------------------------- distance code
def test_code_is_zero_on_obstacles_and_the_box_distance_elsewhere():
    """k − 1 = ⌊min over occupied o of ‖max(|c − o| − 1, 0)‖⌋ (cells), computed here by brute force."""
    rng = np.random.default_rng(3)
    occ = (rng.random((40, 60)) > 0.97).astype(np.float32)
    occ[0:3, 50:60] = 0.0
    code = distance_code(occ)
    assert code.dtype == np.uint8 and code.shape == occ.shape
    assert np.array_equal(code == 0, occ > 0.5)
    oy, ox = np.nonzero(occ > 0.5)
    iy, ix = np.mgrid[0:40, 0:60]
    gx = np.maximum(np.abs(ix[..., None] - ox) - 1, 0)
    gy = np.maximum(np.abs(iy[..., None] - oy) - 1, 0)
    box = np.sqrt(gx**2 + gy**2).min(axis=-1)
    free = occ <= 0.5
    assert np.array_equal(code[free].astype(int) - 1, np.floor(box[free]).astype(int))
    # so every neighbour of an obstacle (diagonals too) walks cell by cell
    assert np.all(code[free & (box == 0)] == 1)


@pytest.mark.parametrize("density", [0.002, 0.03, 0.3])
def test_code_equals_scipys_distance_transform_of_the_grown_cells(density):
    """The compiled transform against scipy's exact EDT of the obstacles grown by one cell (what the code was first
    made from), on grids of every shape from a single row or column up."""
    from scipy import ndimage

    rng = np.random.default_rng(int(density * 1000))
    for _ in range(40):
        ny, nx = (int(v) for v in rng.integers(1, 90, 2))
        occ = (rng.random((ny, nx)) < density) * rng.uniform(0.51, 1.0)
        occ[rng.integers(ny), rng.integers(nx)] = 1.0
        occupied = occ > 0.5
        grown = ndimage.maximum_filter(occupied.view(np.uint8), size=3, mode="constant", cval=0).astype(bool)
        want = (np.clip(np.floor(ndimage.distance_transform_edt(~grown)), 0, MAX_CODE - 1) + 1).astype(np.uint8)
        want[occupied] = 0
        assert np.array_equal(distance_code(occ), want), (ny, nx)


def test_codes_are_clamped_far_from_obstacles():
    occ = np.zeros((10, 400), dtype=np.float32)
    occ[:, 0] = 1.0
    code = distance_code(occ)
    assert code[5, 100] == 100  # box distance 99 cells
    assert code[5, 399] == MAX_CODE


def test_tiled_codes_read_back_every_cell():
    rng = np.random.default_rng(4)
    code = rng.integers(0, 256, (70, 130)).astype(np.uint8)  # not whole tiles in either direction
    tiles, ntx = tile_code(code)
    assert ntx == 3 and tiles.size == 128 * 192
    back = read_all(tiles, ntx, 130, 70)
    assert np.array_equal(back, code)


def test_coarse_code_is_the_block_minimum():
    rng = np.random.default_rng(6)
    code = rng.integers(0, 256, (20, 27)).astype(np.uint8)
    c = coarse_code(code)
    assert c.shape == (3, 4)
    assert c[1, 2] == code[8:16, 16:24].min()
    assert c[2, 3] == code[16:20, 24:27].min()  # partial block: the padding does not lower it


_code_at = dispatcher(code_at)  # what numba code of one's own calls (not the built function)


@njit
def read_all(tiles, ntx, nx, ny):
    out = np.empty((ny, nx), dtype=np.uint8)
    for iy in range(ny):
        for ix in range(nx):
            out[iy, ix] = _code_at(tiles, ntx, ix, iy)
    return out


def test_empty_grid_code_is_the_largest_step():
    code = distance_code(np.zeros((5, 7)))
    assert np.all(code == MAX_CODE)


def test_threshold_is_strictly_above_one_half():
    code = distance_code(np.array([[0.5, 0.51, 0.0]]))
    assert code[0, 0] > 0 and code[0, 1] == 0 and code[0, 2] > 0


# ---------------------------------------------------------------------------------------------- analytic hits
@pytest.mark.parametrize("deg", [0.0, 10.0, -25.0, 45.0, 60.0])
def test_ray_reads_the_wall_face_over_cos(deg):
    """From (0, 0.05): the face x = 2.0 m at 2.0 / cos(angle), exact (not rounded to cells)."""
    _, g = wall_grid()
    a = math.radians(deg)
    d = cast(g, 0.0, 0.05, a, 20.0)[0]
    assert d == pytest.approx(2.0 / math.cos(a), abs=1e-9)


def test_axis_aligned_rays():
    _, g = wall_grid()
    d = cast(g, 0.03, 0.05, [0.0, -math.pi / 2, math.pi / 2, math.pi], 20.0)
    assert d[0] == pytest.approx(2.0 - 0.03, abs=1e-9)
    assert d[1] == pytest.approx(0.05 - (-3.9), abs=1e-9)  # down to the row's top face y = −3.9
    assert d[2] == 20.0 and d[3] == 20.0  # up and left: nothing (the unknown cell is free)


def test_exact_axis_directions_and_negative_zero_components():
    """Unit vectors with exact zero components (+0.0 and -0.0), starting next to the walls so that the last cells are
    walked one by one: the x step never happens along y and the other way round."""
    _, g = wall_grid()
    dirs = [(1.0, 0.0), (1.0, -0.0), (0.0, -1.0), (-0.0, -1.0), (0.0, 1.0), (-1.0, 0.0), (-1.0, -0.0)]
    for oy in (0.05, 0.0):  # inside a row of cells, and on a cell boundary
        ox = np.full(len(dirs), 1.93)
        out = np.full(len(dirs), 20.0)
        g.cast(ox, np.full(len(dirs), oy), np.array([d[0] for d in dirs]), np.array([d[1] for d in dirs]), out)
        assert out[:2] == pytest.approx([2.0 - 1.93] * 2, abs=1e-12)
        assert out[2:4] == pytest.approx([oy + 3.9] * 2, abs=1e-12)
        assert out[4:].tolist() == [20.0, 20.0, 20.0]


def test_reach_limits_the_hit_and_out_accumulates_the_minimum():
    _, g = wall_grid()
    assert cast(g, 0.0, 0.05, 0.0, 1.5)[0] == 1.5  # wall at 2 m is out of reach: unchanged
    out = np.array([1.0, 5.0])
    g.cast(np.zeros(2), np.full(2, 0.05), np.ones(2), np.zeros(2), out)
    assert out[0] == 1.0 and out[1] == pytest.approx(2.0)


def test_ray_starting_in_an_occupied_cell_reads_zero():
    _, g = wall_grid()
    assert cast(g, 2.05, 0.0, 1.0, 10.0)[0] == 0.0


def test_ray_from_outside_enters_the_grid():
    _, g = wall_grid()
    # from x = −8 (left of the grid) heading +x at y = 0.05: enters at x = −5, hits the column at x = 2
    assert cast(g, -8.0, 0.05, 0.0, 20.0)[0] == pytest.approx(10.0, abs=1e-9)
    # heading away, or passing beside the grid: nothing
    assert cast(g, -8.0, 0.05, math.pi, 20.0)[0] == 20.0
    assert cast(g, -8.0, 7.0, 0.0, 20.0)[0] == 20.0


def test_several_grids_give_the_nearest_hit():
    occ_a = np.zeros((10, 10), dtype=np.float32)
    occ_a[:, 8] = 1  # x in [0.8, 0.9) with corner (0, 0) and 0.1 m cells
    occ_b = np.zeros((10, 10), dtype=np.float32)
    occ_b[:, 3] = 1  # x in [1.6, 1.8) with corner (1, 0) and 0.2 m cells
    out = np.array([5.0, 5.0])
    ox, oy, dx, dy = np.array([0.05, 1.2]), np.array([0.5, 0.5]), np.ones(2), np.zeros(2)
    for g in (GridCaster(occ_b, 1.0, 0.0, 0.2), GridCaster(occ_a, 0.0, 0.0, 0.1)):
        g.cast(ox, oy, dx, dy, out)
    assert out[0] == pytest.approx(0.75) and out[1] == pytest.approx(0.4)


# ---------------------------------------------------------------------------------------------- against a plain walk
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_a_cell_by_cell_walk_on_random_rectangles(seed):
    """Random rectangles on a 300 × 200 grid; 2000 rays from random points (some outside the grid, some inside
    obstacles), random directions and reaches."""
    rng = np.random.default_rng(seed)
    ny, nx, res, x_min, y_min = 200, 300, 0.05, -3.0, 1.0
    occ = np.zeros((ny, nx), dtype=np.float32)
    for _ in range(60):
        x0, y0 = rng.integers(0, nx), rng.integers(0, ny)
        occ[y0:y0 + rng.integers(1, 25), x0:x0 + rng.integers(1, 25)] = 1.0
    g = GridCaster(occ, x_min, y_min, res)
    n = 2000
    ox = x_min + rng.random(n) * nx * res
    oy = y_min + rng.random(n) * ny * res
    ox[-200:] = x_min + rng.uniform(-0.5, 1.5, 200) * nx * res  # some from outside the grid
    oy[-200:] = y_min + rng.uniform(-0.5, 1.5, 200) * ny * res
    ang = rng.uniform(-math.pi, math.pi, n)
    ang[:40] = rng.choice([0.0, math.pi / 2, -math.pi / 2, math.pi, math.pi / 4], 40)  # axis-aligned and diagonal
    reach = rng.uniform(0.5, 25.0, n)
    got = cast(g, ox, oy, ang, reach)
    occupied = occ > 0.5
    for i in range(n):
        ref = reference_walk(occupied, x_min, y_min, res, ox[i], oy[i], ang[i], reach[i])
        expected = ref if ref < reach[i] else reach[i]
        assert got[i] == pytest.approx(expected, abs=1e-7), (i, ox[i], oy[i], ang[i], reach[i])


def test_far_rays_march_through_large_empty_regions():
    """A 2000 × 2000 grid with one occupied cell far away: the marching reaches it exactly."""
    occ = np.zeros((2000, 2000), dtype=np.float32)
    occ[1500, 1800] = 1.0  # cell x in [180, 180.1), y in [150, 150.1) with 0.1 m cells
    g = GridCaster(occ, 0.0, 0.0, 0.1)
    ox, oy = 1.0, 1.0
    tx, ty = 180.0, 150.05  # a point on the cell's left face
    a = math.atan2(ty - oy, tx - ox)
    d = cast(g, ox, oy, a, 1000.0)[0]
    assert d == pytest.approx(math.hypot(tx - ox, ty - oy), abs=1e-6)

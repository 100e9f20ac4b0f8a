"""Occupancy-grid cells as Box2D obstacles near moving bodies (mvsim_core.dynamics.grid_obstacles), on a hand-made
grid."""

from __future__ import annotations

import math
from types import SimpleNamespace

import Box2D
import numpy as np
import pytest

from mvsim_core.dynamics.grid_obstacles import GridObstacles, body_cells, near_cells


def grid_element(occupancy: np.ndarray, resolution: float = 0.5, x_min: float = -1.0, y_min: float = -2.0):
    ny, nx = occupancy.shape
    grid = SimpleNamespace(occupancy=occupancy, nx=nx, ny=ny, resolution=resolution, x_min=x_min, y_min=y_min)
    return SimpleNamespace(grid=grid, params={"lateral_friction": 0.6, "restitution": 0.1})


def test_build_cell_centres_and_stencils():
    occ = np.zeros((8, 10))
    occ[2, 3] = 0.9
    occ[5, 7] = 0.5  # not above 0.5: free
    w = Box2D.b2World(gravity=(0, 0))
    g = GridObstacles.build(w, grid_element(occ), [0.2, 1.0, 0.2])
    assert (g.nx, g.ny, g.resolution, g.friction, g.restitution) == (10, 8, 0.5, 0.6, 0.1)
    assert np.flatnonzero(g.occupied).tolist() == [2 * 10 + 3]
    assert g.cell_center(2 * 10 + 3) == (-1.0 + 3.5 * 0.5, -2.0 + 2.5 * 0.5)
    assert len(g.body.fixtures) == 0 and g.fixtures == {} and g.near == [set(), set(), set()]
    assert g.stencils[0] is g.stencils[2]  # same radius: one stencil
    for radius, st in ((0.2, g.stencils[0]), (1.0, g.stencils[1])):
        reach = 1.5 * radius + 0.5 + 0.5 * math.sqrt(0.5)
        d = np.hypot(st[:, 0], st[:, 1]) * 0.5
        assert d.max() <= reach and [0, 0] in st.tolist()
        n = int(math.ceil(reach / 0.5))
        assert len(st) == sum(math.hypot(i, j) * 0.5 <= reach for i in range(-n, n + 1) for j in range(-n, n + 1))


def test_update_follows_the_bodies_and_counts_shared_cells():
    occ = np.zeros((20, 20))
    occ[10, :] = 1.0  # a row of occupied cells at y in [-2 + 5, -2 + 5.5) = [3, 3.5)
    w = Box2D.b2World(gravity=(0, 0))
    g = GridObstacles.build(w, grid_element(occ), [0.2, 0.2])
    g.update(np.array([[0.0, 0.0], [5.0, 0.0]]))  # both far from the row
    assert g.fixtures == {} and len(g.body.fixtures) == 0
    g.update(np.array([[2.0, 3.0], [2.6, 3.0]]))  # both next to it, sharing cells
    a = {k for k in g.fixtures}
    assert a and all(k // 20 == 10 for k in a)
    assert len(g.body.fixtures) == len(a) and a == g.near[0] | g.near[1]
    assert any(g.refcount[k] == 2 for k in a)
    v = np.array(g.fixtures[min(a)].shape.vertices)
    assert np.ptp(v, axis=0) == pytest.approx((0.5, 0.5))  # full cells
    f = g.fixtures[min(a)]
    assert f.friction == pytest.approx(0.6) and f.restitution == pytest.approx(0.1)
    kept = dict(g.fixtures)
    g.update(np.array([[2.0, 3.0], [2.6, 3.0]]))  # nobody moved: nothing rebuilt
    assert g.fixtures == kept
    g.update(np.array([[0.0, -1.5], [2.6, 3.0]]))  # the first leaves: only the second one's cells remain
    assert set(g.fixtures) == g.near[1] and g.near[0] == set()
    assert all(g.fixtures[k] is kept[k] for k in g.fixtures)
    assert all(g.refcount[k] == 1 for k in g.fixtures) and len(g.body.fixtures) == len(g.fixtures)
    g.update(np.array([[0.0, -1.5], [0.0, -1.0]]))
    assert g.fixtures == {} and g.refcount == {} and len(g.body.fixtures) == 0


def test_stencil_bytes_never_overflows():
    """The load-time budget arithmetic (loader: occupancy-grid neighbourhoods): a 1e-300 m cell gave OverflowError
    (fuzz campaign 2, --seed 0 --only 459); it is now simply unbounded."""
    from mvsim_core.dynamics.grid_obstacles import stencil_bytes

    assert stencil_bytes(0.5, 0.05) == 35.0 ** 2 * 64  # reach 0.835 m: n = 17, a 35 x 35 square
    assert stencil_bytes(0.5, 1e-300) == math.inf
    assert stencil_bytes(math.nan, 0.05) == math.inf


def test_body_cells_are_numpys_floors_and_count_the_bodies_that_changed_cell():
    rng = np.random.default_rng(3)
    pos = rng.uniform(-20.0, 20.0, (40, 2))
    pos[:4] = [[-3.0, 1.0], [2.2, -0.6], [0.0, 0.0], [-0.0000001, 5.8]]  # on cell edges and just below one
    want = np.floor((pos - (-3.0, -1.0)) / 0.2).astype(np.int64)
    cells = np.empty_like(want)
    last = want.copy()
    last[[5, 9, 30], 1] += 1
    assert body_cells(pos, -3.0, -1.0, 0.2, last, cells) == 3
    assert np.array_equal(cells, want)
    assert body_cells(pos, -3.0, -1.0, 0.2, want, cells) == 0


def test_near_cells_are_the_occupied_stencil_cells_inside_the_grid_in_stencil_order():
    rng = np.random.default_rng(12)
    nx, ny = 23, 17
    occupied = rng.random(nx * ny) < 0.3
    d = np.arange(-4, 5)
    stencil = np.column_stack([np.tile(d, 9), np.repeat(d, 9)]).astype(np.int64)
    for ix, iy in ((0, 0), (11, 8), (22, 16), (-3, 5), (25, 20)):  # corners, middle, outside
        out = np.empty(len(stencil), dtype=np.int64)
        n = near_cells(ix, iy, stencil, occupied, nx, ny, out)
        want = [(iy + sy) * nx + ix + sx for sx, sy in stencil.tolist()
                if 0 <= ix + sx < nx and 0 <= iy + sy < ny and occupied[(iy + sy) * nx + ix + sx]]
        assert out[:n].tolist() == want


def test_only_the_surface_of_a_solid_region_gets_fixtures():
    from mvsim_core.dynamics.grid_obstacles import surface_cells

    solid = np.zeros((6, 7), bool)
    solid[1:5, 1:6] = True  # a 4 x 5 block: its 3 x 1 inside has four solid neighbours
    solid[0, 6] = True  # a corner cell at the grid's edge
    surf = surface_cells(solid)
    assert np.flatnonzero(solid & ~surf).tolist() == [2 * 7 + 2, 2 * 7 + 3, 2 * 7 + 4, 3 * 7 + 2, 3 * 7 + 3, 3 * 7 + 4]
    assert surf[0, 6] and surf[1, 1] and surf[4, 5] and not surf[0, 0]
    assert surface_cells(np.ones((3, 3), bool)).sum() == 8  # the grid's edge counts as free: only the centre is buried


def test_a_body_deep_inside_a_solid_region_meets_no_buried_cell():
    """An all-black map (a fuzzed 4000 x 4000 warehouse made one Box2D step take minutes: a car overlapping
    ~18 000 cell squares); only the region's surface gets fixtures, so a body deep inside gets none and one near
    the surface gets only surface cells."""
    occ = np.ones((200, 200))
    w = Box2D.b2World(gravity=(0, 0))
    g = GridObstacles.build(w, grid_element(occ, resolution=0.05, x_min=-5.0, y_min=-5.0), [2.5, 0.3])
    assert int(g.occupied.sum()) == 4 * 200 - 4
    g.update(np.array([[0.0, 0.0], [-4.9, 0.0]]))  # a car at the centre; a small robot by the left edge
    assert g.near[0] == set()
    assert g.near[1] and all(k % 200 == 0 for k in g.near[1])  # column 0 only, the grid's edge
    assert len(g.body.fixtures) == len(g.near[1])


def test_update_reuses_its_cell_arrays_and_keeps_what_it_saved():
    """update() writes the bodies' cells into a reused array (no allocation per step): the cells kept are always
    those of the last call that moved a body, a saved state never changes afterwards, and the fixtures are those of
    a grid that saw only the calls that moved something."""
    occ = np.zeros((20, 20))
    occ[10, :] = 1.0
    w = Box2D.b2World(gravity=(0, 0))
    g = GridObstacles.build(w, grid_element(occ), [0.2, 0.2])
    w_ref = Box2D.b2World(gravity=(0, 0))  # (kept: Box2D objects die with their b2World)
    ref = GridObstacles.build(w_ref, grid_element(occ), [0.2, 0.2])
    path = [[[2.0, 3.0], [2.6, 3.0]], [[2.1, 3.1], [2.6, 3.0]], [[2.6, 3.0], [2.6, 3.0]], [[0.0, -1.5], [2.6, 2.9]],
            [[0.1, -1.4], [2.6, 2.9]], [[4.0, 3.0], [1.0, 3.2]]]
    saved = []
    for pos in path:
        pos = np.array(pos)
        before = None if g.last_cells is None else g.last_cells.copy()
        g.update(pos)
        want = np.floor((pos - (-1.0, -2.0)) / 0.5).astype(np.int64)
        assert g.last_cells.tolist() == want.tolist()
        if before is None or before.tolist() != want.tolist():
            ref.update(pos)
        assert set(g.fixtures) == set(ref.fixtures) and g.near == ref.near and g.refcount == ref.refcount
        saved.append((g.save_state(), want.tolist()))
    for state, cells in saved:
        assert state["last_cells"].tolist() == cells
    g.restore_state(saved[1][0])
    g.update(np.array(path[2]))  # from the restored cells: one body moved
    assert g.last_cells.tolist() == np.floor((np.array(path[2]) - (-1.0, -2.0)) / 0.5).astype(np.int64).tolist()
    assert saved[1][0]["last_cells"].tolist() == saved[1][1]

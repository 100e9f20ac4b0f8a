"""GridMap container: geometry helpers and validation."""

from __future__ import annotations

import numpy as np
import pytest

from mvsim_core.io.grid_map import GridMap


def make_grid() -> GridMap:
    occ = np.zeros((3, 4), dtype=np.float64)  # ny=3 rows, nx=4 columns
    occ[0, 1] = 1.0
    return GridMap(occupancy=occ, resolution=0.5, x_min=-1.0, y_min=2.0)


def test_properties_and_dtype():
    g = make_grid()
    assert g.occupancy.dtype == np.float32
    assert (g.nx, g.ny) == (4, 3)
    assert g.x_max == pytest.approx(1.0)
    assert g.y_max == pytest.approx(3.5)


def test_cell_center_scalar_and_vectorised():
    g = make_grid()
    assert g.cell_center(0, 0) == pytest.approx((-0.75, 2.25))
    assert g.cell_center(3, 2) == pytest.approx((0.75, 3.25))
    xs, ys = g.cell_center(np.array([0, 3]), np.array([0, 2]))
    np.testing.assert_allclose(xs, [-0.75, 0.75])
    np.testing.assert_allclose(ys, [2.25, 3.25])


def test_world_to_cell_roundtrip_and_borders():
    g = make_grid()
    for ix in range(g.nx):
        for iy in range(g.ny):
            assert g.world_to_cell(*g.cell_center(ix, iy)) == (ix, iy)
    # a point on a cell border belongs to the cell above/right of it
    assert g.world_to_cell(-0.5, 2.5) == (1, 1)
    assert g.world_to_cell(-1.0 + 3 * 0.5, 2.0) == (3, 0)
    # outside: negative / too large indices, not clamped
    assert g.world_to_cell(-1.2, 1.9) == (-1, -1)
    assert g.in_bounds(*g.world_to_cell(5.0, 2.1)) is False
    assert g.in_bounds(0, 0) is True
    ix, iy = g.world_to_cell(np.array([-0.9, 0.9]), np.array([2.1, 3.4]))
    assert ix.tolist() == [0, 3] and iy.tolist() == [0, 2]


def test_occupied_cell_is_at_expected_world_point():
    g = make_grid()
    ix, iy = g.world_to_cell(-0.25, 2.25)  # column 1, bottom row
    assert g.occupancy[iy, ix] == 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"occupancy": np.zeros(4)}, "2D"),
        ({"resolution": 0.0}, "resolution"),
        ({"resolution": float("nan")}, "resolution"),
        ({"x_min": float("inf")}, "finite"),
    ],
)
def test_validation(kwargs, match):
    args = {"occupancy": np.zeros((2, 2)), "resolution": 0.1, "x_min": 0.0, "y_min": 0.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        GridMap(**args)

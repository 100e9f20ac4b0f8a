"""Terrain: ground heights (planes, elevation maps, block tops, ramps, bumps) and the per-step vehicle attitude fit.

Worlds are written as XML into ``tmp_path`` and read by the real loader. Sign convention under test (MRPT
``CPose3D``, R = Rz(yaw)·Ry(pitch)·Rx(roll)): a vehicle whose nose points uphill has a *negative* pitch, so that
R·(1, 0, 0) points upwards; a vehicle whose left side (+y) is uphill has a positive roll.

Timing (``test_timing_printout``, run with ``-s`` to see it; no assertion on time), measured on the development
machine after the numba kernels were compiled: ``height_at`` for 8 points ≈ 5 µs on a plane-only world, ≈ 6 µs with an
elevation map and 20 box blocks; ``fit_vehicle`` (4 wheels, elevation map) ≈ 35 µs; ``fit_vehicles`` for 25 vehicles
≈ 160 µs; ``set_blocks`` (20 unmoved blocks) ≈ 3 µs.
"""

from __future__ import annotations

import math
import timeit
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.dynamics.terrain import (
    Terrain,
    initial_z,
    rigid_fit,
    slope_direction,
    wheel_arrays,
)
from mvsim_core.geometry.rotations import rotation

SLOPE = 0.1  # rise per metre of the tilted elevation maps below
WHEELS_4 = """
      <lf_wheel pos="0.3  0.6" mass="1.0" width="0.03" diameter="0.20" />
      <rf_wheel pos="0.3 -0.6" mass="1.0" width="0.03" diameter="0.20" />
      <lr_wheel pos="-0.3  0.6" mass="1.0" width="0.03" diameter="0.20" />
      <rr_wheel pos="-0.3 -0.6" mass="1.0" width="0.03" diameter="0.20" />"""


def load(tmp_path: Path, body: str, vehicle: bool = True) -> mv.World:
    """A world with ``body`` and (optionally) one 4-wheel vehicle ``v`` at the origin."""
    veh = (f'<vehicle name="v"><dynamics class="differential_4_wheels">{WHEELS_4}</dynamics>'
           '<init_pose>0 0 0</init_pose></vehicle>') if vehicle else ""
    path = tmp_path / "t.world.xml"
    path.write_text(f'<mvsim_world version="1.0">\n{body}\n{veh}\n</mvsim_world>\n')
    return mv.load_world(path)


def elevation(matrix: str) -> str:
    """A 3×3-vertex elevation map with 6 m cells, centred on the origin (vertices at -6, 0, 6 m)."""
    return (f'<element class="elevation_map"><resolution>6.0</resolution>'
            f'<elevation_data_matrix>{matrix}</elevation_data_matrix></element>')


# rows run along +X, columns along +Y: h = 0.1 (x + 6), resp. 0.1 (y + 6)
RISING_X = elevation("[0 0 0; 0.6 0.6 0.6; 1.2 1.2 1.2]")
RISING_Y = elevation("[0 0.6 1.2; 0 0.6 1.2; 0 0.6 1.2]")


def fit(terrain: Terrain, world: mv.World, x=0.0, y=0.0, yaw=0.0, z=0.0, pitch=0.0, roll=0.0):
    xy, d = wheel_arrays(world.vehicles["v"])
    return terrain.fit_vehicle(x, y, yaw, xy, d, z, pitch, roll)


# ------------------------------------------------------------------------------------------------------ height_at
def test_no_ground_element_means_floor_at_zero(tmp_path):
    w = load(tmp_path, "", vehicle=False)
    t = Terrain.from_world(w)
    assert t.has_implicit_floor
    h = t.height_at(np.array([0.0, 123.0, -5.0]), np.array([0.0, -40.0, 2.0]), np.array([0.1, 5.0, -0.01]))
    np.testing.assert_array_equal(h, [0.0, 0.0, np.nan])  # nothing at or below z_max = -0.01


def test_ceiling_above_the_wheel_axis_is_ignored(tmp_path):
    w = load(tmp_path, '<element class="horizontal_plane"><z>0</z></element>'
                       '<element class="horizontal_plane"><z>3</z></element>')
    t = Terrain.from_world(w)
    assert not t.has_implicit_floor
    np.testing.assert_array_equal(t.height_at(np.zeros(3), np.zeros(3), np.array([0.1, 2.99, 3.5])), [0, 0, 3])
    np.testing.assert_array_equal(t.height_at(np.array([11.0]), np.array([0.0]), np.array([5.0])), [np.nan])
    assert fit(t, w) == (0.0, 0.0, 0.0)
    assert fit(t, w, z=3.0) == (3.0, 0.0, 0.0)  # a vehicle upstairs stays upstairs


def test_outside_the_elevation_map_is_nan(tmp_path):
    w = load(tmp_path, RISING_X)
    t = Terrain.from_world(w)
    h = t.height_at(np.array([0.0, 6.0, 6.01, -7.0, 0.0]), np.array([0.0, 6.0, 0.0, 0.0, 50.0]), np.full(5, 10.0))
    np.testing.assert_allclose(h, [0.6, 1.2, np.nan, np.nan, np.nan])
    # all wheels off the map: the pose is kept
    assert fit(t, w, x=100.0, z=0.7, pitch=0.2, roll=-0.1) == (0.7, 0.2, -0.1)


def test_elevation_map_matches_the_element_query(tmp_path):
    w = load(tmp_path, elevation("[1.0 0.0 -1.0; 1.5 0.0 -1.5; 1.0 0.0 -1.0]").replace(
        "</resolution>", "</resolution><corner_min_x>-8</corner_min_x><corner_min_y>-8</corner_min_y>"), vehicle=False)
    emap = w.elements[0]
    t = Terrain.from_world(w)
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-9, 5, 2000), rng.uniform(-9, 5, 2000)
    x[:50], y[50:100] = -8.0, 4.0  # borders
    np.testing.assert_allclose(t.height_at(x, y, np.full_like(x, 10.0)), emap.elevations_at(x, y), atol=1e-12)


def test_height_at_broadcasts_and_keeps_shape(tmp_path):
    t = Terrain.from_world(load(tmp_path, RISING_X, vehicle=False))
    h = t.height_at(np.array([[0.0, 1.0], [2.0, 3.0]]), 0.0, 10.0)
    np.testing.assert_allclose(h, [[0.6, 0.7], [0.8, 0.9]])


# --------------------------------------------------------------------------------------------------------- blocks
def test_box_top_and_step_height(tmp_path):
    w = load(tmp_path, '<block name="b"><static>true</static><init_pose>-2 -2 0</init_pose>'
                       '<geometry type="box" lx="4" ly="4" lz="0.3"/></block>')
    t = Terrain.from_world(w)
    np.testing.assert_array_equal(t.height_at(np.array([0.0, 1.9, 2.1]), np.zeros(3), np.full(3, 1.0)), [0.3, 0.3, 0])
    assert fit(t, w) == (0.0, 0.0, 0.0)  # axis at 0.1 m: the 0.3 m box top is out of reach, the floor is used
    assert fit(t, w, z=0.25) == (0.3, 0.0, 0.0)  # close enough: onto the box
    xy, _ = wheel_arrays(w.vehicles["v"])
    assert t.fit_vehicle(0.0, 0.0, 0.0, xy, np.full(4, 0.8), 0.0, 0.0, 0.0) == (0.3, 0.0, 0.0)  # big wheels climb


def test_rotated_block_and_shape_polygon(tmp_path):
    w = load(tmp_path, '<block name="b"><init_pose>0 0 90</init_pose><zmax>0.5</zmax>'
                       '<geometry type="box" lx="4" ly="1" lz="0.5"/></block>'
                       '<block name="tri"><init_pose>10 0 0</init_pose><zmax>0.2</zmax>'
                       '<shape><pt>0 0</pt><pt>2 0</pt><pt>0 2</pt></shape></block>', vehicle=False)
    t = Terrain.from_world(w)
    # yawed 90°: the box covers x in [-1, 0], y in [0, 4]; the triangle x + y <= 2 from (10, 0)
    x = np.array([-0.5, 0.5, -0.5, 10.5, 11.5])
    y = np.array([3.0, 3.0, 4.5, 0.5, 1.0])
    np.testing.assert_array_equal(t.height_at(x, y, np.full(5, 1.0)), [0.5, 0, 0, 0.2, 0])


def test_ramp_half_way(tmp_path):
    lx, lz = 4.0, 1.0
    w = load(tmp_path, f'<block name="r"><static>true</static><init_pose>-2 -1 0</init_pose>'
                       f'<geometry type="ramp" lx="{lx}" ly="2" lz="{lz}"/></block>')
    t = Terrain.from_world(w)
    np.testing.assert_allclose(t.height_at(np.array([-1.9, -1.0, 0.0, 1.9, 2.1]), np.zeros(5), np.full(5, 5.0)),
                               [0.025, 0.25, 0.5, 0.975, 0.0])
    xy, _ = wheel_arrays(w.vehicles["v"])
    z, pitch, roll = t.fit_vehicle(0.0, 0.0, 0.0, xy, np.full(4, 0.6), 0.5, 0.0, 0.0)
    assert z == pytest.approx(lz / 2, abs=1e-9)
    assert pitch == pytest.approx(-math.atan(lz / lx), abs=1e-9) and roll == pytest.approx(0.0, abs=1e-12)
    assert (rotation(0.0, pitch, roll) @ [1, 0, 0])[2] > 0  # nose up the ramp


def test_semi_cylinder_bump_profile(tmp_path):
    w = load(tmp_path, '<block name="b"><static>true</static><init_pose>0 0 0</init_pose>'
                       '<geometry type="semi_cylinder_bump" lx="3" ly="0.4" lz="0.1"/></block>', vehicle=False)
    t = Terrain.from_world(w)
    h = t.height_at(np.array([1.0, 1.0, 1.0, 2.9, -0.1]), np.array([0.0, 0.1, -0.1999, 0.0, 0.0]), np.full(5, 1.0))
    np.testing.assert_allclose(h, [0.1, 0.1 * math.sqrt(0.75), 0.1 * math.sqrt(1 - 0.9995 ** 2), 0.1, 0.0])


def test_block_on_an_elevated_pose_and_moving_blocks(tmp_path):
    w = load(tmp_path, '<element class="horizontal_plane"><z>0</z></element>'
                       '<block name="b"><init_pose3d>0 0 1 0 0 0</init_pose3d><skip_elevation_adjust/>'
                       '<zmax>0.5</zmax><shape><pt>-1 -1</pt><pt>1 -1</pt><pt>1 1</pt><pt>-1 1</pt></shape></block>',
             vehicle=False)
    b = w.blocks["b"]
    t = Terrain.from_world(w)
    np.testing.assert_array_equal(t.height_at(np.array([0.0, 5.0]), np.zeros(2), np.full(2, 2.0)), [1.5, 0.0])
    b.sim.pose = (5.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # the block moved
    t.set_blocks(w.blocks.values())
    np.testing.assert_array_equal(t.height_at(np.array([0.0, 5.0]), np.zeros(2), np.full(2, 2.0)), [0.0, 0.5])
    t.set_blocks([])
    np.testing.assert_array_equal(t.height_at(np.array([5.0]), np.zeros(1), np.full(1, 2.0)), [0.0])


def test_intangible_blocks(tmp_path):
    w = load(tmp_path, '<block name="ghost"><intangible>true</intangible><init_pose>0 0 0</init_pose>'
                       '<zmax>0.05</zmax></block>', vehicle=False)
    p = (np.zeros(1), np.zeros(1), np.ones(1))
    assert Terrain.from_world(w).height_at(*p)[0] == 0.05  # upstream: every block is ground
    assert Terrain.from_world(w, include_intangible=False).height_at(*p)[0] == 0.0


# ---------------------------------------------------------------------------------------------------- vehicle fit
def test_flat_plane_is_exact(tmp_path):
    w = load(tmp_path, '<element class="horizontal_plane"><z>0.7</z></element>')
    t = Terrain.from_world(w)
    assert fit(t, w, yaw=1.3, z=0.6, pitch=0.01, roll=-0.02) == (0.7, 0.0, 0.0)
    np.testing.assert_array_equal(slope_direction(0.0, 0.0, 1.3), [0.0, 0.0, -1.0])
    np.testing.assert_array_equal(Terrain.slope_direction(0.0, 0.0, 0.0), [0.0, 0.0, -1.0])


def test_slope_along_x(tmp_path):
    w = load(tmp_path, RISING_X)
    t = Terrain.from_world(w)
    z, pitch, roll = fit(t, w, z=0.6)
    assert z == pytest.approx(0.6, abs=1e-9)
    assert pitch == pytest.approx(-math.atan(SLOPE), abs=1e-6) and roll == pytest.approx(0.0, abs=1e-9)
    assert (rotation(0.0, pitch, roll) @ [1, 0, 0])[2] > 0
    # gravity pulls backwards (downhill) in the vehicle frame
    g = slope_direction(pitch, roll)
    assert g[0] == pytest.approx(-SLOPE / math.sqrt(1 + SLOPE**2)) and g[1] == pytest.approx(0.0, abs=1e-12)
    # facing +y on the same slope: the right side (-y of the vehicle = +x of the world) is uphill
    z, pitch, roll = fit(t, w, yaw=math.pi / 2, z=0.6)
    assert pitch == pytest.approx(0.0, abs=1e-9) and roll == pytest.approx(-math.atan(SLOPE), abs=1e-6)


def test_slope_along_y(tmp_path):
    w = load(tmp_path, RISING_Y)
    t = Terrain.from_world(w)
    z, pitch, roll = fit(t, w, x=1.0, y=-1.0, z=0.5)
    assert z == pytest.approx(0.5, abs=1e-9)
    assert pitch == pytest.approx(0.0, abs=1e-9) and roll == pytest.approx(math.atan(SLOPE), abs=1e-6)
    assert (rotation(0.0, pitch, roll) @ [0, 1, 0])[2] > 0  # left side up


@pytest.mark.parametrize("yaw", [0.3, 2.0, -2.5])
def test_any_yaw_gets_the_ground_normal_and_keeps_its_yaw(tmp_path, yaw):
    w = load(tmp_path, RISING_X)
    t = Terrain.from_world(w)
    z, pitch, roll = fit(t, w, x=0.5, y=0.2, yaw=yaw, z=0.65)
    rot = rotation(yaw, pitch, roll)
    np.testing.assert_allclose(rot[:, 2], np.array([-SLOPE, 0.0, 1.0]) / math.hypot(SLOPE, 1.0), atol=1e-9)
    assert math.atan2(rot[1, 0], rot[0, 0]) == pytest.approx(yaw, abs=1e-12)
    assert z == pytest.approx(SLOPE * 6.5, abs=1e-9)


def test_upstream_drift_world_tilts_both_ways(tmp_path):
    # the map of upstream's test_drift_on_elevation: the vehicle sits where the terrain falls along +y
    w = load(tmp_path, elevation("[1.0 0.0 -1.0; 1.5 0.0 -1.5; 1.0 0.0 -1.0]").replace(
        "</resolution>", "</resolution><corner_min_x>-8</corner_min_x><corner_min_y>-8</corner_min_y>"))
    t = Terrain.from_world(w)
    z0 = float(t.height_at(np.zeros(1), np.zeros(1), np.full(1, 10.0))[0])
    z, pitch, roll = fit(t, w, z=z0)
    assert z == pytest.approx(z0, abs=0.05)  # two triangles under the vehicle: not one plane
    assert roll < -0.05  # the terrain falls along +y: the left side is downhill
    assert pitch < 0.0  # at y = 0 it rises from x = -2 (-0.5 m) to x = 4 (-1/3 m): nose up


def test_two_wheels_take_the_mean_height(tmp_path):
    path = tmp_path / "w.xml"
    path.write_text('<mvsim_world version="1.0">' + RISING_X +
                    '<vehicle name="v"><dynamics class="differential"/><init_pose>0 0 0</init_pose></vehicle>'
                    '</mvsim_world>')
    w = mv.load_world(path)
    xy, d = wheel_arrays(w.vehicles["v"])
    assert len(xy) == 2
    t = Terrain.from_world(w)
    assert t.fit_vehicle(0.0, 0.0, math.pi / 2, xy, d, 0.6, 0.0, 0.0) == pytest.approx((0.6, 0.0, 0.0))


def test_wheels_partly_off_the_map_are_skipped(tmp_path):
    w = load(tmp_path, RISING_X)
    t = Terrain.from_world(w)
    # at x = 5.8 the front wheels (x = 6.1) are off the map: 2 heights left → mean of the rear pair
    z, pitch, roll = fit(t, w, x=5.8, z=1.16)
    assert (z, pitch, roll) == pytest.approx((SLOPE * (5.5 + 6), 0.0, 0.0))


def test_fit_vehicles_batches_several_vehicles(tmp_path):
    w = load(tmp_path, RISING_X)
    t = Terrain.from_world(w)
    xy, d = wheel_arrays(w.vehicles["v"])
    x, y, yaw = np.array([0.0, 1.0, 2.0]), np.array([0.0, -1.0, 1.0]), np.array([0.0, 1.0, -2.0])
    zz = SLOPE * (x + 6)
    z, p, r = t.fit_vehicles(x, y, yaw, zz, np.zeros(3), np.zeros(3), np.tile(xy, (3, 1)), np.tile(d, 3),
                             np.repeat(np.arange(3), 4))
    for k in range(3):
        assert (z[k], p[k], r[k]) == pytest.approx(t.fit_vehicle(x[k], y[k], yaw[k], xy, d, zz[k], 0, 0), abs=1e-12)
    np.testing.assert_allclose(z, zz, atol=1e-9)
    with pytest.raises(ValueError):
        t.fit_vehicles(x, y, yaw, zz, zz, zz, xy, d, np.array([0, 1, 2, 3]))


def test_rigid_fit_recovers_a_transform():
    rng = np.random.default_rng(0)
    local = np.column_stack([rng.uniform(-1, 1, (6, 2)), np.zeros(6)])
    rot = rotation(0.4, -0.2, 0.15)
    t = np.array([1.0, -2.0, 0.5])
    r_fit, t_fit = rigid_fit(local, local @ rot.T + t)
    np.testing.assert_allclose(r_fit, rot, atol=1e-12)
    np.testing.assert_allclose(t_fit, t, atol=1e-12)
    assert rigid_fit(np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]]), np.eye(3)) is None  # collinear


# ------------------------------------------------------------------------------------------------------ initial z
def test_initial_z(tmp_path):
    w = load(tmp_path, '<block name="b"><static>true</static><init_pose>-2 -2 0</init_pose>'
                       '<geometry type="box" lx="4" ly="4" lz="0.3"/></block>', vehicle=False)
    t = Terrain.from_world(w)
    assert initial_z(t, 0.0, 0.0, 0.0, zmax=1.0) == 0.3  # query at 0.5 m: on the box
    assert initial_z(t, 0.0, 0.0, 0.0, zmax=0.4) == 0.0  # query at 0.2 m: below the box top, the floor
    assert initial_z(t, 0.0, 0.0, 0.0) == 0.3  # other objects look 1.5 m up
    assert initial_z(t, 5.0, 0.0, 2.0, zmax=1.0) == 0.0  # dropped to the floor
    w2 = load(tmp_path, RISING_X, vehicle=False)
    t2 = Terrain.from_world(w2)
    assert initial_z(t2, 0.0, 0.0, 0.0, zmax=1.0) == pytest.approx(0.0)  # 0.6 m ground is above the 0.5 m query
    assert initial_z(t2, 0.0, 0.0, 0.0, zmax=1.5) == pytest.approx(0.6)
    assert initial_z(t2, 50.0, 0.0, 2.5, zmax=1.0) == 2.5  # no ground: the written z stays


def test_timing_printout(tmp_path):
    """Prints the query costs (µs) quoted in the module docstring; asserts only the answers."""
    x, y, zq = np.linspace(-4, 4, 8), np.full(8, 1.2), np.full(8, 10.0)
    blocks = "".join(f'<block name="b{i}"><static>true</static><init_pose>{-5 + 0.5 * i} 1 0</init_pose>'
                     f'<geometry type="box" lx="0.5" ly="0.5" lz="1"/></block>' for i in range(20))
    plane = Terrain.from_world(load(tmp_path, '<element class="horizontal_plane"><z>0.2</z></element>', False))
    w = load(tmp_path, RISING_X + blocks)
    rich = Terrain.from_world(w)
    np.testing.assert_array_equal(plane.height_at(x, y, zq), np.full(8, 0.2))
    np.testing.assert_array_equal(rich.height_at(x, y, zq), np.full(8, 1.0))
    xy, d = wheel_arrays(w.vehicles["v"])
    n = 25
    args = (np.linspace(-3, 3, n), np.zeros(n), np.linspace(-3, 3, n), SLOPE * (np.linspace(-3, 3, n) + 6),
            np.zeros(n), np.zeros(n), np.tile(xy, (n, 1)), np.tile(d, n), np.repeat(np.arange(n), 4))

    def us(f, number=2000) -> float:
        f()
        return timeit.timeit(f, number=number) / number * 1e6

    print(f"\nheight_at 8 pts, plane: {us(lambda: plane.height_at(x, y, zq)):.1f} µs; "
          f"map + 20 blocks: {us(lambda: rich.height_at(x, y, zq)):.1f} µs; "
          f"fit_vehicle: {us(lambda: rich.fit_vehicle(0.0, 3.0, 0.5, xy, d, 0.6, 0.0, 0.0)):.1f} µs; "
          f"fit_vehicles x{n}: {us(lambda: rich.fit_vehicles(*args), 500):.1f} µs; "
          f"set_blocks: {us(lambda: rich.set_blocks(w.blocks.values())):.1f} µs")

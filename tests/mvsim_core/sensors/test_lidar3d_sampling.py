"""3D lidar simulation in loaded worlds (reference §1.12 lidar3d row): ground rings at h / tan(−elevation), exact
point counts, the shipped presets, blocks and low blocks, other vehicles (never the own one), elevation maps,
vertical planes with doors, walls, occupancy-grid cells, intensity, range limits and seeded noise."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.sensors.lidar3d import Lidar3D, PointCloud3D
from mvsim_core.sensors.raycast.rays3d import GRID_WALL_HEIGHT, luminance

NO_NOISE = "<range_std_noise>0</range_std_noise>"


def make_world(tmp_path: Path, body: str, *, seed: int = 0, name: str = "w.world.xml") -> mv.World:
    path = tmp_path / name
    path.write_text(f'<mvsim_world version="1.0">\n{body}\n</mvsim_world>\n')
    return mv.load_world(path, seed=seed)


def lidar3d(name: str = "lidar", *, pose: str = "0 0 1 0 0 0", angles: str | None = "-30 -15 -5 0 5 20",
            horz: int = 72, max_range: float = 100.0, min_range: float = 0.01, period: float = 0.1,
            extra: str = NO_NOISE) -> str:
    """A standalone (world-level) 3D lidar posed in the world frame, or one to put in a vehicle."""
    beams = f"<vertical_ray_angles>{angles}</vertical_ray_angles>" if angles is not None else ""
    return (f'<sensor class="lidar3d" name="{name}"><pose_3d>{pose}</pose_3d>{beams}'
            f"<horz_nrays>{horz}</horz_nrays><max_range>{max_range}</max_range><min_range>{min_range}</min_range>"
            f"<sensor_period>{period}</sensor_period>{extra}</sensor>\n")


def robot(name: str, x: float, y: float, yaw_deg: float, sensors: str = "") -> str:
    """The default differential robot: chassis x in [−0.4, 0.6] m, y in [−0.5, 0.5] m, z in [0.05, 0.6] m (front
    corners chamfered to ±0.3 m at x = 0.6), wheels 0.4 m in diameter, 0.2 m wide, at (0, ±0.5)."""
    return (f'<vehicle name="{name}"><dynamics class="differential"/>'
            f"<init_pose>{x} {y} {yaw_deg}</init_pose>{sensors}</vehicle>\n")


def box(name: str, x0: float, y0: float, x1: float, y1: float, *, zmax: float = 1.0, static: bool = True,
        color: str = "#0000ff") -> str:
    pts = "".join(f"<pt>{x} {y}</pt>" for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))
    return (f'<block name="{name}"><static>{str(static).lower()}</static><init_pose>0 0 0</init_pose>'
            f"<zmin>0</zmin><zmax>{zmax}</zmax><color>{color}</color><shape>{pts}</shape></block>\n")


def cloud(world: mv.World, sensor: str = "lidar", vehicle: str | None = None) -> PointCloud3D:
    s = world.sensors[sensor] if vehicle is None else world.vehicles[vehicle].sensors[sensor]
    pc = s.last
    assert isinstance(pc, PointCloud3D)
    return pc


def ray_of(pc: PointCloud3D, ring: int, k: int) -> np.ndarray | None:
    """The point of ring ``ring`` at azimuth index ``k`` (sensor frame), or None when that ray has no return."""
    m = (pc.ring == ring) & (pc.azimuth_index == k)
    return pc.points[m][0].astype(np.float64) if m.any() else None


# ---------------------------------------------------------------------------------------------- (a) flat ground
@pytest.mark.parametrize("floor", ["implicit", "plane"])
def test_rings_hit_a_flat_ground_at_h_over_tan(tmp_path, floor):
    """Lidar 1.2 m above the ground (the implicit z = 0 floor, or a 200 m plane at z = 0.2 under a lidar at 1.4 m):
    each downward ring hits at horizontal distance h / tan(−elevation) ± 2 cm at every azimuth; the horizontal and
    upward rings see nothing; the cloud has exactly rings_down × horz_nrays points."""
    if floor == "implicit":
        ground, z_ground = "", 0.0
    else:
        ground, z_ground = ('<element class="horizontal_plane"><x_min>-100</x_min><x_max>100</x_max>'
                            '<y_min>-100</y_min><y_max>100</y_max><z>0.2</z></element>\n'), 0.2
    h = 1.2
    w = make_world(tmp_path, ground + lidar3d(pose=f"3 -2 {z_ground + h} 40 0 0", horz=90))
    w.run(0.1)
    pc = cloud(w)
    assert pc.stamp == pytest.approx(0.1)
    el = np.radians([-30, -15, -5, 0, 5, 20])
    np.testing.assert_allclose(pc.vertical_angles, el, atol=1e-7)
    assert pc.points.dtype == np.float32 and pc.intensity.dtype == np.float32 and pc.ring.dtype == np.uint16
    assert pc.points.shape == (3 * 90, 3) and len(pc) == 270
    assert set(pc.ring.tolist()) == {0, 1, 2}  # 0 = lowest beam
    for ring in range(3):
        m = pc.ring == ring
        assert m.sum() == 90
        assert sorted(pc.azimuth_index[m].tolist()) == list(range(90))
        horiz = np.hypot(pc.points[m, 0], pc.points[m, 1])
        np.testing.assert_allclose(horiz, h / math.tan(-el[ring]), atol=0.02)
        np.testing.assert_allclose(pc.points[m, 2], -h, atol=0.02)
        np.testing.assert_allclose(pc.ranges[m], h / math.sin(-el[ring]), atol=0.02)
    # directions: azimuth index k points at −180° + 4°·k in the sensor frame
    p = ray_of(pc, 1, 45)  # azimuth 0: straight ahead
    assert p == pytest.approx([h / math.tan(math.radians(15)), 0.0, -h], abs=0.02)
    p = ray_of(pc, 1, 0)  # azimuth −180°: behind
    assert p == pytest.approx([-h / math.tan(math.radians(15)), 0.0, -h], abs=0.02)
    # back in the world: on the ground
    assert np.abs(pc.world_points()[:, 2] - z_ground).max() < 0.02
    assert pc.sensor_pose == pytest.approx((3.0, -2.0, z_ground + h, math.radians(40), 0.0, 0.0), abs=1e-9)


def test_a_bounded_plane_counts_exactly_the_rays_that_land_on_it(tmp_path):
    """A 10 m × 6 m floor plane (no other ground: no implicit floor): the cloud has one point per ray whose analytic
    ground point lies on the rectangle, and no other."""
    plane = ('<element class="horizontal_plane"><x_min>-5</x_min><x_max>5</x_max><y_min>-2</y_min><y_max>4</y_max>'
             '<z>0</z></element>\n')
    w = make_world(tmp_path, plane + lidar3d(pose="1 0.5 1 0 0 0", angles="-40 -20 -10 -5 -2 3", horz=360))
    w.run(0.1)
    pc = cloud(w)
    el = np.radians([-40, -20, -10, -5, -2])
    az = -math.pi + 2 * math.pi * np.arange(360) / 360
    d = 1.0 / np.tan(-el)[None, :]
    gx, gy = 1.0 + d * np.cos(az)[:, None], 0.5 + d * np.sin(az)[:, None]
    on = (gx >= -5) & (gx <= 5) & (gy >= -2) & (gy <= 4)
    assert 0 < on.sum() < on.size
    assert len(pc) == int(on.sum())
    wp = pc.world_points()
    assert np.all((wp[:, 0] >= -5.001) & (wp[:, 0] <= 5.001) & (wp[:, 1] >= -2.001) & (wp[:, 1] <= 4.001))


def test_min_and_max_range_drop_returns(tmp_path):
    """Rings −30° / −15° / −5° hit at 2.0 / 3.86 / 11.5 m: max_range 10 drops the third, min_range 2.5 the first."""
    w = make_world(tmp_path, lidar3d(max_range=10.0, min_range=2.5, horz=36))
    w.run(0.1)
    pc = cloud(w)
    assert pc.ring.tolist() == [1] * 36
    assert pc.ranges == pytest.approx(np.full(36, 1.0 / math.sin(math.radians(15))), abs=1e-4)
    assert (pc.min_range, pc.max_range) == (2.5, 10.0)


# ---------------------------------------------------------------------------------------------- (b) presets
PRESETS = [
    ("velodyne-vlp16.sensor.xml", {}, 16, 1808, (-15.0, 15.0)),
    ("ouster-os1.sensor.xml", {}, 128, 1024, (-11.25, 11.25)),
    ("helios-32-FOV-26.sensor.xml", {}, 32, 1808, (-16.0, 10.0)),
    ("helios-32-FOV-31.sensor.xml", {"sensor_rate": "20"}, 32, 904, None),
    ("helios-32-FOV-70.sensor.xml", {}, 32, 1808, None),
]


@pytest.mark.parametrize("file, attrs, rings, horz, span", PRESETS)
def test_presets_load_and_scan(tmp_path, worlds_dir, file, attrs, rings, horz, span):
    """The shipped definitions included in a vehicle 0.7 m above the implicit floor: beam and azimuth counts, ring
    values 0 .. rings−1 ordered by elevation, and every downward ring that reaches the floor within range gives one
    return per azimuth, at h / tan(−elevation)."""
    extra = "".join(f' {k}="{v}"' for k, v in attrs.items())
    inc = (f'<include file="{worlds_dir / "definitions" / file}" sensor_x="0" sensor_z="0.7" sensor_std_noise="0"'
           f'{extra}/>')
    w = make_world(tmp_path, robot("r1", 0, 0, 0, inc))
    s = w.vehicles["r1"].sensors["lidar1"]
    assert isinstance(s, Lidar3D)
    assert (s.vert_nrays, s.horz_nrays) == (rings, horz)
    w.run(s.period)
    pc = cloud(w, "lidar1", "r1")
    el = pc.vertical_angles.astype(np.float64)
    assert len(el) == rings and np.all(np.diff(el) > 0)
    if span is not None:
        assert math.degrees(el[0]) == pytest.approx(span[0], abs=1e-4)
        assert math.degrees(el[-1]) == pytest.approx(span[1], abs=1e-4)
    assert pc.ring.max() < rings and pc.azimuth_index.max() < horz
    z = 0.7  # the differential robot stands on the floor, z = 0
    expected = 0
    for ring in range(rings):
        m = pc.ring == ring
        d = z / math.tan(-el[ring]) if el[ring] < 0 else math.inf
        r = z / math.sin(-el[ring]) if el[ring] < 0 else math.inf
        if s.min_range <= r <= s.max_range:
            expected += horz
            assert m.sum() == horz, ring
            np.testing.assert_allclose(np.hypot(pc.points[m, 0], pc.points[m, 1]), d, rtol=1e-5, atol=0.02)
        else:
            assert m.sum() == 0, ring
    assert len(pc) == expected


# ---------------------------------------------------------------------------------------------- (c) blocks
def test_box_read_at_its_analytic_range_and_low_block_passed_over(tmp_path):
    """Lidar 0.5 m up at the origin. A 0.3 m block spans x in [2, 3], a 2 m box x in [4, 5] (|y| ≤ 1). Horizontal
    ring: passes over the low block, reads the box face at 4 / cos(azimuth) ± 1 cm; −10° ring: the low block's
    front face at 2 / cos(10°); −5° ring: the low block's top at 0.2 / sin(5°)."""
    body = (box("low", 2.0, -1.0, 3.0, 1.0, zmax=0.3) + box("tall", 4.0, -1.0, 5.0, 1.0, zmax=2.0)
            + lidar3d(pose="0 0 0.5 0 0 0", angles="-10 -5 0", horz=360, max_range=50.0))
    w = make_world(tmp_path, body)
    w.run(0.1)
    pc = cloud(w)
    p = ray_of(pc, 2, 180)
    assert p == pytest.approx([4.0, 0.0, 0.0], abs=0.01)
    for k in range(170, 191):  # azimuth within ±10°: all on the face x = 4
        a = math.radians(k - 180)
        p = ray_of(pc, 2, k)
        assert np.linalg.norm(p) == pytest.approx(4.0 / math.cos(a), abs=0.01), k
        assert p[0] == pytest.approx(4.0, abs=0.01)
    assert np.linalg.norm(ray_of(pc, 0, 180)) == pytest.approx(2.0 / math.cos(math.radians(10)), abs=0.01)
    assert np.linalg.norm(ray_of(pc, 1, 180)) == pytest.approx(0.2 / math.sin(math.radians(5)), abs=0.01)
    assert ray_of(pc, 1, 180)[2] == pytest.approx(0.3 - 0.5, abs=0.01)
    # the other way (azimuth 180°): nothing but the floor for the downward rings, nothing at all for ring 2
    assert ray_of(pc, 2, 0) is None
    assert np.linalg.norm(ray_of(pc, 0, 0)) == pytest.approx(0.5 / math.sin(math.radians(10)), abs=0.01)


def test_block_pose_yaw_pitch_and_ramp(tmp_path):
    """A box turned by 45° about z shows its edge; a ramp block (lx 4, lz 1) rising along +x is read on its slope."""
    body = ('<block name="d"><static>true</static><init_pose>5 0 45</init_pose><zmin>0</zmin><zmax>2</zmax>'
            "<shape><pt>-1 -1</pt><pt>1 -1</pt><pt>1 1</pt><pt>-1 1</pt></shape></block>\n"
            '<block name="r"><static>true</static><init_pose>-6 -2 0</init_pose>'
            '<geometry type="ramp" lx="4" ly="4" lz="1"/></block>\n'
            + lidar3d(pose="0 0 0.5 0 0 0", angles="-3 0", horz=360, max_range=50.0))
    w = make_world(tmp_path, body)
    w.run(0.1)
    pc = cloud(w)
    assert ray_of(pc, 1, 180)[0] == pytest.approx(5.0 - math.sqrt(2.0), abs=0.01)  # the corner of the diamond
    # looking back (−x) at the ramp: x in [−6, −2], top z = (x + 6) / 4, its high end (z = 1) at x = −2 faces us
    p = ray_of(pc, 1, 0)
    assert p == pytest.approx([-2.0, 0.0, 0.0], abs=0.01)  # the horizontal ray at 0.5 m hits the 1 m end face
    assert ray_of(pc, 0, 0)[0] == pytest.approx(-2.0, abs=0.01)


# ---------------------------------------------------------------------------------------------- (d) vehicles
def test_other_vehicle_seen_own_vehicle_never(tmp_path):
    """r1 carries the lidar 0.3 m up, inside its own chassis; r2 stands at x = 3 (chassis back face at x = 2.6, z in
    [0.05, 0.6]; wheels at (3, ±0.5)). r1's chassis and wheels never appear; r2's back face is read at 2.6 m."""
    sensors = lidar3d(pose="0 0 0.3 0 0 0", angles="-10 0 10", horz=720, max_range=20.0)
    w = make_world(tmp_path, robot("r1", 0, 0, 0, sensors) + robot("r2", 3.0, 0.0, 0.0))
    w.run(0.1)
    pc = cloud(w, vehicle="r1")
    assert ray_of(pc, 1, 360) == pytest.approx([2.6, 0.0, 0.0], abs=0.01)
    # r2's wheel (axle at x = 3, y = 0.5, radius 0.2, outer flank at y = 0.6) from an azimuth that misses the body
    wp = pc.world_points()
    near = np.hypot(wp[:, 0], wp[:, 1]) < 1.0
    assert not np.any(near & (wp[:, 2] > 0.01))  # no own chassis or wheel point; only the floor
    on_r2 = (np.abs(wp[:, 0] - 3.0) < 0.7) & (np.abs(wp[:, 1]) < 0.7) & (wp[:, 2] > 0.01)
    assert on_r2.sum() > 20
    # the same world seen by r2: r1 is visible to it
    w2 = make_world(tmp_path, robot("r1", 0, 0, 0) + robot("r2", 3.0, 0.0, 180.0, sensors), name="w2.world.xml")
    w2.run(0.1)
    pc2 = cloud(w2, vehicle="r2")
    assert ray_of(pc2, 1, 360) == pytest.approx([3.0 - 0.6, 0.0, 0.0], abs=0.01)  # r1's front face at x = 0.6


def test_moving_vehicle_is_seen_where_physics_put_it(tmp_path):
    """r2 drives away along +x at 1 m/s (ideal twist): after 1 s its back face is 1 m farther."""
    r2 = ('<vehicle name="r2"><dynamics class="differential"><controller class="twist_ideal"/></dynamics>'
          "<init_pose>3 0 0</init_pose></vehicle>\n")
    sensors = lidar3d(pose="0 0 0.3 0 0 0", angles="0", horz=360, max_range=20.0, period=0.5)
    w = make_world(tmp_path, robot("r1", 0, 0, 0, sensors) + r2)
    w.vehicles["r2"].set_twist(1.0, 0.0, 0.0)
    w.run(0.5)
    x2 = w.vehicles["r2"].pose[0]
    assert ray_of(cloud(w, vehicle="r1"), 0, 180)[0] == pytest.approx(x2 - 0.4, abs=0.01)
    w.run(1.0)
    x2b = w.vehicles["r2"].pose[0]
    assert x2b - x2 == pytest.approx(1.0, abs=0.05)
    assert ray_of(cloud(w, vehicle="r1"), 0, 180)[0] == pytest.approx(x2b - 0.4, abs=0.01)


# ---------------------------------------------------------------------------------------------- (e) elevation map
def test_elevation_map_hits_lie_on_the_terrain_surface(tmp_path):
    """A 9 × 9 random matrix at 1.5 m (12 m × 12 m, heights in [0, 1.5] m) under a lidar 2.5 m up: every return,
    put back in the world, lies on the terrain (z = Terrain height at its x, y within 1 cm); the steep rays hit."""
    rng = np.random.default_rng(7)
    hm = rng.uniform(0.0, 1.5, (9, 9))
    matrix = ";".join(" ".join(f"{v:.4f}" for v in row) for row in hm)
    emap = (f'<element class="elevation_map"><resolution>1.5</resolution>'
            f"<elevation_data_matrix>[{matrix}]</elevation_data_matrix></element>\n")
    w = make_world(tmp_path, emap + lidar3d(pose="0.3 -0.2 2.5 0 0 0", angles="-60 -40 -25 -15 -8 -3", horz=180,
                                            max_range=30.0))
    w.run(0.1)
    pc = cloud(w)
    assert len(pc) > 0.55 * 6 * 180  # the flat beams leave the 12 m map
    from mvsim_core.dynamics.terrain import Terrain

    terrain = Terrain(w.elements)
    wp = pc.world_points()
    ground = terrain.height_at(wp[:, 0], wp[:, 1], np.full(len(wp), 100.0))
    assert np.all(np.isfinite(ground))
    assert np.abs(wp[:, 2] - ground).max() < 0.01
    # no return from outside the map (no implicit floor once an elevation map is ground)
    assert np.all(np.abs(wp[:, :2]) <= 6.0 + 1e-3)


def test_vehicle_tilted_on_a_slope_tilts_its_lidar(tmp_path):
    """A 4-wheel robot on a plane sloping 0.1 m/m along +x (a 3-row elevation matrix) pitches nose-up (negative
    pitch); its lidar follows: every return lies on the terrain, and the −10° beam looking ahead reads the distance
    to a flat ground 0.5 m below, as seen in the slope's frame."""
    emap = ('<element class="elevation_map"><resolution>20</resolution><corner_min_x>-20</corner_min_x>'
            '<corner_min_y>-20</corner_min_y><elevation_data_matrix>[-2 -2 -2; 0 0 0; 2 2 2]</elevation_data_matrix>'
            "</element>\n")
    sensors = lidar3d(pose="0 0 0.5 0 0 0", angles="-10 0", horz=4, max_range=30.0)
    r1 = ('<vehicle name="r1"><dynamics class="differential_4_wheels"/><init_pose>0 0 0</init_pose>'
          f"{sensors}</vehicle>\n")
    w = make_world(tmp_path, emap + r1)
    w.run(0.2)
    pc = cloud(w, vehicle="r1")
    _, _, _, _, pitch, roll = pc.sensor_pose
    assert pitch == pytest.approx(-math.atan(0.1), abs=1e-3) and roll == pytest.approx(0.0, abs=1e-6)
    wp = pc.world_points()
    from mvsim_core.dynamics.terrain import Terrain

    ground = Terrain(w.elements).height_at(wp[:, 0], wp[:, 1], np.full(len(wp), 100.0))
    assert np.abs(wp[:, 2] - ground).max() < 0.01
    # the −10° beam looking forward: in the slope frame the sensor sees a flat ground 0.5 m below
    p = ray_of(pc, 0, 2)
    assert np.linalg.norm(p) == pytest.approx(0.5 / math.sin(math.radians(10)), abs=0.02)


# ---------------------------------------------------------------------------------------------- (f) noise, seeds
def test_same_seed_same_cloud_other_seed_differs(tmp_path):
    body = box("b", 3.0, -1.0, 4.0, 1.0, zmax=2.0) + lidar3d(horz=120,
                                                             extra="<range_std_noise>0.05</range_std_noise>")
    clouds = []
    for seed in (3, 3, 4):
        w = make_world(tmp_path, body, seed=seed, name=f"s{seed}.world.xml")
        w.run(0.2)
        clouds.append(cloud(w))
    a, b, c = clouds
    np.testing.assert_array_equal(a.points, b.points)
    np.testing.assert_array_equal(a.ring, b.ring)
    assert len(a) == len(c) > 3 * 120  # floor rings, plus the box; the noise is small against the range window
    assert not np.array_equal(a.points, c.points)
    # noise along the ray: directions unchanged, ranges spread by ~0.05 m around the truth
    noiseless = make_world(tmp_path, box("b", 3.0, -1.0, 4.0, 1.0, zmax=2.0) + lidar3d(horz=120), name="n.world.xml")
    noiseless.run(0.2)
    n = cloud(noiseless)
    np.testing.assert_array_equal(n.ring, a.ring)
    dev = a.ranges.astype(np.float64) - n.ranges
    assert 0.035 < dev.std() < 0.065 and abs(dev.mean()) < 0.01
    u_a = a.points / a.ranges[:, None]
    u_n = n.points / n.ranges[:, None]
    assert np.abs(u_a - u_n).max() < 1e-5


# ---------------------------------------------------------------------------------------------- (g) planes, walls
PLANE = ('<element class="vertical_plane"><x0>3</x0><y0>-3</y0><x1>3</x1><y1>3</y1><height>3</height>'
         '<thickness>0.2</thickness><color>#ff0000</color>'
         '<door position="0.5" width="1" z_min="0" z_max="2"/>'  # y in [−0.5, 0.5], up to 2 m
         "</element>\n")


def test_vertical_plane_door_lets_rays_through_and_lintel_stops_them(tmp_path):
    """Lidar 1 m up at the origin, a wall at x = 3 (front face x = 2.9) with a door |y| ≤ 0.5 up to 2 m and a box
    behind it at x = 6: the horizontal ray through the door reads 6 m; at 30° elevation it meets the lintel at
    2.9 / cos 30°; a ray at azimuth 20° hits the wall beside the door at 2.9 / cos 20°."""
    body = PLANE + box("behind", 6.0, -1.0, 7.0, 1.0, zmax=3.0) + lidar3d(angles="0 30", horz=360)
    w = make_world(tmp_path, body)
    w.run(0.1)
    pc = cloud(w)
    assert ray_of(pc, 0, 180) == pytest.approx([6.0, 0.0, 0.0], abs=0.01)
    assert np.linalg.norm(ray_of(pc, 1, 180)) == pytest.approx(2.9 / math.cos(math.radians(30)), abs=0.01)
    assert np.linalg.norm(ray_of(pc, 0, 200)) == pytest.approx(2.9 / math.cos(math.radians(20)), abs=0.01)
    assert ray_of(pc, 1, 200) is not None
    # the red plane's intensity is its luma
    m = (pc.ring == 0) & (pc.azimuth_index == 200)
    assert pc.intensity[m][0] == pytest.approx(0.2126, abs=1e-4)


def test_walls_are_seen_with_their_height(tmp_path):
    """<walls> (0.1 m thick, 2 m tall by default) from (4, −5) to (4, 5): the horizontal ring reads 3.95 m; a ray
    rising over the top passes (30° from 1 m: z = 3.3 m at the wall)."""
    walls = "<walls><shape><pt>4 -5</pt><pt>4 5</pt></shape></walls>\n"
    w = make_world(tmp_path, walls + lidar3d(angles="0 30", horz=36))
    w.run(0.1)
    pc = cloud(w)
    assert ray_of(pc, 0, 18)[0] == pytest.approx(3.95, abs=0.01)
    assert ray_of(pc, 1, 18) is None


def write_grid_png(path: Path) -> None:
    """200 × 200 px, white, with a black band at columns 150–151: with 0.05 m cells and the origin pixel (100, 100)
    the occupied cells cover x in [2.5, 2.6) m, y in [−5, 5) m."""
    from PIL import Image

    img = np.full((200, 200), 255, dtype=np.uint8)
    img[:, 150:152] = 0
    Image.fromarray(img, mode="L").save(path)


def test_occupancy_grid_cells_are_boxes_of_the_wall_height(tmp_path):
    """Occupied cells are boxes from 0 to GRID_WALL_HEIGHT (2 m): from 1 m up, the horizontal ray meets the band at
    x = 2.5; a ray at 25° clears it (z = 2.17 m at x = 2.5); from 3 m up a ray at −30° lands on the band's top
    (z = 2 at horizontal distance 1.73 m < 2.5 m: no; it descends to 2 m at 1.73 m and keeps going, reaching the
    band at x = 2.5 where z = 1.56 m: the face)."""
    write_grid_png(tmp_path / "map.png")
    grid = ('<element class="occupancy_grid"><file>map.png</file><resolution>0.05</resolution>'
            '<centerpixel_x>100</centerpixel_x><centerpixel_y>100</centerpixel_y></element>\n')
    body = grid + lidar3d(angles="0 25", horz=36) + lidar3d("high", pose="0 0 3 0 0 0", angles="-40 -30", horz=36)
    w = make_world(tmp_path, body)
    w.run(0.1)
    assert GRID_WALL_HEIGHT == 2.0
    pc = cloud(w)
    assert ray_of(pc, 0, 18) == pytest.approx([2.5, 0.0, 0.0], abs=1e-4)
    assert ray_of(pc, 1, 18) is None
    hi = cloud(w, "high")
    p = ray_of(hi, 1, 18)  # −30°: face hit at x = 2.5
    assert p == pytest.approx([2.5, 0.0, -2.5 * math.tan(math.radians(30))], abs=1e-3)
    # −40° from 3 m: z = 2 at x = 1.19, then the floor at x = 3.58 — but the band top (x in [2.5, 2.6]) at z = 2
    # is crossed at x = 1.19 already outside the band; the ray reaches x = 2.5 at z = 0.90: face hit
    p = ray_of(hi, 0, 18)
    assert p[0] == pytest.approx(2.5, abs=1e-3)
    # a ray from above the band straight down onto it: top cap at 2 m
    w2 = make_world(tmp_path, grid + lidar3d("down", pose="2.55 0 3 0 0 0", angles="-90", horz=4),
                    name="w2.world.xml")
    w2.run(0.1)
    down = cloud(w2, "down")
    assert len(down) == 4
    np.testing.assert_allclose(down.ranges, 1.0, atol=1e-6)


# ---------------------------------------------------------------------------------------------- intensity
def test_intensity_is_the_luma_of_the_surface_colour(tmp_path):
    """Green box (luma 0.7152), grey plane (#a0a0a0: 160/255), implicit floor 1.0; generate_intensity=false: 0."""
    plane = ('<element class="horizontal_plane"><x_min>-20</x_min><x_max>20</x_max><y_min>-20</y_min>'
             "<y_max>20</y_max><z>0</z><color>#a0a0a0</color></element>\n")
    on, off = (NO_NOISE + f"<generate_intensity>{v}</generate_intensity>" for v in ("true", "false"))
    body = (plane + box("g", 3.0, -1.0, 4.0, 1.0, color="#00ff00") + lidar3d(angles="-20 0", horz=36, extra=on)
            + lidar3d("dark", angles="-20 0", horz=36, extra=off))
    w = make_world(tmp_path, body)
    w.run(0.1)
    pc = cloud(w)
    assert luminance((0, 255, 0, 255)) == pytest.approx(0.7152)
    m = (pc.ring == 1) & (pc.azimuth_index == 18)
    assert pc.intensity[m][0] == pytest.approx(0.7152, abs=1e-6)
    floor = pc.ring == 0
    assert np.all(np.isclose(pc.intensity[floor], 160 / 255, atol=1e-6) | np.isclose(pc.intensity[floor], 0.7152))
    assert np.all(cloud(w, "dark").intensity == 0.0) and len(cloud(w, "dark")) == len(pc)
    w2 = make_world(tmp_path, lidar3d(angles="-20", horz=8), name="f.world.xml")
    w2.run(0.1)
    np.testing.assert_array_equal(cloud(w2).intensity, np.ones(8, dtype=np.float32))


def test_several_lidars_are_cast_together_and_sampled_on_their_periods(tmp_path):
    """Two lidars due at the same steps share one cast; a third with a 0.2 s period fires every other time."""
    body = (lidar3d("a", angles="-20", horz=10) + lidar3d("b", pose="5 5 2 90 0 0", angles="-45", horz=20)
            + lidar3d("c", angles="-20", horz=10, period=0.2))
    w = make_world(tmp_path, body)
    w.run(0.1)
    assert cloud(w, "a").stamp == pytest.approx(0.1) and w.sensors["c"].last is None
    np.testing.assert_allclose(cloud(w, "b").ranges, 2.0 * math.sqrt(2.0), atol=1e-5)
    assert len(cloud(w, "a")) == 10
    w.run(0.1)
    assert cloud(w, "c").stamp == pytest.approx(0.2)
    np.testing.assert_array_equal(cloud(w, "c").points, cloud(w, "a").points)

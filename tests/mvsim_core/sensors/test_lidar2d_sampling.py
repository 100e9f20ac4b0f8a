"""2D lidar simulation in loaded worlds (reference §1.12 laser row, §6 test-still-lidar2d): ranges against walls,
other robots, occupancy grids and low blocks at their analytic distances; own vehicle never seen; bodies_visible;
raytrace_3d; sampling period; seeded noise."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.sensors.lidar2d import LaserScan

NO_NOISE = "<range_std_noise>0</range_std_noise><angle_std_noise_deg>0</angle_std_noise_deg>"


def make_world(tmp_path: Path, body: str, *, seed: int = 0, name: str = "w.world.xml") -> mv.World:
    path = tmp_path / name
    path.write_text(f'<mvsim_world version="1.0">\n{body}\n</mvsim_world>\n')
    return mv.load_world(path, seed=seed)


def lidar(name: str = "laser1", *, pose: str = "0 0 0", height: float = 0.4, fov: float = 180, nrays: int = 181,
          max_range: float = 20.0, period: float = 0.1, extra: str = NO_NOISE) -> str:
    return (f'<sensor class="laser" name="{name}"><pose>{pose}</pose><height>{height}</height>'
            f'<fov_degrees>{fov}</fov_degrees><nrays>{nrays}</nrays><max_range>{max_range}</max_range>'
            f'<sensor_period>{period}</sensor_period>{extra}</sensor>')


def robot(name: str, x: float, y: float, yaw_deg: float, sensors: str = "") -> str:
    """The default differential robot: chassis x in [−0.4, 0.6] m, y in [−0.5, 0.5] m (front corners chamfered to
    ±0.3 m at x = 0.6), wheels 0.4 m × 0.2 m at (0, ±0.5)."""
    return (f'<vehicle name="{name}"><dynamics class="differential"/>'
            f'<init_pose>{x} {y} {yaw_deg}</init_pose>{sensors}</vehicle>\n')


def block(name: str, pts: list[tuple[float, float]], *, zmax: float = 1.0, static: bool = True) -> str:
    shape = "".join(f"<pt>{x} {y}</pt>" for x, y in pts)
    return (f'<block name="{name}"><static>{str(static).lower()}</static><init_pose>0 0 0</init_pose>'
            f'<zmin>0</zmin><zmax>{zmax}</zmax><shape>{shape}</shape></block>\n')


def box(name: str, x0: float, y0: float, x1: float, y1: float, **kw) -> str:
    return block(name, [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], **kw)


def scan_of(world: mv.World, vehicle: str = "r1", sensor: str = "laser1") -> LaserScan:
    scan = world.vehicles[vehicle].sensors[sensor].last
    assert isinstance(scan, LaserScan)
    return scan


def world_angles(scan: LaserScan) -> np.ndarray:
    return scan.sensor_pose[3] + scan.angles.astype(np.float64)


def ray_polygon(ox: float, oy: float, ang: float, poly: np.ndarray) -> float:
    """Nearest crossing of the ray with the polygon's boundary (inf if none)."""
    dx, dy = math.cos(ang), math.sin(ang)
    best = math.inf
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        ex, ey = b - a
        den = dx * ey - dy * ex
        if abs(den) < 1e-15:
            continue
        wx, wy = a[0] - ox, a[1] - oy
        t, u = (wx * ey - wy * ex) / den, (wx * dy - wy * dx) / den
        if t >= 0 and 0 <= u <= 1:
            best = min(best, t)
    return best


def placed(poly: np.ndarray, x: float, y: float, yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    p = np.asarray(poly, dtype=float)
    return np.column_stack([x + c * p[:, 0] - s * p[:, 1], y + s * p[:, 0] + c * p[:, 1]])


# ---------------------------------------------------------------------------------------------- upstream's test
def test_still_lidar_upstream_world(worlds_dir):
    """tests/test-still-lidar2d: the first scan has 181 rays and ray 0 (pointing right, −y) reads 9.0 ± 1.5 m."""
    w = mv.load_world(worlds_dir / "tests" / "test-still-lidar2d.world.xml", seed=0)
    w.run(0.1)
    scan = scan_of(w)
    assert len(scan.ranges) == 181 and len(scan.valid) == 181 and len(scan.angles) == 181
    assert scan.ranges.dtype == np.float32 and scan.valid.dtype == np.bool_ and scan.angles.dtype == np.float32
    assert scan.valid[0]
    assert scan.ranges[0] == pytest.approx(9.0, abs=1.5)
    assert scan.frame == "laser1" and scan.max_range == 30.0
    assert scan.angles[0] == pytest.approx(-math.pi / 2) and scan.angles[-1] == pytest.approx(math.pi / 2)
    assert scan.angle_increment == pytest.approx(math.pi / 180)
    # sensor 1.7 m ahead of the car at (5, 10), 1.01 m up; the wall below is the box y in [−0.05, 0.05]
    assert scan.sensor_pose == pytest.approx((6.7, 10.0, 1.01, 0.0, 0.0, 0.0), abs=1e-6)
    assert scan.ranges[0] == pytest.approx(10.0 - 0.05, abs=0.1)  # noise σ = 1 cm


# ---------------------------------------------------------------------------------------------- static walls
ROOM = (box("north", -5.2, 4.0, 5.2, 4.2) + box("south", -5.2, -4.2, 5.2, -4.0)
        + box("east", 5.0, -4.0, 5.2, 4.0) + box("west", -5.2, -4.0, -5.0, 4.0))


def room_distance(x: float, y: float, ang: float) -> float:
    """From inside the room x in (−5, 5), y in (−4, 4): distance to the first wall face along ``ang``."""
    c, s = math.cos(ang), math.sin(ang)
    ts = []
    if c > 1e-12:
        ts.append((5.0 - x) / c)
    if c < -1e-12:
        ts.append((-5.0 - x) / c)
    if s > 1e-12:
        ts.append((4.0 - y) / s)
    if s < -1e-12:
        ts.append((-4.0 - y) / s)
    return min(ts)


def test_room_of_four_walls_reads_analytic_distances(tmp_path):
    """A turned robot (30°) with a turned lidar (10°) mounted inside its own chassis: every ray of a 360° scan reads
    the distance to the wall it points at, d = wall distance / cos(angle to the wall's normal), within 1 cm; the
    robot's own chassis and wheels are never seen."""
    sensors = lidar(pose="0.1 0.05 10", fov=360, nrays=361, max_range=20.0)
    w = make_world(tmp_path, ROOM + robot("r1", 0.5, -0.5, 30.0, sensors))
    w.run(0.1)
    scan = scan_of(w)
    x, y, z, yaw, _, _ = scan.sensor_pose
    yaw_v = math.radians(30.0)
    assert (x, y) == pytest.approx((0.5 + 0.1 * math.cos(yaw_v) - 0.05 * math.sin(yaw_v),
                                    -0.5 + 0.1 * math.sin(yaw_v) + 0.05 * math.cos(yaw_v)), abs=1e-3)
    assert yaw == pytest.approx(math.radians(40.0), abs=1e-3)
    assert z == pytest.approx(0.4, abs=1e-6)
    assert scan.valid.all()
    expected = np.array([room_distance(x, y, a) for a in world_angles(scan)])
    assert np.max(np.abs(scan.ranges - expected)) < 0.01
    # spot checks: straight at the east wall, and an oblique ray
    a_east = -math.radians(40.0)  # sensor-frame angle pointing along world +x
    k = int(round((a_east + math.pi) / math.radians(1.0)))
    assert scan.ranges[k] == pytest.approx(5.0 - x, abs=0.01)
    a = world_angles(scan)[k + 20]  # 20° off the wall normal
    assert scan.ranges[k + 20] == pytest.approx((5.0 - x) / math.cos(a), abs=0.01)
    # the returns as points, put back in the world, lie on the wall faces
    pts = placed(scan.points(), x, y, yaw)
    assert pts.shape == (361, 2)
    on_wall = np.minimum(np.abs(np.abs(pts[:, 0]) - 5.0), np.abs(np.abs(pts[:, 1]) - 4.0))
    assert np.all(on_wall < 0.01)


def test_invisible_bodies_hide_walls_and_blocks(tmp_path):
    """bodies_visible=false: Box2D bodies (here walls) are not seen at all, as upstream."""
    sensors = lidar(fov=360, nrays=73, extra=NO_NOISE + "<bodies_visible>false</bodies_visible>")
    w = make_world(tmp_path, ROOM + robot("r1", 0.0, 0.0, 0.0, sensors))
    w.run(0.1)
    scan = scan_of(w)
    assert not scan.valid.any()
    assert np.all(scan.ranges == np.float32(20.0))


# ---------------------------------------------------------------------------------------------- other robots
def test_other_robot_is_seen_at_its_outline_and_own_robot_never(tmp_path):
    """r1 at the origin (lidar at its centre, inside its own chassis), r2 at (3, 0) facing it (yaw 180°): r1 sees r2's
    front face x = 3 − 0.6 = 2.4 m at 2.4 / cos(angle), the chamfers and wheels beyond at their analytic distances,
    and nothing else (not itself). r2's lidar, in the same batch, sees r1's front face 2.4 m away."""
    s1 = lidar(pose="0 0 0", fov=90, nrays=91, height=0.3)
    s2 = lidar(pose="0 0 0", fov=90, nrays=91, height=0.3)
    w = make_world(tmp_path, robot("r1", 0.0, 0.0, 0.0, s1) + robot("r2", 3.0, 0.0, 180.0, s2))
    w.run(0.1)
    scan = scan_of(w, "r1")
    v2 = w.vehicles["r2"]
    x2, y2, _, yaw2, _, _ = v2.pose
    outlines = [placed(v2.chassis.footprint, x2, y2, yaw2)]
    for wh in v2.wheels:
        hl, hw = 0.5 * wh.diameter, 0.5 * wh.width
        local = placed(np.array([[hl, -hw], [hl, hw], [-hl, hw], [-hl, -hw]]), wh.x, wh.y, wh.yaw)
        outlines.append(placed(local, x2, y2, yaw2))
    ox, oy = scan.sensor_pose[:2]
    expected = np.array([min(ray_polygon(ox, oy, a, p) for p in outlines) for a in world_angles(scan)])
    hit = np.isfinite(expected) & (expected < 20.0)
    assert hit.sum() >= 15  # r2 spans about ±14° seen from r1
    assert np.array_equal(scan.valid, hit)
    assert np.max(np.abs(scan.ranges[hit] - expected[hit])) < 1e-4
    assert np.all(scan.ranges[~hit] == np.float32(20.0))
    centre = 45  # straight ahead
    assert scan.ranges[centre] == pytest.approx(2.4, abs=1e-4)
    for k in (-5, 3):
        assert scan.ranges[centre + k] == pytest.approx(2.4 / math.cos(math.radians(k)), abs=1e-4)
    scan2 = scan_of(w, "r2")
    assert scan2.ranges[45] == pytest.approx(2.4, abs=1e-4)
    assert scan2.stamp == scan.stamp


def test_other_robot_is_invisible_when_bodies_are_not_visible(tmp_path):
    s1 = lidar(fov=90, nrays=91, extra=NO_NOISE + "<bodies_visible>false</bodies_visible>")
    w = make_world(tmp_path, robot("r1", 0.0, 0.0, 0.0, s1) + robot("r2", 3.0, 0.0, 180.0))
    w.run(0.1)
    assert not scan_of(w).valid.any()


def test_dynamic_block_is_seen_where_physics_put_it(tmp_path):
    """A dynamic block pushed by nothing stays at its pose; the lidar reads its face."""
    sensors = lidar(fov=10, nrays=11)
    w = make_world(tmp_path, robot("r1", 0.0, 0.0, 0.0, sensors) + box("crate", 4.0, -0.5, 5.0, 0.5, static=False))
    w.run(0.1)
    assert scan_of(w).ranges[5] == pytest.approx(4.0, abs=1e-4)


# ---------------------------------------------------------------------------------------------- occupancy grid
def write_grid_png(path: Path) -> None:
    """200 × 200 px, white, with a black band at columns 150–151: with 0.05 m cells and the origin pixel (100, 100)
    the occupied cells cover x in [2.5, 2.6) m, y in [−5, 5) m."""
    from PIL import Image

    img = np.full((200, 200), 255, dtype=np.uint8)
    img[:, 150:152] = 0
    Image.fromarray(img, mode="L").save(path)


@pytest.mark.parametrize("visible", [True, False])
def test_occupancy_grid_wall_is_read_within_a_cell(tmp_path, visible):
    write_grid_png(tmp_path / "map.png")
    grid = ('<element class="occupancy_grid"><file>map.png</file><resolution>0.05</resolution>'
            '<centerpixel_x>100</centerpixel_x><centerpixel_y>100</centerpixel_y></element>\n')
    extra = NO_NOISE + f"<bodies_visible>{str(visible).lower()}</bodies_visible>"
    w = make_world(tmp_path, grid + robot("r1", 0.0, 0.0, 0.0, lidar(fov=120, nrays=121, extra=extra)))
    w.run(0.1)
    scan = scan_of(w)
    assert scan.valid.all()
    res = 0.05
    for k in range(121):
        a = float(scan.angles[k])
        assert scan.ranges[k] == pytest.approx(2.5 / math.cos(a), abs=res), k
    assert scan.ranges[60] == pytest.approx(2.5, abs=1e-5)  # exact: the cell boundary, not a cell centre


# ---------------------------------------------------------------------------------------------- raytrace_3d
@pytest.mark.parametrize("mode, expected", [("true", 4.0), ("false", 2.0)])
def test_raytrace_3d_passes_over_a_low_block(tmp_path, mode, expected):
    """Lidar 0.5 m up; a 0.3 m high block at x in [2, 2.5] m and a 2 m high wall at x = 4 m."""
    extra = NO_NOISE + f"<raytrace_3d>{mode}</raytrace_3d>"
    body = (robot("r1", 0.0, 0.0, 0.0, lidar(fov=10, nrays=11, height=0.5, extra=extra))
            + box("low", 2.0, -1.0, 2.5, 1.0, zmax=0.3) + box("wall", 4.0, -2.0, 4.2, 2.0, zmax=2.0))
    w = make_world(tmp_path, body)
    w.run(0.1)
    scan = scan_of(w)
    assert scan.ranges[5] == pytest.approx(expected, abs=1e-4)


# ---------------------------------------------------------------------------------------------- vertical planes
PLANE = ('<element class="vertical_plane"><x0>3</x0><y0>-3</y0><x1>3</x1><y1>3</y1><height>3</height>'
         '<thickness>0.2</thickness>'
         '<door position="0.5" width="1" z_min="0" z_max="2"/>'  # y in [−0.5, 0.5], up to 2 m
         '<window position="0.75" width="1" z_min="1" z_max="1.6"/>'  # y in [1, 2], from 1 to 1.6 m
         '</element>\n')


@pytest.mark.parametrize("height, mode, door, window", [
    (0.5, "false", 6.0, 2.9),  # 2D: through the door, not through the window (as the collision outline)
    (1.3, "false", 6.0, 2.9),
    (1.3, "true", 6.0, 6.0),  # 3D at window height: through both
    (0.5, "true", 6.0, 2.9),  # 3D below the window sill
    (2.5, "true", 2.9, 2.9),  # 3D above the door: the lintel
])
def test_vertical_plane_doors_and_windows(tmp_path, height, mode, door, window):
    """A 3 m wall at x = 3 m (face at 2.9 m), a door straight ahead and a window at y in [1, 2]; a tall block behind
    at x = 6 m."""
    extra = NO_NOISE + f"<raytrace_3d>{mode}</raytrace_3d>"
    a_win = math.atan2(1.5, 3.0)
    sensors = lidar(fov=2 * math.degrees(a_win), nrays=3, height=height, extra=extra)
    body = PLANE + robot("r1", 0.0, 0.0, 0.0, sensors) + box("back", 6.0, -5.0, 6.5, 5.0, zmax=4.0)
    w = make_world(tmp_path, body)
    w.run(0.1)
    scan = scan_of(w)
    assert scan.ranges[1] == pytest.approx(door, abs=1e-4)
    assert scan.ranges[2] == pytest.approx(window / math.cos(a_win), abs=1e-4)


def test_readings_below_min_range_are_invalid_and_keep_their_value(tmp_path):
    """A block 0.5 m in front of a lidar whose min_range is 0.6 m: the middle ray is invalid but reads 0.5 m (too
    close, not a miss); the same scene with the default min_range (0.01 m) reads it as a valid hit."""
    near = box("near", 0.7, -0.2, 0.9, 0.2)  # 0.1 m ahead of the robot's front (x = 0.6); the lidar is at x = 0.2
    for min_range, valid in [(0.6, False), (None, True)]:
        extra = NO_NOISE + (f"<min_range>{min_range}</min_range>" if min_range is not None else "")
        w = make_world(tmp_path, ROOM + near + robot("r1", 0.0, 0.0, 0.0, lidar(pose="0.2 0 0", nrays=3, fov=90,
                                                                               extra=extra)),
                       name=f"m{min_range}.world.xml")
        w.run(0.1)
        scan = scan_of(w)
        assert scan.min_range == (min_range or 0.01)
        assert scan.ranges[1] == pytest.approx(0.5, abs=1e-4)  # middle ray: straight at the block
        assert bool(scan.valid[1]) is valid
        assert scan.valid[0] and scan.valid[2]  # ±45°: past the block, at the room's walls


# ---------------------------------------------------------------------------------------------- sampling
def test_ten_hertz_lidar_stamps(tmp_path):
    """A 10 Hz lidar over 1 s: one scan at each of 0.1, 0.2, ..., 1.0 s (first sample at t ≥ period)."""
    w = make_world(tmp_path, ROOM + robot("r1", 0.0, 0.0, 0.0, lidar(nrays=31)))
    sensor = w.vehicles["r1"].sensors["laser1"]
    w.run(0.05)
    assert sensor.last is None
    stamps = []
    for _ in range(int(round(1.0 / w.timestep))):
        before = sensor.last
        w.step()
        if sensor.last is not before:
            stamps.append(sensor.last.stamp)
    assert stamps == pytest.approx([0.1 * k for k in range(1, 11)], abs=1e-9)
    w2 = make_world(tmp_path, ROOM + robot("r1", 0.0, 0.0, 0.0, lidar(nrays=31)), name="b.world.xml")
    for k in range(1, 6):
        w2.run(0.1)
        assert w2.vehicles["r1"].sensors["laser1"].last.stamp == pytest.approx(0.1 * k, abs=1e-9)


def test_disabled_scheduler_samples_nothing_and_resumes_on_time(tmp_path):
    w = make_world(tmp_path, ROOM + robot("r1", 0.0, 0.0, 0.0, lidar(nrays=31)))
    w.start().sensor_scheduler.enabled = False
    w.run(0.5)
    assert w.vehicles["r1"].sensors["laser1"].last is None
    w.start().sensor_scheduler.enabled = True
    w.step()
    assert w.vehicles["r1"].sensors["laser1"].last.stamp == pytest.approx(w.time, abs=1e-9)


# ---------------------------------------------------------------------------------------------- noise
NOISY = "<range_std_noise>0.05</range_std_noise><angle_std_noise_deg>0.5</angle_std_noise_deg>"


def noisy_scan(tmp_path: Path, seed: int) -> LaserScan:
    sensors = lidar(fov=360, nrays=720, max_range=4.5, extra=NOISY)
    w = make_world(tmp_path, ROOM + robot("r1", 0.0, 0.0, 0.0, sensors), seed=seed, name=f"s{seed}.world.xml")
    w.run(0.1)
    return scan_of(w)


def test_same_seed_same_noisy_scan_other_seed_differs(tmp_path):
    a, b, c = noisy_scan(tmp_path, 3), noisy_scan(tmp_path, 3), noisy_scan(tmp_path, 4)
    assert np.array_equal(a.ranges, b.ranges) and np.array_equal(a.valid, b.valid)
    assert not np.array_equal(a.ranges, c.ranges)


def test_noise_only_on_valid_rays_and_ranges_clipped(tmp_path):
    """max_range 4.5 m in a 10 × 8 m room from its centre: rays towards the corners miss (exactly max_range,
    invalid); valid ranges scatter around the analytic distance with about the configured σ, within [0, max]."""
    scan = noisy_scan(tmp_path, 5)
    assert 0 < scan.valid.sum() < len(scan.valid)
    assert np.all(scan.ranges[~scan.valid] == np.float32(4.5))
    assert np.all((scan.ranges >= 0.0) & (scan.ranges <= 4.5))
    x, y = scan.sensor_pose[:2]
    expected = np.array([room_distance(x, y, a) for a in world_angles(scan)])
    ok = scan.valid & (expected < 4.2)  # far from the cut-off so the clip does not bias the statistics
    err = scan.ranges[ok] - expected[ok]
    assert abs(err.mean()) < 0.015
    assert err.std() == pytest.approx(0.05, rel=0.25)


def test_batched_sensor_poses_match_one_by_one(tmp_path):
    """SensorContext.sensor_poses (used by the lidar batch) = sensor_pose of each sensor, tilted mounts included;
    the scan's yaw is that of the sensor's x axis."""
    tilted = (f'<sensor class="laser" name="tilted"><pose_3d>0.1 0.2 0.3 30 10 5</pose_3d>'
              f'<sensor_period>0.1</sensor_period>{NO_NOISE}</sensor>')
    w = make_world(tmp_path, robot("r1", 1.0, 2.0, 40.0, lidar() + tilted) + robot("r2", -3.0, 0.0, -100.0, lidar()))
    w.run(0.1)
    ctx = w.start().sensor_scheduler.ctx
    sensors = [*w.vehicles["r1"].sensors.values(), w.vehicles["r2"].sensors["laser1"]]
    rot, pos = ctx.sensor_poses(sensors)
    for i, s in enumerate(sensors):
        r1, p1 = ctx.sensor_pose(s)
        assert np.allclose(rot[i], r1, atol=1e-12) and np.allclose(pos[i], p1, atol=1e-12)
    scan = scan_of(w, "r1", "tilted")
    r1, p1 = ctx.sensor_pose(w.vehicles["r1"].sensors["tilted"])
    assert scan.sensor_pose[3] == pytest.approx(math.atan2(r1[1, 0], r1[0, 0]))
    assert scan.sensor_pose[3] == pytest.approx(math.radians(70.0), abs=1e-6)
    assert scan.sensor_pose[4] == pytest.approx(math.radians(10.0), abs=1e-6)
    assert scan.sensor_pose[5] == pytest.approx(math.radians(5.0), abs=1e-6)

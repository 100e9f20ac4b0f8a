"""The sensor definition files shipped with upstream (``definitions/*.sensor.xml``), included as a world would."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mvsim_core.sensors import Camera, Gnss, Imu, Lidar2D, Lidar3D, RgbdCamera
from mvsim_core.xml.context import ParseContext

D = math.radians
REPO = Path(__file__).resolve().parents[3]
UPSTREAM_DEFINITIONS = REPO.parent / "shared" / "worlds" / "definitions"
PROJECT_DEFINITIONS = REPO / "worlds" / "definitions"
ALL_FILES = sorted(UPSTREAM_DEFINITIONS.glob("*.sensor.xml")) + sorted(PROJECT_DEFINITIONS.glob("*.sensor.xml"))


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: f"{p.parent.parent.parent.name}/{p.name}")
@pytest.mark.parametrize("publish", ["false", "true"])
def test_every_definition_builds_without_warnings(path: Path, publish: str, include_file):
    s, ctx = include_file(path, "r1", sensor_publish=publish, publish=publish)
    assert ctx.warnings == []
    assert s.period > 0
    assert s.parent == "r1"
    assert s.publish_topic == (f"/r1/{s.name}" if publish == "true" else None)


def test_upstream_definitions_are_all_there():
    if not UPSTREAM_DEFINITIONS.is_dir():
        pytest.skip("shared data not available")
    assert len(list(UPSTREAM_DEFINITIONS.glob("*.sensor.xml"))) == 11


# ---------------------------------------------------------------------- 2D lidars
def test_lidar2d_defaults(load_definition, defs_dir):
    s, ctx = load_definition("lidar2d.sensor.xml")
    assert isinstance(s, Lidar2D)
    assert s.name == "laser1"
    assert s.nrays == 181
    assert s.fov == pytest.approx(math.pi)
    assert s.period == pytest.approx(0.05)
    assert s.pose == pytest.approx((1.8, 0, 0.7, 0, 0, 0))
    assert s.max_range == 30.0
    assert (s.range_std_noise, s.angle_std_noise) == (0.01, pytest.approx(D(0.01)))
    assert s.params.raytrace_3d is False
    assert s.params.viz_visiblePoints is True  # the file turns points on (class default: off)
    assert s.params.viz_pointsColor == (255, 0, 0, 128)
    assert s.publish_topic is None
    assert [v.uri for v in s.visuals] == [f"{defs_dir}/../models/hokuyo_utm30.dae"]
    assert s.summary() == "laser1 (laser, 181 rays, 180°, 20 Hz)"


def test_lidar2d_publish_topic_uses_vehicle_and_sensor_names(load_definition):
    s, _ = load_definition("lidar2d.sensor.xml", parent="r1", sensor_publish="true")
    assert s.publish_topic == "/r1/laser1"
    s, _ = load_definition("lidar2d.sensor.xml", parent="veh7", sensor_publish="1", sensor_name="front")
    assert (s.name, s.publish_topic) == ("front", "/veh7/front")


def test_lidar2d_include_attributes(load_definition):
    # as jackal.vehicle.xml includes it
    s, ctx = load_definition("lidar2d.sensor.xml", sensor_x="-0.15", sensor_z="0.25", sensor_yaw="180",
                             sensor_period_sec="0.10", raytrace_3d="true", fov_degrees="270", sensor_nrays="541",
                             sensor_name="scanner1", sensor_custom_visual="false")
    assert s.name == "scanner1"
    assert s.pose == pytest.approx((-0.15, 0, 0.25, math.pi, 0, 0))
    assert (s.period, s.nrays, s.fov) == (0.1, 541, pytest.approx(D(270)))
    assert s.params.raytrace_3d is True
    assert s.visuals == []
    assert ctx.warnings == []


def test_default_names_continue_across_includes(load_definition):
    ctx = ParseContext(env={})
    a, _ = load_definition("lidar2d.sensor.xml", ctx=ctx, sensor_name="")
    b, _ = load_definition("lidar2d.sensor.xml", ctx=ctx, sensor_name="")
    c, _ = load_definition("camera.sensor.xml", ctx=ctx, sensor_name="")
    assert (a.name, b.name, c.name) == ("laser1", "laser2", "camera1")


def test_rplidar_a2(load_definition):
    s, _ = load_definition("rplidar-a2.sensor.xml")
    assert isinstance(s, Lidar2D)
    assert (s.nrays, s.fov, s.period, s.max_range) == (800, pytest.approx(2 * math.pi), pytest.approx(0.1), 16.0)
    assert [v.uri for v in s.visuals] == ["https://mrpt.github.io/mvsim-models/turtlebot3.zip/turtlebot3/lds.dae"]
    s, _ = load_definition("rplidar-a2.sensor.xml", sensor_hz="5")
    assert (s.nrays, s.period) == (1600, pytest.approx(0.2))


# ---------------------------------------------------------------------- 3D lidars
def test_velodyne_vlp16(load_definition):
    s, ctx = load_definition("velodyne-vlp16.sensor.xml")
    assert isinstance(s, Lidar3D)
    assert s.name == "lidar1"
    assert s.vert_nrays == 16
    np.testing.assert_allclose(s.vertical_angles(), np.radians(np.linspace(-15, 15, 16)), atol=1e-15)
    assert s.period == pytest.approx(0.1)  # 600 rpm
    assert s.horz_nrays == int((60.0 / 600) / 55.296e-6) == 1808
    assert (s.max_range, s.params.range_std_noise, s.params.generate_intensity) == (80.0, 0.005, False)
    assert s.pose == pytest.approx((0.5, 0, 0.7, 0, 0, 0))
    assert ctx.warnings == []


def test_velodyne_rpm_sets_rate_and_columns(load_definition):
    s, _ = load_definition("velodyne-vlp16.sensor.xml", sensor_rpm="1200")
    assert s.period == pytest.approx(0.05)
    assert s.horz_nrays == int(0.05 / 55.296e-6) == 904


def test_ouster_os1(load_definition):
    s, _ = load_definition("ouster-os1.sensor.xml")
    assert (s.vert_nrays, s.horz_nrays) == (128, 1024)
    assert s.vert_fov == pytest.approx(D(22.5))
    np.testing.assert_allclose(s.vertical_angles()[[0, -1]], [D(-11.25), D(11.25)])
    assert (s.min_range, s.max_range, s.period) == (0.5, 90.0, pytest.approx(0.1))
    s, _ = load_definition("ouster-os1.sensor.xml", vert_nrays="64", sensor_horz_nrays="2048")
    assert (s.vert_nrays, s.horz_nrays) == (64, 2048)


@pytest.mark.parametrize("fov, lowest, highest", [(26, -16, 10), (31, -16, 15), (70, -55.02, 15)])
def test_helios_32(load_definition, fov, lowest, highest):
    s, ctx = load_definition(f"helios-32-FOV-{fov}.sensor.xml")
    assert s.vert_nrays == 32
    a = s.vertical_angles()
    assert a.shape == (32,)
    assert np.all(np.diff(a) > 0)  # ring 0 = lowest beam
    assert (a[0], a[-1]) == (pytest.approx(D(lowest)), pytest.approx(D(highest)))
    assert s.horz_nrays == 1808 and s.period == pytest.approx(0.1)
    assert (s.min_range, s.max_range) == (0.2, 110.0)
    assert ctx.warnings == []


def test_helios_as_jackal_includes_it(load_definition):
    s, _ = load_definition("helios-32-FOV-31.sensor.xml", sensor_x="0.15", sensor_z="$f{0.27 + 0.08}",
                           sensor_std_noise="0.0025", sensor_name="lidar1", sensor_rate="10.0",
                           generate_intensity="true", horz_resolution_factor="1.5")
    assert s.pose == pytest.approx((0.15, 0, 0.35, 0, 0, 0))
    assert (s.params.range_std_noise, s.params.generate_intensity, s.params.horz_resolution_factor) == \
        (0.0025, True, 1.5)


# ---------------------------------------------------------------------- cameras
def test_camera(load_definition, defs_dir):
    s, _ = load_definition("camera.sensor.xml")
    assert isinstance(s, Camera)
    assert s.name == "camera1"
    i = s.intrinsics
    assert (i.ncols, i.nrows, i.cx, i.cy, i.fx, i.fy) == (640, 480, 320, 240, 400, 400)
    assert (s.params.clip_min, s.params.clip_max) == (0.01, 1e4)
    assert s.pose == pytest.approx((0.65, 0, 1.0, D(-90), 0, D(-90)))
    assert s.period == pytest.approx(0.1)
    assert [v.uri for v in s.visuals] == [f"{defs_dir}/../models/simple_camera.dae"]


def test_camera_as_turtlebot3_includes_it(load_definition):
    s, _ = load_definition("camera.sensor.xml", sensor_x="0.069", sensor_y="-0.047", sensor_z="0.107",
                           ncols="1920", nrows="1080", cx="$f{1920/2}", cy="$f{1080/2}", fx="800", fy="800",
                           sensor_period_sec="$f{1/30.0}", clip_min="0.02", clip_max="300")
    i = s.intrinsics
    assert (i.ncols, i.nrows, i.cx, i.cy, i.fx, i.fy) == (1920, 1080, 960, 540, 800, 800)
    assert s.period == pytest.approx(1 / 30, rel=1e-5)
    assert s.pose[:3] == pytest.approx((0.069, -0.047, 0.107))


def test_rgbd_camera(load_definition):
    s, _ = load_definition("rgbd_camera.sensor.xml")
    assert isinstance(s, RgbdCamera)
    assert s.name == "camera1"
    assert s.pose == pytest.approx((0.65, 0, 1.0, 0, 0, 0))
    assert s.rgb_pose_wrt_depth == pytest.approx((0, 0, 0, D(-90), 0, D(-90)))
    d, c = s.depth_intrinsics, s.rgb_intrinsics
    assert (d.ncols, d.nrows, d.cx, d.cy, d.fx, d.fy) == (640, 480, 320, 240, 400, 400)
    assert (c.ncols, c.nrows, c.fx) == (640, 480, 400)
    p = s.params
    assert (p.depth_clip_min, p.depth_clip_max, p.depth_noise_sigma, p.depth_resolution) == (0.01, 15.0, 0.05, 1e-3)
    assert (p.sense_depth, p.sense_rgb, p.publish_ros_depth_image, p.publish_ros_colored_pointcloud) == \
        (True, True, True, False)


# ---------------------------------------------------------------------- IMU, GNSS
def test_imu(load_definition):
    s, _ = load_definition("imu.sensor.xml")
    assert isinstance(s, Imu)
    assert s.name == "imu1"
    assert s.period == pytest.approx(0.05)
    assert (s.gyro_noise, s.accel_noise) == (2e-4, 0.017)
    assert s.params.measure_orientation is False
    s, _ = load_definition("imu.sensor.xml", sensor_period_sec="$f{1/200.0}", sensor_measure_orientation="true")
    assert s.period == pytest.approx(0.005)
    assert s.params.measure_orientation is True


def test_gnss(load_definition):
    s, _ = load_definition("gnss.sensor.xml")
    assert isinstance(s, Gnss)
    assert s.name == "gps1"
    assert s.period == pytest.approx(1.0)
    assert (s.params.horizontal_std_noise, s.params.vertical_std_noise) == (2.0, 4.0)


def test_unnamed_gnss_gets_a_gnss_name(load_definition):
    s, _ = load_definition("gnss.sensor.xml", sensor_name="")
    assert s.name == "gnss1"

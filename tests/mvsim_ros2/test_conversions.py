"""mvsim_core observations → ROS messages (pure functions): field by field, with the arrays read back through
numpy as a subscriber would, and a serialization round trip through rclpy for the big-array messages."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ros_harness import rclpy  # noqa: F401  (skips this module without ROS 2)

from mvsim_core.geometry.rotations import quaternion_from_rotation, quaternion_from_ypr, rotation
from mvsim_core.io.grid_map import GridMap
from mvsim_core.sensors.camera import CameraImage, PinholeModel
from mvsim_core.sensors.gnss import GnssFix
from mvsim_core.sensors.imu import ImuReading
from mvsim_core.sensors.lidar2d import LaserScan as CoreScan
from mvsim_core.sensors.lidar3d import PointCloud3D
from mvsim_core.sensors.rgbd_camera import RgbdObservation
from mvsim_ros2 import conversions as cv

POSE0 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def roundtrip(msg):
    """Serialize and deserialize with rclpy (what crosses DDS)."""
    from rclpy.serialization import deserialize_message, serialize_message

    return deserialize_message(serialize_message(msg), type(msg))


# ---------------------------------------------------------------------- small pieces
@pytest.mark.parametrize("t", [0.0, 0.005, 1.999999999, 12.3456789014, 1e5 + 0.25])
def test_stamp_round_trip(t: float) -> None:
    s = cv.stamp_msg(t)
    assert 0 <= s.nanosec < 1_000_000_000
    assert cv.stamp_seconds(s) == pytest.approx(t, abs=1e-9)


def test_transform_and_odometry() -> None:
    tf = cv.transform_msg("base_link", "laser1", (0.2, 0.0, 0.3, math.pi / 2, 0.0, 0.0), 1.5)
    assert (tf.header.frame_id, tf.child_frame_id) == ("base_link", "laser1")
    assert (tf.transform.translation.x, tf.transform.translation.z) == (0.2, 0.3)
    assert (tf.transform.rotation.z, tf.transform.rotation.w) == pytest.approx((math.sqrt(0.5), math.sqrt(0.5)))
    odo = cv.odometry_msg("odom", "base_link", (1.0, 2.0, 0.0, 0.1, 0.0, 0.0), (0.5, 0.0, 0.2), 2.0)
    assert odo.pose.pose.position.y == 2.0 and odo.twist.twist.linear.x == 0.5 and odo.twist.twist.angular.z == 0.2
    assert cv.stamp_seconds(odo.header.stamp) == 2.0 and odo.child_frame_id == "base_link"


def test_pose_and_matrix_transform_quaternions() -> None:
    """Poses carry the yaw-pitch-roll quaternion as it is (here w < 0); frames given by a matrix get w ≥ 0."""
    p = cv.pose_msg((1.0, 2.0, 3.0, 4.0, 0.2, -0.1))
    o = p.orientation
    assert (p.position.x, p.position.y, p.position.z) == (1.0, 2.0, 3.0)
    assert (o.x, o.y, o.z, o.w) == quaternion_from_ypr(4.0, 0.2, -0.1) and o.w < 0.0
    rot = rotation(4.0, 0.2, -0.1)
    tf = cv.transform_matrix_msg("base_link", "cam", rot, (0.1, 0.0, 0.5), 3.0)
    q = tf.transform.rotation
    assert (q.x, q.y, q.z, q.w) == quaternion_from_rotation(rot) and q.w > 0.0
    assert (q.x, q.y, q.z, q.w) == pytest.approx(tuple(-v for v in quaternion_from_ypr(4.0, 0.2, -0.1)), abs=1e-15)
    assert (tf.header.frame_id, tf.child_frame_id, tf.transform.translation.z) == ("base_link", "cam", 0.5)


# ---------------------------------------------------------------------- sensors
def test_laser_scan() -> None:
    n = 5
    angles = np.linspace(-1.0, 1.0, n).astype(np.float32)
    obs = CoreScan(stamp=0.3, ranges=np.array([1, 2, 30, 4, 0.05], np.float32),
                   valid=np.array([True, True, False, True, False]), angles=angles, sensor_pose=POSE0, max_range=30.0,
                   frame="laser1", min_range=0.1)
    msg = roundtrip(cv.laser_scan_msg(obs, 0.3, scan_time=0.05))
    assert msg.header.frame_id == "laser1" and cv.stamp_seconds(msg.header.stamp) == pytest.approx(0.3)
    assert (msg.angle_min, msg.angle_max, msg.angle_increment) == pytest.approx((-1.0, 1.0, 0.5))
    assert msg.range_max == 30.0 and msg.range_min == pytest.approx(0.1) and msg.scan_time == pytest.approx(0.05)
    r = np.asarray(msg.ranges)
    assert r[[0, 1, 3]].tolist() == [1, 2, 4]
    assert r[2] == np.inf and r[4] == -np.inf  # REP 117: no return = +inf, closer than range_min = -inf
    assert len(msg.intensities) == 0
    assert cv.laser_scan_msg(obs, 0.3, frame="r1/laser1").header.frame_id == "r1/laser1"


def test_point_cloud_xyz_intensity_ring() -> None:
    pts = np.array([[1, 2, 3], [-4, 5.5, 6], [0.1, 0.2, -0.3]], np.float32)
    obs = PointCloud3D(stamp=1.0, points=pts, intensity=np.array([0.1, 0.5, 1.0], np.float32),
                       ring=np.array([0, 7, 15], np.uint16), azimuth_index=np.zeros(3, np.uint32),
                       ranges=np.linalg.norm(pts, axis=1).astype(np.float32), sensor_pose=POSE0,
                       vertical_angles=np.zeros(16, np.float32), horz_nrays=180, min_range=0.1, max_range=80.0,
                       frame="lidar1")
    msg = roundtrip(cv.lidar3d_cloud_msg(obs, 1.0))
    assert [(f.name, f.offset, f.datatype, f.count) for f in msg.fields] == [
        ("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1), ("intensity", 12, 7, 1), ("ring", 16, 4, 1)]
    assert (msg.height, msg.width, msg.point_step, msg.row_step) == (1, 3, 20, 60)
    assert msg.is_dense and not msg.is_bigendian and msg.header.frame_id == "lidar1"
    dt = np.dtype({"names": ["x", "y", "z", "intensity", "ring"], "formats": ["<f4"] * 4 + ["<u2"],
                   "offsets": [0, 4, 8, 12, 16], "itemsize": 20})
    rows = np.frombuffer(bytes(msg.data), dtype=dt)
    assert np.array_equal(np.column_stack([rows["x"], rows["y"], rows["z"]]), pts)
    assert rows["intensity"].tolist() == pytest.approx([0.1, 0.5, 1.0]) and rows["ring"].tolist() == [0, 7, 15]


def test_image_and_camera_info_with_projection() -> None:
    rgb = np.random.default_rng(1).integers(0, 256, (4, 6, 3), dtype=np.uint8)
    k = PinholeModel(ncols=6, nrows=4, cx=2.5, cy=1.5, fx=500.0, fy=400.0)
    obs = CameraImage(stamp=2.0, rgb=rgb, intrinsics=k, sensor_pose=POSE0, frame="cam1")
    img = roundtrip(cv.image_msg(obs.rgb, "cam1", 2.0))
    assert (img.height, img.width, img.step, img.encoding) == (4, 6, 18, "rgb8")
    assert np.array_equal(np.frombuffer(bytes(img.data), np.uint8).reshape(4, 6, 3), rgb)
    info = cv.camera_info_msg(k, "cam1", 2.0)
    assert (info.width, info.height, info.distortion_model) == (6, 4, "plumb_bob")
    assert list(info.k) == [500.0, 0.0, 2.5, 0.0, 400.0, 1.5, 0.0, 0.0, 1.0]
    assert list(info.p) == [500.0, 0.0, 2.5, 0.0, 0.0, 400.0, 1.5, 0.0, 0.0, 0.0, 1.0, 0.0]  # not identity
    assert list(info.r) == [1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0] and list(info.d) == [0.0] * 5
    # P projects an optical-frame point to the pixel the pinhole model gives
    p = np.array(info.p).reshape(3, 4) @ np.array([0.2, -0.1, 2.0, 1.0])
    assert (p[0] / p[2], p[1] / p[2]) == pytest.approx((2.5 + 500 * 0.1, 1.5 - 400 * 0.05))


def test_depth_images_32fc1_and_16uc1() -> None:
    depth = np.array([[0.0, 1.2345], [15.0, 70.0]], np.float32)
    m32 = roundtrip(cv.depth_image_msg(depth, "cam1_depth", 0.1))
    assert (m32.encoding, m32.step) == ("32FC1", 8)
    d = np.frombuffer(bytes(m32.data), "<f4").reshape(2, 2)
    assert math.isnan(d[0, 0]) and d[0, 1] == np.float32(1.2345) and d[1, 1] == 70.0
    m16 = roundtrip(cv.depth_image_msg(depth, "cam1_depth", 0.1, "16UC1"))
    assert (m16.encoding, m16.step) == ("16UC1", 4)
    assert np.frombuffer(bytes(m16.data), "<u2").reshape(2, 2).tolist() == [[0, 1234], [15000, 0]]
    with pytest.raises(ValueError, match="32FC1"):
        cv.depth_image_msg(depth, "x", 0.0, "8UC1")


def test_rgbd_point_cloud_from_depth() -> None:
    k = PinholeModel(ncols=3, nrows=2, cx=1.0, cy=0.5, fx=10.0, fy=10.0)
    depth = np.array([[2.0, 0.0, 2.0], [1.0, 1.0, 0.0]], np.float32)
    rgb = np.zeros((2, 3, 3), np.uint8)
    rgb[0, 0] = (255, 0, 16)
    obs = RgbdObservation(stamp=0.5, depth=depth, rgb=rgb, depth_intrinsics=k, rgb_intrinsics=k, sensor_pose=POSE0,
                          depth_pose=POSE0, rgb_pose=POSE0, rgb_wrt_depth=POSE0, depth_clip=(0.1, 15.0),
                          depth_resolution=1e-3, frame="cam1")
    pts = obs.points()
    plain = cv.point_cloud_msg("cam1_depth", 0.5, pts)
    assert plain.point_step == 12 and plain.width == 4
    assert np.allclose(np.frombuffer(bytes(plain.data), "<f4").reshape(-1, 3), pts)
    col = cv.colored_cloud_msg("cam1_depth", 0.5, pts, rgb[np.nonzero(depth > 0)])
    assert [f.name for f in col.fields] == ["x", "y", "z", "rgb"] and col.point_step == 16
    packed = np.frombuffer(bytes(col.data), np.uint8).reshape(-1, 16)[:, 12:16].copy().view("<u4").ravel()
    assert packed[0] == (255 << 16) | 16 and packed[1] == 0


def test_imu_covariances() -> None:
    obs = ImuReading(stamp=0.05, angular_velocity=np.array([0.0, 0.0, 0.3]),
                     linear_acceleration=np.array([0.1, 0.0, 9.81]), orientation=None, frame="imu1")
    m = cv.imu_msg(obs, 0.05, gyro_sigma=2e-4, accel_sigma=0.017, orientation_sigma=0.005)
    assert m.header.frame_id == "imu1" and m.angular_velocity.z == 0.3 and m.linear_acceleration.z == 9.81
    assert list(m.angular_velocity_covariance) == pytest.approx([4e-8, 0, 0, 0, 4e-8, 0, 0, 0, 4e-8])
    assert m.linear_acceleration_covariance[8] == pytest.approx(0.017 ** 2)
    assert m.orientation_covariance[0] == -1.0
    obs.orientation = np.array([0.0, 0.0, math.sin(0.25), math.cos(0.25)])
    m2 = cv.imu_msg(obs, 0.05, gyro_sigma=2e-4, accel_sigma=0.017, orientation_sigma=0.005)
    assert m2.orientation.z == pytest.approx(math.sin(0.25)) and m2.orientation_covariance[0] == pytest.approx(2.5e-5)


def test_nav_sat_fix() -> None:
    fix = GnssFix(stamp=1.0, latitude=36.7, longitude=-4.4, altitude=50.0, covariance=np.diag([4.0, 4.0, 16.0]),
                  frame="gnss1")
    m = cv.nav_sat_fix_msg(fix, 1.0)
    assert (m.latitude, m.longitude, m.altitude) == (36.7, -4.4, 50.0)
    assert m.status.status == m.status.STATUS_FIX  # coverage is modelled, augmentation is not (GGA 2 is a constant)
    assert m.status.service == m.status.SERVICE_GPS
    assert m.position_covariance_type == m.COVARIANCE_TYPE_DIAGONAL_KNOWN
    assert list(m.position_covariance) == [4.0, 0, 0, 0, 4.0, 0, 0, 0, 16.0]
    fix.covariance = np.array([[4.0, 1.0, 0], [1.0, 4.0, 0], [0, 0, 16.0]])
    assert cv.nav_sat_fix_msg(fix, 1.0).position_covariance_type == m.COVARIANCE_TYPE_KNOWN
    # a noise-free receiver: never an all-zero covariance
    fix.covariance = np.zeros((3, 3))
    assert list(cv.nav_sat_fix_msg(fix, 1.0, frame="r1/gnss1").position_covariance) == pytest.approx(
        [cv.VARIANCE_FLOOR, 0, 0, 0, cv.VARIANCE_FLOOR, 0, 0, 0, cv.VARIANCE_FLOOR])


def test_nav_sat_no_fix() -> None:
    """No coverage (GGA quality 0): STATUS_NO_FIX, NaN position, covariance unknown."""
    nan = math.nan
    lost = GnssFix(stamp=2.0, latitude=nan, longitude=nan, altitude=nan, covariance=np.full((3, 3), nan),
                   frame="gnss1", status=0)
    m = roundtrip(cv.nav_sat_fix_msg(lost, 2.0))
    assert m.status.status == m.status.STATUS_NO_FIX and m.header.frame_id == "gnss1"
    assert math.isnan(m.latitude) and math.isnan(m.longitude) and math.isnan(m.altitude)
    assert m.position_covariance_type == m.COVARIANCE_TYPE_UNKNOWN and not any(m.position_covariance)


def test_odometry_covariances_from_the_noise_model() -> None:
    """Relative errors 2 % (x, y) and 5 % (yaw): after 10 m and 4 rad, σ 0.2 m and 0.2 rad; at 0.5 m/s and 1 rad/s,
    σ 0.01 m/s and 0.05 rad/s; what planar odometry does not measure is "ignore me"; noise off gives the floor."""
    pose, twist = cv.odometry_variances((0.02, 0.02, 0.05), 10.0, 4.0, (0.5, 0.0, -1.0))
    f, big = cv.VARIANCE_FLOOR, cv.UNMEASURED_VARIANCE
    assert pose == pytest.approx((0.04 + f, 0.04 + f, big, big, big, 0.04 + f))
    assert twist == pytest.approx((1e-4 + f, f, big, big, big, 0.0025 + f))
    quiet_pose, quiet_twist = cv.odometry_variances((0.0, 0.0, 0.0), 10.0, 4.0, (0.5, 0.0, 1.0))
    assert [quiet_pose[i] for i in (0, 1, 5)] == [f, f, f] and [quiet_twist[i] for i in (0, 1, 5)] == [f, f, f]
    odo = cv.odometry_msg("odom", "base_link", POSE0, (0.5, 0.0, -1.0), 1.0)
    cv.set_covariance_diagonal(odo.pose.covariance, pose)
    cov = np.asarray(roundtrip(odo).pose.covariance).reshape(6, 6)
    assert np.diag(cov) == pytest.approx(pose) and not np.any(cov - np.diag(np.diag(cov)))


def test_occupancy_grid() -> None:
    occ = np.array([[0.0, 1.0, 0.5], [0.2, 0.499, 0.9]], np.float32)
    grid = GridMap(occ, 0.05, -1.0, 2.0)
    m = roundtrip(cv.occupancy_grid_msg(grid, "map", 3.0))
    assert (m.info.width, m.info.height, m.info.resolution) == (3, 2, pytest.approx(0.05))
    assert (m.info.origin.position.x, m.info.origin.position.y) == (-1.0, 2.0)
    assert list(m.data) == [0, 100, -1, 20, -1, 90]  # row 0 = smallest y, as in ROS; 0.5 ± 0.01 = unknown


def test_chassis_polygon_and_markers() -> None:
    from mvsim_core.objects.wheel import Wheel

    fp = np.array([[-0.5, -0.3], [0.5, -0.3], [0.5, 0.3], [-0.5, 0.3]])
    poly = cv.polygon_msg(fp)
    assert [(p.x, p.y) for p in poly.points] == [(-0.5, -0.3), (0.5, -0.3), (0.5, 0.3), (-0.5, 0.3)]
    wheels = [Wheel("l_wheel", 0.0, 0.25, yaw=0.3, diameter=0.2, width=0.05, color=(255, 0, 0, 255))]
    arr = cv.chassis_markers_msg("base_link", fp, wheels, 1.0)
    body, wheel = arr.markers
    assert body.ns == "mvsim.chassis_shape" and body.type == body.LINE_STRIP and len(body.points) == 5
    assert wheel.ns == "mvsim.chassis_shape.wheel1" and wheel.pose.position.y == 0.25
    # RViz moves frame-locked markers with their frame: the outline follows the vehicle from one latched message
    assert all(m.frame_locked and m.header.frame_id == "base_link" for m in arr.markers)
    assert all(m.lifetime.sec == 0 and m.lifetime.nanosec == 0 for m in arr.markers)  # forever
    other = cv.chassis_markers_msg("r2/base_link", fp, wheels, 1.0, ns_prefix="r2/")
    assert [m.ns for m in other.markers] == ["r2/mvsim.chassis_shape", "r2/mvsim.chassis_shape.wheel1"]
    assert (wheel.color.r, wheel.color.g) == (1.0, 0.0)
    assert 2 * math.atan2(wheel.pose.orientation.z, wheel.pose.orientation.w) == pytest.approx(0.3)


def test_big_arrays_take_the_fast_path() -> None:
    """A VGA image goes into its message with one memcpy (an element-wise copy takes ~1 ms)."""
    import time

    rgb = np.zeros((480, 640, 3), np.uint8)
    cv.image_msg(rgb, "c", 0.0)
    per = math.inf
    for _ in range(20):  # the fastest of 20: a busy machine slows some conversions, never all of them
        t0 = time.perf_counter()
        msg = cv.image_msg(rgb, "c", 0.0)
        per = min(per, time.perf_counter() - t0)
    assert len(msg.data) == 480 * 640 * 3
    assert per < 0.5e-3, f"{per * 1e3:.2f} ms per VGA image message"

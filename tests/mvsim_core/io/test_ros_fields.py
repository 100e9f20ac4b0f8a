"""The ROS message rules (mvsim_core.io.ros_fields): REP 117 ranges, IMU covariances, NavSatFix fields, CameraInfo
arrays and the RGB-D optical frames, as exact values."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from mvsim_core.io import ros_fields as rf
from mvsim_core.sensors.rgbd_camera import OPTICAL_WRT_SENSOR


# ---------------------------------------------------------------------- LaserScan
def test_rep117_ranges():
    ranges = np.array([1.0, 0.05, 12.0, 3.0], np.float32)
    valid = np.array([True, False, False, True])
    out = rf.scan_ranges(ranges, valid, 0.1)
    assert out.dtype == np.float32
    assert out.tolist() == [1.0, -math.inf, math.inf, 3.0]  # too close: -inf; no return: +inf


def test_all_valid_ranges_are_returned_as_they_are():
    ranges = np.array([1.0, 2.0], np.float32)
    assert rf.scan_ranges(ranges, np.array([True, True]), 0.5) is ranges


def test_rep117_on_a_batch_with_per_scan_limits():
    ranges = np.array([[0.2, 0.2], [0.2, 5.0]], np.float32)
    valid = np.array([[False, True], [False, False]])
    rmin = np.array([[0.1], [0.3]], np.float32)
    assert rf.scan_ranges(ranges, valid, rmin).tolist() == [[math.inf, pytest.approx(0.2)], [-math.inf, math.inf]]


def test_scan_range_limits():
    assert rf.scan_range_limits(SimpleNamespace(min_range=0.25, max_range=30)) == (0.25, 30.0)
    assert rf.scan_range_limits(SimpleNamespace(max_range=8.0)) == (0.0, 8.0)


# ---------------------------------------------------------------------- Imu
NOISE = {"angular_velocity": 0.5, "linear_acceleration": 0.25, "orientation": 2.0}


def test_imu_covariance_diagonals():
    f = rf.imu_fields((0.0, 0.0, 0.6, 0.8), NOISE)
    assert f.orientation == (0.0, 0.0, 0.6, 0.8)
    assert f.angular_velocity_covariance == (0.25, 0, 0, 0, 0.25, 0, 0, 0, 0.25)
    assert f.linear_acceleration_covariance == (0.0625, 0, 0, 0, 0.0625, 0, 0, 0, 0.0625)
    assert f.orientation_covariance == (4.0, 0, 0, 0, 4.0, 0, 0, 0, 4.0)


def test_imu_without_orientation_rep145():
    f = rf.imu_fields(None, NOISE)
    assert f.orientation == (0.0, 0.0, 0.0, 1.0)
    assert f.orientation_covariance == (-1.0, 0, 0, 0, 0, 0, 0, 0, 0)
    assert f.angular_velocity_covariance[0] == 0.25
    assert rf.imu_fields(None, {}).angular_velocity_covariance == (0.0,) * 9  # no noise named: σ = 0


# ---------------------------------------------------------------------- NavSatFix
def test_nav_sat_fix_diagonal_covariance_is_floored():
    obs = SimpleNamespace(status=2, latitude=36.72, longitude=-4.42, altitude=12.5,
                          covariance=np.diag([4.0, 4.0, 0.0]))
    f = rf.nav_sat_fix_fields(obs)
    assert (f.status, f.service) == (rf.STATUS_FIX, rf.SERVICE_GPS) == (0, 1)
    assert (f.latitude, f.longitude, f.altitude) == (36.72, -4.42, 12.5)
    assert f.position_covariance == (4.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 1e-6)
    assert f.position_covariance_type == rf.COVARIANCE_TYPE_DIAGONAL_KNOWN == 2


def test_nav_sat_fix_full_covariance_is_known():
    cov = np.array([[1.0, 0.5, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, 3.0]])
    f = rf.nav_sat_fix_fields(SimpleNamespace(status=2, latitude=1.0, longitude=2.0, altitude=3.0, covariance=cov))
    assert f.position_covariance == (1.0, 0.5, 0.0, 0.5, 2.0, 0.0, 0.0, 0.0, 3.0)
    assert f.position_covariance_type == rf.COVARIANCE_TYPE_KNOWN == 3


def test_nav_sat_fix_without_a_fix():
    f = rf.nav_sat_fix_fields(SimpleNamespace(status=0, latitude=float("nan"), covariance=None))
    assert (f.status, f.service, f.position_covariance_type) == (-1, 1, 0)
    assert all(math.isnan(v) for v in (f.latitude, f.longitude, f.altitude))
    assert f.position_covariance == (0.0,) * 9
    assert [rf.navsat_status(q) for q in (0, 1, 2, 4)] == [-1, 0, 0, 0]


# ---------------------------------------------------------------------- CameraInfo
def test_camera_info_arrays():
    k = SimpleNamespace(ncols=640, nrows=480, fx=500.0, fy=510.0, cx=320.5, cy=240.5)
    f = rf.camera_info_fields(k)
    assert (f.height, f.width, f.distortion_model) == (480, 640, "plumb_bob")
    assert f.d == (0.0,) * 5
    assert f.k == (500.0, 0.0, 320.5, 0.0, 510.0, 240.5, 0.0, 0.0, 1.0)
    assert f.r == (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    assert f.p == (500.0, 0.0, 320.5, 0.0, 0.0, 510.0, 240.5, 0.0, 0.0, 0.0, 1.0, 0.0)


# ---------------------------------------------------------------------- RGB-D optical frames
def test_rgbd_optical_frames():
    assert np.array_equal(rf.OPTICAL_WRT_SENSOR, OPTICAL_WRT_SENSOR)  # the sensor's own convention
    depth, rgb = rf.rgbd_optical_frames("r1/cam", (0.0, 0.025, 0.0, math.pi / 2, 0.0, 0.0))
    assert (depth.parent, depth.child, depth.translation) == ("r1/cam", "r1/cam_depth", (0.0, 0.0, 0.0))
    assert depth.rotation == pytest.approx((-0.5, 0.5, -0.5, 0.5))  # z forward, x right: a 120° turn
    assert (rgb.parent, rgb.child, rgb.translation) == ("r1/cam", "r1/cam_rgb", (0.0, 0.025, 0.0))
    h = math.sqrt(0.5)
    assert rgb.rotation == pytest.approx((0.0, 0.0, h, h))

"""The ROS message rules, once: the field values of the ROS sensor messages, for every encoder of them.

The ROS node (:mod:`mvsim_ros2.conversions`, rclpy messages) and the MCAP recorder
(:mod:`mvsim_core.record.mcap_recorder`, its own CDR encoder :mod:`mvsim_core.io.ros2_cdr`) write the same messages;
what goes into their fields is decided here, in plain Python and numpy (no ROS import), and each encoder only copies
the values into its message:

* ``sensor_msgs/LaserScan``: REP 117 ranges (:func:`scan_ranges`: no return = ``+inf``, closer than ``range_min`` =
  ``-inf``) and the range limits (:func:`scan_range_limits`);
* ``sensor_msgs/Imu``: REP 145 covariances (:func:`imu_fields`: diagonal σ² of each output's white noise;
  ``orientation_covariance[0] = -1`` and an identity quaternion without an orientation);
* ``sensor_msgs/NavSatFix``: status, service, position and covariance with its type (:func:`nav_sat_fix_fields`);
* ``sensor_msgs/CameraInfo``: size, distortion model and the d, k, r, p arrays of a pinhole model
  (:func:`camera_info_fields`);
* the RGB-D camera's static optical frames (:func:`rgbd_optical_frames`).

Covariances are never all zero (Nav2's and robot_localization's filters reject or mishandle that): an exact or
noise-free variance gets :data:`VARIANCE_FLOOR`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mvsim_core.geometry.rotations import OPTICAL_WRT_BODY, quaternion_from_rotation, quaternion_from_ypr
from mvsim_core.io.ros_names import rgbd_frames

VARIANCE_FLOOR = 1e-6
"""Variance reported for an exact or noise-free value (σ = 1 mm, 1 mrad, 1 mm/s): small, never zero."""

Covariance9 = tuple[float, ...]
"""A row-major 3×3 covariance: 9 floats (ROS's ``float64[9]``)."""

Quaternion = tuple[float, float, float, float]
"""(x, y, z, w), as in ROS."""


# ---------------------------------------------------------------------- LaserScan
def scan_range_min(obs: Any) -> float:
    """``range_min`` of a scan (m): its ``min_range``, 0 when it has none."""
    return float(getattr(obs, "min_range", 0.0))


def scan_range_limits(obs: Any) -> tuple[float, float]:
    """(``range_min``, ``range_max``) of a scan (m): :func:`scan_range_min` and its ``max_range``."""
    return scan_range_min(obs), float(obs.max_range)


def scan_ranges(ranges: np.ndarray, valid: np.ndarray, range_min: float | np.ndarray) -> np.ndarray:
    """The ranges (float32, m) as ROS writes them (REP 117): a valid reading as it is; an invalid one ``-inf`` when
    it is closer than ``range_min`` (too close), else ``+inf`` (no return).

    Args:
        ranges: float32 ranges (m), one scan (n,) or a batch (n, rays).
        valid: bool, the shape of ``ranges``.
        range_min: the scan's ``range_min`` (m), or (n, 1) float32 limits of a batch.

    Returns ``ranges`` itself when every reading is valid.
    """
    if valid.all():
        return ranges
    invalid = np.where(ranges < range_min, np.float32(-np.inf), np.float32(np.inf))
    return np.where(valid, ranges, invalid)


# ---------------------------------------------------------------------- Imu
IDENTITY_QUATERNION: Quaternion = (0.0, 0.0, 0.0, 1.0)
"""The orientation an IMU without one reports."""

NO_ORIENTATION_COVARIANCE: Covariance9 = (-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
"""REP 145: ``orientation_covariance[0] = -1`` = the orientation is not measured."""


def diagonal_covariance(sigma: float) -> Covariance9:
    """diag(σ², σ², σ²), row-major, of a standard deviation σ that is the same on the three axes."""
    v = float(sigma) ** 2
    return (v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v)


@dataclass(frozen=True)
class ImuFields:
    """What a ``sensor_msgs/Imu`` carries besides its header and its two vectors (which are the reading's own).

    Attributes:
        orientation: quaternion (x, y, z, w) of the sensor frame in the world frame; identity without one.
        orientation_covariance: rad², row-major; :data:`NO_ORIENTATION_COVARIANCE` without an orientation.
        angular_velocity_covariance: (rad/s)², row-major.
        linear_acceleration_covariance: (m/s²)², row-major.
    """

    orientation: Quaternion
    orientation_covariance: Covariance9
    angular_velocity_covariance: Covariance9
    linear_acceleration_covariance: Covariance9


def imu_fields(orientation: Sequence[float] | None, noise: Mapping[str, float]) -> ImuFields:
    """The orientation and covariances of an IMU reading.

    Args:
        orientation: the reading's quaternion (x, y, z, w), or None (``measure_orientation`` false).
        noise: the output's standard deviations (:attr:`mvsim_core.sensors.outputs.Output.noise`):
            ``angular_velocity`` (rad/s), ``linear_acceleration`` (m/s²), ``orientation`` (rad); a missing one is 0.
    """
    gyro = diagonal_covariance(noise.get("angular_velocity", 0.0))
    accel = diagonal_covariance(noise.get("linear_acceleration", 0.0))
    if orientation is None:
        return ImuFields(IDENTITY_QUATERNION, NO_ORIENTATION_COVARIANCE, gyro, accel)
    q = np.asarray(orientation, dtype=float)
    return ImuFields((float(q[0]), float(q[1]), float(q[2]), float(q[3])),
                     diagonal_covariance(noise.get("orientation", 0.0)), gyro, accel)


# ---------------------------------------------------------------------- NavSatFix
STATUS_NO_FIX, STATUS_FIX = -1, 0
"""``sensor_msgs/NavSatStatus.status`` values used."""

SERVICE_GPS = 1
"""``sensor_msgs/NavSatStatus.service`` of every simulated fix."""

COVARIANCE_TYPE_UNKNOWN, COVARIANCE_TYPE_DIAGONAL_KNOWN, COVARIANCE_TYPE_KNOWN = 0, 2, 3
"""``sensor_msgs/NavSatFix.position_covariance_type`` values used."""


def navsat_status(gga_quality: int) -> int:
    """``NavSatStatus.status`` of a GNSS sample: :data:`STATUS_NO_FIX` without a fix (NMEA GGA quality 0), else
    :data:`STATUS_FIX`. The simulator models coverage (a fix or none: georeference, ``gps_no_coverage`` regions), not
    augmentation: the GGA quality 2 (DGPS) that every simulated fix carries is upstream's constant, so it is not
    reported as an SBAS or GBAS fix."""
    return STATUS_NO_FIX if int(gga_quality) == 0 else STATUS_FIX


@dataclass(frozen=True)
class NavSatFixFields:
    """The fields of a ``sensor_msgs/NavSatFix`` besides its header.

    Attributes:
        status: :data:`STATUS_FIX` or :data:`STATUS_NO_FIX`.
        service: :data:`SERVICE_GPS`.
        latitude, longitude: deg (WGS84); NaN without a fix.
        altitude: m; NaN without a fix.
        position_covariance: m², east-north-up, row-major.
        position_covariance_type: one of the ``COVARIANCE_TYPE_*`` values.
    """

    status: int
    service: int
    latitude: float
    longitude: float
    altitude: float
    position_covariance: Covariance9
    position_covariance_type: int


def nav_sat_fix_fields(obs: Any) -> NavSatFixFields:
    """The NavSatFix of a GNSS sample (:class:`mvsim_core.sensors.gnss.GnssFix`; status from :func:`navsat_status`
    of its ``status``, 1 when it has none).

    A fix: latitude, longitude (deg), altitude (m), the ENU position covariance of the sensor's noise model
    (diag(σh², σh², σv²), m², row-major; each variance at least :data:`VARIANCE_FLOOR`, so noise-free sensors do
    not report an all-zero covariance), DIAGONAL_KNOWN (KNOWN when it has off-diagonal terms). No fix: NaN latitude,
    longitude and altitude, zero covariance, COVARIANCE_TYPE_UNKNOWN (sensor_msgs' convention for "no position").
    """
    status = navsat_status(getattr(obs, "status", 1))
    if status == STATUS_NO_FIX:
        nan = float("nan")
        return NavSatFixFields(status, SERVICE_GPS, nan, nan, nan, (0.0,) * 9, COVARIANCE_TYPE_UNKNOWN)
    cov = np.array(obs.covariance, dtype=float).reshape(3, 3)
    diagonal = not np.any(cov - np.diag(np.diag(cov)))
    idx = np.arange(3)
    cov[idx, idx] = np.maximum(cov[idx, idx], VARIANCE_FLOOR)
    return NavSatFixFields(status, SERVICE_GPS, float(obs.latitude), float(obs.longitude), float(obs.altitude),
                           tuple(float(v) for v in cov.reshape(9)),
                           COVARIANCE_TYPE_DIAGONAL_KNOWN if diagonal else COVARIANCE_TYPE_KNOWN)


# ---------------------------------------------------------------------- CameraInfo
@dataclass(frozen=True)
class CameraInfoFields:
    """The calibration fields of a ``sensor_msgs/CameraInfo`` (no binning, empty ROI).

    Attributes:
        height, width: pixels.
        distortion_model: ``plumb_bob``.
        d: its 5 coefficients (all 0: no distortion).
        k: row-major 3×3 intrinsics [fx 0 cx; 0 fy cy; 0 0 1] (px).
        r: row-major 3×3 rectification (identity: a monocular camera).
        p: row-major 3×4 projection [fx 0 cx 0; 0 fy cy 0; 0 0 1 0] (px; no baseline).
    """

    height: int
    width: int
    distortion_model: str
    d: tuple[float, ...]
    k: tuple[float, ...]
    r: tuple[float, ...]
    p: tuple[float, ...]


def camera_info_fields(intrinsics: Any) -> CameraInfoFields:
    """The CameraInfo of a pinhole model without distortion (``ncols, nrows, fx, fy, cx, cy``, px)."""
    fx, fy, cx, cy = (float(intrinsics.fx), float(intrinsics.fy), float(intrinsics.cx), float(intrinsics.cy))
    return CameraInfoFields(int(intrinsics.nrows), int(intrinsics.ncols), "plumb_bob", (0.0,) * 5,
                            (fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0),
                            (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
                            (fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0))


# ---------------------------------------------------------------------- static frames
OPTICAL_WRT_SENSOR: np.ndarray = OPTICAL_WRT_BODY
"""Rotation of a camera's optical frame (z forward, x right, y down; REP 103) in its sensor frame (x forward, z up):
:data:`mvsim_core.geometry.rotations.OPTICAL_WRT_BODY`."""


@dataclass(frozen=True)
class StaticFrame:
    """One static transform: frame ``child`` at ``translation`` (m) and ``rotation`` (quaternion x, y, z, w) in
    frame ``parent``."""

    parent: str
    child: str
    translation: tuple[float, float, float]
    rotation: Quaternion


def rgbd_optical_frames(frame: str, rgb_pose_wrt_depth: Sequence[float]) -> tuple[StaticFrame, StaticFrame]:
    """The RGB-D camera's optical frames, in its sensor frame ``frame`` (x forward, z up): (depth, rgb).

    The depth optical frame (``<frame>_depth``) is at the sensor's origin, turned to z forward, x right
    (:data:`OPTICAL_WRT_SENSOR`); the RGB frame (``<frame>_rgb``) at ``rgb_pose_wrt_depth`` (x, y, z, yaw, pitch,
    roll: m, rad; ``relativePoseIntensityWRTDepth``) in the sensor frame.
    """
    rgb, depth = rgbd_frames(frame)
    p = rgb_pose_wrt_depth
    return (StaticFrame(frame, depth, (0.0, 0.0, 0.0), quaternion_from_rotation(OPTICAL_WRT_SENSOR)),
            StaticFrame(frame, rgb, (float(p[0]), float(p[1]), float(p[2])),
                        quaternion_from_ypr(float(p[3]), float(p[4]), float(p[5]))))

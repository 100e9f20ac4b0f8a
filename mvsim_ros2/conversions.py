"""mvsim_core values → ROS 2 messages. Pure functions: no node, no publishing, no global state.

Conventions:

* Stamps are simulated seconds (``float``) turned into ``builtin_interfaces/Time`` by :func:`stamp_msg`; the node
  passes wall-clock seconds instead when ``disable_sim_time_clock`` is set.
* Poses are mvsim's ``(x, y, z, yaw, pitch, roll)`` tuples (m, rad, R = Rz(yaw)·Ry(pitch)·Rx(roll)); quaternions are
  ``(x, y, z, w)`` as in ROS.
* Large arrays go into messages with one memory copy: numpy → ``array.array`` through the buffer protocol, assigned
  through the generated setter's ``array.array`` fast path (messages built with ``check_fields=True``, which is what
  enables that path; the default path would copy element by element, ~1 ms for a VGA image).
* REP 117 for ranges (no return = ``+inf``, too close = ``-inf``), REP 118 for depth images (32FC1 metres with NaN =
  no return, 16UC1 millimetres with 0 = no return), REP 145 for IMU covariances (``orientation_covariance[0] = -1`` =
  no orientation).
* The field values of the sensor messages (ranges, covariances, NavSatFix status, CameraInfo arrays, the RGB-D
  optical frames) come from :mod:`mvsim_core.io.ros_fields`, which the MCAP recorder uses too: these functions only
  copy them into rclpy messages.
* Covariances are never all zero (Nav2's and robot_localization's filters reject or mishandle that): an exact or
  noise-free value gets :data:`VARIANCE_FLOOR`; what a planar odometry does not measure (z, roll, pitch and their
  rates) gets :data:`UNMEASURED_VARIANCE`.
"""

from __future__ import annotations

import array
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import (
    Point,
    Point32,
    Polygon,
    Pose,
    PoseArray,
    PoseWithCovarianceStamped,
    Quaternion,
    TransformStamped,
    Vector3,
)
from nav_msgs.msg import MapMetaData, OccupancyGrid, Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, NavSatFix, NavSatStatus, PointCloud2, PointField
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from mvsim_core.geometry.rotations import quaternion_from_rotation, quaternion_from_ypr
from mvsim_core.io import ros_fields as rf

Pose6 = Sequence[float]
"""(x, y, z, yaw, pitch, roll): m, rad."""

DEPTH_ENCODINGS = ("32FC1", "16UC1")
"""Depth image encodings the node can publish (REP 118 metres, or millimetres)."""

MAP_UNKNOWN_BAND = 0.01
"""Occupancy probabilities within this distance of 0.5 are published as unknown (-1)."""

VARIANCE_FLOOR = rf.VARIANCE_FLOOR
"""Variance reported for an exact or noise-free value (σ = 1 mm, 1 mrad, 1 mm/s): small, never zero."""

UNMEASURED_VARIANCE = 1e6
"""Variance of what a planar odometry does not measure (z, roll, pitch; vz, ωx, ωy): "ignore me" (as kobuki and
Gazebo's diff-drive do)."""

_DIAGONAL = (0, 7, 14, 21, 28, 35)
"""Indices of the diagonal of a row-major 6×6 covariance."""


# ---------------------------------------------------------------------- small pieces
def stamp_msg(t: float) -> Time:
    """``builtin_interfaces/Time`` of ``t`` seconds (≥ 0), rounded to the nanosecond."""
    return set_stamp(Time(), t)


def set_stamp(stamp: Time, t: float) -> Time:
    """Write ``t`` seconds into an existing ``builtin_interfaces/Time`` (in place; returned)."""
    ns = int(round(t * 1e9))
    stamp.sec, stamp.nanosec = ns // 1_000_000_000, ns % 1_000_000_000
    return stamp


def stamp_seconds(stamp: Time) -> float:
    """Seconds of a ``builtin_interfaces/Time``."""
    return stamp.sec + stamp.nanosec * 1e-9


def header(frame: str, t: float) -> Header:
    return Header(stamp=stamp_msg(t), frame_id=frame)


def pose_msg(p: Pose6) -> Pose:
    """``geometry_msgs/Pose`` of an mvsim pose (x, y, z, yaw, pitch, roll)."""
    return set_pose(Pose(), p)


def set_pose(msg: Pose, p: Pose6) -> Pose:
    """Write an mvsim pose into an existing ``geometry_msgs/Pose`` (in place; returned)."""
    pos, q = msg.position, msg.orientation
    pos.x, pos.y, pos.z = float(p[0]), float(p[1]), float(p[2])
    q.x, q.y, q.z, q.w = quaternion_from_ypr(float(p[3]), float(p[4]), float(p[5]))
    return msg


def pose2d(x: float, y: float, yaw: float) -> tuple[float, float, float, float, float, float]:
    """The 6-D pose of a planar pose (z = pitch = roll = 0)."""
    return (float(x), float(y), 0.0, float(yaw), 0.0, 0.0)


def transform_msg(parent: str, child: str, p: Pose6, t: float) -> TransformStamped:
    """``TransformStamped`` placing frame ``child`` at pose ``p`` (x, y, z, yaw, pitch, roll) in ``parent``."""
    return set_transform(TransformStamped(header=Header(frame_id=parent), child_frame_id=child), p, t)


def set_transform(msg: TransformStamped, p: Pose6, t: float) -> TransformStamped:
    """Write pose ``p`` and stamp ``t`` into an existing ``TransformStamped`` (frames kept; in place; returned)."""
    set_stamp(msg.header.stamp, t)
    tr, q = msg.transform.translation, msg.transform.rotation
    tr.x, tr.y, tr.z = float(p[0]), float(p[1]), float(p[2])
    q.x, q.y, q.z, q.w = quaternion_from_ypr(float(p[3]), float(p[4]), float(p[5]))
    return msg


def prefix_frames(transforms: list[TransformStamped], prefix: str) -> list[TransformStamped]:
    """Prefix the parent and child frame of every transform with ``prefix`` (in place; returned)."""
    if prefix:
        for tf in transforms:
            tf.header.frame_id = prefix + tf.header.frame_id
            tf.child_frame_id = prefix + tf.child_frame_id
    return transforms


def transform_matrix_msg(parent: str, child: str, rot: np.ndarray, pos: Sequence[float], t: float) -> TransformStamped:
    """``TransformStamped`` of a frame given by its rotation matrix (columns = axes in ``parent``) and origin (m)."""
    tf = TransformStamped(header=header(parent, t), child_frame_id=child)
    tf.transform.translation = Vector3(x=float(pos[0]), y=float(pos[1]), z=float(pos[2]))
    x, y, z, w = quaternion_from_rotation(rot)
    tf.transform.rotation = Quaternion(x=x, y=y, z=z, w=w)
    return tf


def static_frame_msg(frame: rf.StaticFrame, t: float) -> TransformStamped:
    """``TransformStamped`` of a static frame (:class:`mvsim_core.io.ros_fields.StaticFrame`) stamped ``t``."""
    tf = TransformStamped(header=header(frame.parent, t), child_frame_id=frame.child)
    x, y, z = frame.translation
    tf.transform.translation = Vector3(x=float(x), y=float(y), z=float(z))
    qx, qy, qz, qw = frame.rotation
    tf.transform.rotation = Quaternion(x=qx, y=qy, z=qz, w=qw)
    return tf


def as_array(typecode: str, values: np.ndarray) -> array.array:
    """``array.array(typecode)`` holding the bytes of a C-contiguous numpy array (one memcpy)."""
    out = array.array(typecode)
    out.frombytes(np.ascontiguousarray(values).reshape(-1).view(np.uint8))
    return out


def clock_msg(t: float) -> Clock:
    """``rosgraph_msgs/Clock`` at ``t`` simulated seconds."""
    return Clock(clock=stamp_msg(t))


# ---------------------------------------------------------------------- vehicles
def odometry_msg(frame: str, child: str, pose: Pose6, twist: Sequence[float], t: float) -> Odometry:
    """``nav_msgs/Odometry``: ``pose`` (x, y, z, yaw, pitch, roll) of ``child`` in ``frame``; ``twist`` (vx, vy, ωz)
    in ``child`` (m/s, m/s, rad/s). Covariances are left zero (set them with :func:`set_covariance_diagonal`)."""
    return set_odometry(Odometry(header=Header(frame_id=frame), child_frame_id=child), pose, twist, t)


def set_covariance_diagonal(cov: Any, variances: Sequence[float]) -> None:
    """Write the 6 variances (x, y, z, rot x, rot y, rot z: m², rad², or their rates') on the diagonal of a row-major
    6×6 covariance field (in place; off-diagonal terms are left as they are)."""
    for i, v in zip(_DIAGONAL, variances, strict=True):
        cov[i] = float(v)


EXACT_VARIANCES = (VARIANCE_FLOOR,) * 6
"""Covariance diagonal of an exact 6-D pose or twist (ground truth, fake localization)."""


def odometry_variances(rel_std: Sequence[float], travelled: float, turned: float,
                       twist: Sequence[float]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Covariance diagonals (pose, twist) of a wheel odometry whose increments have relative errors ``rel_std``.

    The odometry noise model (mvsim_core ``Vehicle.odometry_std``) scales every (x, y, yaw) increment by a
    multiplier m with relative error σ = ``rel_std``; so an increment of d metres (radians) is off by σ·d:

    * pose, in the odom frame: position σ_xy = max(σx, σy) · ``travelled`` (path length so far, m), yaw
      σ_yaw · ``turned`` (total rotation so far, rad) — the drift of a scale error; the lateral drift that a yaw
      error causes over a long path is left out;
    * twist, in the child frame: vx, vy, ωz off by σ · |value| (``twist``: vx, vy in m/s, ωz in rad/s).

    Each measured variance is at least :data:`VARIANCE_FLOOR` (noise off: σ = 0); z, roll, pitch and their rates
    are :data:`UNMEASURED_VARIANCE`. Returns variances (m², rad²; (m/s)², (rad/s)²) in ROS order x, y, z, roll,
    pitch, yaw.
    """
    sx, sy, syaw = (float(v) for v in rel_std)
    floor, big = VARIANCE_FLOOR, UNMEASURED_VARIANCE
    pos = max(sx, sy) * travelled
    pose = (pos * pos + floor, pos * pos + floor, big, big, big, (syaw * turned) ** 2 + floor)
    vx, vy, wz = (abs(float(v)) for v in twist)
    vel = ((sx * vx) ** 2 + floor, (sy * vy) ** 2 + floor, big, big, big, (syaw * wz) ** 2 + floor)
    return pose, vel


def set_odometry(msg: Odometry, pose: Pose6, twist: Sequence[float], t: float) -> Odometry:
    """Write pose, twist and stamp into an existing ``Odometry`` (frames kept; in place; returned)."""
    set_stamp(msg.header.stamp, t)
    set_pose(msg.pose.pose, pose)
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    lin.x, lin.y = float(twist[0]), float(twist[1])
    ang.z = float(twist[2])
    return msg


def pose_with_covariance_msg(frame: str, pose: Pose6, t: float) -> PoseWithCovarianceStamped:
    """``PoseWithCovarianceStamped`` of an exact pose (fake localization): covariance :data:`EXACT_VARIANCES`."""
    msg = PoseWithCovarianceStamped(header=header(frame, t))
    set_pose(msg.pose.pose, pose)
    set_covariance_diagonal(msg.pose.covariance, EXACT_VARIANCES)
    return msg


def pose_array_msg(frame: str, poses: Sequence[Pose6], t: float) -> PoseArray:
    """``PoseArray`` (the fake localization's one-particle ``particlecloud``)."""
    return PoseArray(header=header(frame, t), poses=[pose_msg(p) for p in poses])


def polygon_msg(footprint: np.ndarray) -> Polygon:
    """``geometry_msgs/Polygon`` of a footprint (P×2, m, vehicle frame), z = 0."""
    return Polygon(points=[Point32(x=float(x), y=float(y), z=0.0) for x, y in np.asarray(footprint).reshape(-1, 2)])


def _rgba(color: Sequence[int] | None, default: tuple[float, float, float, float]) -> ColorRGBA:
    if color is None:
        r, g, b, a = default
    else:
        c = list(color) + [255] * (4 - len(color))
        r, g, b, a = (v / 255.0 for v in c[:4])
    return ColorRGBA(r=float(r), g=float(g), b=float(b), a=float(a))


def _loop(points: np.ndarray) -> list[Point]:
    pts = [Point(x=float(x), y=float(y), z=0.0) for x, y in points]
    return pts + pts[:1]


def chassis_markers_msg(frame: str, footprint: np.ndarray, wheels: Sequence[Any], t: float,
                        ns_prefix: str = "") -> MarkerArray:
    """``MarkerArray`` outlining a vehicle in ``frame`` (its base_link): marker 0 is the chassis footprint
    (LINE_STRIP, namespace ``<ns_prefix>mvsim.chassis_shape``, 5 cm lines, light grey), markers 1..N the wheels
    (rectangles diameter × width, namespace ``<ns_prefix>mvsim.chassis_shape.wheel<i>``, the wheel colour) posed at
    each wheel's (x, y, yaw), steering included. ``wheels`` are objects with ``x, y, yaw, diameter, width, color``
    (m, rad, RGBA 0-255).

    Every marker is ``frame_locked`` and lives forever (lifetime 0): RViz re-places it at the latest transform of
    ``frame`` on every frame it draws, so the outline follows the vehicle from one latched message — no need to
    republish it at the tf rate (it is republished only when steered wheels turn)."""
    hdr = header(frame, t)
    out = MarkerArray()
    body = Marker(header=hdr, ns=f"{ns_prefix}mvsim.chassis_shape", id=0, type=Marker.LINE_STRIP,
                  action=Marker.ADD, frame_locked=True)
    body.pose.orientation.w = 1.0
    body.scale.x = 0.05
    body.color = ColorRGBA(r=0.9, g=0.9, b=0.9, a=1.0)
    body.points = _loop(np.asarray(footprint, dtype=float).reshape(-1, 2))
    out.markers.append(body)
    for i, w in enumerate(wheels):
        m = Marker(header=hdr, ns=f"{ns_prefix}mvsim.chassis_shape.wheel{i + 1}", id=i + 1, type=Marker.LINE_STRIP,
                   action=Marker.ADD, frame_locked=True)
        m.pose = pose_msg((w.x, w.y, 0.0, w.yaw, 0.0, 0.0))
        m.scale.x = 0.02
        m.color = _rgba(getattr(w, "color", None), (0.2, 0.2, 0.2, 1.0))
        hl, hw = 0.5 * w.diameter, 0.5 * w.width
        m.points = _loop(np.array([[-hl, -hw], [hl, -hw], [hl, hw], [-hl, hw]]))
        out.markers.append(m)
    return out


# ---------------------------------------------------------------------- maps
def occupancy_grid_msg(grid: Any, frame: str, t: float) -> OccupancyGrid:
    """``nav_msgs/OccupancyGrid`` of a :class:`mvsim_core.io.grid_map.GridMap` (occupancy probability per cell, row 0
    at the smallest y, as in ROS): ``100·p`` rounded, −1 where p is 0.5 ± :data:`MAP_UNKNOWN_BAND` (unknown).
    The origin is the outer corner (x_min, y_min) of cell (0, 0), in ``frame``."""
    occ = np.asarray(grid.occupancy, dtype=np.float32)
    data = np.rint(np.clip(occ, 0.0, 1.0) * 100.0).astype(np.int8)
    data[np.abs(occ - 0.5) <= MAP_UNKNOWN_BAND] = -1
    msg = OccupancyGrid(header=header(frame, t), info=map_metadata_msg(grid, t), check_fields=True)
    msg.data = as_array("b", data)
    return msg


def map_metadata_msg(grid: Any, t: float) -> MapMetaData:
    """``nav_msgs/MapMetaData`` of a GridMap (resolution m/cell, size in cells, origin at its (x_min, y_min))."""
    info = MapMetaData(map_load_time=stamp_msg(t), resolution=float(grid.resolution), width=int(grid.nx),
                       height=int(grid.ny))
    info.origin = pose_msg((grid.x_min, grid.y_min, 0.0, 0.0, 0.0, 0.0))
    return info


# ---------------------------------------------------------------------- sensors
def laser_scan_msg(obs: Any, t: float, *, scan_time: float = 0.0, frame: str | None = None) -> LaserScan:
    """``sensor_msgs/LaserScan`` of a 2D scan (:class:`mvsim_core.sensors.lidar2d.LaserScan`).

    angle_min/max/increment are those of the rays (CCW, rad, sensor frame ``frame``, default ``obs.frame``);
    ``range_min``/``range_max`` are the sensor's limits (m); invalid rays read ``+inf`` when they hit nothing and
    ``-inf`` when the hit was closer than ``range_min`` (REP 117); ``scan_time`` is the sensor's period (s).
    """
    range_min, range_max = rf.scan_range_limits(obs)
    ranges = rf.scan_ranges(np.asarray(obs.ranges, dtype=np.float32), np.asarray(obs.valid, dtype=bool), range_min)
    msg = LaserScan(header=header(obs.frame if frame is None else frame, t), angle_min=float(obs.angle_min),
                    angle_max=float(obs.angle_max), angle_increment=float(obs.angle_increment), time_increment=0.0,
                    scan_time=float(scan_time), range_min=range_min, range_max=range_max, check_fields=True)
    msg.ranges = as_array("f", ranges)
    return msg


_XYZ_IR = np.dtype({"names": ["x", "y", "z", "intensity", "ring"],
                    "formats": [np.float32, np.float32, np.float32, np.float32, np.uint16],
                    "offsets": [0, 4, 8, 12, 16], "itemsize": 20})
_XYZ = np.dtype({"names": ["x", "y", "z"], "formats": [np.float32] * 3, "offsets": [0, 4, 8], "itemsize": 12})
_XYZ_RGB = np.dtype({"names": ["x", "y", "z", "rgb"], "formats": [np.float32, np.float32, np.float32, np.uint32],
                     "offsets": [0, 4, 8, 12], "itemsize": 16})
_FIELD_TYPE = {np.dtype(np.float32): PointField.FLOAT32, np.dtype(np.uint16): PointField.UINT16,
               np.dtype(np.uint32): PointField.FLOAT32}  # packed rgb travels as a FLOAT32 field (PCL convention)


def _cloud(frame: str, t: float, rows: np.ndarray) -> PointCloud2:
    dt = rows.dtype
    fields = [PointField(name=name, offset=int(dt.fields[name][1]), datatype=_FIELD_TYPE[dt.fields[name][0]],
                         count=1) for name in dt.names]
    n = int(rows.shape[0])
    msg = PointCloud2(header=header(frame, t), height=1, width=n, fields=fields, is_bigendian=False,
                      point_step=dt.itemsize, row_step=dt.itemsize * n, is_dense=True, check_fields=True)
    msg.data = as_array("B", rows)
    return msg


def point_cloud_msg(frame: str, t: float, points: np.ndarray, intensity: np.ndarray | None = None,
                    ring: np.ndarray | None = None) -> PointCloud2:
    """``sensor_msgs/PointCloud2`` (height 1, little endian, dense) of N points (N×3, m, in ``frame``).

    With ``intensity`` (N float32) and ``ring`` (N uint16) the fields are x, y, z, intensity (FLOAT32) and ring
    (UINT16) at offsets 0, 4, 8, 12, 16, point_step 20 (the layout of ROS lidar drivers); else x, y, z, point_step 12.
    """
    pts = np.asarray(points, dtype=np.float32).reshape(-1, 3)
    n = pts.shape[0]
    if intensity is None and ring is None:
        rows = np.empty(n, dtype=_XYZ)
    else:
        rows = np.empty(n, dtype=_XYZ_IR)
        rows["intensity"] = np.zeros(n, np.float32) if intensity is None else np.asarray(intensity, np.float32)
        rows["ring"] = np.zeros(n, np.uint16) if ring is None else np.asarray(ring, np.uint16)
    rows["x"], rows["y"], rows["z"] = pts[:, 0], pts[:, 1], pts[:, 2]
    return _cloud(frame, t, rows)


def lidar3d_cloud_msg(obs: Any, t: float, frame: str | None = None) -> PointCloud2:
    """PointCloud2 (x, y, z, intensity, ring) of a 3D lidar sweep (:class:`mvsim_core.sensors.lidar3d.PointCloud3D`)
    in the sensor frame ``frame`` (default ``obs.frame``)."""
    return point_cloud_msg(obs.frame if frame is None else frame, t, obs.points, obs.intensity, obs.ring)


def colored_cloud_msg(frame: str, t: float, points: np.ndarray, rgb: np.ndarray) -> PointCloud2:
    """PointCloud2 x, y, z, rgb (rgb packed 0x00RRGGBB in a FLOAT32 field, as PCL) of N points and N×3 uint8."""
    pts = np.asarray(points, dtype=np.float32).reshape(-1, 3)
    c = np.asarray(rgb, dtype=np.uint32).reshape(-1, 3)
    rows = np.empty(pts.shape[0], dtype=_XYZ_RGB)
    rows["x"], rows["y"], rows["z"] = pts[:, 0], pts[:, 1], pts[:, 2]
    rows["rgb"] = (c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2]
    return _cloud(frame, t, rows)


def image_msg(rgb: np.ndarray, frame: str, t: float) -> Image:
    """``sensor_msgs/Image`` ``rgb8`` of an H×W×3 uint8 image (row 0 at the top)."""
    img = np.ascontiguousarray(rgb, dtype=np.uint8)
    h, w = int(img.shape[0]), int(img.shape[1])
    msg = Image(header=header(frame, t), height=h, width=w, encoding="rgb8", is_bigendian=0, step=3 * w,
                check_fields=True)
    msg.data = as_array("B", img)
    return msg


def depth_image_msg(depth: np.ndarray, frame: str, t: float, encoding: str = "32FC1") -> Image:
    """Depth image (REP 118) of an H×W float32 depth map (m along the optical axis, 0 = no return).

    ``32FC1``: metres, NaN where there is no return. ``16UC1``: millimetres rounded, 0 where there is no return or
    beyond 65.535 m.
    """
    d = np.asarray(depth, dtype=np.float32)
    h, w = int(d.shape[0]), int(d.shape[1])
    if encoding == "32FC1":
        data = np.where(d > 0.0, d, np.float32(np.nan)).astype(np.float32)
        step = 4 * w
    elif encoding == "16UC1":
        mm = np.rint(d * 1000.0)
        data = np.where((mm > 0) & (mm <= 65535), mm, 0).astype(np.uint16)
        step = 2 * w
    else:
        raise ValueError(f"depth encoding must be one of {', '.join(DEPTH_ENCODINGS)} (got {encoding!r})")
    msg = Image(header=header(frame, t), height=h, width=w, encoding=encoding, is_bigendian=0, step=step,
                check_fields=True)
    msg.data = as_array("B", data)
    return msg


def camera_info_msg(intrinsics: Any, frame: str, t: float) -> CameraInfo:
    """``sensor_msgs/CameraInfo`` of a pinhole model without distortion (``ncols, nrows, fx, fy, cx, cy``, px).

    K = [fx 0 cx; 0 fy cy; 0 0 1], R = I, P = [fx 0 cx 0; 0 fy cy 0; 0 0 1 0] (a monocular camera: no baseline),
    distortion ``plumb_bob`` with zero coefficients.
    """
    f = rf.camera_info_fields(intrinsics)
    return CameraInfo(header=header(frame, t), height=f.height, width=f.width, distortion_model=f.distortion_model,
                      d=list(f.d), k=np.array(f.k), r=np.array(f.r), p=np.array(f.p))


def imu_msg(obs: Any, t: float, *, gyro_sigma: float, accel_sigma: float, orientation_sigma: float,
            frame: str | None = None) -> Imu:
    """``sensor_msgs/Imu`` of an IMU reading (:class:`mvsim_core.sensors.imu.ImuReading`) in the sensor frame
    ``frame`` (default ``obs.frame``).

    Covariances are diagonal: σ² of the white noise of each output (rad/s, m/s², rad). Without an orientation
    (``measure_orientation`` false) the quaternion is identity and ``orientation_covariance[0] = -1`` (REP 145).
    """
    return imu_noise_msg(obs, t, {"angular_velocity": gyro_sigma, "linear_acceleration": accel_sigma,
                                  "orientation": orientation_sigma}, frame=frame)


def imu_noise_msg(obs: Any, t: float, noise: Mapping[str, float], frame: str | None = None) -> Imu:
    """:func:`imu_msg` with the standard deviations of an IMU output (``Output.noise``: ``angular_velocity``
    rad/s, ``linear_acceleration`` m/s², ``orientation`` rad; :func:`mvsim_core.io.ros_fields.imu_fields`)."""
    f = rf.imu_fields(obs.orientation, noise)
    msg = Imu(header=header(obs.frame if frame is None else frame, t))
    w = np.asarray(obs.angular_velocity, dtype=float)
    a = np.asarray(obs.linear_acceleration, dtype=float)
    msg.angular_velocity = Vector3(x=float(w[0]), y=float(w[1]), z=float(w[2]))
    msg.linear_acceleration = Vector3(x=float(a[0]), y=float(a[1]), z=float(a[2]))
    msg.angular_velocity_covariance = np.array(f.angular_velocity_covariance)
    msg.linear_acceleration_covariance = np.array(f.linear_acceleration_covariance)
    qx, qy, qz, qw = f.orientation
    msg.orientation = Quaternion(x=qx, y=qy, z=qz, w=qw)
    msg.orientation_covariance = np.array(f.orientation_covariance)
    return msg


def navsat_status(gga_quality: int) -> int:
    """``NavSatStatus.status`` of a GNSS sample: ``STATUS_NO_FIX`` without a fix (NMEA GGA quality 0), else
    ``STATUS_FIX``. The simulator models coverage (a fix or none: georeference, ``gps_no_coverage`` regions), not
    augmentation: the GGA quality 2 (DGPS) that every simulated fix carries is upstream's constant, so it is not
    reported as an SBAS or GBAS fix."""
    return rf.navsat_status(gga_quality)


def nav_sat_fix_msg(obs: Any, t: float, frame: str | None = None) -> NavSatFix:
    """``sensor_msgs/NavSatFix`` of a GNSS sample (:class:`mvsim_core.sensors.gnss.GnssFix`), frame ``frame``
    (default ``obs.frame``), service GPS, status from :func:`navsat_status`.

    A fix: latitude, longitude (deg), altitude (m), the ENU position covariance of the sensor's noise model
    (diag(σh², σh², σv²), m², row-major; each variance at least :data:`VARIANCE_FLOOR`, so noise-free sensors do
    not report an all-zero covariance), DIAGONAL_KNOWN (KNOWN when it has off-diagonal terms). No fix: NaN latitude,
    longitude and altitude, zero covariance, COVARIANCE_TYPE_UNKNOWN (sensor_msgs' convention for "no position").
    """
    f = rf.nav_sat_fix_fields(obs)
    return NavSatFix(header=header(obs.frame if frame is None else frame, t),
                     status=NavSatStatus(status=f.status, service=f.service), latitude=f.latitude,
                     longitude=f.longitude, altitude=f.altitude, position_covariance=np.array(f.position_covariance),
                     position_covariance_type=f.position_covariance_type)

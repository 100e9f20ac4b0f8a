"""ROS 2 messages as CDR bytes, without ROS: the payloads of an MCAP recording (message encoding ``cdr``).

CDR as ROS 2 writes it (XCDR1, little endian): a 4-byte encapsulation header ``00 01 00 00``, then the fields in
their definition order, each aligned to its own size (1, 2, 4 or 8 bytes) relative to the first byte after the
header; a string is a uint32 length (bytes + the NUL) then the bytes and a NUL; a sequence a uint32 count then its
elements; a fixed array its elements only. Nested messages are their fields inline.

:class:`CdrEncoder` writes one message field by field; a field given a name remembers its byte offset, so that a
message whose size never changes (odometry, tf, a scan of n rays) becomes a :class:`Layout`: the bytes once, and per
message only the named fields rewritten in place (``struct.pack_into``), or for many messages at once as numpy
columns (:meth:`Layout.set_column`). The ``*_msg`` functions build the messages the recorder writes, field for field
as :mod:`mvsim_ros2.conversions` fills them; ``tests/mvsim_core/io/test_ros2_cdr.py`` decodes each with ``rosbags``.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mvsim_core.io.ros_fields import CameraInfoFields

ENCAPSULATION = b"\x00\x01\x00\x00"
"""CDR little endian, plain (what rmw implementations write)."""

_NP = {"b": "<i1", "B": "<u1", "H": "<u2", "h": "<i2", "i": "<i4", "I": "<u4", "f": "<f4", "d": "<f8",
       "q": "<i8", "Q": "<u8"}
STAMP = "t"
"""Field code of a ``builtin_interfaces/Time`` written from integer nanoseconds (int32 sec, uint32 nanosec)."""

POINTFIELD_UINT16, POINTFIELD_FLOAT32 = 4, 7
"""``sensor_msgs/PointField`` datatypes."""


def stamp_ns(t: float) -> int:
    """Integer nanoseconds of ``t`` seconds, rounded as ``mvsim_ros2.conversions.set_stamp`` does."""
    return int(round(t * 1e9))


class CdrEncoder:
    """One CDR message under construction (see the module docstring). Methods return ``self`` to chain."""

    def __init__(self) -> None:
        self.buf = bytearray(ENCAPSULATION)
        self.fields: dict[str, tuple[int, str, int]] = {}  # name -> (byte offset, struct code, count)

    def _align(self, size: int) -> None:
        pad = -(len(self.buf) - 4) % size
        if pad:
            self.buf += bytes(pad)

    def _name(self, name: str | None, code: str, count: int) -> None:
        if name is not None:
            self.fields[name] = (len(self.buf), code, count)

    def scalars(self, code: str, values: Sequence[float | int], name: str | None = None) -> CdrEncoder:
        """Fields of one primitive type (struct ``code``: b B h H i I f d), in a row (a fixed array or consecutive
        fields of the same type)."""
        self._align(struct.calcsize(code))
        self._name(name, code, len(values))
        self.buf += struct.pack(f"<{len(values)}{code}", *values)
        return self

    def stamp(self, t: float, name: str | None = "stamp") -> CdrEncoder:
        """``builtin_interfaces/Time`` of ``t`` seconds."""
        self._align(4)
        self._name(name, STAMP, 1)
        self.buf += struct.pack("<iI", *divmod(stamp_ns(t), 1_000_000_000))
        return self

    def string(self, s: str) -> CdrEncoder:
        b = s.encode()
        self.scalars("I", [len(b) + 1])
        self.buf += b + b"\x00"
        return self

    def header(self, frame: str, t: float) -> CdrEncoder:
        """``std_msgs/Header``: stamp (field ``stamp``), frame_id."""
        return self.stamp(t).string(frame)

    def sequence(self, code: str, values: np.ndarray | bytes, name: str | None = None) -> CdrEncoder:
        """A sequence of a primitive type: its count, then the elements (numpy array or raw little-endian bytes)."""
        data = values if isinstance(values, bytes | bytearray) else np.ascontiguousarray(values, _NP[code]).tobytes()
        size = struct.calcsize(code)
        self.scalars("I", [len(data) // size])
        if data:
            self._align(size)
        self._name(name, code, len(data) // size)
        self.buf += data
        return self

    def bytes(self) -> bytes:
        return bytes(self.buf)

    def layout(self) -> Layout:
        return Layout(bytes(self.buf), dict(self.fields))


class Layout:
    """A fixed-size message: its bytes and the offsets of its named fields (see the module docstring)."""

    def __init__(self, template: bytes, fields: dict[str, tuple[int, str, int]]) -> None:
        self.template = template
        self.fields = fields

    def fill(self, values: dict[str, object]) -> bytearray:
        """A copy of the template with the named fields set (a stamp in integer ns; arrays as numpy or sequences)."""
        buf = bytearray(self.template)
        for name, v in values.items():
            off, code, n = self.fields[name]
            if code == STAMP:
                struct.pack_into("<iI", buf, off, *divmod(int(v), 1_000_000_000))  # type: ignore[call-overload]
            elif n == 1 and not isinstance(v, np.ndarray):
                struct.pack_into("<" + code, buf, off, v)
            else:
                data = np.ascontiguousarray(v, _NP[code]).tobytes()
                buf[off:off + len(data)] = data
        return buf

    def rows(self, templates: Sequence[bytes] | None = None, n: int = 1) -> np.ndarray:
        """(n, size) uint8: ``n`` copies of the template, or one row per given template (same field offsets)."""
        if templates is None:
            return np.tile(np.frombuffer(self.template, np.uint8), (n, 1))
        return np.stack([np.frombuffer(t, np.uint8) for t in templates])

    def column(self, rows: np.ndarray, name: str, through: str | None = None) -> np.ndarray:
        """A writable view of field ``name`` in every row of ``rows`` ((n, size) uint8, last axis contiguous): (n,
        count) of the field's type; a stamp (n, 2) uint32 (sec, nanosec). With ``through``: the fields from ``name``
        to ``through``, consecutive fields of one type (n, their counts summed). Views of rows that stay are worth
        keeping: writing into them is all a message costs."""
        off, code, count = self.fields[name]
        if code == STAMP:
            return rows[:, off:off + 8].view("<u4")
        dt = np.dtype(_NP[code])
        if through is not None:
            end, end_code, end_count = self.fields[through]
            named = sum(c for o, k, c in self.fields.values() if k == code and off <= o <= end)
            count = (end - off) // dt.itemsize + end_count
            if end_code != code or named != count:
                raise ValueError(f"fields {name}..{through} are not consecutive fields of one type")
        return rows[:, off:off + dt.itemsize * count].view(dt)

    def set_column(self, rows: np.ndarray, name: str, values: np.ndarray) -> None:
        """Set field ``name`` in every row of ``rows`` ((n, size) uint8) from ``values`` (n values, or (n, count);
        stamps as int64 ns)."""
        col = self.column(rows, name)
        if self.fields[name][1] == STAMP:
            ns = np.asarray(values, np.int64)
            col[:, 0] = ns // 1_000_000_000
            col[:, 1] = ns % 1_000_000_000
            return
        col[:] = np.asarray(values, col.dtype).reshape(col.shape)


# ---------------------------------------------------------------------- messages
def clock_msg(t: float) -> CdrEncoder:
    """``rosgraph_msgs/Clock``; field ``stamp``."""
    return CdrEncoder().stamp(t)


def bool_msg(value: bool) -> CdrEncoder:
    """``std_msgs/Bool``; field ``data``."""
    return CdrEncoder().scalars("B", [int(bool(value))], "data")


def odometry_msg(frame: str, child: str, t: float) -> CdrEncoder:
    """``nav_msgs/Odometry`` with everything zero (identity orientation); fields ``stamp``, ``pose`` (x, y, z, qx, qy,
    qz, qw: m), ``pose_cov`` (36, row-major), ``twist`` (vx, vy, vz, wx, wy, wz: m/s, rad/s), ``twist_cov`` (36)."""
    e = CdrEncoder().header(frame, t).string(child)
    e.scalars("d", [0.0] * 6 + [1.0], "pose").scalars("d", [0.0] * 36, "pose_cov")
    return e.scalars("d", [0.0] * 6, "twist").scalars("d", [0.0] * 36, "twist_cov")


def tf_message(transforms: Sequence[tuple[str, str, float, Sequence[float]]]) -> CdrEncoder:
    """``tf2_msgs/TFMessage`` of (parent, child, stamp s, (x, y, z, qx, qy, qz, qw)); fields ``stamp<i>``, ``tf<i>``."""
    e = CdrEncoder().scalars("I", [len(transforms)])
    for i, (parent, child, t, xyzq) in enumerate(transforms):
        e.stamp(t, f"stamp{i}").string(parent).string(child).scalars("d", [float(v) for v in xyzq], f"tf{i}")
    return e


def laser_scan_msg(frame: str, t: float, angles: Sequence[float], scan_time: float, range_min: float,
                   range_max: float, ranges: np.ndarray) -> CdrEncoder:
    """``sensor_msgs/LaserScan``: ``angles`` = (angle_min, angle_max, angle_increment) rad, time_increment 0,
    ``ranges`` float32 m (field ``ranges``), no intensities."""
    e = CdrEncoder().header(frame, t)
    e.scalars("f", [*(float(a) for a in angles), 0.0, float(scan_time), float(range_min), float(range_max)])
    return e.sequence("f", ranges, "ranges").sequence("f", b"")


def point_cloud2_msg(frame: str, t: float, rows: np.ndarray, datatypes: dict[str, int]) -> CdrEncoder:
    """``sensor_msgs/PointCloud2`` (height 1, little endian, dense) of a structured array of N points whose fields
    (names, offsets) are the PointFields, of types ``datatypes`` (name → PointField datatype)."""
    dt = rows.dtype
    fields: Any = dt.fields or {}
    n = int(rows.shape[0])
    e = CdrEncoder().header(frame, t).scalars("I", [1, n]).scalars("I", [len(dt.names or ())])
    for name in dt.names or ():
        e.string(name).scalars("I", [int(fields[name][1])]).scalars("B", [datatypes[name]]).scalars("I", [1])
    e.scalars("B", [0]).scalars("I", [dt.itemsize, dt.itemsize * n])
    return e.sequence("B", np.ascontiguousarray(rows).tobytes()).scalars("B", [1])


def image_msg(frame: str, t: float, pixels: np.ndarray, encoding: str) -> CdrEncoder:
    """``sensor_msgs/Image`` of an (H, W[, C]) array (row 0 at the top), little endian, step = W·C·itemsize."""
    a = np.ascontiguousarray(pixels)
    h, w = int(a.shape[0]), int(a.shape[1])
    e = CdrEncoder().header(frame, t).scalars("I", [h, w]).string(encoding)
    return e.scalars("B", [0]).scalars("I", [a.nbytes // max(h, 1)]).sequence("B", a.tobytes())


def camera_info_msg(frame: str, t: float, f: CameraInfoFields) -> CdrEncoder:
    """``sensor_msgs/CameraInfo`` of calibration fields (:func:`mvsim_core.io.ros_fields.camera_info_fields`: size,
    distortion model and coefficients, K, R, P); no binning, empty ROI."""
    e = CdrEncoder().header(frame, t).scalars("I", [int(f.height), int(f.width)]).string(f.distortion_model)
    e.sequence("d", np.asarray(f.d, dtype=np.float64))
    e.scalars("d", list(f.k)).scalars("d", list(f.r)).scalars("d", list(f.p))
    return e.scalars("I", [0, 0]).scalars("I", [0, 0, 0, 0]).scalars("B", [0])


def imu_msg(frame: str, t: float, orientation: Sequence[float], orientation_cov: Sequence[float],
            angular_velocity: Sequence[float], angular_velocity_cov: Sequence[float],
            linear_acceleration: Sequence[float], linear_acceleration_cov: Sequence[float]) -> CdrEncoder:
    """``sensor_msgs/Imu``: quaternion (x, y, z, w), rad/s, m/s², each with its 9 covariances (row-major)."""
    e = CdrEncoder().header(frame, t)
    for values in (orientation, orientation_cov, angular_velocity, angular_velocity_cov, linear_acceleration,
                   linear_acceleration_cov):
        e.scalars("d", [float(v) for v in values])
    return e


def nav_sat_fix_msg(frame: str, t: float, status: int, service: int, lla: Sequence[float],
                    cov: Sequence[float], cov_type: int) -> CdrEncoder:
    """``sensor_msgs/NavSatFix``: status (int8), service (uint16), latitude, longitude (deg), altitude (m), 9
    position covariances (m², ENU, row-major) and their type."""
    e = CdrEncoder().header(frame, t).scalars("b", [status]).scalars("H", [service])
    return e.scalars("d", [float(v) for v in lla]).scalars("d", [float(v) for v in cov]).scalars("B", [cov_type])


def occupancy_grid_msg(frame: str, t: float, resolution: float, width: int, height: int,
                       origin: Sequence[float], data: np.ndarray) -> CdrEncoder:
    """``nav_msgs/OccupancyGrid``: map_load_time = ``t``, resolution (m/cell), size (cells), origin pose (x, y, z, qx,
    qy, qz, qw), data int8 (row-major from the origin; -1 unknown, 0..100)."""
    e = CdrEncoder().header(frame, t).stamp(t, None).scalars("f", [resolution]).scalars("I", [width, height])
    return e.scalars("d", [float(v) for v in origin]).sequence("b", np.asarray(data, np.int8))

"""What a sensor puts out, declared once: its outputs, each of a kind that every adapter knows how to encode.

A sensor class says what it produces through :meth:`Sensor.outputs <mvsim_core.sensors.base.Sensor.outputs>`: a
tuple of :class:`Output` rows, each naming an :class:`OutputKind` (a planar scan, a point cloud, an image, ...), the
frame its data is in, its rate, where its covariances come from and how to pick the sample to send. The adapters (the
ROS node, the MCAP recorder, ZMQ, Foxglove, the gym environment, sweeps) keep one encoder per *kind*, never per
sensor class: a new sensor whose data is of an existing kind appears everywhere with its own file only; a new kind
needs one encoder per adapter (README, *Adding a sensor*).

Every kind's observation carries ``stamp`` (simulated seconds) and the fields below (:data:`KINDS` holds the same
table for the documentation). Frames are named relative to the vehicle (the adapter adds a vehicle prefix in a shared
tf tree); a sensor's own frame is named as the sensor, x forward, z up, at its ``pose_3d`` on the vehicle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mvsim_core.output_kind import OutputKind

__all__ = ["KINDS", "KindInfo", "Output", "OutputKind", "latest", "output_of", "outputs_of"]


@dataclass(frozen=True)
class KindInfo:
    """Documentation of one kind: ``fields`` maps each observation attribute to its type, unit and frame."""

    summary: str
    fields: Mapping[str, str]


KINDS: Mapping[OutputKind, KindInfo] = MappingProxyType({
    OutputKind.SCAN: KindInfo("a planar range scan, rays counter-clockwise from angle_min to angle_max", {
        "ranges": "(n,) float32, m, along each ray from the sensor origin",
        "valid": "(n,) bool, False where the ray returned nothing",
        "angle_min, angle_max, angle_increment": "rad, about the sensor frame's z axis",
        "min_range, max_range": "m",
    }),
    OutputKind.POINT_CLOUD: KindInfo("3D lidar returns", {
        "points": "(N, 3) float32, m, sensor frame",
        "intensity": "(N,) float32",
        "ring": "(N,) uint16, beam index, 0 = lowest",
    }),
    OutputKind.IMAGE: KindInfo("a colour image of a pinhole camera", {
        "rgb": "(H, W, 3) uint8, row 0 at the top",
        "intrinsics": "PinholeModel: fx, fy, cx, cy (pixels), distortion",
    }),
    OutputKind.RGBD: KindInfo("a colour image and a depth image of an RGB-D camera, and the depth's points", {
        "rgb": "(H, W, 3) uint8 or None",
        "depth": "(H, W) float32, m along the optical axis, 0 = no return; or None",
        "rgb_intrinsics, depth_intrinsics": "PinholeModel of each image",
        "points()": "(N, 3) float32, m, depth optical frame (z forward, x right)",
    }),
    OutputKind.IMU: KindInfo("an inertial measurement", {
        "angular_velocity": "(3,) rad/s, sensor frame",
        "linear_acceleration": "(3,) m/s², sensor frame",
        "orientation": "(x, y, z, w) quaternion of the sensor frame in the world frame, or None",
    }),
    OutputKind.FIX: KindInfo("a satellite navigation fix (or a sample without one, see Output.observe)", {
        "latitude, longitude": "deg (WGS84); NaN without a fix",
        "altitude": "m",
        "covariance": "(3, 3) m², east-north-up",
    }),
})
"""Each kind's observation fields, with their types, units and frames (the documentation is made from this)."""


def latest(sensor: Any) -> Any:
    """The sample a sensor has to send now: its latest observation (``sensor.last``; None before the first)."""
    return sensor.last


@dataclass(frozen=True)
class Output:
    """One output of one sensor.

    Attributes:
        kind: what the data is (its observation has :data:`KINDS` ``[kind]``'s fields).
        name: the name the adapters build topics and channels from (the sensor's name); the kind decides the
            suffixes (a scan is ``<name>``, a point cloud ``<name>_points``, an image ``<name>/image_raw`` and
            ``<name>/camera_info``, ...).
        frame: the frame the data is in, relative to the vehicle (the sensor's name, x forward, z up).
        period: seconds between samples (the sensor's ``sensor_period``).
        noise: the standard deviations the covariances are made of, by name and in the kind's units
            (an IMU: ``angular_velocity`` rad/s, ``linear_acceleration`` m/s², ``orientation`` rad); empty for a
            kind whose observations carry their own covariance (a fix) or none.
        options: what the adapters may or must do, by name (``depth_image``: publish an RGB-D depth image;
            ``colored_points``: colour an RGB-D point cloud; ``rgb_pose_wrt_depth``: (x, y, z, yaw, pitch, roll), m
            and rad, of an RGB-D camera's RGB optical frame in its sensor frame, for its static frames).
        observe: the sensor → the sample to send now (compared by identity with the one sent last):
            :func:`latest`, or, for a GNSS, its latest sample with or without a fix.
    """

    kind: OutputKind
    name: str
    frame: str
    period: float
    noise: Mapping[str, float] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    observe: Callable[[Any], Any] = latest


def outputs_of(sensor: Any) -> tuple[Output, ...]:
    """The outputs a sensor declares (none for a sensor that is only parsed, or any object without ``outputs``)."""
    outputs = getattr(sensor, "outputs", None)
    return tuple(outputs()) if callable(outputs) else ()


def output_of(sensor: Any, kind: OutputKind | None = None) -> Output | None:
    """The sensor's first output (of ``kind`` when given), or None."""
    for o in outputs_of(sensor):
        if kind is None or o.kind is kind:
            return o
    return None

"""What the simulation puts out, declared once: the outputs of each sensor and of each vehicle.

A sensor class says what it produces through :meth:`Sensor.outputs <mvsim_core.sensors.base.Sensor.outputs>`, a
vehicle through :meth:`Vehicle.outputs <mvsim_core.objects.vehicles.base.Vehicle.outputs>`: a tuple of
:class:`Output` rows, each naming an :class:`OutputKind` (a planar scan, a point cloud, an image, an odometry, ...),
the frame its data is in, its rate, where its covariances come from and how to pick the sample to send. The adapters
(the ROS node, the MCAP recorder, ZMQ, Foxglove, the gym environment, sweeps) keep one encoder per *kind*, never per
sensor or vehicle class: a new sensor whose data is of an existing kind appears everywhere with its own file only; a
new kind needs one encoder per adapter that carries it (README, *Adding a sensor*).

Sensor kinds (:data:`SENSOR_KINDS`): each observation carries ``stamp`` (simulated seconds) and the fields of
:data:`KINDS`. Vehicle kinds (:data:`VEHICLE_KINDS`): sampled whenever an adapter publishes the vehicles' state (the
node's ``period_ms_publish_tf``, the recorder's ``period_tf``) and stamped with that time; their ``period`` is 0.
Frames are named relative to the vehicle (an adapter adds a vehicle prefix in a shared tf tree); a sensor's own frame
is named as the sensor, x forward, z up, at its ``pose_3d`` on the vehicle; a vehicle's is its ``base_frame``
(``base_link``, or the root link of its URDF). Adapters that carry only some vehicle kinds say which: the MCAP
recorder and the Foxglove view carry the odometries and collisions (not joint states nor the description), ZMQ
carries vehicle poses through its own ``get_pose`` services.

This module sits at the bottom of the layers (it imports nothing from the simulator) so that vehicles, sensors and
every adapter can name it; :mod:`mvsim_core.sensors.outputs` re-exports it for sensor authors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from mvsim_core.output_kind import OutputKind

__all__ = ["KINDS", "SENSOR_KINDS", "VEHICLE_KINDS", "WORLD_FRAME", "KindInfo", "Output", "OutputKind",
           "PlanarOdometry", "VehicleRoles", "latest", "output_of", "outputs_of", "vehicle_roles"]

WORLD_FRAME = "world"
"""The parent frame name that stands for the adapter's world frame (the node's ``world_frame_id``, ``map`` by
default) in :attr:`Output.options` ``parent``."""


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
    OutputKind.ODOMETRY: KindInfo("the pose of a vehicle's base_link in a parent frame and its twist (a "
                                  "PlanarOdometry)", {
        "pose": "(x, y, z, yaw, pitch, roll), m and rad, of base_link in the parent frame (Output.options parent)",
        "twist": "(vx, vy, ω), m/s and rad/s, of base_link in its own frame",
        "drift": "(x, y, yaw) relative std. dev. of the increments (dimensionless: error per metre or radian "
                 "moved) for an estimate whose covariance grows with the path; None for an exact pose",
    }),
    OutputKind.COLLISION: KindInfo("whether the vehicle touches something", {
        "(the sample)": "bool, True while the chassis touches another body; adapters send whether it did at any "
                        "step since their previous message",
    }),
    OutputKind.JOINT_STATE: KindInfo("the positions and rates of the movable joints of the vehicle's robot "
                                     "description (a JointState: wheel spins, steering angles)", {
        "names": "tuple of str, the description's movable joints in tree order",
        "positions": "tuple of float, rad (revolute, continuous) or m (prismatic)",
        "velocities": "tuple of float, rad/s or m/s",
    }),
    OutputKind.ROBOT_DESCRIPTION: KindInfo("the vehicle's robot description as URDF text; it never changes, so "
                                           "adapters send it once, latched", {
        "(the sample)": "str, URDF XML (link and joint names: mvsim_core.objects.vehicles.generated_urdf, or the "
                        "user's own)",
    }),
})
"""Each kind's observation fields, with their types, units and frames (the documentation is made from this)."""

SENSOR_KINDS = frozenset({OutputKind.SCAN, OutputKind.POINT_CLOUD, OutputKind.IMAGE, OutputKind.RGBD, OutputKind.IMU,
                          OutputKind.FIX})
"""The kinds sensors put out (each observation stamped by the sensor's own schedule)."""

VEHICLE_KINDS = frozenset({OutputKind.ODOMETRY, OutputKind.COLLISION, OutputKind.JOINT_STATE,
                           OutputKind.ROBOT_DESCRIPTION})
"""The kinds vehicles put out (sampled when an adapter publishes the vehicles' state)."""


class PlanarOdometry(NamedTuple):
    """A sample of an :attr:`OutputKind.ODOMETRY` output (units and frames in :data:`KINDS`)."""

    pose: tuple[float, float, float, float, float, float]
    twist: tuple[float, float, float]
    drift: tuple[float, float, float] | None


def latest(source: Any) -> Any:
    """The sample a sensor has to send now: its latest observation (``.last``; None before the first)."""
    return source.last


@dataclass(frozen=True)
class Output:
    """One output of one sensor or vehicle.

    Attributes:
        kind: what the data is (its observation has :data:`KINDS` ``[kind]``'s fields).
        name: the name the adapters build topics and channels from (a sensor's name; ``odom``,
            ``base_pose_ground_truth``, ``collision`` for a vehicle); the kind decides the suffixes (a scan is
            ``<name>``, a point cloud ``<name>_points``, an image ``<name>/image_raw`` and ``<name>/camera_info``,
            ...).
        frame: the frame the data is in, relative to the vehicle (a sensor's name, x forward, z up; ``base_link``).
        period: seconds between samples (a sensor's ``sensor_period``); 0 for a vehicle output (sampled when the
            adapter publishes the vehicles' state).
        noise: the standard deviations the covariances are made of, by name and in the kind's units
            (an IMU: ``angular_velocity`` rad/s, ``linear_acceleration`` m/s², ``orientation`` rad); empty for a
            kind whose observations carry their own covariance (a fix, an odometry) or none.
        options: what the adapters may or must do, by name (``depth_image``: publish an RGB-D depth image;
            ``colored_points``: colour an RGB-D point cloud; ``rgb_pose_wrt_depth``: (x, y, z, yaw, pitch, roll), m
            and rad, of an RGB-D camera's RGB optical frame in its sensor frame, for its static frames; ``parent``:
            the frame an odometry's pose is in, ``odom`` or :data:`WORLD_FRAME`; ``latched``: the sample never
            changes, send it once to late subscribers too, a robot description).
        observe: the sensor or vehicle → the sample to send now (a sensor's is compared by identity with the one
            sent last): :func:`latest`, or, for a GNSS, its latest sample with or without a fix; a vehicle's
            odometry, ground truth, contact flag.
    """

    kind: OutputKind
    name: str
    frame: str
    period: float
    noise: Mapping[str, float] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    observe: Callable[[Any], Any] = latest


def outputs_of(source: object) -> tuple[Output, ...]:
    """The outputs a sensor or vehicle declares (none for a sensor that is only parsed, or any object without
    ``outputs``)."""
    outputs = getattr(source, "outputs", None)
    return tuple(outputs()) if callable(outputs) else ()


def output_of(source: object, kind: OutputKind | None = None) -> Output | None:
    """The first output of a sensor or vehicle (of ``kind`` when given), or None."""
    for o in outputs_of(source):
        if kind is None or o.kind is kind:
            return o
    return None


class VehicleRoles(NamedTuple):
    """The outputs of a vehicle that the adapters' vehicle state is made of (None where it declares none)."""

    estimate: Output | None
    """Its odometry in the ``odom`` frame: ``odom`` → ``base_link`` on tf."""
    truth: Output | None
    """Its odometry in the world frame: the true pose (fake localization ``map`` → ``odom``, Foxglove's tf)."""
    collision: Output | None
    """Its contact flag."""


def vehicle_roles(outputs: Iterable[Output]) -> VehicleRoles:
    """Of a vehicle's outputs (:func:`outputs_of`): the first odometry in the ``odom`` frame, the first in the world
    frame and the first collision output."""
    estimate = truth = collision = None
    for o in outputs:
        if o.kind is OutputKind.ODOMETRY:
            parent = o.options.get("parent", WORLD_FRAME)
            if parent == WORLD_FRAME:
                truth = truth or o
            elif parent == "odom":
                estimate = estimate or o
        elif o.kind is OutputKind.COLLISION:
            collision = collision or o
    return VehicleRoles(estimate, truth, collision)

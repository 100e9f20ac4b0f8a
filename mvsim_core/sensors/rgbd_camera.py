"""``<sensor class="rgbd_camera">``: a depth camera with an optional colour camera beside it (reference §1.12).

Frames: ``pose_3d`` is the pose of the *depth* sensor on the vehicle, an x-forward, z-up frame (the shipped
``rgbd_camera.sensor.xml`` writes ``0 0 0`` angles there for a camera looking ahead). The depth image is taken in the
optical frame obtained by the fixed rotation yaw −90°, roll −90° of that frame (optical z = sensor x, optical x =
sensor −y, optical y = sensor −z; :data:`~mvsim_core.sensors.render.camera_model.OPTICAL_WRT_BODY`), as upstream.
``relativePoseIntensityWRTDepth`` is the pose of the RGB optical frame (+z forward) relative to the depth sensor frame
(MRPT's ``CObservation3DRangeScan`` convention); its default ``0 0 0 -90 0 -90`` is that same rotation with no offset,
so both images then share one optical frame (and, with equal intrinsics, one render).

Depth is metres along the optical axis (optical-frame Z, not the range along each pixel's ray). Gaussian noise of
``depth_noise_sigma`` from the camera's own generator (:attr:`~mvsim_core.sensors.base.Sensor.rng`) is added, then
depths are rounded to multiples of ``depth_resolution``; pixels whose true depth lies outside [``depth_clip_min``,
``depth_clip_max``] — and pixels that see nothing — read 0 (no return). Something nearer than ``depth_clip_min`` is not
seen through: it reads 0.

Simulation (:meth:`RgbdCamera.sample_batch`): offscreen OpenGL rendering by :mod:`mvsim_core.sensors.render`
(geometry, lighting, background described there); the depth comes from a float attachment that holds each fragment's
optical-frame Z, so a flat wall facing the camera reads the same depth at every pixel. OpenGL is imported only when a
camera renders for the first time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from mvsim_core.geometry.rotations import OPTICAL_WRT_BODY, rotation
from mvsim_core.sensors.base import Pose3D, Sensor
from mvsim_core.sensors.camera import (
    CAMERA_DEFAULT_POSE,
    PinholeAccessors,
    PinholeModel,
    check_clip,
    check_image_size,
    pinhole_from,
    pinhole_params,
    pose_of,
)
from mvsim_core.sensors.outputs import Output, OutputKind
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

if TYPE_CHECKING:
    from mvsim_core.sensors.scheduler import SensorContext

RGB_WRT_DEPTH_DEFAULT: Pose3D = (0.0, 0.0, 0.0, math.radians(-90.0), 0.0, math.radians(-90.0))
"""Default pose of the RGB optical frame relative to the depth sensor frame (m, rad)."""


OPTICAL_WRT_SENSOR: np.ndarray = OPTICAL_WRT_BODY
"""Rotation of the depth optical frame in the depth sensor frame (columns: optical x, y, z), yaw −90°, roll −90°."""

SHARE_TOLERANCE = 1e-9
"""RGB and depth optical frames closer than this (m, and rotation-matrix entries) are rendered once."""


@dataclass
class RgbdObservation(PinholeAccessors):
    """One RGB-D observation (of a :class:`RgbdCamera`).

    Attributes:
        stamp: simulated time (s).
        depth: (H, W) float32 depth along the optical axis (m), 0 = no return; None when ``sense_depth`` is false.
        rgb: (H', W', 3) uint8 colour image (row 0 at the top) of the RGB camera; None when ``sense_rgb`` is false.
        depth_intrinsics, rgb_intrinsics: pinhole models of the two cameras (px).
        sensor_pose: (x, y, z, yaw, pitch, roll) of the depth sensor frame (``pose_3d``, x forward) in the world.
        depth_pose, rgb_pose: the same for the depth and RGB optical frames (z forward, x right, y down).
        rgb_wrt_depth: ``relativePoseIntensityWRTDepth`` (m, rad).
        depth_clip: (min, max) valid depth (m). depth_resolution: depth quantization step (m).
        frame: the sensor's name.
    """

    stamp: float
    depth: np.ndarray | None
    rgb: np.ndarray | None
    depth_intrinsics: PinholeModel
    rgb_intrinsics: PinholeModel
    sensor_pose: tuple[float, float, float, float, float, float]
    depth_pose: tuple[float, float, float, float, float, float]
    rgb_pose: tuple[float, float, float, float, float, float]
    rgb_wrt_depth: Pose3D
    depth_clip: tuple[float, float]
    depth_resolution: float
    frame: str

    @property
    def intrinsics(self) -> PinholeModel:
        """The depth camera's intrinsics (what ``width``, ``height``, ``fx``, ``fy``, ``cx``, ``cy`` give)."""
        return self.depth_intrinsics

    def points(self) -> np.ndarray:
        """(N, 3) float32 points (m) of the valid depth pixels in the depth *optical* frame (x right, y down, z
        forward), row by row; empty without depth."""
        if self.depth is None:
            return np.zeros((0, 3), np.float32)
        k = self.depth_intrinsics
        v, u = np.nonzero(self.depth > 0)
        z = self.depth[v, u].astype(np.float32)
        x = (u.astype(np.float32) - np.float32(k.cx)) * z / np.float32(k.fx)
        y = (v.astype(np.float32) - np.float32(k.cy)) * z / np.float32(k.fy)
        return np.column_stack([x, y, z])


class RgbdCamera(PinholeAccessors, Sensor):
    """RGB-D camera; class ``rgbd_camera``, default names ``camera1``, ``camera2``, ...

    Parameters (upstream default, unit):
        relativePoseIntensityWRTDepth: ``0 0 0 -90 0 -90`` (m, rad after parsing).
        sense_depth / sense_rgb: true / true (simulate each part).
        depth_ncols/nrows/cx/cy/fx/fy and rgb_ncols/nrows/cx/cy/fx/fy: 640×480, c = (320, 240), f = 500 px.
        rgb_clip_min 0.01 m, rgb_clip_max 1e4 m; depth_clip_min 0.1 m, depth_clip_max 15 m.
        depth_resolution: 1 mm (m). depth_noise_sigma: 1 mm (m).
        show_3d_pointcloud: false (GUI).
        publish_ros_depth_image: true; publish_ros_colored_pointcloud: false (read by the ROS node).
    Pose: ``pose_3d`` (default ``0 0 0.5 90 0 90``).
    """

    xml_class: ClassVar[str] = "rgbd_camera"
    name_prefix: ClassVar[str] = "camera"
    DEFAULT_POSE: ClassVar[Pose3D] = CAMERA_DEFAULT_POSE
    COUNTS: ClassVar[tuple[str, ...]] = ("depth_ncols", "depth_nrows", "rgb_ncols", "rgb_nrows")
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("relativePoseIntensityWRTDepth", Kind.POSE3D, RGB_WRT_DEPTH_DEFAULT, "m, rad",
              doc="RGB optical frame relative to the depth sensor frame"),
        Param("sense_depth", Kind.BOOL, True, doc="simulate the depth image"),
        Param("sense_rgb", Kind.BOOL, True, doc="simulate the colour image"),
        *pinhole_params("depth_"),
        *pinhole_params("rgb_"),
        Param("rgb_clip_min", Kind.FLOAT, 1e-2, "m", positive=True),
        Param("rgb_clip_max", Kind.FLOAT, 1e4, "m", positive=True),
        Param("depth_clip_min", Kind.FLOAT, 0.1, "m", positive=True, doc="nearer pixels read 0 (no return)"),
        Param("depth_clip_max", Kind.FLOAT, 15.0, "m", positive=True, doc="maximum depth"),
        Param("depth_resolution", Kind.FLOAT, 1e-3, "m", positive=True, doc="depth quantization step"),
        Param("depth_noise_sigma", Kind.FLOAT, 1e-3, "m", min=0.0, doc="std. dev. of depth noise"),
        Param("show_3d_pointcloud", Kind.BOOL, False, doc="draw the point cloud in the GUI"),
        Param("publish_ros_depth_image", Kind.BOOL, True, doc="ROS node: publish <name>_depth/image_raw"),
        Param("publish_ros_colored_pointcloud", Kind.BOOL, False, doc="ROS node: XYZRGB instead of XYZ points"),
    )

    simulated: ClassVar[bool] = True

    def outputs(self) -> tuple[Output, ...]:
        """Colour and depth images and the depth's points (:attr:`OutputKind.RGBD`): the images in the optical
        frames ``<name>_rgb`` and ``<name>_depth``; ``depth_image`` and ``colored_points`` from
        ``publish_ros_depth_image`` and ``publish_ros_colored_pointcloud``; ``rgb_pose_wrt_depth``: the RGB
        optical frame's pose in the sensor frame (:attr:`rgb_pose_wrt_depth`, m and rad), for the static frames."""
        return (Output(OutputKind.RGBD, self.name, self.name, self.period, options={
            "depth_image": bool(self.params.get("publish_ros_depth_image", True)),
            "colored_points": bool(self.params.get("publish_ros_colored_pointcloud", False)),
            "rgb_pose_wrt_depth": self.rgb_pose_wrt_depth}),)

    # ------------------------------------------------------------------ simulation
    @classmethod
    def sample_batch(cls, sensors: list[Sensor], ctx: SensorContext, t: float) -> list[RgbdObservation]:
        """Observations of all ``sensors`` (RGB-D cameras due at simulated time ``t``, s), one after the other, from
        the world's shared offscreen renderer. Depth noise is drawn by each camera from its own generator: H×W standard
        normals when it senses depth with ``depth_noise_sigma`` > 0.

        Raises:
            RenderUnavailableError: no offscreen OpenGL context can be created (the message says what to install).
        """
        cams: list[RgbdCamera] = [s for s in sensors if isinstance(s, RgbdCamera)]
        if not cams:
            return []
        from mvsim_core.sensors.render.renderer import renderer_for

        renderer = renderer_for(ctx)
        renderer.update_nodes()
        rot, pos = ctx.sensor_poses(cams)
        out = []
        for i, s in enumerate(cams):
            p = s.params
            kd, kc = s.depth_intrinsics, s.rgb_intrinsics
            r_depth = rot[i] @ OPTICAL_WRT_SENSOR
            rel = s.rgb_pose_wrt_depth
            r_rgb = rot[i] @ rotation(rel[3], rel[4], rel[5])
            t_rgb = pos[i] + rot[i] @ np.asarray(rel[:3], dtype=np.float64)
            sense_d, sense_c = bool(p["sense_depth"]), bool(p["sense_rgb"])
            dmin, dmax = float(p["depth_clip_min"]), float(p["depth_clip_max"])
            cmin, cmax = float(p["rgb_clip_min"]), float(p["rgb_clip_max"])
            depth = rgb = None
            shared = (sense_d and sense_c and kd == kc and cmin <= dmin and dmax <= cmax
                      and np.abs(r_rgb - r_depth).max() <= SHARE_TOLERANCE
                      and np.abs(t_rgb - pos[i]).max() <= SHARE_TOLERANCE)
            if shared:
                frame = renderer.render(r_depth, pos[i], kd, cmin, cmax, rgb=True, depth=True)
                depth, rgb = frame.depth, frame.rgb
            else:
                if sense_d:
                    near = min(0.5 * dmin, 0.01)
                    depth = renderer.render(r_depth, pos[i], kd, near, dmax * 1.001 + 1e-3, rgb=False,
                                            depth=True).depth
                if sense_c:
                    rgb = renderer.render(r_rgb, t_rgb, kc, cmin, cmax, rgb=True, depth=False).rgb
            if depth is not None:
                depth = s._measure(depth, s.stream())
            out.append(RgbdObservation(
                stamp=float(t), depth=depth, rgb=rgb, depth_intrinsics=kd, rgb_intrinsics=kc,
                sensor_pose=pose_of(rot[i], pos[i]), depth_pose=pose_of(r_depth, pos[i]),
                rgb_pose=pose_of(r_rgb, t_rgb), rgb_wrt_depth=rel, depth_clip=(dmin, dmax),
                depth_resolution=float(p["depth_resolution"]), frame=s.name))
        return out

    def sample(self, ctx: SensorContext, t: float) -> RgbdObservation:
        """One observation at simulated time ``t`` (s); see :meth:`sample_batch`."""
        return self.sample_batch([self], ctx, t)[0]

    def _measure(self, true_depth: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        """Rendered depth (m, 0 = nothing; a fresh array, reused) -> measured depth: noise, quantization to
        ``depth_resolution``, 0 outside the clip range (see the module docstring)."""
        p = self.params
        d = true_depth
        invalid = d < np.float32(p["depth_clip_min"])
        invalid |= d > np.float32(p["depth_clip_max"])
        sigma = float(p["depth_noise_sigma"])
        if sigma > 0.0:
            noise = gen.standard_normal(d.shape, dtype=np.float32)
            noise *= np.float32(sigma)
            d += noise
        res = float(p["depth_resolution"])
        d *= np.float32(1.0 / res)
        np.rint(d, out=d)
        d *= np.float32(res)
        np.maximum(d, np.float32(0.0), out=d)
        d[invalid] = 0.0
        return d

    # ------------------------------------------------------------------ description
    @property
    def depth_intrinsics(self) -> PinholeModel:
        """Depth image size and pinhole intrinsics (px)."""
        return pinhole_from(self, "depth_")

    @property
    def rgb_intrinsics(self) -> PinholeModel:
        """Colour image size and pinhole intrinsics (px)."""
        return pinhole_from(self, "rgb_")

    @property
    def intrinsics(self) -> PinholeModel:
        """The depth camera's intrinsics (what ``fx``, ``fy``, ``cx``, ``cy``, ``width``, ``height`` give)."""
        return self.depth_intrinsics






    @property
    def rgb_pose_wrt_depth(self) -> Pose3D:
        """``relativePoseIntensityWRTDepth`` (m, rad)."""
        return tuple(self.params["relativePoseIntensityWRTDepth"])

    def details(self) -> str:
        parts = []
        if self.params["sense_depth"]:
            parts.append(f"depth {self.depth_intrinsics}")
        if self.params["sense_rgb"]:
            parts.append(f"rgb {self.rgb_intrinsics}")
        return " + ".join(parts) or "nothing sensed"

    def _validate(self, ctx: ParseContext) -> None:
        check_clip(self, ctx, "rgb_clip_min", "rgb_clip_max")
        check_clip(self, ctx, "depth_clip_min", "depth_clip_max")
        if self.params["sense_depth"]:
            check_image_size(self, ctx, "depth_")
        if self.params["sense_rgb"]:
            check_image_size(self, ctx, "rgb_")

"""``<sensor class="rgbd_camera">``: a depth camera with an optional colour camera beside it (reference §1.12).

Frames: ``pose_3d`` is the pose of the *depth* sensor on the vehicle (the shipped ``rgbd_camera.sensor.xml`` uses an
x-forward frame there, and upstream renders depth with a fixed extra rotation yaw −90°, roll −90° onto the optical
axis). ``relativePoseIntensityWRTDepth`` is the pose of the RGB optical frame (+z forward) relative to the depth
sensor frame; its default ``0 0 0 -90 0 -90`` is that same rotation with no offset.

Depth is metres along the optical axis, quantized to ``depth_resolution`` and clipped to
[``depth_clip_min``, ``depth_clip_max``]; Gaussian noise of ``depth_noise_sigma`` is added to valid pixels.
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.sensors.base import Pose3D, Sensor
from mvsim_core.sensors.camera import CAMERA_DEFAULT_POSE, PinholeModel, check_clip, pinhole_from, pinhole_params
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

RGB_WRT_DEPTH_DEFAULT: Pose3D = (0.0, 0.0, 0.0, math.radians(-90.0), 0.0, math.radians(-90.0))
"""Default pose of the RGB optical frame relative to the depth sensor frame (m, rad)."""


class RgbdCamera(Sensor):
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

    @property
    def depth_intrinsics(self) -> PinholeModel:
        return pinhole_from(self, "depth_")

    @property
    def rgb_intrinsics(self) -> PinholeModel:
        return pinhole_from(self, "rgb_")

    @property
    def rgb_pose_wrt_depth(self) -> Pose3D:
        """``relativePoseIntensityWRTDepth`` (m, rad)."""
        return tuple(self.params["relativePoseIntensityWRTDepth"])  # type: ignore[return-value]

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

"""``<sensor class="camera">``: an RGB pinhole camera (reference §1.12).

The camera looks along +z of its own (optical) frame, with +x right and +y down in the image. Its ``pose_3d`` gives
that optical frame on the vehicle; upstream's default ``0 0 0.5 90 0 90`` and the shipped ``camera.sensor.xml``'s
``yaw -90, roll -90`` both turn +z forward (the latter keeps the image upright: image right = vehicle right; the
default's image right is the vehicle's left and its image down is up, i.e. the picture is turned by 180°).
Intrinsics are in pixels; pixel (u, v) of a point (x, y, z) in the optical frame is (cx + fx·x/z, cy + fy·y/z), with
pixel centres at integer (u, v) (OpenCV / ROS convention). Scene parts nearer than ``clip_min`` or farther than
``clip_max`` are not drawn.

Simulation (:meth:`Camera.sample_batch`): the world is rendered offscreen with OpenGL (EGL surfaceless or OSMesa on
Mesa's software rasterizer; no display or GPU needed) by :mod:`mvsim_core.sensors.render` — geometry, lighting and
background are described there. OpenGL is imported only when a camera renders for the first time. The carrying
vehicle is part of the scene: a camera mounted inside its chassis prism sees out through it (closed solids are drawn
single-sided), one mounted outside sees the vehicle where it is in view. Sensor visual models are not drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from mvsim_core.geometry.rotations import ypr_from_rotation
from mvsim_core.memory_budget import budget_message, over_budget
from mvsim_core.sensors.base import Pose3D, Sensor, count_param
from mvsim_core.sensors.outputs import Output, OutputKind
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

if TYPE_CHECKING:
    from mvsim_core.sensors.scheduler import SensorContext

MAX_IMAGE_SIDE = 16384
"""Widest and highest image (px): the smallest framebuffer size OpenGL 4 guarantees."""

PIXEL_BYTES = 24
"""Bytes per pixel of a rendered image: the framebuffer's colour, optical-depth and depth-buffer attachments (12) and
the images read back and measured (colour, depth, depth noise)."""

CAMERA_DEFAULT_POSE: Pose3D = (0.0, 0.0, 0.5, math.radians(90.0), 0.0, math.radians(90.0))
"""Upstream's default optical-frame pose of cameras on the vehicle (m, rad)."""


@dataclass(frozen=True)
class PinholeModel:
    """Intrinsics of a pinhole camera without distortion.

    Attributes:
        ncols, nrows: image size (px).
        cx, cy: principal point (px). fx, fy: focal lengths (px).
    """

    ncols: int
    nrows: int
    cx: float
    cy: float
    fx: float
    fy: float

    @property
    def K(self) -> np.ndarray:
        """3×3 intrinsic matrix [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] (float64)."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def hfov(self) -> float:
        """Horizontal field of view (rad) for a centred principal point: 2·atan(ncols / (2 fx))."""
        return 2.0 * math.atan2(0.5 * self.ncols, self.fx)

    def __str__(self) -> str:
        return f"{self.ncols}×{self.nrows}"


def pose_of(rot: np.ndarray, pos: np.ndarray) -> tuple[float, float, float, float, float, float]:
    """(x, y, z, yaw, pitch, roll) (m, rad) of a frame given by its rotation (columns = axes) and origin."""
    return (float(pos[0]), float(pos[1]), float(pos[2]), *ypr_from_rotation(np.asarray(rot)))


class PinholeAccessors:
    """``width``, ``height`` (px) and ``fx``, ``fy``, ``cx``, ``cy`` (px) of ``self.intrinsics`` (a
    :class:`PinholeModel`): shared by the camera sensors and their observations."""

    if TYPE_CHECKING:  # read only here: observations store it, sensors compute it (a property)

        @property
        def intrinsics(self) -> PinholeModel: ...

    @property
    def width(self) -> int:
        """Image width (px)."""
        return self.intrinsics.ncols

    @property
    def height(self) -> int:
        """Image height (px)."""
        return self.intrinsics.nrows

    @property
    def fx(self) -> float:
        """Focal length along x (px)."""
        return self.intrinsics.fx

    @property
    def fy(self) -> float:
        """Focal length along y (px)."""
        return self.intrinsics.fy

    @property
    def cx(self) -> float:
        """Principal point column (px)."""
        return self.intrinsics.cx

    @property
    def cy(self) -> float:
        """Principal point row (px)."""
        return self.intrinsics.cy


@dataclass
class CameraImage(PinholeAccessors):
    """One colour image (the observation of a :class:`Camera`).

    Attributes:
        stamp: simulated time of the image (s).
        rgb: (H, W, 3) uint8 colour image, row 0 at the top, column 0 at the left.
        intrinsics: the camera's pinhole model (size and fx, fy, cx, cy in px).
        sensor_pose: (x, y, z, yaw, pitch, roll) of the optical frame (z forward, x right, y down) in the world at
            ``stamp`` (m, rad).
        frame: the sensor's name.
    """

    stamp: float
    rgb: np.ndarray
    intrinsics: PinholeModel
    sensor_pose: tuple[float, float, float, float, float, float]
    frame: str

def pinhole_params(prefix: str = "") -> tuple[Param, ...]:
    """The six intrinsic parameters with upstream's defaults (640×480, c = (320, 240), f = 500 px)."""
    return (
        count_param(f"{prefix}ncols", 640, "image width (px)", unit="px"),
        count_param(f"{prefix}nrows", 480, "image height (px)", unit="px"),
        Param(f"{prefix}cx", Kind.FLOAT, 320.0, "px", doc="principal point, column"),
        Param(f"{prefix}cy", Kind.FLOAT, 240.0, "px", doc="principal point, row"),
        Param(f"{prefix}fx", Kind.FLOAT, 500.0, "px", positive=True, doc="focal length along x"),
        Param(f"{prefix}fy", Kind.FLOAT, 500.0, "px", positive=True, doc="focal length along y"),
    )


def pinhole_from(sensor: Sensor, prefix: str = "") -> PinholeModel:
    """The :class:`PinholeModel` of the parameters written with ``prefix`` (``""``, ``"rgb_"``, ``"depth_"``)."""
    p = sensor.params
    return PinholeModel(int(p[f"{prefix}ncols"]), int(p[f"{prefix}nrows"]), float(p[f"{prefix}cx"]),
                        float(p[f"{prefix}cy"]), float(p[f"{prefix}fx"]), float(p[f"{prefix}fy"]))


def check_image_size(sensor: Sensor, ctx: ParseContext, prefix: str = "") -> None:
    """Error unless the image of the parameters written with ``prefix`` is at most :data:`MAX_IMAGE_SIDE` px on each
    side and within the memory budget (:mod:`mvsim_core.memory_budget`, :data:`PIXEL_BYTES` per pixel)."""
    cols, rows = f"{prefix}ncols", f"{prefix}nrows"
    w, h = int(sensor.params[cols]), int(sensor.params[rows])
    for name, v in ((cols, w), (rows, h)):
        if v > MAX_IMAGE_SIDE:
            raise ctx.error(sensor.where(name), f"<{name}> is {v} px; an image is at most {MAX_IMAGE_SIDE} px wide "
                                                f"and high (what every OpenGL 4 renderer can draw)")
    if over_budget(w * h, PIXEL_BYTES):
        raise ctx.error(sensor.where(cols, rows), budget_message(f"a {w} x {h} image", w * h, PIXEL_BYTES,
                                                                 f"use a smaller <{cols}> or <{rows}>"))


def check_clip(sensor: Sensor, ctx: ParseContext, lo: str, hi: str) -> None:
    """Error unless clip distance ``lo`` < ``hi``."""
    a, b = float(sensor.params[lo]), float(sensor.params[hi])
    if not a < b:
        raise ctx.error(sensor.where(lo, hi), f"<{lo}> ({a:g} m) must be smaller than <{hi}> ({b:g} m)")


class Camera(PinholeAccessors, Sensor):
    """RGB camera; class ``camera``, default names ``camera1``, ``camera2``, ...

    Parameters (upstream default, unit): ncols 640, nrows 480 (px); cx 320, cy 240, fx 500, fy 500 (px; note that
    cx/cy do not follow ncols/nrows: set them too when changing the size); clip_min 0.01 m, clip_max 1e4 m.
    Pose: ``pose_3d`` of the optical frame (default ``0 0 0.5 90 0 90``).
    """

    xml_class: ClassVar[str] = "camera"
    name_prefix: ClassVar[str] = "camera"
    DEFAULT_POSE: ClassVar[Pose3D] = CAMERA_DEFAULT_POSE
    COUNTS: ClassVar[tuple[str, ...]] = ("ncols", "nrows")
    PARAMS: ClassVar[tuple[Param, ...]] = (
        *pinhole_params(),
        Param("clip_min", Kind.FLOAT, 1e-2, "m", positive=True, doc="near clipping distance"),
        Param("clip_max", Kind.FLOAT, 1e4, "m", positive=True, doc="far clipping distance"),
    )

    simulated: ClassVar[bool] = True

    def outputs(self) -> tuple[Output, ...]:
        """A colour image (:attr:`OutputKind.IMAGE`) in the sensor frame."""
        return (self.output(OutputKind.IMAGE),)

    # ------------------------------------------------------------------ simulation
    @classmethod
    def sample_batch(cls, sensors: list[Sensor], ctx: SensorContext, t: float) -> list[CameraImage]:
        """Images of all ``sensors`` (cameras due at simulated time ``t``, s), rendered one after the other from the
        world's shared offscreen renderer (the scene is uploaded once per world; node poses once per call).

        Raises:
            RenderUnavailableError: no offscreen OpenGL context can be created (the message says what to install).
        """
        cams: list[Camera] = [s for s in sensors if isinstance(s, Camera)]
        if not cams:
            return []
        from mvsim_core.sensors.render.renderer import renderer_for

        renderer = renderer_for(ctx)
        renderer.update_nodes()
        rot, pos = ctx.sensor_poses(cams)
        out = []
        for i, s in enumerate(cams):
            k = s.intrinsics
            frame = renderer.render(rot[i], pos[i], k, float(s.params["clip_min"]), float(s.params["clip_max"]),
                                    rgb=True, depth=False)
            assert frame.rgb is not None  # asked for
            out.append(CameraImage(stamp=float(t), rgb=frame.rgb, intrinsics=k, sensor_pose=pose_of(rot[i], pos[i]),
                                   frame=s.name))
        return out

    def sample(self, ctx: SensorContext, t: float) -> CameraImage:
        """One image at simulated time ``t`` (s); see :meth:`sample_batch`."""
        return self.sample_batch([self], ctx, t)[0]

    # ------------------------------------------------------------------ description
    @property
    def intrinsics(self) -> PinholeModel:
        """Image size and pinhole intrinsics."""
        return pinhole_from(self)






    def details(self) -> str:
        return str(self.intrinsics)

    def _validate(self, ctx: ParseContext) -> None:
        check_clip(self, ctx, "clip_min", "clip_max")
        check_image_size(self, ctx)

"""``<sensor class="laser">``: a 2D scanning range finder (reference §1.12).

Rays lie in the sensor's x-y plane, counter-clockwise from −fov/2 to +fov/2 (MRPT's ``rightToLeft``), equally spaced
by fov/(nrays − 1); ray 0 is the rightmost. A ray that hits nothing reads ``max_range`` and is flagged invalid.
In 2D mode (default) rays are cast against occupancy grids and the Box2D bodies; with ``raytrace_3d`` they are
measured on a depth rendering of the 3D scene.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from mvsim_core.sensors.base import Pose3D, Sensor, count_param
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param


class Lidar2D(Sensor):
    """2D lidar; class ``laser``, default names ``laser1``, ``laser2``, ...

    Parameters (upstream default, stored unit):
        fov_degrees: 180° (stored in rad), in (0, 360°].
        nrays: 181 rays.
        range_std_noise: 0.01 m (Gaussian, added to each valid range).
        angle_std_noise_deg: 0.01° (stored in rad; used when casting against occupancy grids).
        max_range: 80 m (MRPT's default).
        bodies_visible: whether Box2D bodies (vehicles, blocks, walls) are seen in 2D mode.
        raytrace_3d: measure on the rendered 3D scene instead of 2D ray casting.
        ignore_parent_body: in 3D mode, hide the carrying vehicle.
        viz_*: how the GUI draws the scan.
    Pose: ``pose`` (x y yaw_deg) + ``height`` (default 0.05 m), or ``pose_3d``.
    """

    xml_class: ClassVar[str] = "laser"
    name_prefix: ClassVar[str] = "laser"
    POSE_TAGS: ClassVar[tuple[str, ...]] = ("pose", "pose_3d", "height")
    DEFAULT_POSE: ClassVar[Pose3D] = (0.0, 0.0, 0.05, 0.0, 0.0, 0.0)
    COUNTS: ClassVar[tuple[str, ...]] = ("nrays",)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("fov_degrees", Kind.ANGLE, math.pi, "rad", doc="angular aperture; written in degrees, in (0, 360]"),
        count_param("nrays", 181, "number of rays (≥ 1)"),
        Param("range_std_noise", Kind.FLOAT, 0.01, "m", min=0.0, doc="std. dev. of range noise"),
        Param("angle_std_noise_deg", Kind.ANGLE, math.radians(0.01), "rad", min=0.0,
              doc="std. dev. of ray-direction noise; written in degrees"),
        Param("max_range", Kind.FLOAT, 80.0, "m", positive=True, doc="range reported for rays that hit nothing"),
        Param("bodies_visible", Kind.BOOL, True, doc="see Box2D bodies in 2D mode"),
        Param("raytrace_3d", Kind.BOOL, False, doc="measure on the 3D scene instead of 2D ray casting"),
        Param("ignore_parent_body", Kind.BOOL, False, doc="hide the carrying vehicle (3D mode)"),
        Param("viz_pointSize", Kind.FLOAT, 3.0, "px", min=0.0),
        Param("viz_visiblePlane", Kind.BOOL, False),
        Param("viz_visibleLines", Kind.BOOL, True),
        Param("viz_visiblePoints", Kind.BOOL, False),
        Param("viz_pointsColor", Kind.COLOR, (0xFF, 0x00, 0x00, 0x80)),
        Param("viz_planeColor", Kind.COLOR, (0x00, 0x00, 0xFF, 0x10)),
    )

    # ------------------------------------------------------------------ description
    @property
    def nrays(self) -> int:
        """Number of rays."""
        return int(self.params["nrays"])

    @property
    def fov(self) -> float:
        """Angular aperture (rad)."""
        return float(self.params["fov_degrees"])

    @property
    def max_range(self) -> float:
        """Range of a ray that hits nothing (m)."""
        return float(self.params["max_range"])

    @property
    def range_std_noise(self) -> float:
        """Std. dev. of the range noise (m)."""
        return float(self.params["range_std_noise"])

    @property
    def angle_std_noise(self) -> float:
        """Std. dev. of the ray-direction noise (rad)."""
        return float(self.params["angle_std_noise_deg"])

    def angles(self) -> np.ndarray:
        """Ray directions in the sensor frame (rad, float64, shape (nrays,)), CCW from −fov/2 to +fov/2.

        With a single ray, that ray points straight ahead (0 rad).
        """
        n = self.nrays
        if n == 1:
            return np.zeros(1)
        return np.linspace(-0.5 * self.fov, 0.5 * self.fov, n)

    def details(self) -> str:
        return f"{self.nrays} rays, {math.degrees(self.fov):.4g}°"

    def _validate(self, ctx: ParseContext) -> None:
        fov = self.fov
        if not (0.0 < fov <= 2.0 * math.pi + 1e-9):
            raise ctx.error(self.where("fov_degrees"),
                            f"<fov_degrees> must be in (0, 360] degrees (got {math.degrees(fov):g})")

"""``<sensor class="lidar3d">``: a rotating multi-beam lidar (Velodyne, Ouster, Hesai-like; reference §1.12).

The sensor sweeps 360° around its z axis with ``horz_nrays`` samples per turn, and has ``vert_nrays`` beams
(rings) at fixed elevations: either the angles listed in ``vertical_ray_angles`` (degrees, any order) or
``vert_nrays`` angles evenly spread over ``vert_fov_degrees``, symmetric about the horizontal plane. Ring 0 is the
lowest beam. Returns closer than ``min_range`` or farther than ``max_range`` are dropped.

Presets shipped in ``definitions/``: ``velodyne-vlp16`` (16 beams over 30°), ``ouster-os1`` (128 beams over 22.5°
by default), ``helios-32-FOV-{26,31,70}`` (32 listed beams each). Their ``horz_nrays`` is computed from the spin rate
and the firing period, e.g. VLP-16 at 600 rpm: 0.1 s / 55.296 µs = 1808 samples per turn.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from mvsim_core.sensors.base import Sensor, count_param
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param


class Lidar3D(Sensor):
    """3D lidar; class ``lidar3d``; default names ``laser1``, ``laser2``, ... (upstream uses the 2D lidar prefix).

    Parameters (upstream default, stored unit):
        range_std_noise: 0.01 m. min_range: 0.01 m. max_range: 80 m.
        vert_fov_degrees: 30° (stored in rad), in (0, 180°]; ignored when vertical_ray_angles is given.
        vert_nrays: 16 beams. vertical_ray_angles: list of beam elevations in degrees (must count vert_nrays).
        horz_nrays: 180 samples per turn.
        horz_resolution_factor / vert_resolution_factor: 1.0 (oversampling of the depth renders).
        max_vert_relative_depth_to_interpolate: 0.30; max_horz_relative_depth_to_interpolate: 0.10 (relative depth
            jump above which neighbouring depth pixels are not interpolated).
        generate_intensity: true (intensity from the rendered colour).
        ignore_parent_body: hide the carrying vehicle. viz_pointSize: 3 px.
    Pose: ``pose_3d`` only (default: the vehicle origin).
    """

    xml_class: ClassVar[str] = "lidar3d"
    name_prefix: ClassVar[str] = "laser"
    COUNTS: ClassVar[tuple[str, ...]] = ("vert_nrays", "horz_nrays")
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("range_std_noise", Kind.FLOAT, 0.01, "m", min=0.0, doc="std. dev. of range noise"),
        Param("min_range", Kind.FLOAT, 0.01, "m", positive=True, doc="closer returns are dropped"),
        Param("max_range", Kind.FLOAT, 80.0, "m", positive=True, doc="farther returns are dropped"),
        Param("vert_fov_degrees", Kind.ANGLE, math.radians(30.0), "rad",
              doc="vertical aperture, symmetric about the horizon; written in degrees"),
        count_param("vert_nrays", 16, "number of beams (rings)"),
        Param("vertical_ray_angles", Kind.FLOATS, (), "deg",
              doc="beam elevations in degrees (positive up); overrides vert_fov_degrees"),
        count_param("horz_nrays", 180, "samples per 360° turn"),
        Param("horz_resolution_factor", Kind.FLOAT, 1.0, positive=True),
        Param("vert_resolution_factor", Kind.FLOAT, 1.0, positive=True),
        Param("max_vert_relative_depth_to_interpolate", Kind.FLOAT, 0.30, min=0.0),
        Param("max_horz_relative_depth_to_interpolate", Kind.FLOAT, 0.10, min=0.0),
        Param("generate_intensity", Kind.BOOL, True),
        Param("ignore_parent_body", Kind.BOOL, False),
        Param("viz_pointSize", Kind.FLOAT, 3.0, "px", min=0.0),
    )

    # ------------------------------------------------------------------ description
    @property
    def vert_nrays(self) -> int:
        """Number of beams (rings)."""
        return int(self.params["vert_nrays"])

    @property
    def horz_nrays(self) -> int:
        """Samples per 360° turn."""
        return int(self.params["horz_nrays"])

    @property
    def vert_fov(self) -> float:
        """Vertical aperture (rad): from the listed angles when given, else ``vert_fov_degrees``."""
        a = self.params["vertical_ray_angles"]
        if a:
            return math.radians(max(a) - min(a))
        return float(self.params["vert_fov_degrees"])

    @property
    def min_range(self) -> float:
        return float(self.params["min_range"])

    @property
    def max_range(self) -> float:
        return float(self.params["max_range"])

    def vertical_angles(self) -> np.ndarray:
        """Beam elevations (rad, float64, shape (vert_nrays,)), ascending: index = ring, 0 = lowest beam."""
        listed = self.params["vertical_ray_angles"]
        if listed:
            return np.radians(np.sort(np.asarray(listed, dtype=np.float64)))
        n = self.vert_nrays
        if n == 1:
            return np.zeros(1)
        half = 0.5 * float(self.params["vert_fov_degrees"])
        return np.linspace(-half, half, n)

    def details(self) -> str:
        return f"{self.vert_nrays}×{self.horz_nrays} rays, {math.degrees(self.vert_fov):.4g}° vertical"

    def _validate(self, ctx: ParseContext) -> None:
        p = self.params
        vfov = float(p["vert_fov_degrees"])
        if not (0.0 < vfov <= math.pi + 1e-9):
            raise ctx.error(self.where("vert_fov_degrees"),
                            f"<vert_fov_degrees> must be in (0, 180] degrees (got {math.degrees(vfov):g})")
        if not self.min_range < self.max_range:
            raise ctx.error(self.where("min_range", "max_range"),
                            f"<min_range> ({self.min_range:g} m) must be smaller than <max_range> "
                            f"({self.max_range:g} m)")
        listed = p["vertical_ray_angles"]
        if not listed:
            if "vertical_ray_angles" in p.where:
                raise ctx.error(p.where["vertical_ray_angles"],
                                "<vertical_ray_angles> is empty; list the beam elevations in degrees, "
                                "e.g. '-15 -5 5 15', or remove the tag")
            return
        at = p.where["vertical_ray_angles"]
        bad = [a for a in listed if not -90.0 <= a <= 90.0]
        if bad:
            raise ctx.error(at, f"<vertical_ray_angles> must be within [-90, 90] degrees (got {bad[0]:g})")
        if len(set(listed)) != len(listed):
            dup = next(a for a in listed if listed.count(a) > 1)
            raise ctx.error(at, f"<vertical_ray_angles> lists {dup:g} twice; each beam needs its own elevation")
        if "vert_nrays" in p.where:
            if p["vert_nrays"] != len(listed):
                raise ctx.error(at, f"<vertical_ray_angles> lists {len(listed)} angles but <vert_nrays> is "
                                    f"{p['vert_nrays']} (line {p.where['vert_nrays'].line}); they must match")
        else:
            p["vert_nrays"] = len(listed)

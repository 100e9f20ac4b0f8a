"""``<sensor class="lidar3d">``: a rotating multi-beam lidar (Velodyne, Ouster, Hesai-like; reference §1.12).

The sensor sweeps 360° around its z axis with ``horz_nrays`` samples per turn, and has ``vert_nrays`` beams
(rings) at fixed elevations: either the angles listed in ``vertical_ray_angles`` (degrees, any order) or
``vert_nrays`` angles evenly spread over ``vert_fov_degrees``, symmetric about the horizontal plane. Ring 0 is the
lowest beam. Returns closer than ``min_range`` or farther than ``max_range`` are dropped.

Presets shipped in ``definitions/``: ``velodyne-vlp16`` (16 beams over 30°), ``ouster-os1`` (128 beams over 22.5°
by default), ``helios-32-FOV-{26,31,70}`` (32 listed beams each). Their ``horz_nrays`` is computed from the spin rate
and the firing period, e.g. VLP-16 at 600 rpm: 0.1 s / 55.296 µs = 1808 samples per turn.

Simulation (:meth:`Lidar3D.sample_batch`) — analytic CPU ray casting, no rendering: all rays of all 3D lidars due at a
step are cast in one compiled call on the world's :class:`~mvsim_core.sensors.raycast.rays3d.RaycastScene3D` (what is
seen: horizontal planes, the implicit floor of worlds without ground elements, elevation maps, blocks and walls,
vertical planes with their doors and windows, other vehicles, occupancy-grid cells; see that module).

* Beams: ``horz_nrays`` azimuths per turn, counter-clockwise from −180° (behind the sensor), step 360°/horz_nrays,
  times the ``vert_nrays`` elevations of :meth:`Lidar3D.vertical_angles`. Ray ``k · vert_nrays + ring`` is azimuth
  ``k`` and beam ``ring``; its direction in the sensor frame is (cos e cos a, cos e sin a, sin e). The sensor frame is
  the vehicle pose ⊕ ``pose_3d`` (pitch and roll of the vehicle on the terrain included).
* Each ray is cast exactly once, at its nominal direction: the depth-render settings of upstream
  (``horz_resolution_factor``, ``vert_resolution_factor``, ``max_*_relative_depth_to_interpolate``) have no effect
  (there is no depth image to oversample or interpolate, hence none of upstream's "triangular" artefacts, issue #34).
* Noise, from the lidar's own generator (:attr:`~mvsim_core.sensors.base.Sensor.rng`): one N(0, range_std_noise²)
  draw per ray (hit or not, so the stream does not depend on the scene), in ray order, added to the range along the
  ray. A return is kept when
  min_range ≤ noisy range ≤ max_range (a hit is looked for up to max_range only).
* Intensity (``generate_intensity``): the Rec. 709 luma of the colour of the surface hit, in [0, 1] (a block's,
  chassis', wheel's or element's ``color``, an elevation map's ``mesh_color``; 1.0 for the implicit floor and
  occupancy-grid cells). Textures and the angle of incidence are ignored. ``generate_intensity=false``: all 0.
* The sensor's own vehicle (chassis and wheels) is never seen, whatever ``ignore_parent_body`` says — as the 2D lidar:
  a sensor mounted inside or on its own body would only see that body from inside.

Speed (``benchmarks/bench_sensors.py --part lidar3d``, one core of this project's 2-core VM): a VLP-16 sweep (16 ×
1800 rays) over a 100 m × 100 m elevation map with 200 blocks and 10 robots takes about 7–8 ms, sensor path included
(≈ 125–130 sweeps/s, 3.6–3.9 M rays/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from mvsim_core.geometry.rotations import rotation, ypr_from_rotations
from mvsim_core.sensors.base import Sensor, count_param, own_normals
from mvsim_core.sensors.outputs import Output, OutputKind
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

if TYPE_CHECKING:
    from mvsim_core.sensors.raycast.rays3d import RaycastScene3D
    from mvsim_core.sensors.scheduler import SensorContext


@dataclass
class PointCloud3D:
    """One sweep of a 3D lidar (the observation of a :class:`Lidar3D`): its valid returns only.

    Attributes:
        stamp: simulated time of the sweep (s).
        points: (N, 3) float32 x, y, z of the returns in the sensor frame (m; x forward, z up).
        intensity: (N,) float32 in [0, 1] (see the module docstring; 0 when ``generate_intensity`` is false).
        ring: (N,) uint16 beam of each return, 0 = lowest elevation.
        azimuth_index: (N,) uint32 azimuth step k of each return: azimuth = −π + 2π·k / horz_nrays (rad).
        ranges: (N,) float32 distance of each return (m), noise included.
        sensor_pose: (x, y, z, yaw, pitch, roll) of the sensor in the world at ``stamp`` (m, rad).
        vertical_angles: (vert_nrays,) float32 elevation of each ring (rad).
        horz_nrays: azimuth steps per turn. min_range, max_range: the sensor's limits (m). frame: the sensor's name.
    """

    stamp: float
    points: np.ndarray
    intensity: np.ndarray
    ring: np.ndarray
    azimuth_index: np.ndarray
    ranges: np.ndarray
    sensor_pose: tuple[float, float, float, float, float, float]
    vertical_angles: np.ndarray
    horz_nrays: int
    min_range: float
    max_range: float
    frame: str

    def __len__(self) -> int:
        return len(self.points)

    @property
    def azimuths(self) -> np.ndarray:
        """(N,) float64 azimuth of each return in the sensor frame (rad), CCW from +x, in [−π, π)."""
        return -math.pi + (2.0 * math.pi / self.horz_nrays) * self.azimuth_index.astype(np.float64)

    def world_points(self) -> np.ndarray:
        """(N, 3) float64 returns in the world frame (m)."""
        x, y, z, yaw, pitch, roll = self.sensor_pose
        return self.points.astype(np.float64) @ rotation(yaw, pitch, roll).T + np.array([x, y, z])


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
        ignore_parent_body: hide the carrying vehicle (always hidden here; see the module docstring).
        viz_pointSize: 3 px.
    Pose: ``pose_3d`` only (default: the vehicle origin).
    Observation: :class:`PointCloud3D` (:meth:`sample_batch`); the resolution factors and interpolation thresholds
    are read and kept but have no effect on the exact ray caster.
    """

    xml_class: ClassVar[str] = "lidar3d"
    _beam_cache: tuple[np.ndarray, np.ndarray] | None = None
    """(ray directions, float32 elevations) of :meth:`_beam_tables`, None until first asked (per sensor)."""
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

    simulated: ClassVar[bool] = True

    def outputs(self) -> tuple[Output, ...]:
        """A point cloud (:attr:`OutputKind.POINT_CLOUD`) in the sensor frame."""
        return (self.output(OutputKind.POINT_CLOUD),)
    RAY_BYTES: ClassVar[int] = 128
    """Per ray: its direction (3 float64), distance, intensity, noise, the occupancy-grid pass (7 float64) and the
    returned point, ring, azimuth and range."""

    # ------------------------------------------------------------------ simulation
    @classmethod
    def sample_batch(cls, sensors: list[Sensor], ctx: SensorContext, t: float) -> list[PointCloud3D]:
        """Sweeps of all ``sensors`` (3D lidars due at simulated time ``t``, s), cast together in one scene call.

        Range noise is drawn by each lidar from its own generator (:attr:`~mvsim_core.sensors.base.Sensor.rng`), in
        ray order, when it has noise; see the module docstring for the model.

        Args:
            sensors: the due :class:`Lidar3D` sensors.
            ctx: the :class:`~mvsim_core.sensors.scheduler.SensorContext` (world, physics, seeded generator).
            t: simulated time (s), the sweeps' stamp.
        """
        from mvsim_core.sensors.raycast.cloud import assemble_cloud

        lidars: list[Lidar3D] = [s for s in sensors if isinstance(s, Lidar3D)]
        if not lidars:
            return []
        scene = scene_3d(ctx)
        rot, pos = ctx.sensor_poses(lidars)
        dirs, bounds = _ray_table(scene, lidars)
        reach = np.array([s.max_range for s in lidars], dtype=np.float64)
        owner = np.array([ctx.vehicle_index(s) for s in lidars], dtype=np.int64)
        dist, inten = scene.cast(pos, rot, dirs, bounds, reach, owner)
        sigma = [float(s.params["range_std_noise"]) for s in lidars]
        noise = _NO_NOISE
        if any(sg > 0.0 for sg in sigma):
            spans = [(int(bounds[i]), int(bounds[i + 1])) for i in range(len(lidars))]
            noise = own_normals(lidars, spans, len(dist), sigma)
        yaw, pitch, roll = ypr_from_rotations(rot)
        out: list[PointCloud3D] = []
        for i, s in enumerate(lidars):
            a, b = int(bounds[i]), int(bounds[i + 1])
            pts, inten_k, ring, az, rng = assemble_cloud(dist, inten, dirs, noise, a, b, sigma[i], s.min_range,
                                                         s.max_range, s.vert_nrays,
                                                         bool(s.params["generate_intensity"]))
            pose = (float(pos[i, 0]), float(pos[i, 1]), float(pos[i, 2]), float(yaw[i]), float(pitch[i]),
                    float(roll[i]))
            out.append(PointCloud3D(stamp=float(t), points=pts, intensity=inten_k, ring=ring, azimuth_index=az,
                                    ranges=rng, sensor_pose=pose, vertical_angles=s._beam_tables()[1].copy(),
                                    horz_nrays=s.horz_nrays, min_range=s.min_range, max_range=s.max_range,
                                    frame=s.name))
        return out

    def sample(self, ctx: SensorContext, t: float) -> PointCloud3D:
        """One sweep at simulated time ``t`` (s); see :meth:`sample_batch`."""
        return self.sample_batch([self], ctx, t)[0]

    def ray_directions(self) -> np.ndarray:
        """(horz_nrays · vert_nrays, 3) float64 unit ray directions in the sensor frame: row k · vert_nrays + ring
        is azimuth −π + 2π·k / horz_nrays and elevation ``vertical_angles()[ring]``."""
        return self._beam_tables()[0]

    def _beam_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """(ray directions, float32 elevations), computed once (the parameters do not change after loading)."""
        cached = self._beam_cache
        if cached is None:
            el = self.vertical_angles()
            n = self.horz_nrays
            az = -math.pi + (2.0 * math.pi / n) * np.arange(n)
            ce, se = np.cos(el)[None, :], np.sin(el)[None, :]
            d = np.empty((n, len(el), 3))
            d[:, :, 0] = np.cos(az)[:, None] * ce
            d[:, :, 1] = np.sin(az)[:, None] * ce
            d[:, :, 2] = se
            cached = self._beam_cache = (np.ascontiguousarray(d.reshape(-1, 3)), el.astype(np.float32))
        return cached

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
        self._validate_beams(ctx)
        self._validate_size(ctx)

    def _validate_beams(self, ctx: ParseContext) -> None:
        """Apertures, range limits and the listed beam elevations (which then set ``vert_nrays``)."""
        p = self.params
        vfov = float(p["vert_fov_degrees"])
        if not (0.0 < vfov <= math.pi + 1e-9):
            raise ctx.error(self.where("vert_fov_degrees"),
                            f"<vert_fov_degrees> must be in (0, 180] degrees (got {math.degrees(vfov):g})")
        self._check_range_limits(ctx)
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

    def _validate_size(self, ctx: ParseContext) -> None:
        """Rays per sweep within the memory budget."""
        n = self.vert_nrays * self.horz_nrays
        names = ("horz_nrays", "vert_nrays", "vertical_ray_angles")
        if self.vert_nrays > self.horz_nrays:  # point at the larger factor
            names = names[1:] + names[:1]
        self._check_ray_count(ctx, n, f"a 3D lidar of {self.vert_nrays} x {self.horz_nrays} rays",
                              "use a smaller <horz_nrays> or <vert_nrays>", *names)


# ---------------------------------------------------------------------------------------------------- helpers
_NO_NOISE = np.zeros(0)


def scene_3d(ctx: SensorContext) -> RaycastScene3D:
    """The :class:`~mvsim_core.sensors.raycast.rays3d.RaycastScene3D` of a sensor context, built on first use and
    kept on the context (occupancy grids shared with the 2D scene when the world has any)."""
    scene = ctx.scene_3d
    if scene is None:
        from mvsim_core.elements.occupancy_grid import OccupancyGrid
        from mvsim_core.sensors.raycast.rays3d import RaycastScene3D

        grids = None
        if any(isinstance(el, OccupancyGrid) for el in ctx.world.elements):
            grids = ctx.raycast_scene.grids
        scene = ctx.scene_3d = RaycastScene3D.from_world(ctx.world, ctx.physics, grids=grids)
    return scene


def _ray_table(scene: RaycastScene3D, lidars: list[Lidar3D]) -> tuple[np.ndarray, np.ndarray]:
    """The sensor-frame ray directions of ``lidars`` concatenated, and their (S + 1,) row offsets; cached on the
    scene per list of sensors (the same lidars are usually due together)."""
    cache = scene.ray_tables
    key = tuple(id(s) for s in lidars)
    hit = cache.get(key)
    if hit is None:
        tables = [s.ray_directions() for s in lidars]
        bounds = np.concatenate([[0], np.cumsum([len(d) for d in tables])]).astype(np.int64)
        hit = cache[key] = (np.ascontiguousarray(np.vstack(tables)), bounds)
    return hit

"""``<sensor class="laser">``: a 2D scanning range finder (reference §1.12).

Rays lie in the sensor's x-y plane, counter-clockwise from −fov/2 to +fov/2 (MRPT's ``rightToLeft``), equally spaced
by fov/(nrays − 1); ray 0 is the rightmost. A ray that hits nothing reads ``max_range`` and is flagged invalid.

Simulation (:meth:`Lidar2D.sample_batch`): all rays of all lidars due at a step are cast in one call on the world's
:class:`~mvsim_core.sensors.raycast.scene.RaycastScene`:

* pose: vehicle pose ⊕ sensor pose; rays are horizontal, from the sensor's world (x, y) with its world yaw (the
  projection of its x axis; pitch and roll are ignored, as upstream's 2D mode does), at the sensor's world z;
* solids: occupancy grids (cells with occupancy > 0.5) and the outlines of blocks, walls, vertical planes and other
  vehicles (chassis + wheels). The sensor's own vehicle is never seen (whatever ``ignore_parent_body`` says: a 2D
  outline cannot be seen "from outside" by a sensor mounted on it);
* ``bodies_visible=false``: only the occupancy grids are seen — no blocks, walls, vertical planes or vehicles — as
  upstream, whose flag makes its Box2D ray cast ignore every fixture;
* ``raytrace_3d=true``: instead of upstream's depth rendering, a solid is hit only when the ray's height lies within
  the solid's vertical extent (so a ray passes over a low block); occupied grid cells span z 0 .. 2 m, as for the 3D
  sensors (:data:`~mvsim_core.elements.occupancy_grid.CELL_HEIGHT`); blocks and
  vehicle chassis whose ``<visual>`` models load are seen as the models' triangles (at the ray's height), not as
  their outlines (:mod:`~mvsim_core.sensors.raycast.scene`);
* noise, from the lidar's own generator (:attr:`~mvsim_core.sensors.base.Sensor.rng`): each ray's direction is
  perturbed by N(0, angle_std_noise²) before the cast (the reported ``angles`` stay nominal); each valid range gets
  N(0, range_std_noise²); ranges are then clipped to [0, max_range]. Misses read ``max_range`` with ``valid`` False
  and no noise;
* ``min_range`` (ours; upstream's 2D scanner has none, its 3D lidar has the same parameter): a reading below it is
  flagged invalid and keeps its (short) value, so that consumers can tell "too close" (ROS: −inf, REP 117) from
  "nothing within reach" (a miss, ``max_range``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from mvsim_core.geometry.rotations import ypr_from_rotations
from mvsim_core.sensors.base import Pose3D, Sensor, count_param, own_normals
from mvsim_core.sensors.outputs import Output, OutputKind
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

if TYPE_CHECKING:
    from mvsim_core.sensors.scheduler import SensorContext

_NO_NOISE = np.zeros(0)
"""Empty normals / sigmas: no range noise in a batch."""
_NO_NEAR = np.zeros(0, dtype=np.float32)
"""Empty minimum ranges: none in a batch."""


@dataclass
class LaserScan:
    """One 2D scan (the observation of a :class:`Lidar2D`).

    Attributes:
        stamp: simulated time of the scan (s).
        ranges: (n,) float32 distances (m) in [0, max_range]; ``max_range`` where nothing was hit.
        valid: (n,) bool, True where the ray hit something at ``min_range`` or farther.
        angles: (n,) float32 ray directions in the sensor frame (rad), CCW from −fov/2 to +fov/2 (nominal, without
            angle noise).
        sensor_pose: (x, y, z, yaw, pitch, roll) of the sensor in the world at ``stamp`` (m, rad).
        max_range: the sensor's reach (m).
        frame: the sensor's name.
        min_range: the shortest valid reading (m); invalid readings below it were too close to measure.
    """

    stamp: float
    ranges: np.ndarray
    valid: np.ndarray
    angles: np.ndarray
    sensor_pose: tuple[float, float, float, float, float, float]
    max_range: float
    frame: str
    min_range: float = 0.0

    @property
    def angle_min(self) -> float:
        """Direction of ray 0 in the sensor frame (rad)."""
        return float(self.angles[0])

    @property
    def angle_max(self) -> float:
        """Direction of the last ray in the sensor frame (rad)."""
        return float(self.angles[-1])

    @property
    def angle_increment(self) -> float:
        """Angle between consecutive rays (rad; 0 for a single ray)."""
        n = len(self.angles)
        return (self.angle_max - self.angle_min) / (n - 1) if n > 1 else 0.0

    def points(self) -> np.ndarray:
        """(k, 2) float64 x, y (m) of the k valid returns, in the sensor frame."""
        a = self.angles[self.valid].astype(np.float64)
        r = self.ranges[self.valid].astype(np.float64)
        return np.column_stack([r * np.cos(a), r * np.sin(a)])


class Lidar2D(Sensor):
    """2D lidar; class ``laser``, default names ``laser1``, ``laser2``, ...

    Parameters (upstream default, stored unit):
        fov_degrees: 180° (stored in rad), in (0, 360°].
        nrays: 181 rays.
        range_std_noise: 0.01 m (Gaussian, added to each valid range).
        angle_std_noise_deg: 0.01° (stored in rad; Gaussian, added to each ray's direction before casting).
        max_range: 80 m (MRPT's default).
        min_range: 0.01 m (ours, as the 3D lidar's default): closer readings are invalid.
        bodies_visible: whether bodies (vehicles, blocks, walls, vertical planes) are seen; false: grids only.
        raytrace_3d: honour the solids' heights (a ray passes over what is lower than the sensor).
        ignore_parent_body: hide the carrying vehicle (always hidden here; see the module docstring).
        viz_*: how the GUI draws the scan.
    Pose: ``pose`` (x y yaw_deg) + ``height`` (default 0.05 m), or ``pose_3d``.
    """

    xml_class: ClassVar[str] = "laser"
    _angles_cache: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    """(angles, float32 angles, cosines, sines) of :meth:`_nominal_angles`, None until first asked (per sensor)."""
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
        Param("min_range", Kind.FLOAT, 0.01, "m", min=0.0, doc="closer readings are invalid (too close to measure)"),
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

    simulated: ClassVar[bool] = True

    def outputs(self) -> tuple[Output, ...]:
        """A planar scan (:attr:`OutputKind.SCAN`) in the sensor frame."""
        return (self.output(OutputKind.SCAN),)
    RAY_BYTES: ClassVar[int] = 192
    """Per ray: ~14 float64 arrays (angles, their cosines and sines, reach, noise, directions, distances) and a few
    smaller ones, kept per sensor list or made at each scan."""

    # ------------------------------------------------------------------ simulation
    @classmethod
    def sample_batch(cls, sensors: list[Sensor], ctx: SensorContext, t: float) -> list[LaserScan]:
        """Scans of all ``sensors`` (lidars due at simulated time ``t``, s), cast together in one scene call.

        Each lidar draws its noise from its own generator (:attr:`~mvsim_core.sensors.base.Sensor.rng`): first the
        ray-direction noise (when it has angle noise), then the range noise (when it has range noise).

        Args:
            sensors: the due :class:`Lidar2D` sensors.
            ctx: the :class:`~mvsim_core.sensors.scheduler.SensorContext` (scene, poses, seeded generator).
            t: simulated time (s), the scans' stamp.
        """
        lidars: list[Lidar2D] = [s for s in sensors if isinstance(s, Lidar2D)]
        if not lidars:
            return []
        from mvsim_core.sensors.raycast.directions import ray_origins, rotate_directions
        from mvsim_core.sensors.raycast.scan_ranges import finish_ranges

        c = ctx.constants("lidar2d", lidars, lambda ls: _batch_constants(ls, ctx))
        n = c.n
        rot, pos = ctx.sensor_poses(lidars)
        yaw, pitch, roll = ypr_from_rotations(rot)
        noise = _NO_NOISE
        if c.sigma_angle is not None:
            noise = own_normals(lidars, c.spans, n, c.angle_sigmas) * c.sigma_angle
        dx, dy, ox, oy, h = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        rotate_directions(c.base_cos, c.base_sin, c.ray_sensor, np.cos(yaw), np.sin(yaw), noise, dx, dy)
        ray_origins(pos, c.ray_sensor, ox, oy, h)
        scene = ctx.raycast_scene
        if c.any_3d and scene.has_meshes and scene.scene_3d is None:  # share the 3D lidars' scene (its meshes)
            from mvsim_core.sensors.lidar3d import scene_3d

            scene.scene_3d = scene_3d(ctx)
        dist = c.reach.copy()
        scene.cast_rays(ox, oy, dx, dy, h, c.owner, c.visible, c.trace_3d, c.any_visible, dist)
        ranges, valid = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.bool_)
        normals, sigma = _NO_NOISE, _NO_NOISE
        if c.sigma_range is not None:
            normals, sigma = own_normals(lidars, c.spans, n, c.range_sigmas), c.sigma_range
        finish_ranges(dist, c.reach, normals, sigma, _NO_NEAR if c.near is None else c.near, ranges, valid)
        stamp = float(t)
        # (Python floats of the float64 poses and angles, as float() gives them)
        poses = zip(pos.tolist(), yaw.tolist(), pitch.tolist(), roll.tolist(), strict=True)
        return [LaserScan(stamp, ranges[a:b], valid[a:b], a32, (p[0], p[1], p[2], y, pi, r), max_range, name, min_range)
                for (a, b, a32, max_range, name, min_range), (p, y, pi, r) in zip(c.scans, poses, strict=True)]

    def sample(self, ctx: SensorContext, t: float) -> LaserScan:
        """One scan at simulated time ``t`` (s); see :meth:`sample_batch`."""
        return self.sample_batch([self], ctx, t)[0]

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
    def min_range(self) -> float:
        """Shortest valid reading (m)."""
        return float(self.params["min_range"])

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

    def _nominal_angles(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`angles` as float64 and float32, and their cosines and sines, computed once (the parameters do not
        change after loading)."""
        cached = self._angles_cache
        if cached is None:
            a = self.angles()
            a32 = a.astype(np.float32)
            a32.flags.writeable = False  # shared by every scan of this sensor
            cached = self._angles_cache = (a, a32, np.cos(a), np.sin(a))
        return cached

    def details(self) -> str:
        return f"{self.nrays} rays, {math.degrees(self.fov):.4g}°"

    def _validate(self, ctx: ParseContext) -> None:
        fov = self.fov
        if not (0.0 < fov <= 2.0 * math.pi + 1e-9):
            raise ctx.error(self.where("fov_degrees"),
                            f"<fov_degrees> must be in (0, 360] degrees (got {math.degrees(fov):g})")
        self._check_range_limits(ctx)
        self._check_ray_count(ctx, self.nrays, f"a 2D lidar of {self.nrays} rays", "use a smaller <nrays>", "nrays")


@dataclass
class _BatchConstants:
    """Per-ray arrays of a list of lidars that only depend on their parameters (built once per list).

    Attributes:
        n: total rays. ray_sensor: (n,) lidar of each ray.
        base_cos, base_sin: (n,) unit vectors of the nominal ray angles (sensor frame).
        reach: (n,) max range (m). owner: (n,) vehicle row that carries the lidar (−1: none).
        visible: (n,) bodies_visible. any_visible: some lidar sees bodies. trace_3d: (n,) raytrace_3d. any_3d: some
            lidar has raytrace_3d.
        sigma_angle, sigma_range: (n,) noise std. devs. (rad, m), or None where no lidar of the list has that noise.
        near: (n,) float32 min_range (m), or None when no lidar of the list has one.
        scans: per lidar, what its scans carry besides the readings: its rays' slice (start, stop; Python ints), nominal
            float32 angles, max range, name, min range.
        spans: per lidar, its rays' slice. angle_sigmas, range_sigmas: per lidar, its noise std. devs. (rad, m).
    """

    n: int
    ray_sensor: np.ndarray
    base_cos: np.ndarray
    base_sin: np.ndarray
    reach: np.ndarray
    owner: np.ndarray
    visible: np.ndarray
    any_visible: bool
    trace_3d: np.ndarray
    any_3d: bool
    sigma_angle: np.ndarray | None
    sigma_range: np.ndarray | None
    near: np.ndarray | None
    scans: list[tuple[int, int, np.ndarray, float, str, float]]
    spans: list[tuple[int, int]]
    angle_sigmas: list[float]
    range_sigmas: list[float]


def _batch_constants(lidars: list[Lidar2D], ctx: SensorContext) -> _BatchConstants:
    """The :class:`_BatchConstants` of ``lidars`` (``ctx``: the sensor context, for the vehicle rows)."""
    counts = np.array([s.nrays for s in lidars], dtype=np.int64)

    def per_ray(values: list[Any], dtype: Any = np.float64) -> np.ndarray:
        return np.repeat(np.array(values, dtype=dtype), counts)

    sigma_a = [s.angle_std_noise for s in lidars]
    sigma_r = [s.range_std_noise for s in lidars]
    near = [s.min_range for s in lidars]
    base = [s._nominal_angles() for s in lidars]
    edges = [0, *np.cumsum(counts).tolist()]
    return _BatchConstants(
        n=int(counts.sum()),
        ray_sensor=np.repeat(np.arange(len(lidars)), counts),
        base_cos=np.concatenate([b[2] for b in base]), base_sin=np.concatenate([b[3] for b in base]),
        reach=per_ray([s.max_range for s in lidars]),
        owner=per_ray([ctx.vehicle_index(s) for s in lidars], np.int64),
        visible=per_ray([bool(s.params["bodies_visible"]) for s in lidars], np.bool_),
        any_visible=any(bool(s.params["bodies_visible"]) for s in lidars),
        trace_3d=per_ray([bool(s.params["raytrace_3d"]) for s in lidars], np.bool_),
        any_3d=any(bool(s.params["raytrace_3d"]) for s in lidars),
        sigma_angle=per_ray(sigma_a) if any(v > 0.0 for v in sigma_a) else None,
        sigma_range=per_ray(sigma_r) if any(v > 0.0 for v in sigma_r) else None,
        near=per_ray(near, np.float32) if any(v > 0.0 for v in near) else None,
        scans=[(edges[i], edges[i + 1], b[1], s.max_range, s.name, s.min_range)
               for i, (s, b) in enumerate(zip(lidars, base, strict=True))],
        spans=[(edges[i], edges[i + 1]) for i in range(len(lidars))], angle_sigmas=sigma_a, range_sigmas=sigma_r)

"""When sensors fire, and the context they sample from (reference §1.12 "Sampling").

A sensor fires in the post-step of the first physics step whose end time t satisfies t ≥ last + period − 1e-6 (last =
0 at start, so the first sample is at t ≥ period). All sensors due at a step are handed to their class together
(:meth:`Sensor.sample_batch`), so a class can cast all its rays in one kernel call.

Demand (:mod:`mvsim_core.sensors.demand`): a due sensor that is not enabled, or that nobody wants in a world that
samples on demand, is skipped — its due time passes (:meth:`Sensor.skipped`) and the next one is a period later, so
it keeps its phase. Each sensor gets its own generator (:meth:`WorldRandom.stream
<mvsim_core.rng.WorldRandom.stream>`) when the scheduler is made, unless it has one.

Frames: :meth:`SensorContext.sensor_pose` composes the vehicle pose (world frame, x y z yaw pitch roll) with the
sensor's pose on the vehicle; standalone sensors are posed in the world frame directly.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from mvsim_core.dynamics.state_arrays import restore_arrays
from mvsim_core.geometry.rotation_kernels import rotation_entries
from mvsim_core.geometry.rotations import compose_rt, rotations
from mvsim_core.jit import njit
from mvsim_core.sensors import demand

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics
    from mvsim_core.sensors.base import Sensor
    from mvsim_core.sensors.raycast.rays3d import RaycastScene3D
    from mvsim_core.sensors.raycast.scene import RaycastScene
    from mvsim_core.sensors.render.renderer import SceneRenderer
    from mvsim_core.world_model import WorldModel

S = TypeVar("S", bound="Sensor")  # a sensor class, for lists of sensors of one class
T = TypeVar("T")

SAMPLE_EPS = 1e-6  # s: tolerance of the due test, as upstream
MAX_CONSTANTS = 64  # cached sensor-batch constants (SensorContext.constants) before the cache starts over


@njit(cache=True)
def host_poses(state: np.ndarray, z: np.ndarray, pitch: np.ndarray, roll: np.ndarray, rows: np.ndarray,
               host: np.ndarray, rot: np.ndarray) -> None:
    """The poses of the vehicles that carry n sensors: ``host[i]`` = (x, y, z, yaw, pitch, roll) (m, rad, world frame)
    of physics row ``rows[i]`` (all zeros for a row < 0: a standalone sensor, placed in the world frame) and
    ``rot[i]`` its rotation (3, 3), the floats of :func:`~mvsim_core.geometry.rotations.rotations` (same
    expressions, same cosines).

    Args:
        state: (V, ≥3) the physics' x, y (m), yaw (rad) columns. z, pitch, roll: (V,) m, rad.
        rows: (n,) int64 vehicle rows, −1 for none. host: (n, 6) out. rot: (n, 3, 3) out.
    """
    for i in range(rows.shape[0]):
        k = rows[i]
        if k < 0:
            host[i, :] = 0.0
        else:
            host[i, 0] = state[k, 0]
            host[i, 1] = state[k, 1]
            host[i, 2] = z[k]
            host[i, 3] = state[k, 2]
            host[i, 4] = pitch[k]
            host[i, 5] = roll[k]
        e = rotation_entries(host[i, 3], host[i, 4], host[i, 5])
        for j in range(9):
            rot[i, j // 3, j % 3] = e[j]


class SensorContext:
    """What a sensor may read while sampling: the world, its physics state and the seeded generator.

    Attributes:
        world: the world (:class:`~mvsim_core.world_model.WorldModel`). physics: its Physics. rng: the world's
            :class:`~mvsim_core.rng.WorldRandom`. dt: the physics timestep (s). raycast_scene: the ray-castable
            geometry (lazy).
        scene_3d: the 3D lidars' :class:`~mvsim_core.sensors.raycast.rays3d.RaycastScene3D`, None until
            :func:`mvsim_core.sensors.lidar3d.scene_3d` builds it on first use.
        renderer: the cameras' :class:`~mvsim_core.sensors.render.renderer.SceneRenderer`, None until
            :func:`mvsim_core.sensors.render.renderer.renderer_for` builds it on first use.

    The attributes are slots: nothing can be attached to a context from outside.
    """

    __slots__ = ("world", "physics", "rng", "dt", "scene_3d", "renderer", "_vehicle_index", "_raycast_scene",
                 "_constants", "_objects")

    def __init__(self, world: WorldModel, physics: Physics) -> None:
        self.world = world
        self.physics = physics
        self.rng = world.rng
        self.dt = world.timestep
        self._vehicle_index = {name: k for k, name in enumerate(physics.names)}
        self._raycast_scene: RaycastScene | None = None
        self.scene_3d: RaycastScene3D | None = None
        self.renderer: SceneRenderer | None = None
        self._constants: dict[tuple, Any] = {}
        self._objects = (*world.vehicles.values(), None, *world.blocks.values(), None, *world.actors.values())

    def constants(self, key: str, sensors: list[S], build: Callable[[list[S]], T]) -> T:
        """``build(sensors)``, computed once per ``key`` and list of sensors (the same sensors tend to be due
        together step after step): per-ray and per-sensor arrays that only depend on parameters fixed at load."""
        ck = (key, *map(id, sensors))
        c = self._constants.get(ck)
        if c is None:
            if len(self._constants) >= MAX_CONSTANTS:
                self._constants.clear()
            c = self._constants[ck] = build(sensors)
        return c

    @property
    def raycast_scene(self) -> RaycastScene:
        """The world's :class:`~mvsim_core.sensors.raycast.scene.RaycastScene`, built on first use (static parts
        once; moving bodies are placed at each cast)."""
        if self._raycast_scene is None:
            from mvsim_core.sensors.raycast.scene import RaycastScene

            self._raycast_scene = RaycastScene.from_world(self.world, self.physics)
        return self._raycast_scene

    def adopt(self, old: SensorContext) -> None:
        """Take over ``old``'s ray-casting scene and camera renderer (built lazily, costly) when the world holds the
        same objects as when ``old`` was made; they then follow this context's physics. Otherwise they are built
        anew on first use.

        The same objects (vehicles, blocks, actors, each in the same order) mean the same geometry: a reset
        rebuilds the physics but keeps the world's objects."""
        if len(old._objects) != len(self._objects) or any(x is not y for x, y in zip(old._objects, self._objects,
                                                                                        strict=True)):
            return
        if old._raycast_scene is not None:
            old._raycast_scene.physics = self.physics
            self._raycast_scene = old._raycast_scene
        if old.scene_3d is not None:
            old.scene_3d.physics = self.physics
            self.scene_3d = old.scene_3d
        if old.renderer is not None:
            old.renderer.scene.physics = self.physics  # a renderer draws its scene geometry
            self.renderer = old.renderer

    def vehicle_index(self, sensor: Sensor) -> int:
        """Row of the sensor's vehicle in the physics arrays, or −1 for a standalone sensor."""
        return self._vehicle_index.get(sensor.parent, -1)

    def host_pose(self, sensor: Sensor) -> tuple[float, float, float, float, float, float]:
        """World pose of the sensor's vehicle (identity for standalone sensors)."""
        k = self.vehicle_index(sensor)
        return self.physics.pose_of(k) if k >= 0 else (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def sensor_pose(self, sensor: Sensor) -> tuple[np.ndarray, np.ndarray]:
        """Sensor frame in the world: rotation (3×3) and position (3,) in m."""
        return compose_rt(self.host_pose(sensor), sensor.pose)

    def sensor_poses(self, sensors: list[S]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`sensor_pose` of several sensors at once: rotations (n, 3, 3) and positions (n, 3) in m."""
        ph = self.physics
        rows, rs, ts = self.constants("poses", sensors, self._pose_constants)
        host, rh = np.empty((len(sensors), 6)), np.empty((len(sensors), 3, 3))
        host_poses(ph.state, ph.z, ph.pitch, ph.roll, rows, host, rh)
        return rh @ rs, host[:, :3] + np.einsum("nij,nj->ni", rh, ts)

    def _pose_constants(self, sensors: Sequence[Sensor]) -> tuple:
        """The sensors' vehicle rows (−1 for a standalone sensor) and their own rotations (n, 3, 3) and positions
        (n, 3) on their vehicles (m)."""
        k = np.array([self.vehicle_index(s) for s in sensors], dtype=np.int64)
        own = np.array([s.pose for s in sensors], dtype=np.float64).reshape(-1, 6)
        return k, rotations(own[:, 3], own[:, 4], own[:, 5]), own[:, :3].copy()


class SensorScheduler:
    """Fires the sensors of a world on time. Classes that produce no observations are listed in :attr:`not_simulated`.
    Setting :attr:`enabled` to False stops all sampling (physics-only benchmarks and batch runs)."""

    def __init__(self, world: WorldModel, physics: Physics) -> None:
        self.enabled = True
        self.world = world
        self.ctx = SensorContext(world, physics)
        sensors: list[Sensor] = [s for v in world.vehicles.values() for s in v.sensors.values()]
        sensors += list(world.sensors.values())
        self.sensors = [s for s in sensors if type(s).simulated]
        for s in self.sensors:
            if s.rng is None:
                s.rng = world.rng.stream(s.key)
        self._active = np.ones(len(self.sensors), dtype=np.bool_)
        self._all_active = True
        self._active_key: tuple[int, bool] | None = None  # (demand version, on demand) of _active
        self.not_simulated = sorted({type(s).xml_class for s in sensors if not type(s).simulated})
        self.last = np.zeros(len(self.sensors))
        self.period = np.array([s.period for s in self.sensors], dtype=float)
        self.due_at = self.last + self.period - SAMPLE_EPS
        self._next_due = -math.inf  # min(due_at) after the last run (-inf: look at every sensor)
        self.runs = 0
        """Steps at which some sensor sampled so far: new observations (``Sensor.last``) only come with a new count."""

    # ------------------------------------------------------------------ restarts (World.reset, spawn, remove)
    def restart(self, t: float) -> None:
        """Every sensor samples next one period after simulated time ``t`` (s), as at the start when ``t`` = 0."""
        self.last[:] = t
        self.due_at[:] = self.last + self.period - SAMPLE_EPS
        self._next_due = -math.inf

    def shift(self, dt: float) -> None:
        """The clock jumped by ``dt`` seconds: the schedule moves with it (each sensor keeps its phase)."""
        self.last += dt
        self.due_at += dt
        self._next_due = -math.inf
        for s in self.sensors:
            s.shift_clock(dt)

    # ------------------------------------------------------------------ snapshots (World.snapshot / World.restore)
    def save_state(self) -> dict[str, Any]:
        """The schedule, for a world snapshot: each sensor's last sample time and due time (s), the run count."""
        return {"last": self.last.copy(), "due_at": self.due_at.copy(), "runs": self.runs}

    def restore_state(self, saved: dict[str, Any]) -> None:
        """Go back to a :meth:`save_state` result of a scheduler of the same sensors (copied in place)."""
        restore_arrays(self, {"last": saved["last"], "due_at": saved["due_at"]})
        self._next_due = -math.inf
        self.runs = int(saved["runs"])

    def carry_over(self, old: SensorScheduler, t: float) -> None:
        """Continue the schedule of ``old`` (this world's scheduler before objects were added or removed): sensors
        that were there keep their phase; new ones sample one period after the current time ``t`` (s).

        When the moving objects are the same ones (nothing tangible came or went), the ray-casting scene and the
        camera renderer built by ``old``'s context are kept, pointed at the new physics.
        """
        self.enabled = old.enabled
        self._next_due = -math.inf
        where = {id(s): i for i, s in enumerate(old.sensors)}
        for i, s in enumerate(self.sensors):
            j = where.get(id(s))
            if j is None:
                self.last[i] = t
                self.due_at[i] = t + self.period[i] - SAMPLE_EPS
            else:
                self.last[i] = old.last[j]
                self.due_at[i] = old.due_at[j]
        self.ctx.adopt(old.ctx)

    def active(self) -> np.ndarray:
        """(n,) bool: which of :attr:`sensors` sample when due — enabled and, where the world samples on demand,
        wanted by somebody (recomputed only after a change of demand)."""
        key = (demand.version(), bool(self.world.sensors_on_demand))
        if key != self._active_key:
            on_demand = key[1]
            self._active = np.array([s.enabled and (not on_demand or bool(s.readers)) for s in self.sensors],
                                    dtype=np.bool_).reshape(len(self.sensors))
            self._all_active = bool(self._active.all())
            self._active_key = key
        return self._active

    def run(self, t: float) -> None:
        """Sample every sensor due at simulated time ``t`` (s), batched per class; skip the due ones that are not
        active (:meth:`active`)."""
        if not self.enabled or not self.sensors or t < self._next_due:
            return
        due = np.flatnonzero(self.due_at <= t)
        if due.size == 0:
            self._next_due = float(self.due_at.min())
            return
        active = self.active()
        if not self._all_active:
            idle = due[~active[due]]
            if idle.size:
                for i in idle.tolist():
                    self.sensors[i].skipped(t)
                self.last[idle] = t
                self.due_at[idle] = t + self.period[idle] - SAMPLE_EPS
                due = due[active[due]]
                if due.size == 0:
                    self._next_due = float(self.due_at.min())
                    return
        self.runs += 1
        groups: dict[type[Sensor], list[int]] = defaultdict(list)
        for i in due.tolist():
            groups[type(self.sensors[i])].append(i)
        for cls, idx in groups.items():
            observations = cls.sample_batch([self.sensors[i] for i in idx], self.ctx, t)
            for i, obs in zip(idx, observations, strict=True):
                self.sensors[i].last = obs
        self.last[due] = t
        self.due_at[due] = t + self.period[due] - SAMPLE_EPS
        self._next_due = float(self.due_at.min())

    def __repr__(self) -> str:
        return f"<SensorScheduler {len(self.sensors)} sensors; not simulated: {self.not_simulated}>"


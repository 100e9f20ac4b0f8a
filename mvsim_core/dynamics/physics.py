"""The physics of a world: Box2D bodies, wheel arrays and terrain, and the stages of one step.

:meth:`World.step <mvsim_core.world.World.step>` calls the stages in upstream MVSim's order (reference §2.1):

0. :meth:`Physics.animate`: blocks with keyframes and walking actors are put where their tracks say (pre-step,
   §1.13, §1.15);
1. :meth:`Physics.fit_terrain`: each vehicle's z, pitch and roll from the ground under its wheels, the gravity
   component along the slope on each wheel (skipped when the whole ground is one level), and the walls that terrain
   steps and occupied grid cells put around each vehicle;
2. :meth:`Physics.run_controllers`: controllers set wheel torques (and steering);
3. :meth:`Physics.apply_friction`: the friction models turn torques and wheel velocities into contact forces — all
   wheels of all vehicles in one compiled call — summed per vehicle into one force at the centre of mass and one
   torque, handed to Box2D;
4. :meth:`Physics.box2d_step` (gravity 0: Box2D only moves bodies in the ground plane and resolves contacts);
5. :meth:`Physics.post_step`: read poses and velocities back, impose the twist of ideal controllers, integrate wheel
   spin angles, update noisy odometry, collision flags and block poses, and check that nothing became NaN or ran away.

A vehicle or block that blows up (NaN/inf, a runaway velocity, a non-finite friction force or wheel spin) is reset to
its last finite pose, at rest (:mod:`mvsim_core.dynamics.blowups`), and reported (:mod:`mvsim_core.dynamics.faults`);
the others go on untouched. A strict world (``World.strict``) raises
:class:`~mvsim_core.dynamics.blowups.SimulationError` instead (importable from here too).

State lives in arrays indexed by vehicle (in the world's vehicle order) and by wheel; the ``Vehicle`` objects read
their pose, twist and odometry from here on demand.

Frames: world (x, y, z up); vehicle (x forward, y left, origin = reference point = Box2D body origin).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.dynamics import animation
from mvsim_core.dynamics.blowups import RUNAWAY_SPEED, block_blowup, vehicle_blowups
from mvsim_core.dynamics.blowups import SimulationError as SimulationError  # importable from here, as before
from mvsim_core.dynamics.chassis_supports import ChassisSupports
from mvsim_core.dynamics.faults import Blowup
from mvsim_core.dynamics.friction.base import P_CRR, P_MU
from mvsim_core.dynamics.vehicle_kernels import (
    level_vehicles,
    post_update,
    post_update_threaded,
    vehicle_forces,
    vehicle_forces_threaded,
)
from mvsim_core.dynamics.wheels import WheelArrays
from mvsim_core.errors import MvsimError
from mvsim_core.threads import threaded, threads, use_threads

if TYPE_CHECKING:
    from mvsim_core.dynamics.bodies import _RawBatch
    from mvsim_core.dynamics.keyframes import KeyframeTracks
    from mvsim_core.elements.horizontal_plane import HorizontalPlane
    from mvsim_core.world import World


@dataclass
class _LevelGround:
    """What the level-ground check of :meth:`Physics._on_level_ground` reads, made once per physics build, and its
    last result.

    Attributes:
        z: the ground's height (m). rects: (P, 4) x_min, x_max, y_min, y_max (m, world) of the planes that hold it,
            (0, 4) for the implicit floor. reach: (V,) how far from its origin each vehicle's fit asks (m, padded).
        z_query: the highest point a level vehicle's fit asks about (m): the ground plus the largest wheel radius.
        wheeled: (V,) bool, the vehicle has wheels; all_wheeled: every one has.
        pitch: (V,) the pitch a level fit writes: -0.0 for one-axle vehicles (-atan(0)), 0.0 for the others.
        out: (V,) bool, the last check's result; count: how many of ``out`` are set.
    """

    z: float
    rects: np.ndarray
    reach: np.ndarray
    wheeled: np.ndarray
    all_wheeled: bool
    pitch: np.ndarray
    out: np.ndarray
    z_query: float = math.inf
    count: int = 0


THREADED_VEHICLES = 4096
"""Fleets of at least this many vehicles run the friction kernel and the post-step update on numba's threads
(:mod:`mvsim_core.threads`): below it, handing the loop out costs more than the threads save (1,000 robots: the
friction kernel took 0.16 ms on two threads against 0.09 ms on one; 10,000: 8.0 against 8.5 ms per step)."""

SNAPSHOT_ARRAYS = ("state", "twist", "odometry", "odo_prev", "odo_mult", "z", "pitch", "roll", "forces", "com",
                   "faulty", "anim_poses", "_anim_awake", "_anim_stale", "_anim_change", "_dyn_xy")
"""The arrays of :class:`Physics` a snapshot saves: the vehicles' state rows, odometry and the pose it integrates
from, terrain attitude, last forces, centres of mass, the animated bodies' poses and sleep bookkeeping."""


class Physics:
    """Physics state of a world: Box2D bodies, wheel arrays, terrain. Built by :meth:`World.start`.

    Attributes (V = number of vehicles):
        state: (V, 6) x, y (m), yaw (rad), vx, vy (m/s, world frame), ω (rad/s) of each reference point.
        twist: (V, 3) body-frame (vx, vy, ω). z, pitch, roll: (V,) from the terrain.
        odometry: (V, 3) noisy odometry (x, y, yaw), starting at 0.
        forces: (V, 3) last world-frame force (N) and torque (N·m) applied at each centre of mass.
    """

    # the animated objects (set by :func:`~mvsim_core.dynamics.animation.start_animations`)
    animates: bool  # there is some: :meth:`animate` has work to do (fixed for the life of this physics)
    animated: list[str]  # names of the rows of anim_poses that have a kinematic body, in row order
    anim_poses: np.ndarray  # (A, 6) x, y, z (m), yaw, pitch, roll (rad) of every animated object (world frame)
    tracks: KeyframeTracks
    moving_planes: list[HorizontalPlane]  # the animated horizontal planes (elevators)
    _anim_objs: list[Any]
    _anim_bodies: list[Any]
    _anim_raw: _RawBatch | None
    _anim_next: np.ndarray | None
    _anim_radius: np.ndarray
    _anim_awake: np.ndarray
    _anim_stale: np.ndarray
    _anim_change: np.ndarray
    _animated_vehicles: np.ndarray
    _animated_list: list[int]
    _dyn_radius: np.ndarray
    _dyn_idx: np.ndarray
    _dyn_xy: np.ndarray
    _loose_blocks: list[str]

    def __init__(self, world: World) -> None:
        from mvsim_core.dynamics.bodies import Bodies
        from mvsim_core.dynamics.placement import vehicle_ground
        from mvsim_core.dynamics.terrain_obstacles import TerrainObstacles
        from mvsim_core.elements.property_region import PropertyRegion

        threads()  # (a bad MVSIM_THREADS is said at the start, not at the first fleet-sized step)
        self.world = world
        self.gravity = float(world.params["gravity"])
        self.vel_iters = int(world.params["b2d_vel_iters"])
        self.pos_iters = int(world.params["b2d_pos_iters"])
        self.names = tuple(world.vehicles)
        self.vehicles = list(world.vehicles.values())
        n = len(self.vehicles)
        self.bodies = Bodies(world)
        self.wheels = WheelArrays(self.vehicles, self.gravity)
        self.terrain = vehicle_ground(world.elements, world.blocks.values())  # the ground under the wheels
        self.flat_z = self.terrain.flat_z
        self.dynamic_blocks = [name for name, b in world.blocks.items()
                               if not b.is_static and not b.is_intangible and name in self.bodies.block_bodies]
        self.regions = [e for e in world.elements if isinstance(e, PropertyRegion)
                        and e.name in ("friction_mu", "friction_C_rr")]
        self.steered = [k for k, v in enumerate(self.vehicles) if v.dynamics.steerable]
        self.com = self.bodies.local_centers(self.names) if n else np.zeros((0, 2))
        self.chassis_mass = np.array([v.chassis.mass for v in self.vehicles], dtype=float)
        self.wheel_count = np.diff(self.wheels.start).astype(float)
        self.wheel_xy = np.column_stack([self.wheels.x, self.wheels.y])
        self.supports = ChassisSupports(self.vehicles, self.wheels)
        self._place_on_terrain()
        self._start_animations()
        self.z = np.array([v.pose[2] for v in self.vehicles], dtype=float)
        self.pitch = np.array([v.pose[4] for v in self.vehicles], dtype=float)
        self.roll = np.array([v.pose[5] for v in self.vehicles], dtype=float)
        self.state = self.bodies.read_states(self.names) if n else np.zeros((0, 6))
        self._settle_on_terrain()
        self.terrain_obstacles = TerrainObstacles(self.bodies, self.terrain, self.vehicles)
        self._level = self._level_ground()
        self.bodies.remember_static()
        self.odo_prev = self.state[:, :3].copy()
        self.odometry = np.zeros((n, 3))
        self.odo_mult = np.array([v.odometry_multipliers for v in self.vehicles], dtype=float).reshape(n, 3)
        self.twist = np.zeros((n, 3))
        self.forces = np.zeros((n, 3))
        self._force_columns = (self.forces[:, 0], self.forces[:, 1], self.forces[:, 2])  # views, made once
        # the vehicles' bodies, their lookups made once: forces in (apply_friction), states out (post_step)
        self._vehicle_bodies = self.bodies.bind(self.names, *self._force_columns, self.state)
        # controllers: the plain twist_pid ones run as one batch, the others one by one
        from mvsim_core.dynamics.controllers.twist_pid import DifferentialTwistPid
        from mvsim_core.dynamics.controllers.twist_pid_batch import TwistPidBatch

        batched = [(k, v) for k, v in enumerate(self.vehicles)
                   if type(v.controller) is DifferentialTwistPid and v.controller.batchable]
        self.pid_batch = TwistPidBatch(batched, self.wheels.start, self.wheels.radius) if batched else None
        in_batch = {k for k, _ in batched}
        self.individual = [v for k, v in enumerate(self.vehicles) if k not in in_batch]
        # ideal controllers: the twist imposed after each step; "passive" ones also get no force during it
        self.ideal = np.array([v.controller.ideal_twist() is not None and not v.is_animated for v in self.vehicles],
                              dtype=np.bool_)
        self.passive = self.ideal & np.array([not v.controller.friction_in_step for v in self.vehicles],
                                             dtype=np.bool_)
        self._any_ideal = bool(self.ideal.any())
        self.faulty = np.zeros(n, dtype=np.bool_)  # vehicles found blown up in this step (reset at its end)
        post_update(self.state, self.twist, self.odo_prev.copy(), np.zeros((n, 3)), self.odo_mult, np.zeros(0),
                    np.zeros(0), np.zeros(0, dtype=np.int64), 0.0, math.inf, self.faulty)  # fills twist only
        self.faulty[:] = False
        self.steps = 0
        self._colliding: set[str] = set()
        self._contact_objects = [world.vehicles.get(n) or world.blocks.get(n) for n in self.bodies.contact_names]
        self._last_flags: tuple[bytes, set[str], list[Any]] = (b"", set(), [])  # the last flags, set, objects
        self._collision_threshold = float(world.params["collision_threshold"])
        for k, v in enumerate(self.vehicles):
            v.attach_physics(self, k)

    def _place_on_terrain(self) -> None:
        """Initial elevation adjust of the vehicles and blocks that are due (:mod:`~mvsim_core.dynamics.placement`)."""
        from mvsim_core.dynamics.placement import place_blocks, place_vehicles

        place_vehicles(self.vehicles, self.terrain)
        place_blocks(self.world.blocks.values(), self.world.elements)

    def _start_animations(self) -> None:
        """The objects whose pose is forced every step, each put where its track says now
        (:func:`~mvsim_core.dynamics.animation.start_animations`); :attr:`animates` says whether there is any."""
        animation.start_animations(self)
        self.animates = bool(self._anim_objs)

    def _settle_on_terrain(self) -> None:
        """Start every (adjustable) vehicle with the attitude of its wheel contacts
        (:func:`~mvsim_core.dynamics.placement.settle`)."""
        from mvsim_core.dynamics.placement import settle

        if self.flat_z is None:
            settle(self.vehicles, self.terrain, self.supports, self.wheels, self.state, self.z, self.pitch, self.roll)

    # ------------------------------------------------------------------ per-vehicle views
    def pose_of(self, k: int) -> tuple[float, float, float, float, float, float]:
        st = self.state[k]
        return (float(st[0]), float(st[1]), float(self.z[k]), float(st[2]), float(self.pitch[k]),
                float(self.roll[k]))

    def teleport(self, name: str, x: float, y: float, yaw: float) -> None:
        """Move a vehicle, block or actor body to (x, y, yaw) (world frame, m / rad); odometry sees no jump. An
        animated block or a walking actor is back on its track at the next step."""
        body = (self.bodies.vehicle_bodies.get(name) or self.bodies.block_bodies.get(name)
                or self.bodies.actor_bodies.get(name))
        if body is not None:
            body.transform = ((x, y), yaw)
        if name in self.animated:  # back on its track at the next step; if it sleeps, its body is here now
            self._anim_stale[self.animated.index(name)] = (x, y)
        if name in self.world.vehicles:
            k = self.names.index(name)
            self.state[:] = self.bodies.read_states(self.names)
            self.odo_prev[k] = (x, y, yaw)
        else:
            obj = self.world.blocks.get(name) or self.world.actors[name]
            _, _, z, _, pitch, roll = obj.pose
            obj.state_pose = (x, y, z, yaw, pitch, roll)

    def velocity_of(self, name: str) -> tuple[float, float, float]:
        """Velocity of a vehicle's or block's reference point: (vx, vy) m/s in the world frame and ω rad/s; zeros for
        a static or intangible block (no moving body)."""
        if name in self.world.vehicles:
            st = self.state[self.names.index(name)]
            return (float(st[3]), float(st[4]), float(st[5]))
        body = self.bodies.block_bodies.get(name)
        if body is None or name not in self.dynamic_blocks:
            return (0.0, 0.0, 0.0)
        st = self.bodies.read_states([name])[0]
        return (float(st[3]), float(st[4]), float(st[5]))

    def set_velocity(self, name: str, vx: float, vy: float, omega: float) -> None:
        """Give a vehicle or dynamic block the velocity (vx, vy) m/s (world frame, at its reference point) and ω
        rad/s. A vehicle's wheels then roll without slipping at that motion and its twist reads the new value at
        once.

        Raises:
            MvsimError: a static or intangible block, or an unknown name.
        """
        if name in self.world.vehicles:
            k = self.names.index(name)
        elif name in self.dynamic_blocks:
            k = -1
        else:
            raise MvsimError(f"'{name}' has no moving body (a static or intangible block, an actor, or unknown): "
                             f"it cannot be given a velocity")
        self.bodies.set_velocities([name], [vx], [vy], [omega])
        if k < 0:
            return
        self.state[k] = self.bodies.read_states([name])[0]
        yaw = self.state[k, 2]
        c, s = math.cos(yaw), math.sin(yaw)
        bvx, bvy = c * vx + s * vy, -s * vx + c * vy  # body frame
        self.twist[k] = (bvx, bvy, omega)
        self._roll_wheels(k)

    def _roll_wheels(self, k: int) -> None:
        """Vehicle ``k``'s wheels spin at the speed that rolls them without slipping at its twist."""
        bvx, bvy, omega = (float(v) for v in self.twist[k])
        w = self.wheels
        a, b = w.start[k], w.start[k + 1]
        cw, sw = np.cos(w.yaw[a:b]), np.sin(w.yaw[a:b])
        w.omega[a:b] = (cw * (bvx - omega * w.y[a:b]) + sw * (bvy + omega * w.x[a:b])) / w.radius[a:b]

    def carry_over(self, old: Physics, fresh: Collection[str] = ()) -> None:
        """Continue from ``old``, the physics of this world before objects were added or removed (a fresh
        :class:`Physics` starts every object at its initial pose): every vehicle and block of both, except those
        named in ``fresh`` (just spawned or brought back), keeps its Box2D pose, velocity and sleep state, and every
        such vehicle its wheel spins, spin angles, steering, torques, forces, odometry, terrain attitude and its
        share of the twist-PID batch; collision flags and the step count go on.

        Box2D's contact caches are not carried: contacts start cold, and a body's centre-of-mass sweep is
        recomputed from its pose (float32 rounding), so untouched bodies go on to within ~1e-6 m, not
        bit-identically.
        """
        skip = set(fresh)
        ob = old.bodies
        for name, body in [*self.bodies.vehicle_bodies.items(), *self.bodies.block_bodies.items()]:
            prev = ob.vehicle_bodies.get(name) or ob.block_bodies.get(name)
            if name in skip or prev is None:
                continue
            p = prev.position
            body.transform = ((float(p[0]), float(p[1])), float(prev.angle))
            v = prev.linearVelocity
            body.linearVelocity = (float(v[0]), float(v[1]))
            body.angularVelocity = float(prev.angularVelocity)
            body.awake = bool(prev.awake)
        rows = {id(v): k for k, v in enumerate(old.vehicles)}
        pairs = [(k, rows[id(v)]) for k, v in enumerate(self.vehicles) if id(v) in rows and v.name not in skip]
        if self.vehicles:
            self.state[:] = self.bodies.read_states(self.names)
        if pairs:
            new, was = (np.array(i, dtype=np.int64) for i in zip(*pairs, strict=True))
            for attr in ("z", "pitch", "roll", "odometry", "odo_prev", "twist", "forces"):
                getattr(self, attr)[new] = getattr(old, attr)[was]
            w, ow = self.wheels, old.wheels
            for k, j in pairs:
                a, b, oa, obb = w.start[k], w.start[k + 1], ow.start[j], ow.start[j + 1]
                for attr in ("omega", "phi", "torque", "k_motor", "fz", "slope_x", "slope_y", "fx", "fy", "vx", "vy",
                             "yaw", "params"):
                    getattr(w, attr)[a:b] = getattr(ow, attr)[oa:obb]
            if self.pid_batch is not None and old.pid_batch is not None:
                self.pid_batch.carry_over(old.pid_batch)
        alive = set(self.bodies.vehicle_bodies) | set(self.bodies.block_bodies)
        self._colliding = {n for n in old._colliding if n in alive and n not in skip}
        self.steps = old.steps

    # ------------------------------------------------------------------ snapshots (World.snapshot / World.restore)
    def save_state(self) -> dict[str, Any]:
        """Everything this physics carries from one step to the next, as plain data (copies): the arrays of
        :data:`SNAPSHOT_ARRAYS`, the wheel arrays, the twist-PID batch, the animation tracks, the step count and
        collision set, the fixtures that come and go (wheel boxes, grid and terrain squares) and the Box2D world
        itself, exactly (:mod:`mvsim_core.dynamics.box2d_state`).

        Raises:
            SnapshotError: this Box2D build's memory layout is not the expected one.
        """
        from mvsim_core.dynamics.box2d_state import capture
        from mvsim_core.dynamics.state_arrays import save_arrays

        return {
            "arrays": save_arrays(self, SNAPSHOT_ARRAYS),
            "wheels": save_arrays(self.wheels, self.wheels.SNAPSHOT),
            "pid": None if self.pid_batch is None else save_arrays(self.pid_batch, self.pid_batch.SNAPSHOT),
            "tracks": save_arrays(self.tracks, self.tracks.SNAPSHOT),
            "anim_next": None if self._anim_next is None else self._anim_next.copy(),
            "steps": self.steps,
            "colliding": sorted(self._colliding),
            "bodies": self.bodies.save_state(),
            "terrain_obstacles": self.terrain_obstacles.save_state(),
            "box2d": capture(self.bodies.b2world, self.bodies.joint_list),
        }

    def restore_state(self, saved: dict[str, Any]) -> int:
        """Go back to a :meth:`save_state` result of this physics or of one built from the same objects (another
        process included); ``saved`` is not changed. The fixtures that come and go are made what they were, then
        the Box2D world is rewritten and the arrays copied back in place.

        Returns:
            The number of Box2D contacts that could not be made again (see
            :func:`~mvsim_core.dynamics.box2d_state.restore`; usually 0).

        Raises:
            SnapshotError: the snapshot holds other arrays or another Box2D world (other objects).
        """
        from mvsim_core.dynamics.box2d_state import restore
        from mvsim_core.dynamics.state_arrays import restore_arrays

        self.bodies.restore_fixtures(saved["bodies"])
        self.terrain_obstacles.restore_state(saved["terrain_obstacles"])
        missing = restore(self.bodies.b2world, saved["box2d"], self.bodies.joint_list)
        self.bodies.restored()
        restore_arrays(self, saved["arrays"])
        restore_arrays(self.wheels, saved["wheels"])
        if self.pid_batch is not None:
            restore_arrays(self.pid_batch, saved["pid"])
        restore_arrays(self.tracks, saved["tracks"])
        self._anim_next = None if saved["anim_next"] is None else saved["anim_next"].copy()
        self.steps = int(saved["steps"])
        self._colliding = set(saved["colliding"])
        if self.moving_planes:
            self.terrain.refresh_planes()
        return missing

    # ------------------------------------------------------------------ the stages of a step
    def animate(self, t: float, dt: float) -> None:
        """Stage 0: every animated block and every actor is given the velocity that takes its kinematic body from
        where it is to its track's pose for t + dt (s) over the step; what has no body is at its pose for t + dt
        from now on (:func:`~mvsim_core.dynamics.animation.animate`)."""
        animation.animate(self, t, dt)

    def _level_ground(self) -> _LevelGround | None:
        """What :meth:`_on_level_ground` needs, when the ground but its blocks is one level and the wheels' fit is
        not skipped altogether (``flat_z``); else None."""
        if self.flat_z is not None or self.wheels.n == 0:
            return None
        ground = self.terrain.ground_without_blocks()
        if ground is None:
            return None
        n = len(self.vehicles)
        w = self.wheels
        reach = self.supports.reach(n)
        np.maximum.at(reach, w.vehicle, np.hypot(w.x, w.y))
        wheeled = np.bincount(w.vehicle, minlength=n) > 0
        one_axle = np.zeros(n, dtype=np.bool_)
        one_axle[self.supports.rows] = True
        return _LevelGround(z=ground[0], rects=ground[1] if ground[1] is not None else np.zeros((0, 4)),
                            reach=reach * (1.0 + 1e-9) + 1e-6, wheeled=wheeled, all_wheeled=bool(wheeled.all()),
                            pitch=np.where(one_axle, -0.0, 0.0), out=np.zeros(n, dtype=np.bool_),
                            z_query=ground[0] + float(w.radius.max()) * (1.0 + 1e-9) + 1e-6)

    def _on_level_ground(self) -> np.ndarray | None:
        """(V,) bool: the vehicles whose fit this step gives level ground for sure, so it can be skipped: resting
        level at the ground's height now, every point the fit asks about over one of the planes (or anywhere, on
        the implicit floor) and out of reach of every block (farther than the vehicle's reach from the box around its
        footprint), in one compiled call (:func:`~.vehicle_kernels.level_vehicles`); blocks whose top no query of a
        level vehicle reaches (walls, tall columns: :meth:`~.terrain.Terrain.blocks_up_to`) are left out, as they
        cannot be its ground. None when the world has no such ground."""
        lv = self._level
        if lv is None:
            return None
        st = self.state
        tf, box = self.terrain.blocks_up_to(lv.z_query)
        lv.count = level_vehicles(st[:, 0], st[:, 1], self.z, self.pitch, self.roll, lv.z, lv.rects, lv.reach, tf,
                                  box, lv.out)
        return lv.out

    def fit_terrain(self) -> None:
        """Stage 1: z, pitch, roll of every vehicle from its wheel contacts and the gravity along the slope on every
        wheel (reference §2.2); then the static boxes of occupied grid cells and the terrain steps near each
        vehicle.

        A vehicle resting level on one-level ground, out of reach of every block, is not fitted: its fit would
        find the same level (z, and pitch = roll = 0, written with the signs of zero the fit gives), so the result
        is the same to the bit, without the queries."""
        w = self.wheels
        if w.n and self.flat_z is not None:
            self.z.fill(self.flat_z)
        elif w.n:
            st = self.state
            level = self._on_level_ground()
            lv = self._level
            if level is None or lv is None or not lv.count:
                z, pitch, roll = self.terrain.fit_vehicles(
                    st[:, 0], st[:, 1], st[:, 2], self.z, self.pitch, self.roll, self.wheel_xy, 2.0 * w.radius,
                    w.vehicle)
                self.supports.fit(self.terrain, st, z, pitch, roll, self.pitch)
            elif lv.count == len(level) and lv.all_wheeled:
                # all level: what the branch below writes for them, without its masks
                z, pitch, roll = np.full(len(level), lv.z), lv.pitch.copy(), np.zeros(len(level))
            else:
                z, pitch, roll = self.z.copy(), self.pitch.copy(), self.roll.copy()
                fit = ~level
                if fit.any():
                    rows = np.flatnonzero(fit)
                    mine = fit[w.vehicle]
                    slot = np.cumsum(fit) - 1  # vehicle index -> row among those fitted
                    z[rows], pitch[rows], roll[rows] = self.terrain.fit_vehicles(
                        st[rows, 0], st[rows, 1], st[rows, 2], z[rows], pitch[rows], roll[rows],
                        self.wheel_xy[mine], 2.0 * w.radius[mine], slot[w.vehicle[mine]])
                    self.supports.fit(self.terrain, st, z, pitch, roll, self.pitch, only=fit[self.supports.rows])
                done = level & lv.wheeled  # a vehicle without wheels keeps its pose, as the fit would leave it
                z[done] = lv.z
                pitch[done] = lv.pitch[done]
                roll[done] = 0.0
            self.z, self.pitch, self.roll = z, pitch, roll
            # gravity direction in the vehicle frame: R^T·(0, 0, −1) = (sin p, −cos p·sin r, −cos p·cos r)
            load = (self.chassis_mass[w.vehicle] / self.wheel_count[w.vehicle] + w.mass) * self.gravity
            np.multiply(np.sin(self.pitch)[w.vehicle], load, out=w.slope_x)
            np.multiply((-np.cos(self.pitch) * np.sin(self.roll))[w.vehicle], load, out=w.slope_y)
        self.bodies.update_grid_obstacles()
        self.terrain_obstacles.update(self.state, self.z, self.pitch, self.roll)

    def run_controllers(self, dt: float) -> None:
        """Stage 2: every controller sets its wheel torques (N·m) and steering angles for a step of ``dt`` s (the
        plain twist_pid ones as one compiled batch); steered wheels turn their Box2D fixtures."""
        w = self.wheels
        if self.pid_batch is not None:
            self.pid_batch.run(w.omega, w.torque, w.k_motor, w.radius, dt)
        for v in self.individual:
            v.controller.control(v, dt)
        for k in self.steered:
            v = self.vehicles[k]
            w.sync_yaws(k, v.wheels)
            self.bodies.set_wheel_yaws(self.names[k], [wh.yaw for wh in v.wheels])

    def apply_friction(self, dt: float) -> None:
        """Stage 3: friction at every wheel (after per-region overrides of mu and C_rr) and the wheel spin update,
        in one compiled call; the forces summed per vehicle go to Box2D as one force (N, world frame) at the centre
        of mass and one torque (N·m)."""
        w = self.wheels
        if self.regions:
            self._apply_regions()
        if w.n == 0:
            return
        # a vehicle whose force is NaN/inf gets none (flagged in self.faulty, reset after the step): Box2D never
        # sees a non-finite number
        if use_threads(len(self.names), THREADED_VEHICLES):
            with threaded():
                vehicle_forces_threaded(self.twist, self.state[:, 2], self.com, self.passive, w.start, w.model,
                                        w.params, w.table, self.gravity, dt, self.forces, self.faulty)
        else:
            vehicle_forces(self.twist, self.state[:, 2], self.com, self.passive, w.vehicle, w.model, w.params,
                           w.table, self.gravity, dt, self.forces, self.faulty)
        self._vehicle_bodies.apply()  # self._force_columns into Box2D

    def box2d_step(self, dt: float) -> None:
        """Stage 4: Box2D integrates every body over ``dt`` seconds and resolves contacts."""
        self.bodies.b2world.Step(dt, self.vel_iters, self.pos_iters)

    def _apply_regions(self) -> None:
        """Per-wheel ``friction_mu`` / ``friction_C_rr`` overrides at the wheels' world positions (z = 0)."""
        from mvsim_core.elements.property_region import property_at

        w = self.wheels
        w.params[:] = w.base_params
        for i in range(w.n):
            k = w.vehicle[i]
            x, y, yaw = self.state[k, 0], self.state[k, 1], self.state[k, 2]
            c, s = math.cos(yaw), math.sin(yaw)
            px, py = x + c * w.x[i] - s * w.y[i], y + s * w.x[i] + c * w.y[i]
            mu = property_at(self.regions, "friction_mu", px, py, 0.0)
            if mu is not None and w.has_mu[i]:
                w.params[i, P_MU] = float(mu)
            crr = property_at(self.regions, "friction_C_rr", px, py, 0.0)
            if crr is not None:
                w.params[i, P_CRR] = float(crr)

    def post_step(self, dt: float) -> list[Blowup]:
        """Stage 5: impose the twists of ideal controllers, read poses and velocities back, integrate wheel spin
        angles and odometry over ``dt`` s, update collision flags and the poses of dynamic blocks.

        Returns:
            The vehicles and blocks that blew up in this step (usually none), each already put back at its last
            finite pose, at rest (the World then resets their controllers and records the faults).

        Raises:
            SimulationError: in a strict world, a body or a wheel spin became NaN/inf or ran away.
        """
        w = self.wheels
        if self._any_ideal:
            self._impose_ideal_twists()
        if self.vehicles:
            self._vehicle_bodies.read_states()  # into self.state
        blown: list[Blowup] = []
        if use_threads(len(self.names), THREADED_VEHICLES):
            with threaded():
                n_bad = post_update_threaded(self.state, self.twist, self.odo_prev, self.odometry, self.odo_mult,
                                             w.omega, w.phi, w.start, dt, RUNAWAY_SPEED, self.faulty)
        else:
            n_bad = post_update(self.state, self.twist, self.odo_prev, self.odometry, self.odo_mult, w.omega, w.phi,
                                w.vehicle, dt, RUNAWAY_SPEED, self.faulty)
        if n_bad:
            blown = vehicle_blowups(self)
        for k in self._animated_list:
            self._roll_wheels(k)
        for name in self._loose_blocks:
            b = self.bodies.block_bodies[name]
            blk = self.world.blocks[name]
            p = b.position
            x, y, a = float(p[0]), float(p[1]), float(b.angle)
            if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(a)):
                blown.append(block_blowup(self, name, b))
                continue
            _, _, z, _, pitch, roll = blk.pose
            blk.state_pose = (x, y, z, a, pitch, roll)
        if self._anim_next is not None:
            # where the tracks say, exactly (Box2D keeps float32); the objects read their poses from here
            self.anim_poses[:] = self._anim_next  # (a copy: the tracks reuse their array)
            self._anim_next = None
        if blown:
            self.bodies.heal_static()
        self._collisions()
        self.steps += 1
        return blown

    def _impose_ideal_twists(self) -> None:
        """Ideal controllers: set the body velocity to the commanded twist; the wheels of passive ones roll without
        slip (the others keep the spin their friction law gave them)."""
        w = self.wheels
        st = self.bodies.read_states(self.names)
        idx = np.flatnonzero(self.ideal)
        names, vxs, vys, oms = [], [], [], []
        for k in idx:
            twist = self.vehicles[k].controller.ideal_twist()
            assert twist is not None  # ideal = the controller has an ideal twist
            vx, vy, om = twist
            c, s = math.cos(st[k, 2]), math.sin(st[k, 2])
            names.append(self.names[k])
            vxs.append(c * vx - s * vy)
            vys.append(s * vx + c * vy)
            oms.append(om)
            if not self.passive[k]:
                continue
            a, b = w.start[k], w.start[k + 1]
            cw, sw = np.cos(w.yaw[a:b]), np.sin(w.yaw[a:b])
            w.omega[a:b] = (cw * (vx - om * w.y[a:b]) + sw * (vy + om * w.x[a:b])) / w.radius[a:b]
        self.bodies.set_velocities(names, np.array(vxs), np.array(vys), np.array(oms))

    def wheel_log_rows(self, k: int) -> list[tuple[float, ...]]:
        """CSV-logger rows of vehicle ``k``'s wheels: x, y (m, vehicle frame), torque (N·m), load (N), contact
        velocity (m/s) and friction force (N) in the wheel frame."""
        w = self.wheels
        return [(w.x[i], w.y[i], w.torque[i], w.fz[i], w.vx[i], w.vy[i], w.fx[i], w.fy[i])
                for i in range(w.start[k], w.start[k + 1])]

    @property
    def colliding(self) -> set[str]:
        """Names of the vehicles and blocks touching something after the last step (read only)."""
        return self._colliding

    def _collisions(self) -> None:
        """``collision`` = touching now; ``had_collision`` latches until the user resets it."""
        flags = self.bodies.contact_flags(self._collision_threshold)
        if not self._colliding and not self.bodies.contact_hits:
            return  # nothing touches now, nor did at the last step: no flag changes
        key = flags.tobytes()
        if key == self._last_flags[0] and self._colliding is self._last_flags[1]:
            for obj in self._last_flags[2]:  # the same bodies as at the last step: only the latches
                obj.had_collision = True
            return
        names, objects = self.bodies.contact_names, self._contact_objects
        hits = np.flatnonzero(flags).tolist()
        touching = [objects[k] for k in hits if objects[k] is not None]
        for obj in touching:
            obj.collision = True
            obj.had_collision = True
        now = {names[k] for k in hits}
        for name in self._colliding - now:
            obj = self.world.vehicles.get(name) or self.world.blocks.get(name)
            if obj is not None:
                obj.collision = False
        self._colliding = now
        self._last_flags = (key, now, touching)

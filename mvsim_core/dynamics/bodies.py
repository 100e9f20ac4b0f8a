"""The Box2D side of a world (reference §2.1 "Box2D config", §2.4 collisions, §1.4 joints, §1.9/§1.10).

Frames and units: Box2D runs top-down in the world XY plane (m, rad, s, kg, N); gravity is (0, 0). Each vehicle and
each tangible block is one rigid body whose **origin is the object's reference point** (``base_link`` for vehicles,
the block frame for blocks); the centre of mass (COM) is wherever Box2D puts it from the fixtures, so poses and
velocities exchanged here always refer to the origin, and forces/torques to the COM.

What is built (:class:`Bodies`):

* vehicles: a dynamic body; the chassis polygon as fixture(s) of density ``chassis mass / area`` (friction 0,
  restitution 0.01) plus one ``diameter x width`` box per wheel at (x, y), turned by the wheel yaw, density
  ``wheel mass / (diameter * width)`` (friction 0.5, restitution 0.05). Box2D mass = chassis + wheels; damping from
  the chassis.
* a vehicle with keyframes: the same fixtures on a kinematic body, moved along its track;
* actors: a kinematic circle of ``collision_radius`` each, moved along its walk (:mod:`mvsim_core.objects.actor`);
* blocks: dynamic (density ``mass / area``), static (static body), animated (a kinematic body, moved by its
  keyframes: :meth:`mvsim_core.dynamics.physics.Physics.animate`) or intangible (no body); fixture friction =
  ``lateral_friction``, restitution and damping from the block. Ground friction of dynamic blocks: two
  ``b2FrictionJoint`` to the ground body at block-frame (±maxRadius, 0), each ``maxForce = mu * m * g / 2``,
  ``maxTorque = 0`` (maxRadius = largest distance of a footprint vertex from the block origin).
* vertical planes: one static body per :meth:`VerticalPlane.collision_pieces` piece, at the piece's centre
  (restitution 0.01, Box2D's default friction 0.2, as upstream).
* joints (``collideConnected = False``): ``distance``/``rope`` with ``stiffness == 0`` -> ``b2RopeJoint``
  (``maxLength = max_length``); with ``stiffness > 0`` (Box2D 2.4's N/m and N·s/m, which this Box2D 2.3 binding
  lacks) -> a soft ``b2DistanceJoint`` of rest length ``max_length`` whose frequency and damping ratio give the same
  spring (``f = sqrt(k/m_eff)/2pi``, ``zeta = c/(2 m_eff omega)``, ``m_eff = mA mB/(mA+mB)`` as Box2D 2.4's
  ``b2LinearStiffness``) plus a rope joint at ``max_length`` for 2.4's hard upper limit. Box2D 2.3 has no lower
  length limit: ``min_length > 0`` is ignored with a logged warning. ``revolute``/``pin`` -> ``b2RevoluteJoint`` at
  the anchors, ``referenceAngle`` = current angle of B minus A, limits when ``enable_limit``.
* occupancy grids: one static body per grid, holding a square fixture per occupied cell near a moving body
  (:meth:`Bodies.update_grid_obstacles`, :mod:`.grid_obstacles`).

Polygons become one or more convex fixtures (:mod:`.convex_pieces`); fixtures are made by :mod:`.fixtures`.

Batched state access (:meth:`Bodies.read_states`, :meth:`Bodies.apply`, :meth:`Bodies.set_velocities`) goes through a
raw view of the ``b2Body`` structs when their layout is the expected one (:mod:`.box2d_raw`, with timings;
``MVSIM_BOX2D_RAW=0`` or ``raw_access=False`` turns it off).

Collision flags (:meth:`Bodies.collisions`) come from a compiled walk over Box2D's contact lists, under the same switch
(:mod:`.collision_flags`, with timings).

Box2D objects live as long as their ``b2World``: keep the :class:`Bodies` alive while using any body, fixture or joint
taken from it (pybox2d crashes on a dangling one).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import Box2D
import numpy as np
from numpy.typing import ArrayLike

from mvsim_core.dynamics.box2d_raw import (
    add_forces,
    apply_raw,
    awake_mask,
    body_addresses,
    raw_layout_ok,
    read_frames,
    read_raw_positions,
    read_raw_states,
    struct_indices,
    views_for,
    write_velocities,
)
from mvsim_core.dynamics.collision_flags import collision_flags_api, collision_flags_raw, raw_contacts_ok
from mvsim_core.dynamics.fixtures import NOT_VEHICLES, VEHICLE_CATEGORY, add_polygon, body_radius, wheel_fixture
from mvsim_core.dynamics.grid_obstacles import GridObstacles
from mvsim_core.errors import MvsimError

if TYPE_CHECKING:
    from mvsim_core.objects.actor import Actor
    from mvsim_core.objects.block import Block
    from mvsim_core.objects.joint import Joint
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.objects.wheel import Wheel
    from mvsim_core.world_model import WorldModel

log = logging.getLogger("mvsim_core.dynamics")

CHASSIS_FRICTION, CHASSIS_RESTITUTION = 0.0, 0.01
PLANE_FRICTION, PLANE_RESTITUTION = 0.2, 0.01
ACTOR_FRICTION = 0.5
"""Friction of an actor's circle against what it touches (a person's clothes on a robot's bumper)."""
WHEEL_YAW_TOLERANCE = 1e-3
"""rad: :meth:`Bodies.set_wheel_yaws` rebuilds a wheel box only when its yaw moved more than this."""


@dataclass
class _Batch:
    """Pre-computed lookups for one ordered list of names, plain pybox2d path (``Bodies.raw`` off)."""

    names: tuple[str, ...]
    bodies: list[Any]  # Box2D bodies, in name order
    dynamic: np.ndarray  # bool (n,)
    lc: np.ndarray  # (n, 2) local COM (m, body frame) when the batch was made


@dataclass
class _RawBatch:
    """Pre-computed lookups for one ordered list of names, raw ``b2Body`` view (``Bodies.raw`` on)."""

    names: tuple[str, ...]
    bodies: list[Any]  # Box2D bodies, in name order
    dynamic: np.ndarray  # bool (n,)
    base: np.ndarray  # int64 (n,): float32 index of each struct in the address-space view
    kinematic: np.ndarray  # bool (n,)
    read_idx: np.ndarray  # int64 (n, 10): float32 indices of each struct's READ_COLS
    flag_idx: np.ndarray  # int64 (n,): int32 index of the word holding m_flags (low half, little-endian)


_CachedBatch = TypeVar("_CachedBatch", _Batch, _RawBatch)
_BATCH_CACHE_SIZE = 64
"""Batches kept per :class:`Bodies`; the cache is emptied when it holds more (callers use a few fixed lists)."""


def _remember(cache: dict[tuple[str, ...], _CachedBatch], batch: _CachedBatch) -> _CachedBatch:
    """Put ``batch`` in ``cache`` under its names (emptying a full cache first) and return it."""
    if len(cache) > _BATCH_CACHE_SIZE:
        cache.clear()
    cache[batch.names] = batch
    return batch


# ---------------------------------------------------------------------------------------------------- bodies
class Bodies:
    """The Box2D side of a world: one b2World (gravity (0, 0), top-down), a static ground body, a dynamic body per
    vehicle and per non-intangible block (static blocks/walls: static bodies), static bodies for vertical planes,
    joints, and the obstacle fixtures that occupancy-grid cells near moving objects become.

    Attributes:
        b2world: the Box2D world.
        ground: static body without fixtures (anchor of the blocks' friction joints).
        vehicle_bodies: vehicle name -> dynamic body (origin = vehicle reference point).
        block_bodies: block name -> body (static for static blocks and walls); intangible blocks have none.
        plane_bodies: one static body per solid piece of each vertical plane, in element order.
        joints: the Box2D joints made from the world's ``<joint>`` s (a stiff distance joint gives two).
        friction_joints: dynamic block name -> its two ground friction joints.
        grids: the occupancy grids' obstacle state, in element order.
        max_radius: body name -> largest distance of a fixture vertex from the body origin (m).
        moving: names of the dynamic bodies (vehicles, then dynamic blocks), the ones grid obstacles follow.
        raw: whether body states go through the raw ``b2Body`` view (:mod:`.box2d_raw`).
        velocity_iterations, position_iterations: Box2D solver iterations used by :meth:`step`.
    """

    def __init__(self, world: WorldModel, *, raw_access: bool | None = None) -> None:
        """Build every body, fixture and joint of ``world``.

        Args:
            world: the loaded world (initial poses and velocities from each object's ``sim``).
            raw_access: use the raw ``b2Body`` view for batched state access; None = when the layout check passes
                and ``MVSIM_BOX2D_RAW`` is not ``0``.
        """
        from mvsim_core.elements.occupancy_grid import OccupancyGrid
        from mvsim_core.elements.vertical_plane import VerticalPlane

        p = world.params
        self.gravity = float(p.get("gravity", 9.81))
        self.velocity_iterations = int(p.get("b2d_vel_iters", 8))
        self.position_iterations = int(p.get("b2d_pos_iters", 3))
        self.b2world = Box2D.b2World(gravity=(0.0, 0.0), doSleep=True)
        self.ground = self.b2world.CreateStaticBody(position=(0.0, 0.0))
        self.vehicle_bodies: dict[str, Any] = {}
        self.block_bodies: dict[str, Any] = {}
        self.plane_bodies: list[Any] = []
        self.joints: list[Any] = []
        self.friction_joints: dict[str, list[Any]] = {}
        self._joint_defs: list[tuple[Any, str, dict[str, Any]]] = []  # (joint, b2World factory, its arguments)
        self.grids: list[GridObstacles] = []
        self.max_radius: dict[str, float] = {}
        self._wheel_fixtures: dict[str, list[Any]] = {}
        self._wheel_yaws: dict[str, np.ndarray] = {}
        self._wheels: dict[str, list[Wheel]] = {}
        self._local_center: dict[str, np.ndarray] = {}
        self._block_names: list[str] = list(world.blocks)

        for v in world.vehicles.values():
            self._build_vehicle(v)
        for b in world.blocks.values():
            if not b.is_intangible:
                self._build_block(b)
        self.actor_bodies: dict[str, Any] = {}
        for a in world.actors.values():
            self._build_actor(a)
        for el in world.elements:
            if isinstance(el, VerticalPlane):
                for piece in el.collision_pieces():
                    # each piece on its own body, about its centre: Box2D computes polygons in float32, and a piece
                    # far from its body's origin has no area there
                    centre = piece.polygon.mean(axis=0)
                    body = self.b2world.CreateStaticBody(position=(float(centre[0]), float(centre[1])))
                    add_polygon(body, piece.polygon - centre, mass=None, friction=PLANE_FRICTION,
                                restitution=PLANE_RESTITUTION)
                    self.plane_bodies.append(body)
        for j in world.joints:
            self._build_joint(j)

        self.moving: list[str] = [*self.vehicle_bodies,
                                  *(n for n, b in self.block_bodies.items() if b.type == Box2D.b2_dynamicBody)]
        for name in self.moving:
            self._local_center[name] = np.array(self._body(name).localCenter.tuple, dtype=np.float64)

        if raw_access is None:
            raw_access = os.environ.get("MVSIM_BOX2D_RAW", "1") != "0"
        self.raw = bool(raw_access) and raw_layout_ok() and self._make_raw_view()
        # batches of the mode in use (the other cache stays empty); the moving bodies' one for the grid obstacles
        self._batches: dict[tuple[str, ...], _Batch] = {}
        self._raw_batches: dict[tuple[str, ...], _RawBatch] = {}
        if self.raw:
            self._moving_raw = self._raw_batch(self.moving)
            self._moving_xy = np.empty((len(self.moving), 2))  # update_grid_obstacles' positions, reused
        else:
            self._moving_batch = self._batch(self.moving)
        self._contact_names = [*self.vehicle_bodies, *self.block_bodies]
        self._contact_bodies = [self._body(n) for n in self._contact_names]
        self._collision_order = [*self.vehicle_bodies, *self._block_names]
        self._flags = np.zeros(len(self._contact_names), dtype=np.bool_)
        self.contact_hits = -1  # bodies flagged by the last contact_flags() (-1: none yet)
        self._contact_addrs: np.ndarray | None = None
        if self.raw and raw_contacts_ok():
            self._contact_addrs = body_addresses(self._contact_bodies)

        for el in world.elements:
            if isinstance(el, OccupancyGrid):
                self.grids.append(GridObstacles.build(self.b2world, el, [self.max_radius[n] for n in self.moving]))
        self.update_grid_obstacles()

    # ------------------------------------------------------------------ building
    def _build_vehicle(self, v: Vehicle) -> None:
        x, y, _, yaw, _, _ = v.sim.pose
        ch = v.chassis
        if v.is_animated:  # moved along its keyframes (Physics.animate), never asleep (see _build_block)
            body = self.b2world.CreateKinematicBody(position=(float(x), float(y)), angle=float(yaw),
                                                    allowSleep=False)
        else:
            body = self.b2world.CreateDynamicBody(position=(float(x), float(y)), angle=float(yaw),
                                                  linearDamping=float(ch.linear_damping),
                                                  angularDamping=float(ch.angular_damping))
        body.userData = v.name
        fp = np.asarray(ch.footprint, dtype=np.float64).reshape(-1, 2)
        add_polygon(body, fp, mass=ch.mass, friction=CHASSIS_FRICTION, restitution=CHASSIS_RESTITUTION,
                    user_data="chassis", category=VEHICLE_CATEGORY)
        wheels = list(v.wheels)
        yaws = np.array([w.yaw for w in wheels], dtype=np.float64)
        self._wheels[v.name] = wheels
        self._wheel_fixtures[v.name] = [wheel_fixture(body, w, float(w.yaw)) for w in wheels]
        self._wheel_yaws[v.name] = yaws
        self.max_radius[v.name] = body_radius(fp, wheels)
        self.vehicle_bodies[v.name] = body
        self._set_initial_velocity(body, v.sim.init_vel, yaw)

    def _build_block(self, b: Block) -> None:
        x, y, _, yaw, _, _ = b.sim.pose
        prm = b.params
        fp = np.asarray(b.footprint, dtype=np.float64).reshape(-1, 2)
        if b.is_animated:  # moved by its keyframes (Physics.animate), pushing what it meets; never asleep, so that
            # its velocity can be written straight into Box2D's memory
            body = self.b2world.CreateKinematicBody(position=(float(x), float(y)), angle=float(yaw),
                                                    allowSleep=False)
            mass = None
        elif b.is_static:
            body = self.b2world.CreateStaticBody(position=(float(x), float(y)), angle=float(yaw))
            mass = None
        else:
            body = self.b2world.CreateDynamicBody(position=(float(x), float(y)), angle=float(yaw),
                                                  linearDamping=float(prm["linear_damping"]),
                                                  angularDamping=float(prm["angular_damping"]))
            mass = float(prm["mass"])
        body.userData = b.name
        add_polygon(body, fp, mass=mass, friction=float(prm["lateral_friction"]),
                    restitution=float(prm["restitution"]), mask=NOT_VEHICLES if b.is_drivable else 0xFFFF)
        max_r = body_radius(fp)
        self.max_radius[b.name] = max_r
        self.block_bodies[b.name] = body
        if mass is None:
            return
        mu = float(prm["ground_friction"])
        if mu > 0:
            max_force = 0.5 * mu * mass * self.gravity
            fjs = []
            for sx in (1.0, -1.0):
                local = (sx * max_r, 0.0)
                fjs.append(self._joint("CreateFrictionJoint", bodyA=self.ground, bodyB=body,
                                       localAnchorA=tuple(body.GetWorldPoint(local)), localAnchorB=local,
                                       maxForce=max_force, maxTorque=0.0, collideConnected=False))
            self.friction_joints[b.name] = fjs
        self._set_initial_velocity(body, b.sim.init_vel, yaw)

    def _build_actor(self, a: Actor) -> None:
        """A kinematic circle of the actor's collision radius, at its start pose (its walk moves it:
        :meth:`mvsim_core.dynamics.physics.Physics.animate`)."""
        x, y, _, yaw, _, _ = a.start_pose
        body = self.b2world.CreateKinematicBody(position=(float(x), float(y)), angle=float(yaw), allowSleep=False)
        body.userData = a.name
        body.CreateCircleFixture(radius=a.radius, density=0.0, friction=ACTOR_FRICTION, restitution=0.0)
        self.max_radius[a.name] = a.radius
        self.actor_bodies[a.name] = body

    def _set_initial_velocity(self, body: Any, init_vel: Sequence[float], yaw: float) -> None:
        vx, vy, w = (float(t) for t in init_vel)
        if vx == 0 and vy == 0 and w == 0:
            return
        c, s = math.cos(yaw), math.sin(yaw)
        self._set_velocity_api(body, c * vx - s * vy, s * vx + c * vy, w)

    def _build_joint(self, j: Joint) -> None:
        ba, bb = self._joint_body(j.body_a, j), self._joint_body(j.body_b, j)
        if ba is None or bb is None:
            return
        p = j.params
        common = dict(bodyA=ba, bodyB=bb, localAnchorA=tuple(map(float, p.anchor_a)),
                      localAnchorB=tuple(map(float, p.anchor_b)), collideConnected=False)
        if j.type.limits_distance:
            if p.min_length > 0:
                log.warning("joint %s-%s: min_length=%g is not supported by Box2D 2.3 and is ignored", j.body_a,
                            j.body_b, p.min_length)
            if p.stiffness > 0:
                ma, mb = ba.mass, bb.mass
                m_eff = ma * mb / (ma + mb) if ma > 0 and mb > 0 else max(ma, mb)
                omega = math.sqrt(p.stiffness / m_eff) if m_eff > 0 else 0.0
                zeta = p.damping / (2.0 * m_eff * omega) if omega > 0 else 0.0
                self.joints.append(self._joint("CreateDistanceJoint", length=float(p.max_length),
                                               frequencyHz=omega / (2 * math.pi), dampingRatio=zeta, **common))
            self.joints.append(self._joint("CreateRopeJoint", maxLength=float(p.max_length), **common))
        else:
            self.joints.append(self._joint(
                "CreateRevoluteJoint", referenceAngle=float(bb.angle - ba.angle), enableLimit=bool(p.enable_limit),
                lowerAngle=float(p.lower_angle_deg), upperAngle=float(p.upper_angle_deg), **common))

    def _joint(self, factory: str, **kwargs: Any) -> Any:
        """A joint made by ``b2world.<factory>(**kwargs)``, remembered so that :meth:`restart` can make it anew."""
        joint = getattr(self.b2world, factory)(**kwargs)
        self._joint_defs.append((joint, factory, kwargs))
        return joint

    def _joint_body(self, name: str, j: Joint) -> Any:
        body = self.vehicle_bodies.get(name) or self.block_bodies.get(name)
        if body is None:
            log.warning("joint %s-%s: '%s' has no physical body (intangible?); joint ignored", j.body_a, j.body_b,
                        name)
        return body

    # ------------------------------------------------------------------ raw view
    def _make_raw_view(self) -> bool:
        """Take the views of the address space that reach the bodies (:func:`~.box2d_raw.views_for`; False if an
        address is unusable). ``_mem`` (bytes, int32, float32, int64 views), ``_f32`` and ``_i32`` exist only when
        this returned True, i.e. when ``raw`` is on."""
        mem = views_for([*self.vehicle_bodies.values(), *self.block_bodies.values()])
        if mem is None:
            return False
        self._mem = mem
        _, self._i32, self._f32, _ = mem
        return True

    def _body(self, name: str) -> Any:
        body = self.vehicle_bodies.get(name)
        if body is None:
            body = self.block_bodies.get(name)
        if body is None:
            body = self.actor_bodies.get(name)
        if body is None:
            known = [*self.vehicle_bodies, *self.block_bodies, *self.actor_bodies]
            raise MvsimError(f"no Box2D body named '{name}'; bodies: {', '.join(known) or 'none'}")
        return body

    def _batch(self, names: Sequence[str]) -> _Batch:
        """Plain-path lookups for ``names`` (cached; :meth:`set_wheel_yaws` empties the cache, the COM moved)."""
        key = names if isinstance(names, tuple) else tuple(names)
        b = self._batches.get(key)
        if b is not None:
            return b
        bodies, dynamic = self._batch_bodies(key)
        lc = np.array([self._local_center.get(n, np.zeros(2)) for n in key], dtype=np.float64).reshape(-1, 2)
        return _remember(self._batches, _Batch(names=key, bodies=bodies, dynamic=dynamic, lc=lc))

    def _raw_batch(self, names: Sequence[str]) -> _RawBatch:
        """Raw-view lookups for ``names`` (cached; only when ``raw`` is on)."""
        key = names if isinstance(names, tuple) else tuple(names)
        b = self._raw_batches.get(key)
        if b is not None:
            return b
        bodies, dynamic = self._batch_bodies(key)
        base, read_idx, flag_idx = struct_indices(bodies)
        kinematic = np.array([bd.type == Box2D.b2_kinematicBody for bd in bodies], dtype=bool)
        return _remember(self._raw_batches, _RawBatch(names=key, bodies=bodies, dynamic=dynamic, base=base,
                                                      kinematic=kinematic, read_idx=read_idx, flag_idx=flag_idx))

    def _batch_bodies(self, key: tuple[str, ...]) -> tuple[list[Any], np.ndarray]:
        """The bodies named in ``key`` and whether each is dynamic (bool array)."""
        if len(set(key)) != len(key):
            raise MvsimError("a batch of bodies names each body once")
        bodies = [self._body(n) for n in key]
        return bodies, np.array([bd.type == Box2D.b2_dynamicBody for bd in bodies], dtype=bool)

    # ------------------------------------------------------------------ batched state access
    def read_states(self, names: Sequence[str]) -> np.ndarray:
        """Reference-point states of the named bodies, n×6: x, y (m), yaw (rad, Box2D's continuous angle, not
        wrapped), vx, vy (m/s, velocity of the body origin, world frame), omega (rad/s)."""
        if self.raw:
            out = np.empty((len(self._raw_batch(names).bodies), 6))
            self.read_states_into(names, out)
            return out
        b = self._batch(names)
        rows = []
        for bd in b.bodies:
            p, lv = bd.position, bd.linearVelocity
            rows.append((p.x, p.y, bd.angle, lv.x, lv.y, bd.angularVelocity))
        arr = np.array(rows, dtype=np.float64).reshape(-1, 6)
        x, y, a, vx, vy, w = arr.T
        s, c = np.sin(a), np.cos(a)
        lx, ly = b.lc[:, 0], b.lc[:, 1]
        dx, dy = c * lx - s * ly, s * lx + c * ly  # origin -> COM, world frame
        return np.column_stack([x, y, a, vx + w * dy, vy - w * dx, w])

    def read_states_into(self, names: Sequence[str], out: np.ndarray) -> None:
        """:meth:`read_states` written into ``out`` (n×6 float64, C-contiguous), without a new array."""
        if self.raw:
            read_raw_states(self._f32, self._raw_batch(names).read_idx, out)
        else:
            out[:] = self.read_states(names)

    def bind(self, names: Sequence[str], fx: np.ndarray, fy: np.ndarray, torque: np.ndarray,
             states: np.ndarray) -> BoundBodies:
        """:meth:`apply` of ``fx``, ``fy``, ``torque`` and :meth:`read_states_into` ``states`` for the bodies
        ``names``, their lookups made once (:class:`BoundBodies`): what the physics calls every step for its
        vehicles. The arrays are read (written) at each call, so they must stay the same objects."""
        return BoundBodies(self, names, fx, fy, torque, states)

    def local_centers(self, names: Sequence[str]) -> np.ndarray:
        """Centre of mass of each named body in its own frame, n×2 (m) -- for torques about the COM."""
        return np.array([self._body(n).localCenter.tuple for n in names], dtype=np.float64).reshape(-1, 2)

    def apply(self, name_order: Sequence[str], fx: ArrayLike, fy: ArrayLike, torque: ArrayLike) -> None:
        """Add a force (fx, fy: N, world frame) at each body's centre of mass and a torque (N·m, about the COM),
        waking the body (``ApplyForceToCenter`` + ``ApplyTorque`` with wake=True). Static bodies ignore it.
        Each of fx, fy, torque: one value per body in ``name_order``, or one for all.
        Forces are cleared by Box2D after each :meth:`step`."""
        if self.raw:
            rb = self._raw_batch(name_order)
            fx, fy, tq = _per_body(len(rb.bodies), fx, fy, torque)
            if apply_raw(self._f32, self._i32, rb.base, rb.flag_idx, rb.dynamic, fx, fy, tq):
                return
            direct = self._direct_mask(rb)
            add_forces(self._f32, rb.base[direct], fx[direct], fy[direct], tq[direct])
            for i in np.flatnonzero(~direct):
                bd = rb.bodies[i]
                bd.ApplyForceToCenter((float(fx[i]), float(fy[i])), True)
                bd.ApplyTorque(float(tq[i]), True)
            return
        b = self._batch(name_order)
        fx, fy, tq = _per_body(len(b.bodies), fx, fy, torque)
        for bd, x, y, t in zip(b.bodies, fx.tolist(), fy.tolist(), tq.tolist(), strict=True):
            bd.ApplyForceToCenter((x, y), True)
            bd.ApplyTorque(t, True)

    def set_velocities(self, names: Sequence[str], vx: ArrayLike, vy: ArrayLike, omega: ArrayLike) -> None:
        """Set each body's velocity from its reference-point velocity (vx, vy: m/s, world frame) and omega (rad/s);
        the COM velocity stored in Box2D is ``v + omega x (COM - origin)``. Static bodies ignore it.
        Each of vx, vy, omega: one value per body in ``names``, or one for all."""
        if self.raw:
            rb = self._raw_batch(names)
            vx, vy, w = _per_body(len(rb.bodies), vx, vy, omega)
            s, c, lx, ly = read_frames(self._f32, rb.read_idx).T
            dx, dy = c * lx - s * ly, s * lx + c * ly
            cvx, cvy = vx - w * dy, vy + w * dx
            direct = self._direct_mask(rb) | (rb.kinematic & self._awake(rb))
            write_velocities(self._f32, rb.base[direct], cvx[direct], cvy[direct], w[direct])
            for i in np.flatnonzero(~direct):
                bd = rb.bodies[i]
                bd.linearVelocity = (float(cvx[i]), float(cvy[i]))
                bd.angularVelocity = float(w[i])
            return
        b = self._batch(names)
        vx, vy, w = _per_body(len(b.bodies), vx, vy, omega)
        for bd, lc, x, y, ww in zip(b.bodies, b.lc, vx.tolist(), vy.tolist(), w.tolist(), strict=True):
            a = bd.angle
            c, s = math.cos(a), math.sin(a)
            dx, dy = c * lc[0] - s * lc[1], s * lc[0] + c * lc[1]
            bd.linearVelocity = (x - ww * dy, y + ww * dx)
            bd.angularVelocity = ww

    def _direct_mask(self, b: _RawBatch) -> np.ndarray:
        """Bodies whose struct may be written directly: dynamic and awake."""
        return self._awake(b) & b.dynamic

    def _awake(self, b: _RawBatch) -> np.ndarray:
        return awake_mask(self._i32, b.flag_idx)

    def _set_velocity_api(self, body: Any, vx: float, vy: float, w: float) -> None:
        lx, ly = body.localCenter.tuple
        a = body.angle
        c, s = math.cos(a), math.sin(a)
        dx, dy = c * lx - s * ly, s * lx + c * ly
        body.linearVelocity = (vx - w * dy, vy + w * dx)
        body.angularVelocity = w

    def restart(self, name: str, x: float, y: float, yaw: float) -> None:
        """Put body ``name`` at (x, y) m, ``yaw`` rad (world frame), at rest, with its contacts and joints made anew:
        after a blow-up their accumulated impulses are NaN, and Box2D would warm-start the next step with them. Its
        contacts are dropped (Box2D finds them again, cold, in the next step) and each joint attached to it is
        destroyed and created again from the same definition (joints of other bodies are untouched)."""
        body = self._body(name)
        body.transform = ((float(x), float(y)), float(yaw))
        body.linearVelocity = (0.0, 0.0)
        body.angularVelocity = 0.0
        body.active = False  # destroys its contacts and broad-phase proxies
        body.active = True
        for i, (joint, factory, kwargs) in enumerate(self._joint_defs):
            if kwargs["bodyA"] is not body and kwargs["bodyB"] is not body:
                continue
            self.b2world.DestroyJoint(joint)
            new = getattr(self.b2world, factory)(**kwargs)
            self._joint_defs[i] = (new, factory, kwargs)
            for group in (self.joints, *self.friction_joints.values()):
                if joint in group:
                    group[group.index(joint)] = new

    def remember_static(self) -> None:
        """Record where every static body of the Box2D world is (they never move), for :meth:`heal_static`; called
        once everything is built."""
        self._static_home = [(b, tuple(b.position), float(b.angle)) for b in self.b2world.bodies
                             if b.type == Box2D.b2_staticBody]

    def heal_static(self) -> int:
        """Put back every static body whose pose or velocity became NaN/inf: Box2D writes the solver's velocities
        back to the static bodies of an island too (0 · NaN = NaN), so a body that blew up poisons the ground its
        friction joints hold on to and the walls it touches. Returns how many were put back."""
        healed = 0
        for body, pos, angle in getattr(self, "_static_home", ()):
            p, v = body.position, body.linearVelocity
            if all(math.isfinite(c) for c in (p[0], p[1], body.angle, v[0], v[1], body.angularVelocity)):
                continue
            body.type = Box2D.b2_kinematicBody  # a change of type is what zeroes a static body's velocity
            body.type = Box2D.b2_staticBody
            body.transform = (pos, angle)
            healed += 1
        return healed

    def set_pose(self, name: str, x: float, y: float, yaw: float) -> None:
        """Teleport a body's origin to (x, y) m, ``yaw`` rad (world frame); velocities are kept."""
        self._body(name).transform = ((float(x), float(y)), float(yaw))

    # ------------------------------------------------------------------ steering
    def set_wheel_yaws(self, name: str, yaws: ArrayLike) -> bool:
        """Turn vehicle ``name``'s wheel boxes to ``yaws`` (rad, vehicle frame, mounting yaw included; one per wheel,
        in wheel order). A box is rebuilt only when its yaw moved more than 1e-3 rad (upstream re-creates every wheel
        box every step). Returns whether anything was rebuilt. Mass, COM and moment of inertia are unchanged (a box
        turned about its centre keeps its polar moment); what changes is the boxes' collision outline."""
        body = self.vehicle_bodies.get(name)
        if body is None:
            raise MvsimError(f"no vehicle named '{name}'; vehicles: {', '.join(self.vehicle_bodies) or 'none'}")
        yaws = np.asarray(yaws, dtype=np.float64)
        old = self._wheel_yaws[name]
        if yaws.shape != old.shape:
            raise MvsimError(f"vehicle '{name}' has {len(old)} wheels; got {yaws.size} yaws")
        changed = np.flatnonzero(np.abs(yaws - old) > WHEEL_YAW_TOLERANCE)
        if not len(changed):
            return False
        fixtures, wheels = self._wheel_fixtures[name], self._wheels[name]
        for i in changed:
            body.DestroyFixture(fixtures[i])
            fixtures[i] = wheel_fixture(body, wheels[i], float(yaws[i]))
            old[i] = yaws[i]
        self._local_center[name] = np.array(body.localCenter.tuple, dtype=np.float64)
        if not self.raw:
            self._batches.clear()
        return True

    # ------------------------------------------------------------------ snapshots (World.snapshot / World.restore)
    def save_state(self) -> dict[str, Any]:
        """The fixtures that come and go while running, for a world snapshot: each vehicle's wheel yaws (rad, the
        boxes' current turn) and each occupancy grid's squares. The Box2D state itself is captured by
        :mod:`.box2d_state` (:attr:`joint_list` tells it the joints)."""
        return {"wheel_yaws": {n: y.copy() for n, y in self._wheel_yaws.items()},
                "grids": [g.save_state() for g in self.grids]}

    def restore_fixtures(self, saved: dict[str, Any]) -> None:
        """Make the wheel boxes and grid squares those of a :meth:`save_state` result (boxes whose yaw differs at
        all are made anew, as :meth:`set_wheel_yaws` makes them), before :mod:`.box2d_state` writes the rest."""
        for name, want in saved["wheel_yaws"].items():
            old = self._wheel_yaws[name]
            body, fixtures, wheels = self.vehicle_bodies[name], self._wheel_fixtures[name], self._wheels[name]
            for i in np.flatnonzero(old != want).tolist():
                body.DestroyFixture(fixtures[i])
                fixtures[i] = wheel_fixture(body, wheels[i], float(want[i]))
                old[i] = want[i]
        for g, gs in zip(self.grids, saved["grids"], strict=True):
            g.restore_state(gs)

    def restored(self) -> None:
        """After :mod:`.box2d_state` rewrote the bodies: read the centres of mass again (the plain path's cache)."""
        for name in self.moving:
            self._local_center[name] = np.array(self._body(name).localCenter.tuple, dtype=np.float64)
        self._batches.clear()

    @property
    def joint_list(self) -> list[Any]:
        """Every Box2D joint of the world, in a fixed order (the order they were made in; a joint made anew by
        :meth:`restart` takes its predecessor's place)."""
        return [j for j, _, _ in self._joint_defs]

    def wheel_fixtures(self, name: str) -> list[Any]:
        """The wheel box fixtures of vehicle ``name``, in wheel order."""
        return list(self._wheel_fixtures[name])

    # ------------------------------------------------------------------ occupancy grids
    def moving_positions(self) -> np.ndarray:
        """Origins (m, world frame) of the dynamic bodies (:attr:`moving`: vehicles, then dynamic blocks), n×2."""
        return self._positions()

    def _positions(self) -> np.ndarray:
        """Origins (m, world frame) of the moving bodies, n×2."""
        if self.raw:
            read_idx = self._moving_raw.read_idx
            out = np.empty((read_idx.shape[0], 2))
            read_raw_positions(self._f32, read_idx, out)
            return out
        return np.array([bd.position.tuple for bd in self._moving_batch.bodies], dtype=np.float64).reshape(-1, 2)

    def update_grid_obstacles(self) -> None:
        """Make the obstacle fixtures of every occupancy grid match the moving bodies' neighbourhoods.

        For each dynamic body (vehicles, dynamic blocks), the occupied cells (occupancy > 0.5) whose centres lie
        within ``r = 1.5 * max_radius + resolution`` of the body origin (searched from the body's cell, so up to
        half a cell diagonal more) get a static square fixture of half-width 0.5 cell (upstream: 0.4, which leaves
        gaps between neighbouring cells) on the grid's static body, with the grid's ``lateral_friction`` and
        ``restitution``; fixtures of cells no longer near any moving body are removed. Upstream finds the cells with
        a 50-ray scan of range 1.5 x max radius; a full neighbourhood is simpler and at least as correct (a scan can
        miss cells between rays or behind the first hit).

        Cost: ~3 µs for 25 vehicles when no body changed cell; each body that did costs one compiled pass over its
        neighbourhood and Box2D calls only for the cells that enter or leave the union of all neighbourhoods
        (:mod:`.grid_obstacles`).
        """
        if not self.grids or not self.moving:
            return
        if self.raw:  # into one array, reused (the grids keep no reference to it)
            pos = self._moving_xy
            read_raw_positions(self._f32, self._moving_raw.read_idx, pos)
        else:
            pos = self._positions()
        for g in self.grids:
            g.update(pos)

    # ------------------------------------------------------------------ stepping and contacts
    def step(self, dt: float) -> None:
        """One Box2D step of ``dt`` seconds (velocity/position iterations from the world's ``b2d_*_iters``)."""
        self.b2world.Step(float(dt), self.velocity_iterations, self.position_iterations)

    def collisions(self, threshold: float) -> dict[str, bool]:
        """Per vehicle and block name: whether it is in collision now -- any contact between non-sensor fixtures
        that is touching, or whose shapes (skins included) are closer than ``threshold`` m (Box2D only keeps
        contacts for pairs whose bounding boxes, enlarged by 0.1 m, overlap). Intangible blocks are always False.

        Read by a compiled walk over Box2D's contact lists when :func:`raw_contacts_ok` (~1 µs for 5 vehicles in a
        corridor, against ~35 µs through pybox2d, ~115 µs with a threshold and its b2Distance calls)."""
        out = dict.fromkeys(self._collision_order, False)
        out.update(zip(self._contact_names, self.contact_flags(threshold).tolist(), strict=True))
        return {n: out[n] for n in self._collision_order}

    @property
    def contact_names(self) -> list[str]:
        """Names of the bodies :meth:`contact_flags` reports on: the vehicles, then the blocks with a body."""
        return self._contact_names

    def contact_flags(self, threshold: float) -> np.ndarray:
        """(n,) bool: :meth:`collisions` of the bodies in :attr:`contact_names` order, as an array (no dict).
        :attr:`contact_hits` is then the number of True values."""
        if self._contact_addrs is not None:
            flags = self._flags  # the kernel writes every entry (or returns -1)
            m8, m32, mf, m64 = self._mem
            hits = collision_flags_raw(m8, m32, mf, m64, self._contact_addrs, float(threshold), flags)
            if hits >= 0:
                self.contact_hits = int(hits)
                return flags
            log.warning("unexpected Box2D contact data; collision flags go through the pybox2d API from now on")
            self._contact_addrs = None
        index = {b: k for k, b in enumerate(self._contact_bodies)}
        flags = np.array(collision_flags_api(self.b2world, index, float(threshold)), dtype=np.bool_).reshape(-1)
        self.contact_hits = int(flags.sum())
        return flags


class BoundBodies:
    """:meth:`Bodies.apply` and :meth:`Bodies.read_states_into` for one fixed list of bodies and fixed arrays, with
    the raw path's lookups (struct indices, views) bound once instead of at every call; the results are those of the
    two methods, bit for bit (a call the raw kernel declines, or a world without the raw path, goes through them).

    Valid for the life of its :class:`Bodies` (bodies are not destroyed while it lives: a spawn or a removal builds
    new ones).

    Args:
        bodies: the Box2D side of the world. names: the bodies, in row order.
        fx, fy, torque: (n,) float64: the force (N, world frame) at each centre of mass and the torque (N·m) that
            :meth:`apply` adds. states: (n, 6) float64, C-contiguous: where :meth:`read_states` writes.
    """

    __slots__ = ("_bodies", "_names", "_fx", "_fy", "_torque", "_states", "_apply_args", "_read_args")

    def __init__(self, bodies: Bodies, names: Sequence[str], fx: np.ndarray, fy: np.ndarray, torque: np.ndarray,
                 states: np.ndarray) -> None:
        self._bodies = bodies
        self._names = tuple(names)
        self._fx, self._fy, self._torque, self._states = fx, fy, torque, states
        self._apply_args: tuple[Any, ...] | None = None
        self._read_args: tuple[Any, ...] | None = None
        if bodies.raw:
            rb = bodies._raw_batch(self._names)
            self._apply_args = (bodies._f32, bodies._i32, rb.base, rb.flag_idx, rb.dynamic, fx, fy, torque)
            self._read_args = (bodies._f32, rb.read_idx, states)

    def apply(self) -> None:
        """:meth:`Bodies.apply` of the bound forces and torques (cleared by Box2D after each step)."""
        args = self._apply_args
        if args is not None and apply_raw(*args):  # all dynamic and awake: written straight into the structs
            return
        self._bodies.apply(self._names, self._fx, self._fy, self._torque)  # (apply_raw changed nothing)

    def read_states(self) -> None:
        """:meth:`Bodies.read_states_into` the bound states array."""
        args = self._read_args
        if args is not None:
            read_raw_states(*args)
        else:
            self._bodies.read_states_into(self._names, self._states)


def _per_body(n: int, *values: ArrayLike) -> list[np.ndarray]:
    """Each value as a float64 array of n entries (scalars are repeated)."""
    out = []
    for v in values:
        if type(v) is np.ndarray and v.dtype == np.float64 and v.shape == (n,):  # the physics' own arrays
            out.append(v)
            continue
        a = np.asarray(v, dtype=np.float64)
        if a.shape != (n,):
            try:
                a = np.broadcast_to(a, (n,))
            except ValueError:
                raise MvsimError(f"expected {n} values, one per body (or one for all); got shape {a.shape}") from None
        out.append(a)
    return out

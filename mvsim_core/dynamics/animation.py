"""Keyframe animation in the physics: the objects whose pose is forced every step, driven along their tracks.

Blocks with keyframes (``<animation type="keyframes">``, reference §1.13), walking actors (§1.15), animated vehicles
and, without a body, intangible keyframed blocks and animated horizontal planes (elevators). Where each one is at a
time t is :class:`~.keyframes.KeyframeTracks`' business; this module sets up those tracks for a
:class:`~mvsim_core.dynamics.physics.Physics` (:func:`start_animations`, at its build) and, in stage 0 of every step
(:func:`animate`, called by :meth:`Physics.animate <mvsim_core.dynamics.physics.Physics.animate>`), gives each
kinematic body the velocity that takes it to its track's pose at the step's end (:mod:`.kinematic_drive`), so that it
pushes what it meets.

The state lives in the :class:`~mvsim_core.dynamics.physics.Physics` (its ``anim_*`` arrays, ``tracks``,
``animated``, ...), where a world snapshot saves it and the objects read their poses.

Frames and units: world frame, metres, radians, seconds.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.dynamics.kinematic_drive import JUMP, SLEEP, WAKE, drive_tracks

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics


def start_animations(physics: Physics) -> None:
    """The objects whose pose is forced every step, each put where its track says now. Rows of
    :attr:`Physics.anim_poses`, in this order: blocks with keyframes and a body, actors with a path (their walks), then
    those without a body: intangible blocks with keyframes and animated horizontal planes (elevators). Block
    and plane tracks are based on their initial poses (after the elevation adjust)."""
    from mvsim_core.dynamics.keyframes import KeyframeTracks
    from mvsim_core.elements.horizontal_plane import HorizontalPlane

    blocks, actors = physics.world.blocks, physics.world.actors
    names = [name for name, b in blocks.items() if b.is_animated and name in physics.bodies.block_bodies]
    objs: list[Any] = [blocks[n] for n in names]
    physics._anim_bodies = [physics.bodies.block_bodies[n] for n in names]
    tracks = [(b.sim.pose, b.sim.keyframes) for b in objs]
    loop_from = [0.0] * len(tracks)
    for name, a in actors.items():
        if not a.path:  # it stands where it is put
            continue
        frames, start = a.walk()
        names.append(name)
        objs.append(a)
        physics._anim_bodies.append(physics.bodies.actor_bodies[name])
        tracks.append(((0.0, 0.0, 0.0, 0.0, 0.0, 0.0), frames))
        loop_from.append(start)
    for v in physics.vehicles:
        if v.is_animated:
            names.append(v.name)
            objs.append(v)
            physics._anim_bodies.append(physics.bodies.vehicle_bodies[v.name])
            tracks.append((v.sim.pose, v.sim.keyframes))
            loop_from.append(0.0)
    physics.animated = names  # the rows with a kinematic body
    physics._animated_vehicles = np.array([k for k, v in enumerate(physics.vehicles) if v.is_animated], dtype=np.int64)
    physics._animated_list = physics._animated_vehicles.tolist()
    physics._anim_raw = physics.bodies._raw_batch(names) if names and physics.bodies.raw else None
    nb = len(names)
    # vehicles never sleep (their state is read from their bodies): an infinite radius keeps them near
    physics._anim_radius = np.array([math.inf if n in physics.bodies.vehicle_bodies else physics.bodies.max_radius[n]
                                  for n in names], dtype=np.float64)
    physics._anim_awake = np.ones(nb, dtype=np.bool_)  # kinematic bodies are made awake
    physics._anim_stale = np.zeros((nb, 2))  # where a sleeping one's body was left (m, world)
    physics._anim_change = np.zeros(nb, dtype=np.int64)
    moving = physics.bodies.moving
    physics._dyn_radius = np.array([physics.bodies.max_radius[n] for n in moving], dtype=np.float64)
    physics._dyn_idx = (np.ascontiguousarray(physics.bodies._raw_batch(moving).read_idx[:, :2]) if physics._anim_raw
                     is not None and moving else np.zeros((0, 2), dtype=np.int64))
    physics._dyn_xy = np.zeros((len(physics._dyn_idx), 2))
    ghosts = [b for name, b in blocks.items() if b.is_animated and name not in physics.bodies.block_bodies]
    physics.moving_planes = [e for e in physics.world.elements if isinstance(e, HorizontalPlane) and e.is_animated]
    for b in ghosts:
        objs.append(b)
        tracks.append((b.sim.pose, b.sim.keyframes))
        loop_from.append(0.0)
    for e in physics.moving_planes:
        objs.append(e)
        tracks.append((e.init_pose, e.keyframes))
        loop_from.append(0.0)
    physics._anim_objs = objs
    moved = set(names)
    physics._loose_blocks = [n for n in physics.dynamic_blocks if n not in moved]  # pushed around, not driven
    physics.tracks = KeyframeTracks(tracks, loop_from)
    physics._anim_next = None  # poses at the end of the step under way (set by animate)
    physics.anim_poses = physics.tracks.poses(physics.world.time).copy()  # now: 0, or the time of a rebuild
    for k, obj in enumerate(objs):
        if k < len(names):
            x, y, _, yaw, _, _ = (float(v) for v in physics.anim_poses[k])
            physics._anim_bodies[k].transform = ((x, y), yaw)
        if hasattr(obj, "attach_track"):  # vehicles read their pose from the physics state
            obj.attach_track(physics, k)
    physics.terrain.refresh_planes()


def animate(physics: Physics, t: float, dt: float) -> None:
    """Stage 0: every animated block and every actor is given the velocity that takes its kinematic body from
    where it is to its track's pose for t + dt (s) over the step, so that it pushes what it meets, all in a few
    array operations (the bodies never sleep: their velocities are written straight into Box2D's memory). In
    a step where a track starts its period again, the object jumps there instead (no velocity). What has no
    body (intangible blocks, horizontal planes) is at its pose for t + dt from now on, so that this step's
    terrain fit lifts the vehicles on an elevator with it."""
    if not physics._anim_objs:
        return
    nb = len(physics.animated)
    tr, raw = physics.tracks, physics._anim_raw
    todo = 0
    if raw is not None:
        b = physics.bodies
        todo = drive_tracks(t, t + dt, tr.start, tr.times, tr.frames, tr.base, tr.loop_from, tr.period,
                            tr.last_poses, tr.last_jump, b._f32, b._i32, raw.base, raw.flag_idx,
                            physics._anim_radius, physics._dyn_idx, physics._dyn_radius, physics._dyn_xy,
                            physics._anim_awake, physics._anim_stale, physics._anim_change)
        p1, jump = tr.last_poses, tr.last_jump
    else:
        p1, jump = tr.advance(t, t + dt)
    if nb < len(p1):
        physics.anim_poses[nb:] = p1[nb:]
        if physics.moving_planes:
            physics.terrain.refresh_planes()
            physics.terrain_obstacles.ground_moved(physics.state, [e.rect for e in physics.moving_planes])
    physics._anim_next = p1
    if not nb:
        return
    if raw is None:  # every body driven through the API
        q1, jb = p1[:nb], jump[:nb]
        st = physics.bodies.read_states(physics.animated)
        vx = np.where(jb, 0.0, (q1[:, 0] - st[:, 0]) / dt)
        vy = np.where(jb, 0.0, (q1[:, 1] - st[:, 1]) / dt)
        w = np.where(jb, 0.0, ((q1[:, 3] - st[:, 2] + math.pi) % (2.0 * math.pi) - math.pi) / dt)
        physics.bodies.set_velocities(physics.animated, vx, vy, w)
        for k in np.flatnonzero(jb).tolist():
            physics._anim_bodies[k].transform = ((float(q1[k, 0]), float(q1[k, 1])), float(q1[k, 3]))
    elif todo:
        _change_bodies(physics, p1, jump, dt)


def _change_bodies(physics: Physics, p1: np.ndarray, jump: np.ndarray, dt: float) -> None:
    """The state changes :func:`~mvsim_core.dynamics.kinematic_drive.drive_tracks` asked for: a body woken is
    put where its track has it now and given the velocity to ``p1``; one put to sleep stops where it is; one
    whose track wraps jumps to ``p1``."""
    now = physics.anim_poses
    for k in np.flatnonzero(physics._anim_change).tolist():
        change, body = int(physics._anim_change[k]), physics._anim_bodies[k]
        if change == WAKE:
            if jump[k]:
                body.transform = ((float(p1[k, 0]), float(p1[k, 1])), float(p1[k, 3]))
                vx = vy = w = 0.0
            else:
                body.transform = ((float(now[k, 0]), float(now[k, 1])), float(now[k, 3]))
                vx, vy = (p1[k, 0] - now[k, 0]) / dt, (p1[k, 1] - now[k, 1]) / dt
                w = ((p1[k, 3] - now[k, 3] + math.pi) % (2.0 * math.pi) - math.pi) / dt
            body.awake = True
            physics.bodies._set_velocity_api(body, float(vx), float(vy), float(w))
            physics._anim_awake[k] = True
        elif change == SLEEP:
            body.linearVelocity = (0.0, 0.0)
            body.angularVelocity = 0.0
            body.awake = False
            physics._anim_stale[k] = body.position.tuple
            physics._anim_awake[k] = False
        elif change == JUMP:
            body.transform = ((float(p1[k, 0]), float(p1[k, 1])), float(p1[k, 3]))


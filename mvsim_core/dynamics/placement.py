"""Where objects start: the initial elevation adjust (reference §1.13) and the settle of vehicles on their wheels.

One rule, used by :class:`~mvsim_core.dynamics.physics.Physics` when it builds the bodies and by
:meth:`World.extents <mvsim_core.world.World.extents>` (what ``mvsim check`` prints) on a world that has not started,
so that the physics, the report and every sensor place each object at the same height:

* a **vehicle** (unless ``<skip_elevation_adjust/>``) starts on the highest ground it drives on
  (:func:`vehicle_ground`: the world elements, static blocks and drivable ramps and bumps) under
  (x, y, z + chassis zmax / 2), then settles with the attitude of its wheel contacts, the fit starting half a chassis
  height above that ground (so that wheels on the uphill side find their ground too);
* a **block** (unless ``<skip_elevation_adjust/>``) starts on the highest ground of the world *elements* under
  (x, y, z + zmax / 2) (:func:`block_ground`), never on another block. In the 2.5D physics a block that overlaps
  another one in x-y collides with it (or, intangible, passes through it) whatever their heights, so it cannot rest
  on its top: a block lifted there would float for the 3D sensors over a footprint that the physics and the 2D
  lidars treat as standing on the floor (upstream's turtlebot world puts its columns on the wall corners);
* **walls** keep z = 0: their footprints are in the world frame, the pose origin need not lie in them.

An object is placed once: :attr:`~mvsim_core.xml.simulable.SimulableSpec.placed` remembers the pose the adjust gave,
so a rebuilt physics (a spawn, a removal) does not lift it again from its adjusted height. Moving it (``set_pose``,
a reset to the written pose) makes it due again.

Frames and units: world frame, metres and radians; poses (x, y, z, yaw, pitch, roll).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.dynamics.terrain import Terrain, initial_z

if TYPE_CHECKING:
    from mvsim_core.world_model import WorldModel

Pose = tuple[float, float, float, float, float, float]


def vehicle_ground(elements: Sequence[Any], blocks: Iterable[Any]) -> Terrain:
    """The ground vehicles drive on: the world elements, static tangible blocks and drivable ones (ramps, bumps).
    Blocks that move (pushed or keyframed) are walls for vehicles in the 2D physics, never under them."""
    return Terrain(elements, [b for b in blocks if b.is_drivable or (b.is_static and not b.is_intangible)])


def block_ground(elements: Sequence[Any]) -> Terrain:
    """The ground blocks start on: the world elements only (see the module docstring)."""
    return Terrain(elements, ())


def due(obj: Any) -> bool:
    """Whether ``obj`` (a vehicle or block) gets the initial elevation adjust now: it does not skip it and was not
    placed at its current pose already."""
    return not obj.sim.skip_elevation_adjust and obj.sim.placed != obj.sim.pose


def adjusted(obj: Any, ground: Terrain, zmax: float) -> Pose:
    """``obj``'s pose on the highest ground of ``ground`` under (x, y, z + zmax / 2) (its written z where there is
    none)."""
    x, y, z, yaw, pitch, roll = obj.sim.pose
    return (x, y, initial_z(ground, x, y, z, zmax), yaw, pitch, roll)


def place_blocks(blocks: Iterable[Any], elements: Sequence[Any]) -> None:
    """Apply the initial elevation adjust to the blocks that are due (:func:`due`) and have no run-time pose."""
    ground: Terrain | None = None
    for b in blocks:
        if b.state_pose is None and due(b):
            ground = ground or block_ground(elements)
            b.sim.pose = b.sim.placed = adjusted(b, ground, b.zmax)


def place_vehicles(vehicles: Iterable[Any], ground: Terrain) -> None:
    """Apply the initial elevation adjust to the vehicles that are due (:func:`due`), on ``ground``
    (:func:`vehicle_ground`)."""
    for v in vehicles:
        if due(v):
            v.sim.pose = v.sim.placed = adjusted(v, ground, v.chassis.zmax)


def settle(vehicles: Sequence[Any], ground: Terrain, supports: Any, wheels: Any, state: np.ndarray, z: np.ndarray,
           pitch: np.ndarray, roll: np.ndarray) -> None:
    """Give every adjustable vehicle the attitude of its wheel contacts (in place).

    Args:
        vehicles: in physics order. ground: :func:`vehicle_ground`. supports: their
            :class:`~mvsim_core.dynamics.chassis_supports.ChassisSupports`; wheels: their
            :class:`~mvsim_core.dynamics.wheels.WheelArrays`.
        state: (V, >= 3) x, y (m), yaw (rad), as the 2D physics holds them. z, pitch, roll: (V,) m, rad; in: after the
            adjust; out: settled (vehicles with ``<skip_elevation_adjust/>`` keep theirs).
    """
    adjust = np.array([not v.sim.skip_elevation_adjust for v in vehicles], dtype=bool)
    if not adjust.any() or wheels.n == 0:
        return
    lift = np.array([0.5 * v.chassis.zmax for v in vehicles])
    wheel_xy = np.column_stack([wheels.x, wheels.y])
    zf, pf, rf = ground.fit_vehicles(state[:, 0], state[:, 1], state[:, 2], z + lift, pitch, roll, wheel_xy,
                                     2.0 * wheels.radius, wheels.vehicle)
    supports.fit(ground, state, zf, pf, rf)
    z[:] = np.where(adjust, zf, z)
    pitch[:] = np.where(adjust, pf, pitch)
    roll[:] = np.where(adjust, rf, roll)


def start_poses(world: WorldModel) -> dict[str, Pose]:
    """The pose every vehicle, block and actor of ``world`` starts with, as :class:`~mvsim_core.dynamics.physics.
    Physics` will place it — without building the physics (Box2D keeps x, y and yaw in float32: so are they here):
    the adjust, then objects with a keyframe track or a walk where their track has them at the world's time, then
    the vehicles' settle. Blocks and vehicles that are due get their adjust (the same call the physics makes; they
    are then placed)."""
    from mvsim_core.dynamics.chassis_supports import ChassisSupports
    from mvsim_core.dynamics.keyframes import KeyframeTracks
    from mvsim_core.dynamics.wheels import WheelArrays

    vehicles = list(world.vehicles.values())
    ground = vehicle_ground(world.elements, world.blocks.values())
    place_vehicles(vehicles, ground)
    place_blocks(world.blocks.values(), world.elements)
    out: dict[str, Pose] = {n: b.pose for n, b in world.blocks.items()}
    out.update({n: a.pose for n, a in world.actors.items()})
    tracks: list[tuple[Any, Any]] = []
    loop_from: list[float] = []
    names: list[str] = []
    for b in world.blocks.values():
        if b.is_animated:
            tracks.append((b.sim.pose, b.sim.keyframes))
            loop_from.append(0.0)
            names.append(b.name)
    for a in world.actors.values():
        if a.path:
            frames, start = a.walk()
            tracks.append(((0.0, 0.0, 0.0, 0.0, 0.0, 0.0), frames))
            loop_from.append(start)
            names.append(a.name)
    for v in vehicles:
        if v.is_animated:
            tracks.append((v.sim.pose, v.sim.keyframes))
            loop_from.append(0.0)
            names.append(v.name)
    if tracks:
        on_track = KeyframeTracks(tracks, loop_from).poses(float(world.time))
        out.update({n: tuple(float(c) for c in p) for n, p in zip(names, on_track, strict=True)})  # type: ignore[misc]
    if not vehicles:
        return out
    poses = np.array([out.get(v.name, v.sim.pose) for v in vehicles], dtype=np.float64).reshape(-1, 6)
    state = poses[:, [0, 1, 3]].astype(np.float32).astype(np.float64)
    z, pitch, roll = poses[:, 2].copy(), poses[:, 4].copy(), poses[:, 5].copy()
    if ground.flat_z is None:
        wheels = WheelArrays(vehicles, float(world.params["gravity"]))
        settle(vehicles, ground, ChassisSupports(vehicles, wheels), wheels, state, z, pitch, roll)
    for k, v in enumerate(vehicles):
        out[v.name] = (float(state[k, 0]), float(state[k, 1]), float(z[k]), float(state[k, 2]), float(pitch[k]),
                       float(roll[k]))
    return out

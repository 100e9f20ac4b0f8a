"""The world's objects at run time: spawning and removing vehicles, blocks and actors, and going back to the start.

:class:`~mvsim_core.world.World` keeps the API (:meth:`~mvsim_core.world.World.spawn`,
:meth:`~mvsim_core.world.World.spawn_many`, :meth:`~mvsim_core.world.World.remove`,
:meth:`~mvsim_core.world.World.remove_many`, :meth:`~mvsim_core.world.World.batch`,
:meth:`~mvsim_core.world.World.reset`, ...), documented there; its methods call the functions here. Also here: what
the world started with (:class:`Origin`) and what each object goes back to on a reset (:class:`Initial`). A spawn or
removal while running rebuilds the physics (:func:`rebuild`), at once or at the end of a batch.

Poses: world frame, (x, y, yaw) in m, m, rad; six-value poses are (x, y, z, yaw, pitch, roll).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mvsim_core import arguments as arg
from mvsim_core.dynamics.command_limits import checked_pose
from mvsim_core.errors import MvsimError
from mvsim_core.objects.actor import Actor
from mvsim_core.objects.block import Block
from mvsim_core.objects.vehicles.base import Vehicle

if TYPE_CHECKING:
    from mvsim_core.objects.joint import Joint
    from mvsim_core.world import World

Pose6 = tuple[float, float, float, float, float, float]
SimObject = Vehicle | Block | Actor
"""What :meth:`World.spawn <mvsim_core.world.World.spawn>` adds and :meth:`World.remove
<mvsim_core.world.World.remove>` takes away."""


@dataclass(frozen=True)
class Spawn:
    """One object for :meth:`World.spawn_many <mvsim_core.world.World.spawn_many>`: the arguments of
    :meth:`World.spawn <mvsim_core.world.World.spawn>` (``what``: XML text of one ``<vehicle>``, ``<block>`` or
    ``<actor>``, or a built object; ``name``; ``pose`` = (x, y, yaw) in m, m, rad, world frame)."""

    what: str | SimObject
    name: str | None = None
    pose: tuple[float, float, float] | None = None


class ObjectParser(Protocol):
    """Builds one vehicle, block or actor from XML text for :meth:`World.spawn <mvsim_core.world.World.spawn>`
    (the loader's :func:`mvsim_core.loader.parse_object`, installed on every world it loads)."""

    def __call__(self, world: World, xml: str, *, name: str | None = None,
                 pose: tuple[float, float, float] | None = None,
                 default_pose: tuple[float, float, float] | None = None, source: str | Path | None = None,
                 allow_shell: bool = False) -> SimObject: ...


@dataclass
class Initial:
    """What :meth:`World.reset <mvsim_core.world.World.reset>` puts one object back to, as it was at the start (or
    when it was spawned): its pose as declared (before the terrain placed it; world frame, m / rad) and, for a
    vehicle, its controller's state and its wheels' yaws (rad)."""

    obj: SimObject
    pose: Pose6
    controller: dict[str, Any] | None = None
    wheel_yaws: tuple[float, ...] = ()


@dataclass
class Origin:
    """The world as it started: its objects and joints, in order, and its random generator's seed and state."""

    vehicles: dict[str, Vehicle]
    blocks: dict[str, Block]
    actors: dict[str, Actor]
    joints: list[Joint]
    rng_seed: int
    rng_state: dict[str, Any]


def spawn(world: World, what: str | SimObject, *, name: str | None = None,
          pose: tuple[float, float, float] | None = None, source: str | Path | None = None,
          allow_shell: bool = False) -> SimObject:
    """The work of :meth:`World.spawn <mvsim_core.world.World.spawn>` (documented there)."""
    arg.instance("spawn", "what", what, (str, Vehicle, Block, Actor), "XML text (str) or a Vehicle, Block or Actor")
    name = arg.optional_name("spawn", "name", name)
    arg.optional_path("spawn", "source", source)
    allow_shell = arg.flag("spawn", "allow_shell", allow_shell)
    if pose is not None:
        pose = checked_pose("spawn", name or "(new object)", *arg.reals("spawn", "pose", pose, 3))
    if isinstance(what, str):
        if world.object_parser is None:
            raise MvsimError("this World reads no XML (it was not made by load_world): pass a built object")
        obj = world.object_parser(world, what, name=name, pose=pose, source=source, allow_shell=allow_shell)
    else:
        obj = what
        if pose is not None:
            _, _, z, _, pitch, roll = obj.sim.pose
            obj.sim.pose = (float(pose[0]), float(pose[1]), z, float(pose[2]), pitch, roll)
    if obj.name in world.vehicles or obj.name in world.blocks or obj.name in world.actors:
        raise MvsimError(f"cannot spawn '{obj.name}': another vehicle, block or actor already has that name")
    if isinstance(obj, Vehicle):
        world.vehicles[obj.name] = obj
        for s in obj.sensors.values():
            s.reset(world.time)
            if world._dt is not None and s.period < world._dt - 1e-12:
                world.warnings.append(f"vehicle '{obj.name}': sensor '{s.name}' has a period of {s.period:g} s, "
                                     f"shorter than the timestep {world._dt:g} s; it will sample late")
    elif isinstance(obj, Block):
        world.blocks[obj.name] = obj
    else:
        world.actors[obj.name] = obj
    if world._physics is not None:
        remember(world, obj)
        rebuild(world, fresh={obj.name})
    return obj


def spawn_many(world: World, items: Iterable[Spawn | str | SimObject], *, source: str | Path | None = None,
               allow_shell: bool = False) -> list[SimObject]:
    """The work of :meth:`World.spawn_many <mvsim_core.world.World.spawn_many>` (documented there)."""
    listed = arg.items("spawn_many", "items", items)
    for k, item in enumerate(listed):
        arg.instance("spawn_many", f"items[{k}]", item, (Spawn, str, Vehicle, Block, Actor),
                     "a Spawn, XML text (str) or a Vehicle, Block or Actor")
    arg.optional_path("spawn_many", "source", source)
    allow_shell = arg.flag("spawn_many", "allow_shell", allow_shell)
    added: list[SimObject] = []
    with world.batch():
        for k, item in enumerate(listed):
            spec = item if isinstance(item, Spawn) else Spawn(item)
            try:
                added.append(world.spawn(spec.what, name=spec.name, pose=spec.pose, source=source,
                                         allow_shell=allow_shell))
            except MvsimError as e:
                for obj in reversed(added):
                    world.remove(obj.name)
                e.item = k  # type: ignore[attr-defined]  # which item failed, for callers that report it
                raise
    return added


def remove_many(world: World, names: Iterable[str]) -> list[SimObject]:
    """The work of :meth:`World.remove_many <mvsim_core.world.World.remove_many>` (documented there)."""
    wanted = arg.items("remove_many", "names", names)
    for k, n in enumerate(wanted):
        arg.name("remove_many", f"names[{k}]", n)
    unknown = [n for n in wanted if not (n in world.vehicles or n in world.blocks or n in world.actors)]
    if unknown:
        raise MvsimError(f"cannot remove {', '.join(repr(n) for n in unknown)}: no such object; nothing removed")
    twice = sorted({n for n in wanted if wanted.count(n) > 1})
    if twice:
        raise MvsimError(f"cannot remove {', '.join(repr(n) for n in twice)} twice; nothing removed")
    with world.batch():
        return [world.remove(n) for n in wanted]


def spawned_names(world: World) -> list[str]:
    """The work of :meth:`World.spawned_names <mvsim_core.world.World.spawned_names>` (documented there)."""
    origin = world._origin
    if origin is None:
        return []
    own = {id(o) for t in (origin.vehicles, origin.blocks, origin.actors) for o in t.values()}
    return [o.name for o in world._objects() if id(o) not in own]


@contextmanager
def batch(world: World) -> Iterator[World]:
    """The work of :meth:`World.batch <mvsim_core.world.World.batch>` (documented there)."""
    if world._batch is not None:
        yield world
        return
    world._batch, world._batch_dirty = set(), False
    try:
        yield world
    finally:
        fresh, dirty = world._batch, world._batch_dirty
        world._batch, world._batch_dirty = None, False
        if dirty and world._physics is not None:
            world._build(carry=True, fresh=fresh)


def rebuild(world: World, fresh: Collection[str] = ()) -> None:
    """After a spawn or removal while running: rebuild the physics now, or at the end of the :meth:`World.batch`."""
    if world._batch is None:
        world._build(carry=True, fresh=fresh)
        return
    world._batch.update(fresh)
    world._batch_dirty = True


def remove(world: World, name: str) -> SimObject:
    """The work of :meth:`World.remove <mvsim_core.world.World.remove>` (documented there)."""
    obj = world.object(name)
    if isinstance(obj, Vehicle):
        del world.vehicles[name]
    elif isinstance(obj, Block):
        del world.blocks[name]
    else:
        del world.actors[name]
    world.joints[:] = [j for j in world.joints if name not in (j.body_a, j.body_b)]
    forget(world, obj)
    if world._physics is not None:
        if world._batch is not None:
            world._batch.discard(name)
        rebuild(world)
    return obj


def reset(world: World, *, objects: bool = True, state: bool = True, time: bool = True) -> None:
    """The work of :meth:`World.reset <mvsim_core.world.World.reset>` (documented there)."""
    objects = arg.flag("reset", "objects", objects)
    state = arg.flag("reset", "state", state)
    time = arg.flag("reset", "time", time)
    origin = world._origin
    if origin is None:
        return
    fresh = restore_objects(world, origin) if objects else None
    if state:
        if time:
            world.time, world._steps = 0.0, 0
        world.rng.seed = origin.rng_seed
        world.rng.generator.bit_generator.state = origin.rng_state
        for obj in world._objects():
            reset_object(world, obj)
        for sensor in world.sensors.values():
            sensor.reset(world.time)
        world._reseed_sensors()
        world._build()
        return
    if fresh is not None:
        for name in fresh:
            reset_object(world, world.object(name))
        world._build(carry=True, fresh=fresh)
    if time:
        shift = -world.time
        world.time, world._steps = 0.0, 0
        world.sensor_scheduler.shift(shift)


def restore_objects(world: World, origin: Origin) -> list[str] | None:
    """Make the set of objects and joints the original one again. Returns the names of the objects brought
    back, or None when the set was the original one already."""
    originals = [o for t in (origin.vehicles, origin.blocks, origin.actors) for o in t.values()]
    present = world._objects()
    if [id(o) for o in present] == [id(o) for o in originals] and world.joints == origin.joints:
        return None
    kept = {id(o) for o in originals}
    for obj in present:
        if id(obj) not in kept:  # spawned: gone for good
            forget(world, obj)
    now = {id(o) for o in present}
    back = [o for o in originals if id(o) not in now]
    world.vehicles.clear()
    world.vehicles.update(origin.vehicles)
    world.blocks.clear()
    world.blocks.update(origin.blocks)
    world.actors.clear()
    world.actors.update(origin.actors)
    world.joints[:] = origin.joints
    for obj in back:
        if isinstance(obj, Vehicle) and obj.logger is not None and obj.auto_start_recording:
            obj.logger.start()
    return [o.name for o in back]


def forget(world: World, obj: SimObject) -> None:
    """``obj`` leaves the world: a vehicle stops reading the physics and logging; a spawned object's record goes
    (an original one is kept, for :meth:`World.reset`)."""
    if isinstance(obj, Vehicle):
        obj.detach_physics()
        if obj.logger is not None:
            obj.logger.stop()
    else:  # a block or actor stops following its track (animation, walk)
        obj.detach_track()
    origin = world._origin
    if origin is None or not any(obj is t.get(obj.name) for t in (origin.vehicles, origin.blocks,
                                                                   origin.actors)):
        world._initial.pop(id(obj), None)


def remember(world: World, obj: SimObject) -> None:
    """Record what :meth:`World.reset` puts ``obj`` back to: its state now."""
    rec = Initial(obj=obj, pose=obj.sim.pose)
    if isinstance(obj, Vehicle):
        rec.controller = obj.controller.save_state()
        rec.wheel_yaws = tuple(float(w.yaw) for w in obj.wheels)
    world._initial[id(obj)] = rec


def reset_object(world: World, obj: SimObject) -> None:
    """Put ``obj`` back to its recorded initial state (the physics, rebuilt next, takes pose and velocity)."""
    rec = world._initial.get(id(obj))
    if rec is None:
        return
    obj.sim.pose = rec.pose
    if isinstance(obj, Vehicle):
        assert rec.controller is not None
        obj.controller.restore_state(rec.controller)
        for w, yaw in zip(obj.wheels, rec.wheel_yaws, strict=True):
            w.yaw = yaw
        obj.collision = obj.had_collision = False
        for s in obj.sensors.values():
            s.reset(world.time)
        return
    obj.state_pose = None
    if isinstance(obj, Block):
        obj.collision = obj.had_collision = False

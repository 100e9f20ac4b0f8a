"""World snapshots: everything that evolves in a running world, as plain data (:class:`WorldState`), taken by
:meth:`World.snapshot <mvsim_core.world.World.snapshot>` and put back by :meth:`World.restore
<mvsim_core.world.World.restore>`.

A snapshot holds the clock and step count; the random generator's state; the physics
(:meth:`Physics.save_state <mvsim_core.dynamics.physics.Physics.save_state>`: vehicle state rows, odometry, terrain
attitude, wheel spins, spin angles and steering, PID integrators, animation tracks, collision set, the fixtures that
come and go, and the Box2D world itself, contacts and their warm-start impulses included,
:mod:`mvsim_core.dynamics.box2d_state`); each vehicle's controller (its setpoints and internal state), wheel yaws and
collision flags; each block's and actor's pose and flags; each sensor's last observation and history (the IMU's
previous velocity and noise biases, the GNSS's last fix-less sample) and the sensors' schedule. It holds numpy
arrays, numbers, tuples, dicts and copies of observations and controller state: no Box2D object, nothing that
refers to the live world, so it pickles and can be restored in another process that loaded the same world file.

Restoring is exact: the run goes on bit for bit as the one that was captured (see :mod:`.dynamics.box2d_state` for
the one Box2D contact that cannot be made again, and why it does not matter). Not part of a snapshot: loggers and
recorders, step listeners, the fault log, the command gates' "logged once" memory, ``sensor_scheduler.enabled``.

The world restored into must hold the snapshot's objects: the same vehicles, blocks and actors (names, in order) and
the same sensors; otherwise :func:`restore` raises :class:`~mvsim_core.errors.SnapshotError` naming the difference
and changes nothing. A world that spawned or removed objects since the snapshot can go back to its original set with
``world.reset(state=False, time=False)`` first, when the snapshot was taken with that set.

Cost (``benchmarks/bench_snapshot.py``; dev machine, 2 shared cores, Python 3.11, median of 200 calls, after 500
steps): one differential robot with a 181-ray lidar and an IMU in a walled 4 m room, 5 ms steps, pressed against a
wall: ``snapshot()`` 0.6 ms, ``restore()`` 0.6 ms (0.7–1.9 ms the first time into a world just loaded), 10 KiB
pickled; ``reset()`` takes 3–7 ms there. ``worlds/demo.world.xml`` with 4700 occupancy-grid squares near its two
robots: ``snapshot()`` 2.4–4 ms, ``restore()`` 2.4–2.8 ms (~40 ms the first time into a new world, which makes the
squares), 1 MiB pickled (mostly Box2D's broad-phase tree).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mvsim_core.errors import SnapshotError

if TYPE_CHECKING:
    from mvsim_core.world import World


@dataclass(frozen=True)
class WorldState:
    """Everything that evolves in a running world (see the module docstring). Plain data: it pickles.

    Attributes:
        source: the world file it was taken from (for messages).
        time: simulated seconds. steps: steps since the start (or the last time reset).
        rng_seed, rng_state: the world generator's seed and bit-generator state.
        vehicles, blocks, actors: the objects' names, in the world's order (what a restore checks).
        sensors: ``parent/name`` of every sensor (``/name`` for a standalone one).
        physics: :meth:`Physics.save_state <mvsim_core.dynamics.physics.Physics.save_state>`.
        schedule: :meth:`SensorScheduler.save_state <mvsim_core.sensors.scheduler.SensorScheduler.save_state>`.
        objects: name -> that object's own state (controller, wheel yaws, flags, poses).
        sensor_states: ``parent/name`` -> :meth:`Sensor.save_state <mvsim_core.sensors.base.Sensor.save_state>`.
    """

    source: str
    time: float
    steps: int
    rng_seed: int
    rng_state: dict[str, Any]
    vehicles: tuple[str, ...]
    blocks: tuple[str, ...]
    actors: tuple[str, ...]
    sensors: tuple[str, ...]
    physics: dict[str, Any]
    schedule: dict[str, Any]
    objects: dict[str, dict[str, Any]]
    sensor_states: dict[str, dict[str, Any]]


def _sensors(world: World) -> dict[str, Any]:
    """``parent/name`` -> sensor, vehicles' first (in vehicle order), then the standalone ones."""
    out = {f"{v.name}/{s.name}": s for v in world.vehicles.values() for s in v.sensors.values()}
    out.update((f"/{s.name}", s) for s in world.sensors.values())
    return out


def capture(world: World) -> WorldState:
    """A :class:`WorldState` of ``world`` now (it is started first if it was not).

    Raises:
        SnapshotError: this Box2D build's memory layout is not the expected one.
    """
    world.start()
    objects: dict[str, dict[str, Any]] = {}
    for v in world.vehicles.values():
        objects[v.name] = {"controller": v.controller.save_state(), "wheel_yaws": tuple(w.yaw for w in v.wheels),
                           "collision": v.collision, "had_collision": v.had_collision, "pose": v.sim.pose}
    for b in world.blocks.values():
        objects[b.name] = {"state_pose": b.state_pose, "collision": b.collision, "had_collision": b.had_collision,
                           "pose": b.sim.pose}
    for a in world.actors.values():
        objects[a.name] = {"state_pose": a.state_pose, "pose": a.sim.pose}
    sensors = _sensors(world)
    gen = world.rng.generator.bit_generator
    return WorldState(
        source=str(world.path), time=world.time, steps=world._steps, rng_seed=world.rng.seed,
        rng_state=copy.deepcopy(dict(gen.state)), vehicles=tuple(world.vehicles), blocks=tuple(world.blocks),
        actors=tuple(world.actors), sensors=tuple(sensors), physics=world.physics.save_state(),
        schedule=world.sensor_scheduler.save_state(), objects=objects,
        sensor_states={k: s.save_state() for k, s in sensors.items()})


def _differences(kind: str, saved: tuple[str, ...], here: tuple[str, ...]) -> str:
    """'' when equal, else what differs: names only in the snapshot, only here, or another order."""
    if saved == here:
        return ""
    gone = [n for n in saved if n not in here]
    new = [n for n in here if n not in saved]
    parts = []
    if gone:
        parts.append(f"{kind} {', '.join(repr(n) for n in gone)} in the snapshot but not in this world")
    if new:
        parts.append(f"{kind} {', '.join(repr(n) for n in new)} in this world but not in the snapshot")
    if not parts:
        parts.append(f"the {kind} are in another order")
    return "; ".join(parts)


def restore(world: World, state: WorldState) -> int:
    """Put ``world`` back in ``state`` (``state`` is not changed: it can be restored again).

    Returns:
        The number of Box2D contacts that could not be made again (usually 0; see
        :mod:`mvsim_core.dynamics.box2d_state`).

    Raises:
        SnapshotError: the world does not hold the snapshot's vehicles, blocks, actors or sensors (the message
            names them); nothing is changed then.
    """
    sensors = _sensors(world)
    problems = [p for p in (_differences("vehicles", state.vehicles, tuple(world.vehicles)),
                            _differences("blocks", state.blocks, tuple(world.blocks)),
                            _differences("actors", state.actors, tuple(world.actors)),
                            _differences("sensors", state.sensors, tuple(sensors))) if p]
    if problems:
        raise SnapshotError(f"cannot restore the snapshot of {state.source} into {world.path}: "
                            f"{'; '.join(problems)}")
    world.start()
    missing = world.physics.restore_state(state.physics)
    for v in world.vehicles.values():
        saved = state.objects[v.name]
        v.controller.restore_state(saved["controller"])
        for w, yaw in zip(v.wheels, saved["wheel_yaws"], strict=True):
            w.yaw = yaw
        v.collision, v.had_collision = saved["collision"], saved["had_collision"]
        v.sim.pose = saved["pose"]
    for b in world.blocks.values():
        saved = state.objects[b.name]
        b.state_pose, b.collision, b.had_collision = saved["state_pose"], saved["collision"], saved["had_collision"]
        b.sim.pose = saved["pose"]
    for a in world.actors.values():
        saved = state.objects[a.name]
        a.state_pose = saved["state_pose"]
        a.sim.pose = saved["pose"]
    for key, s in sensors.items():
        s.restore_state(state.sensor_states[key])
    world.sensor_scheduler.restore_state(state.schedule)
    world.rng.seed = state.rng_seed
    world.rng.generator.bit_generator.state = copy.deepcopy(state.rng_state)
    world.time, world._steps = state.time, state.steps
    return missing

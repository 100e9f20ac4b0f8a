"""The World: every object of a simulation, its clock and its step loop.

One step, in upstream MVSim's order (reference §2.1), reads top to bottom in :meth:`World._advance` (the body of
:meth:`World.step`): terrain → controllers → friction → Box2D → post-step → sensors due → loggers → step listeners.
The physics stages live in :class:`~mvsim_core.dynamics.physics.Physics`, the sensors' timing in
:class:`~mvsim_core.sensors.scheduler.SensorScheduler`; the World calls them in that order and owns the clock.

Simulation time is the only clock here: :meth:`World.run` advances as fast as the CPU allows; real-time pacing lives in
:mod:`mvsim_core.runner`.

Spawning, removing and resetting objects are methods of the World; their work is done in
:mod:`mvsim_core.world_objects`.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core import arguments as arg
from mvsim_core import world_objects
from mvsim_core.dynamics.command_limits import BLOCK_LIMITS, CommandGate, checked_pose, checked_velocity
from mvsim_core.dynamics.faults import Blowup, FaultLog
from mvsim_core.errors import ArgumentTypeError, ArgumentValueError, ControllerError, MvsimError, StateValueError
from mvsim_core.geometry.extent import Extent
from mvsim_core.io.csv_logger import RecordingCount
from mvsim_core.objects.actor import Actor
from mvsim_core.objects.block import Block
from mvsim_core.objects.vehicles.base import Vehicle
from mvsim_core.rng import WorldRandom
from mvsim_core.world_objects import Initial, ObjectParser, Origin, SimObject, Spawn
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import ParamValues

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics
    from mvsim_core.elements.base import WorldElement
    from mvsim_core.io.tum_trajectory import TumWriter
    from mvsim_core.objects.joint import Joint
    from mvsim_core.objects.marker import Marker
    from mvsim_core.sensors.base import Sensor
    from mvsim_core.sensors.scheduler import SensorScheduler
    from mvsim_core.world_state import WorldState

log = logging.getLogger("mvsim_core.world")

AUTO_TIMESTEP_MAX = 0.005  # s: the automatic step is min(5 ms, shortest sensor period)

StepListener = Callable[["World"], None]
"""Called as ``listener(world)`` after every step, inside the step guard."""

@dataclass
class World:
    """A loaded world.

    Attributes:
        path: the world file.
        params: root parameters (``simul_timestep``, ``gravity``, ...; see :mod:`mvsim_core.world_options`).
        gui, lights, georeference: option blocks (defaults when absent; ``georeference`` None when absent).
        elements: world elements in file order (``mvsim_core.elements``).
        blocks: name -> block, in file order (walls included, named ``wall_0001``...).
        vehicles: name -> vehicle, in file order.
        sensors: standalone (world-level) sensors, hosted by ``__standaloneSensorHost``.
        joints, markers, actors: as declared.
        vehicle_classes, block_classes, actor_classes: class name -> definition node.
        warnings: warnings issued while loading (``file:line: message``) and when starting.
        missing_assets: URI -> reason, for models/textures that could not be had.
        rng: the world's seeded random generator.
        time: simulated seconds since the start.
        step_guard: a context manager held around every step (the comms layer's lock, so that service calls from
            other threads never see a half-done step), or None.
        step_listeners: called as ``listener(world)`` after every step, inside ``step_guard`` (publishers, viewers,
            recorders); see :meth:`add_step_listener`.
        object_parser: builds an object from XML text for :meth:`spawn` (set by the loader).
        rebuilds: how many times the physics was rebuilt (by :meth:`reset`, :meth:`spawn`, :meth:`remove`); views
            that hold on to ``physics`` compare it to know when to look again.
        strict: a vehicle or block that blows up (NaN/inf, runaway) raises
            :class:`~mvsim_core.dynamics.physics.SimulationError` from :meth:`step`, as a run that cannot go on.
            False (default): it is reset to its last finite pose, at rest, its controller reset, and the fault is
            recorded in ``faults``; the other objects go on (:mod:`mvsim_core.dynamics.faults`).
        faults: the blow-ups so far (:class:`~mvsim_core.dynamics.faults.FaultLog`: the latest ones, counts per
            object, listeners).
        ground_truth_writer: the TUM ground-truth files of ``<save_ground_truth_trajectory>``
            (:mod:`mvsim_core.io.tum_trajectory`), made by :meth:`start`; None when the option is not set.
        sensors_on_demand: a sensor samples only while somebody wants it (``Sensor.want``; ROS subscribers, ZMQ
            subscribers, recorders, viewers: :mod:`mvsim_core.sensors.demand`). False (default, scripts): every
            enabled sensor samples at its period. ``mvsim launch`` and ``mvsim_node`` set it.
    """

    path: Path
    params: ParamValues
    gui: ParamValues
    lights: ParamValues
    georeference: ParamValues | None
    rng: WorldRandom
    elements: list[WorldElement] = field(default_factory=list)
    blocks: dict[str, Block] = field(default_factory=dict)
    vehicles: dict[str, Vehicle] = field(default_factory=dict)
    sensors: dict[str, Sensor] = field(default_factory=dict)
    joints: list[Joint] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    actors: dict[str, Actor] = field(default_factory=dict)
    vehicle_classes: dict[str, XmlNode] = field(default_factory=dict)
    block_classes: dict[str, XmlNode] = field(default_factory=dict)
    actor_classes: dict[str, XmlNode] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    missing_assets: dict[str, str] = field(default_factory=dict)
    time: float = 0.0
    step_guard: AbstractContextManager[Any] | None = field(default=None, repr=False)
    step_listeners: list[StepListener] = field(default_factory=list, repr=False)
    object_parser: ObjectParser | None = field(default=None, repr=False)
    rebuilds: int = 0
    strict: bool = False
    sensors_on_demand: bool = False
    faults: FaultLog = field(default_factory=FaultLog, repr=False)
    ground_truth_writer: TumWriter | None = field(default=None, repr=False)
    _steps: int = 0
    _physics: Physics | None = field(default=None, repr=False)
    _scheduler: SensorScheduler | None = field(default=None, repr=False)
    _dt: float | None = field(default=None, repr=False)
    _origin: Origin | None = field(default=None, repr=False)
    _initial: dict[int, Initial] = field(default_factory=dict, repr=False)
    _block_gates: dict[str, CommandGate] = field(default_factory=dict, repr=False)
    _batch: set[str] | None = field(default=None, repr=False)
    """Inside :meth:`batch`: the names spawned so far (they start anew at the rebuild); None outside."""
    _batch_dirty: bool = field(default=False, repr=False)
    _recording: RecordingCount = field(default_factory=RecordingCount, repr=False)
    """How many of the vehicles' CSV loggers are recording (the step skips them all when none is)."""

    # ------------------------------------------------------------------ clock
    @property
    def timestep(self) -> float:
        """Seconds per physics step: ``simul_timestep``, or when 0, min(5 ms, shortest sensor period).

        Fixed once the world has started.
        """
        if self._dt is not None:
            return self._dt
        dt = float(self.params["simul_timestep"])
        if dt > 0:
            return dt
        periods = [s.period for v in self.vehicles.values() for s in v.sensors.values()]
        periods += [s.period for s in self.sensors.values()]
        return min([AUTO_TIMESTEP_MAX, *periods])

    # ------------------------------------------------------------------ start
    @property
    def started(self) -> bool:
        """Whether :meth:`start` has run (bodies, sensors' schedule and loggers exist)."""
        return self._physics is not None

    def start(self) -> World:
        """Build what a running simulation needs: Box2D bodies, wheel arrays and terrain
        (:class:`~mvsim_core.dynamics.physics.Physics`), the sensors' schedule and the vehicles' CSV loggers; fix the
        timestep. The first :meth:`step` does it when nobody did; calling it again does nothing. Returns the world.
        """
        if self._physics is not None:
            return self
        self._dt = self.timestep
        self._origin = Origin(dict(self.vehicles), dict(self.blocks), dict(self.actors), list(self.joints),
                               self.rng.seed, dict(self.rng.generator.bit_generator.state))
        for obj in self._objects():
            world_objects.remember(self, obj)
        self._build()
        assert self._scheduler is not None
        name = str(self.params["save_ground_truth_trajectory"]).strip()
        if name:  # upstream's TUM ground truth, NAME.<vehicle>.txt (mvsim_core/io/tum_trajectory.py)
            from mvsim_core.io import tum_trajectory

            self.ground_truth_writer = tum_trajectory.attach(
                self, lambda v: tum_trajectory.option_paths(name, [v])[v])
        if self._scheduler.not_simulated:
            self.warnings.append(f"sensors of class {', '.join(self._scheduler.not_simulated)} produce no "
                                 f"observations in this simulator")
        return self

    def _build(self, *, carry: bool = False, fresh: Collection[str] = ()) -> None:
        """(Re)build the physics and the sensors' schedule from the objects now in the world, and a CSV logger for
        each vehicle that has none yet. ``carry``: everything already there goes on from the previous physics and
        schedule (a spawn or removal; ``fresh`` names the objects that start anew); otherwise every object starts
        from its declared initial state and every sensor one period after the current time (start, reset)."""
        from mvsim_core.dynamics.physics import Physics
        from mvsim_core.io.csv_logger import VehicleLogger
        from mvsim_core.sensors.scheduler import SensorScheduler

        old_physics, old_scheduler = self._physics, self._scheduler
        physics = Physics(self)
        scheduler = SensorScheduler(self, physics)
        if old_physics is not None and old_scheduler is not None:
            self.rebuilds += 1
            if carry:
                physics.carry_over(old_physics, fresh)
                scheduler.carry_over(old_scheduler, self.time)
            else:
                scheduler.restart(self.time)
                scheduler.enabled = old_scheduler.enabled
                scheduler.ctx.adopt(old_scheduler.ctx)
        for v in self.vehicles.values():
            if v.logger is None:
                v.logger = VehicleLogger(v.name, len(v.wheels), v.log_path, self._recording)
                if v.auto_start_recording:
                    v.logger.start()
        self._physics, self._scheduler = physics, scheduler

    @property
    def physics(self) -> Physics:
        """The physics state (:class:`~mvsim_core.dynamics.physics.Physics`).

        Raises:
            MvsimError: the world has not started yet (call :meth:`start`, or step it).
        """
        if self._physics is None:
            raise MvsimError("the world has not started: call world.start() (or step it) first")
        return self._physics

    @property
    def sensor_scheduler(self) -> SensorScheduler:
        """When the sensors fire (:class:`~mvsim_core.sensors.scheduler.SensorScheduler`); its ``enabled`` switches
        all sampling off and on.

        Raises:
            MvsimError: the world has not started yet.
        """
        if self._scheduler is None:
            raise MvsimError("the world has not started: call world.start() (or step it) first")
        return self._scheduler

    def sensor_poses(self, sensors: list[Sensor]) -> tuple[np.ndarray, np.ndarray]:
        """Where ``sensors`` are now: rotations (n, 3, 3) and positions (n, 3, m) of their frames in the world frame
        (each vehicle's pose composed with the sensor's pose on it; standalone sensors as placed). Starts the world.

        Raises:
            ArgumentTypeError: ``sensors`` is not a list of sensors.
        """
        from mvsim_core.sensors.base import Sensor

        sensors = arg.items("sensor_poses", "sensors", sensors)
        for k, s in enumerate(sensors):
            arg.instance("sensor_poses", f"sensors[{k}]", s, Sensor, "a Sensor")
        return self.start().sensor_scheduler.ctx.sensor_poses(sensors)

    # ------------------------------------------------------------------ the step
    def step(self) -> None:
        """Advance exactly one physics step, in upstream MVSim's order.

        A vehicle or block that blows up in the step is reset and recorded in :attr:`faults` (see :attr:`strict`).

        Raises:
            SimulationError: in a strict world, a body became NaN/inf or ran away (the message names it and the
                step).
        """
        if self._physics is None or self._scheduler is None or self._dt is None:
            if self._batch is not None:
                raise MvsimError("world.step() inside world.batch(): leave the batch first (the physics is rebuilt "
                                 "when it ends)")
            self.start()
        guard = self.step_guard
        if guard is None:
            self._advance()
        else:
            with guard:
                self._advance()

    def _advance(self) -> None:
        """The step itself, under the step guard: the physics stages, then the sensors due, the loggers that record
        and the step listeners. Stages with nothing to do in this world are not called (animate without animated
        objects, the loggers while none records: both decided where they change, not here)."""
        # read under the guard: a service thread may have just rebuilt the physics (objects spawned, removed)
        if self._batch is not None:
            raise MvsimError("world.step() inside world.batch(): leave the batch first (the physics is rebuilt "
                             "when it ends)")
        physics, scheduler, dt = self._physics, self._scheduler, self._dt
        if physics is None or scheduler is None or dt is None:  # reset in another thread meanwhile
            raise MvsimError("the world stopped while a step waited for it")
        t = self.time + dt  # the end of this step, as sensors and loggers stamp it
        if physics.animates:
            physics.animate(self.time, dt)  # keyframed blocks forced to their poses (kinematic bodies)
        physics.fit_terrain()  # z, pitch, roll from the ground; slope gravity; terrain steps and grid walls
        physics.run_controllers(dt)  # wheel torques and steering
        physics.apply_friction(dt)  # wheel-ground forces summed into one force + torque per chassis
        physics.box2d_step(dt)  # rigid bodies and contacts
        blown = physics.post_step(dt)  # read back; ideal twists, wheel spin, odometry, collisions, block poses
        if blown:
            self._blown_up(blown, t)  # each reset and recorded; the others go on
        scheduler.run(t)  # sensors due at t
        if self._recording.n:
            self._write_logs(t)  # CSV loggers that are recording
        self._steps += 1
        self.time = self._steps * dt
        for listener in self.step_listeners:
            listener(self)

    def _blown_up(self, blown: list[Blowup], t: float) -> None:
        """After the physics put the objects that blew up back at their last finite poses, at rest: a vehicle's
        controller goes back to its initial state and to a zero command (when it takes commands) and its wheels to
        their initial yaws; each fault is recorded (logged, listeners told)."""
        for b in blown:
            veh = self.vehicles.get(b.name) if b.kind == "vehicle" else None
            if veh is not None:
                self._reset_controller(veh)
            self.faults.record(b.name, b.kind, t, self._steps + 1, b.what, b.state, b.reset_to)

    def _reset_controller(self, veh: Vehicle) -> None:
        rec = self._initial.get(id(veh))
        if rec is not None and rec.controller is not None:
            veh.controller.restore_state(rec.controller)
            for w, yaw in zip(veh.wheels, rec.wheel_yaws, strict=True):
                w.yaw = yaw
        try:
            veh.controller.stop()
        except ControllerError:  # a controller that takes no commands (trajectory): its initial state it is
            pass
        physics = self._physics
        if physics is not None and veh.dynamics.steerable:
            k = physics.names.index(veh.name)
            physics.wheels.sync_yaws(k, veh.wheels)
            physics.bodies.set_wheel_yaws(veh.name, [w.yaw for w in veh.wheels])

    def run(self, seconds: float) -> None:
        """Advance ``seconds`` of simulated time, in whole steps (rounded to the nearest step count).

        Raises:
            StateValueError: ``seconds`` is NaN or infinite (an integer too large for a float counts as infinite).
            ArgumentValueError: ``seconds`` is negative.
            ArgumentTypeError: ``seconds`` is not a number.
        """
        seconds = arg.real("run", "seconds", seconds)
        if not math.isfinite(seconds):
            raise StateValueError("run", "world", "seconds", seconds, math.inf, "s")
        if seconds < 0:
            raise ArgumentValueError("run", "seconds", f"a duration >= 0 s, not {seconds:g}")
        for _ in range(int(round(seconds / self.timestep))):
            self.step()

    def add_step_listener(self, listener: StepListener) -> None:
        """Call ``listener(world)`` after every step (inside the step guard), after the sensors and loggers.

        Raises:
            ArgumentTypeError: ``listener`` is not callable.
        """
        self.step_listeners.append(arg.function("add_step_listener", "listener", listener))

    def remove_step_listener(self, listener: StepListener) -> None:
        """Stop calling ``listener``; nothing happens when it is not registered.

        Raises:
            ArgumentTypeError: ``listener`` is not callable.
        """
        arg.function("remove_step_listener", "listener", listener)
        if listener in self.step_listeners:
            self.step_listeners.remove(listener)

    def _write_logs(self, t: float) -> None:
        """One row per recording vehicle: pose, twist, odometry and each wheel at simulated time ``t`` (s)."""
        if not self._recording.n:
            return
        physics = self.physics
        for k, v in enumerate(self.vehicles.values()):
            if v.logger is not None and v.logger.recording:
                v.logger.write(t, v.pose, v.twist, v.odometry, physics.wheel_log_rows(k))

    # ------------------------------------------------------------------ objects
    def object(self, name: str) -> SimObject:
        """The vehicle, block or actor called ``name``.

        Raises:
            MvsimError: no such object (the message lists the objects).
            ArgumentTypeError: ``name`` is not a str.
        """
        if type(name) is not str:
            arg.name("object", "name", name)
        obj = self.vehicles.get(name) or self.blocks.get(name) or self.actors.get(name)
        if obj is None:
            names = self.object_names()
            shown = ", ".join(names[:20]) + (f" ... ({len(names)} in all)" if len(names) > 20 else "")
            raise MvsimError(f"no object named '{name}'; objects: {shown or 'none'}")
        return obj

    def set_pose(self, name: str, x: float, y: float, yaw: float) -> None:
        """Teleport a vehicle, block or actor to (x, y) m and ``yaw`` rad in the world frame; its velocity is kept.
        Sensors see it at the new place from their next sample; a vehicle's odometry does not jump.

        Raises:
            MvsimError: unknown object.
            StateValueError: a value that is NaN, infinite, or beyond ±1e9 (m or rad,
                :data:`~mvsim_core.dynamics.command_limits.MAX_POSITION`); nothing changes. An integer too large
                for a float counts as infinite.
            ArgumentTypeError: a name that is no str, a value that is no number.
        """
        arg.name("set_pose", "name", name)
        x, y, yaw = (arg.real("set_pose", "x", x), arg.real("set_pose", "y", y), arg.real("set_pose", "yaw", yaw))
        obj = self.object(name)
        x, y, yaw = checked_pose("set_pose", name, x, y, yaw)
        _, _, z, _, pitch, roll = obj.pose
        if self._physics is not None:
            self._physics.teleport(name, x, y, yaw)
        else:
            obj.sim.pose = (x, y, z, yaw, pitch, roll)

    def velocity(self, name: str) -> tuple[float, float, float]:
        """Velocity of an object's reference point: (vx, vy) m/s in the world frame and the yaw rate ω rad/s.
        Static and intangible blocks and actors: zeros. Before the start: the declared initial velocity.

        Raises:
            MvsimError: no such object.
            ArgumentTypeError: ``name`` is not a str.
        """
        obj = self.object(arg.name("velocity", "name", name))
        if self._physics is not None:
            return self._physics.velocity_of(name) if name not in self.actors else (0.0, 0.0, 0.0)
        if not self.can_move(name):
            return (0.0, 0.0, 0.0)
        bvx, bvy, w = obj.sim.init_vel
        c, s = math.cos(obj.sim.pose[3]), math.sin(obj.sim.pose[3])
        return (c * bvx - s * bvy, s * bvx + c * bvy, w)

    def set_velocity(self, name: str, vx: float, vy: float, wz: float) -> tuple[float, float, float]:
        """Give a vehicle or dynamic block the velocity (vx, vy) m/s (world frame, at its reference point) and yaw
        rate ``wz`` rad/s, at once. A vehicle's wheels then roll without slipping; its controller acts from the
        next step on (an ideal controller imposes its own twist again). Before the start this sets the initial
        velocity.

        A value beyond the object's limits is clamped to it (logged once per object and field): a vehicle's
        :attr:`~mvsim_core.objects.vehicles.base.Vehicle.command_limits` (``max_speed`` on each of vx and vy,
        ``max_omega`` on wz), a block's :data:`~mvsim_core.dynamics.command_limits.BLOCK_LIMITS` (100 m/s, 100
        rad/s). Returns the velocity set (vx, vy, wz), after clamping.

        Raises:
            MvsimError: unknown object; a static or intangible block or an actor (no moving body) given a non-zero
                velocity.
            StateValueError: a value that is NaN or infinite (nothing changes); an integer too large for a float
                counts as infinite.
            ArgumentTypeError: a name that is no str, a value that is no number.
        """
        arg.name("set_velocity", "name", name)
        vx, vy, wz = (arg.real("set_velocity", "vx", vx), arg.real("set_velocity", "vy", vy),
                      arg.real("set_velocity", "wz", wz))
        obj = self.object(name)
        if isinstance(obj, Vehicle):
            gate = obj.command_gate
        else:
            gate = self._block_gates.get(name) or self._block_gates.setdefault(name, CommandGate(name, BLOCK_LIMITS))
        vx, vy, wz = checked_velocity("set_velocity", name, gate, vx, vy, wz)
        if not self.can_move(name):
            if vx or vy or wz:
                raise MvsimError(f"'{name}' does not move (a static or intangible block, or an actor): it cannot "
                                 f"be given a velocity")
            return (0.0, 0.0, 0.0)
        if self._physics is not None:
            self._physics.set_velocity(name, vx, vy, wz)
            return (vx, vy, wz)
        c, s = math.cos(obj.sim.pose[3]), math.sin(obj.sim.pose[3])
        obj.sim.init_vel = (c * vx + s * vy, -s * vx + c * vy, wz)
        return (vx, vy, wz)

    def can_move(self, name: str) -> bool:
        """Whether object ``name`` has a moving (dynamic) body: a vehicle, or a block neither static nor intangible
        (what :meth:`set_velocity` can move).

        Raises:
            ArgumentTypeError: ``name`` is not a str.
        """
        arg.name("can_move", "name", name)
        if name in self.vehicles:
            return True
        b = self.blocks.get(name)
        return b is not None and not b.is_static and not b.is_intangible

    def object_names(self) -> list[str]:
        """Names of every vehicle, block and actor, in that order."""
        return [*self.vehicles, *self.blocks, *self.actors]

    def _objects(self) -> list[SimObject]:
        return [*self.vehicles.values(), *self.blocks.values(), *self.actors.values()]

    # ------------------------------------------------------------------ run-time objects and reset
    # (the work is done by mvsim_core.world_objects; these methods are the API and its documentation)
    def spawn(self, what: str | SimObject, *, name: str | None = None, pose: tuple[float, float, float] | None = None,
              source: str | Path | None = None, allow_shell: bool = False) -> SimObject:
        """Add a vehicle, block or actor, now (also while running).

        Args:
            what: XML text holding one ``<vehicle>``, ``<block>`` or ``<actor>`` element written as in world files
                (the world's ``<vehicle:class>`` / ``<block:class>`` / ``<actor:class>`` definitions apply; the
                text may define its own classes, include files, use ``<variable>``), or such an object already
                built.
            name: the object's name (default: the ``name`` attribute, else ``veh<N>`` / ``block<NNN>`` /
                ``actor<N>``, the first one free).
            pose: (x, y, yaw) in m, m, rad, world frame, instead of the element's ``<init_pose>`` (z, pitch and
                roll come from the ground).
            source: the file the text comes from, for relative paths and messages (default: a file named
                ``<spawn request>`` next to the world file).
            allow_shell: let ``$(cmd)`` in the text run a shell.

        Returns:
            The new object (``world.vehicles[name]`` etc.). A vehicle's sensors sample one period from now; the
            objects already there go on as they were (see :meth:`Physics.carry_over
            <mvsim_core.dynamics.physics.Physics.carry_over>`). :meth:`reset` puts it back where it was spawned,
            or removes it (``objects=True``).

        Raises:
            WorldFileError: bad XML (file and line in the text).
            MvsimError: the name is taken.
            StateValueError: a value of ``pose`` that is NaN, infinite or beyond ±1e9 (m or rad); an integer too
                large for a float counts as infinite.
            ArgumentTypeError: an argument of the wrong type (``what`` neither text nor a vehicle, block or actor;
                a ``name`` that is no str; a ``pose`` that is no sequence of numbers; ...).
            ArgumentValueError: a ``pose`` that is not 3 numbers.
        """
        return world_objects.spawn(self, what, name=name, pose=pose, source=source, allow_shell=allow_shell)

    def spawn_many(self, items: Iterable[Spawn | str | SimObject], *, source: str | Path | None = None,
                   allow_shell: bool = False) -> list[SimObject]:
        """Add several objects at once, with one rebuild of the physics (see :meth:`batch`): all of them or none.

        Args:
            items: :class:`Spawn` records, or XML texts / built objects (named and placed as their text says).
            source, allow_shell: as for :meth:`spawn`, for every text.

        Returns:
            The new objects, in the order given.

        Raises:
            WorldFileError, MvsimError, StateValueError, ArgumentTypeError, ArgumentValueError: as :meth:`spawn`,
                for the first item that fails (its attribute ``item`` says which, counting from 0); the objects of
                the items before it are taken out again, so the world is as it was.
            ArgumentTypeError: ``items`` is not a list, or an item is neither a Spawn, text nor an object (before
                anything is spawned).
        """
        return world_objects.spawn_many(self, items, source=source, allow_shell=allow_shell)

    def remove_many(self, names: Iterable[str]) -> list[SimObject]:
        """Take several objects out at once, with one rebuild of the physics (see :meth:`batch`): all of them or none.

        Returns:
            The removed objects, in the order given.

        Raises:
            MvsimError: a name that is no object, or given twice (nothing is removed).
            ArgumentTypeError: ``names`` is not a list of str.
        """
        return world_objects.remove_many(self, names)

    def spawned_names(self) -> list[str]:
        """Names of the objects added while running (by :meth:`spawn` after the start) and still there, vehicles
        first, then blocks, then actors. Objects added before the start count as the world's own."""
        return world_objects.spawned_names(self)

    def remove_spawned(self) -> list[SimObject]:
        """Take out every object added while running (:meth:`spawned_names`), with one rebuild; returns them."""
        return self.remove_many(self.spawned_names())

    def batch(self) -> AbstractContextManager[World]:
        """Spawn and remove many objects with one rebuild of the physics, when the block ends (each
        :meth:`spawn` / :meth:`remove` otherwise rebuilds it: ~50 ms each in a world of 25 robots).

        ::

            with world.batch():
                for k in range(20):
                    world.spawn(CUBE, name=f"cube{k}", pose=(3.0, 0.3 * k, 0.0))

        Inside the block the physics and the sensors still show the world as it was before the block: a spawned
        object has no body yet (``set_pose`` / ``set_velocity`` on it fail) and a removed one still has its body;
        :meth:`step` refuses to run. The rebuild happens also when the block ends with an exception (the objects
        added or removed before it stay so). Nested blocks join the outermost one. Before the start nothing is
        rebuilt anyway.
        """
        return world_objects.batch(self)

    def remove(self, name: str) -> SimObject:
        """Take a vehicle, block or actor out of the world, now (also while running): its body, wheels and sensors
        go, and the joints attached to it. A vehicle's CSV logger stops. The others go on as they were.
        :meth:`reset` with ``objects=True`` brings back an object that was there at the start.

        Returns:
            The removed object.

        Raises:
            MvsimError: no such object.
        """
        return world_objects.remove(self, name)

    def reset(self, *, objects: bool = True, state: bool = True, time: bool = True) -> None:
        """Go back to the start (``world.start()`` or the first step), in any of three parts:

        Args:
            objects: the set of objects as at the start: spawned ones are removed, removed ones come back (in their
                places in the file order, in their initial state).
            state: every object as at the start (or as spawned): pose, velocity, the controller's setpoints and
                internal state, wheel spins, spin angles and steering, odometry (from 0), collision flags,
                sensors' last observations and histories; and the random generator as at the start, so that the
                same commands give the same run again, bit for bit (as a fresh load of the same file and seed
                would).
            time: the clock back to 0 (and the step count). Sensors sample one period after the current time
                (after a time reset: from 0, as at the start).

        Everything else goes on: step listeners, loggers (rows restart at the new time), ``sensor_scheduler.enabled``.
        Before the start there is nothing to undo, and nothing happens.

        Raises:
            ArgumentTypeError: a part that is not True or False.
        """
        world_objects.reset(self, objects=objects, state=state, time=time)

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> WorldState:
        """Everything that evolves in the world now, as plain data that pickles (:mod:`mvsim_core.world_state`):
        clock, random generator, bodies (Box2D's own state, contacts included), wheels, controllers and their PID
        state, odometry, collision flags, animations, sensors' observations, histories and schedule. Later steps do
        not change it. Starts the world when it has not started.

        Raises:
            SnapshotError: this Box2D build's memory layout is not the expected one (or ``MVSIM_BOX2D_RAW=0``).
            MvsimError: called inside :meth:`batch`.
        """
        from mvsim_core import world_state

        with self.step_guard or nullcontext():
            if self._batch is not None:
                raise MvsimError("world.snapshot() inside world.batch(): leave the batch first")
            return world_state.capture(self)

    def restore(self, state: WorldState) -> None:
        """Go back to ``state`` (from :meth:`snapshot` of this world, or of another World loaded from the same file,
        e.g. in another process): the run then goes on bit for bit as it went on from the snapshot. ``state`` is not
        changed and can be restored again. Step listeners, loggers and ``sensor_scheduler.enabled`` go on as they
        are.

        Raises:
            SnapshotError: the world does not hold the snapshot's vehicles, blocks, actors or sensors (the message
                names the difference; nothing changes), or the Box2D layout is not the expected one.
            MvsimError: called inside :meth:`batch`.
            ArgumentTypeError: ``state`` is not a :class:`~mvsim_core.world_state.WorldState`.
        """
        from mvsim_core import world_state

        arg.instance("restore", "state", state, world_state.WorldState, "a WorldState (from World.snapshot())")
        with self.step_guard or nullcontext():
            if self._batch is not None:
                raise MvsimError("world.restore() inside world.batch(): leave the batch first")
            missing = world_state.restore(self, state)
        if missing:
            log.info("restore: %d Box2D contact(s) that were about to end could not be made again", missing)

    # ------------------------------------------------------------------ random streams
    def all_sensors(self) -> list[Sensor]:
        """Every sensor: the vehicles' (in vehicle order), then the standalone ones."""
        return [s for v in self.vehicles.values() for s in v.sensors.values()] + list(self.sensors.values())

    def _reseed_sensors(self) -> None:
        """Every sensor's generator back to the start of its stream from the world's seed
        (:meth:`~mvsim_core.rng.WorldRandom.stream`)."""
        for s in self.all_sensors():
            s.rng = self.rng.stream(s.key)

    def reseed(self, seed: int) -> None:
        """Restart the world's generator and every sensor's stream from ``seed`` (what ``load_world(seed=...)``
        would have given them), in place: whatever holds on to the world's generator keeps it.

        Raises:
            ArgumentTypeError: ``seed`` is not an integer.
            ArgumentValueError: ``seed`` is negative.
        """
        seed = arg.integer("reseed", "seed", seed, minimum=0)
        state = np.random.PCG64(seed).state
        self.rng.seed = seed
        self.rng.generator.bit_generator.state = state
        self._reseed_sensors()

    def random_state(self) -> dict[str, Any]:
        """Where every random stream stands (the world's and each sensor's), as plain data: :meth:`set_random_state`
        puts them back, so that a run can go on drawing where another left off."""
        import copy

        return {"world": (self.rng.seed, copy.deepcopy(self.rng.generator.bit_generator.state)),
                "sensors": {s.key: copy.deepcopy(s.rng.bit_generator.state) for s in self.all_sensors()
                            if s.rng is not None}}

    def set_random_state(self, state: dict[str, Any]) -> None:
        """Put back a :meth:`random_state` (sensors it does not name keep theirs).

        Raises:
            ArgumentTypeError: ``state`` is not a dict.
            ArgumentValueError: ``state`` is not what :meth:`random_state` returns (nothing changes).
        """
        import copy

        seed, gen, saved = _checked_random_state(state)
        self.rng.seed = seed
        self.rng.generator.bit_generator.state = copy.deepcopy(gen)
        for s in self.all_sensors():
            if s.key in saved:
                if s.rng is None:
                    s.rng = self.rng.stream(s.key)
                s.rng.bit_generator.state = copy.deepcopy(saved[s.key])

    # ------------------------------------------------------------------ report
    def _placed_poses(self) -> dict[str, tuple[float, ...]]:
        """Every vehicle's, block's and actor's pose now (started), else the one it starts with
        (:func:`~mvsim_core.dynamics.placement.start_poses`)."""
        if self.started:
            return {o.name: tuple(o.pose) for o in self._objects()}
        from mvsim_core.dynamics.placement import start_poses

        return dict(start_poses(self))

    def extents(self) -> dict[str, Extent]:
        """The box (world frame, m; :class:`~mvsim_core.geometry.extent.Extent`) of every object and solid element,
        where the simulation puts it: blocks (each wall segment too), vehicles and actors by name, then the elements
        that hold something solid as ``<class>#<n>`` (n counts the elements of that class from 1, in file order).

        Before :meth:`start`, where the physics will place them (the initial elevation adjust and the vehicles'
        settle on their wheels, :mod:`~mvsim_core.dynamics.placement`); afterwards, where they are now. Blocks and
        vehicles are their prisms (footprint, zmin..zmax; a vehicle with its wheels), not their visual models. What
        ``mvsim check --extents`` prints; the physics, the 2D and 3D lidars and the cameras agree with it to 1 cm
        (tested on every shipped and upstream world)."""
        poses = self._placed_poses()
        out: dict[str, Extent] = {}
        for n, b in self.blocks.items():
            out[n] = b.extent(poses[n])
        for n, v in self.vehicles.items():
            out[n] = v.extent(poses[n])
        for n, a in self.actors.items():
            out[n] = a.extent(poses[n])
        seen: Counter[str] = Counter()
        for e in self.elements:
            cls = getattr(e, "xml_class", type(e).__name__)
            seen[cls] += 1
            box = e.extent()
            if box is not None:
                out[f"{cls}#{seen[cls]}"] = box
        return out

    def summary(self, *, extents: bool = False) -> str:
        """A human-readable summary (what ``mvsim check`` prints); ``extents``: then every object's box
        (:meth:`extents`, what ``mvsim check --extents`` adds), one line each.

        Raises:
            ArgumentTypeError: ``extents`` is not True or False.
        """
        extents = arg.flag("summary", "extents", extents)
        poses = self._placed_poses()
        lines = [f"world: {self.path}"]
        dt = float(self.params["simul_timestep"])
        lines.append(f"timestep: {self.timestep * 1000:g} ms" + (" (automatic)" if dt == 0 else ""))
        counts = Counter(getattr(e, "xml_class", type(e).__name__) for e in self.elements)
        lines.append("elements: " + (", ".join(f"{k} x{v}" for k, v in counts.items()) or "none"))
        for e in self.elements:
            lines.append(f"  - {e.summary()}")
        walls = [b for n, b in self.blocks.items() if n.startswith("wall_")]
        lines.append(f"blocks: {len(self.blocks)}" + (f" ({len(walls)} wall segments)" if walls else ""))
        if walls:
            lines.append(f"  - walls: {Extent.union(b.extent(poses[b.name]) for b in walls).text()}")
        for b in self.blocks.values():
            if not b.name.startswith("wall_"):
                lines.append(f"  - {b.summary(poses[b.name])}")
        nsens = sum(len(v.sensors) for v in self.vehicles.values())
        lines.append(f"vehicles: {len(self.vehicles)} ({nsens} sensors)")
        for v in self.vehicles.values():
            lines.append(f"  - {v.summary()}")
        if self.sensors:
            lines.append(f"standalone sensors: {', '.join(self.sensors)}")
        if self.joints:
            lines.append(f"joints: {len(self.joints)}")
        if self.actors:
            lines.append(f"actors: {', '.join(self.actors)}")
        if self.missing_assets:
            lines.append(f"missing assets: {len(self.missing_assets)}")
            for uri, why in self.missing_assets.items():
                lines.append(f"  - {uri}: {why}")
        else:
            lines.append("missing assets: none")
        if self.warnings:
            lines.append(f"warnings: {len(self.warnings)}")
        if extents:
            boxes = self.extents()
            lines.append(f"extents: {len(boxes)} (world frame, where the physics places them)")
            lines.extend(f"  {name}: {box.text()}" for name, box in boxes.items())
        return "\n".join(lines)


def _checked_random_state(state: Any) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """The (seed, world generator state, sensor key -> generator state) of a :meth:`World.random_state` result,
    each generator state tried on a scratch PCG64 first, so that a malformed one changes nothing.

    Raises:
        ArgumentTypeError: ``state`` is not a dict.
        ArgumentValueError: its shape or a generator state is not what :meth:`World.random_state` returns.
    """
    from collections.abc import Mapping

    what = "what World.random_state() returns: {'world': (seed, state), 'sensors': {key: state}}"
    if not isinstance(state, Mapping):
        raise ArgumentTypeError("set_random_state", "state", "a dict", state)
    world, sensors = state.get("world"), state.get("sensors")
    if not (isinstance(world, (tuple, list)) and len(world) == 2 and isinstance(sensors, Mapping)):
        raise ArgumentValueError("set_random_state", "state", what)
    seed = arg.integer("set_random_state", "state['world'][0]", world[0], minimum=0)
    scratch = np.random.PCG64()
    for where, gen in [("state['world'][1]", world[1]), *((f"state['sensors'][{k!r}]", g)
                                                          for k, g in sensors.items())]:
        try:
            scratch.state = gen
        except (TypeError, ValueError, KeyError, OverflowError) as e:
            raise ArgumentValueError("set_random_state", where, f"a PCG64 state ({e})") from None
    return seed, world[1], dict(sensors)

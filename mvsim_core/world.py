"""The World: every object of a simulation, its clock and its step loop.

One step, in upstream MVSim's order (reference §2.1), reads top to bottom in :meth:`World.step`: terrain →
controllers → friction → Box2D → post-step → sensors due → loggers → step listeners. The physics stages live in
:class:`~mvsim_core.dynamics.physics.Physics`, the sensors' timing in
:class:`~mvsim_core.sensors.scheduler.SensorScheduler`; the World calls them in that order and owns the clock.

Simulation time is the only clock here: :meth:`World.run` advances as fast as the CPU allows; real-time pacing lives in
:mod:`mvsim_core.runner`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.errors import MvsimError
from mvsim_core.rng import WorldRandom
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import ParamValues

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics
    from mvsim_core.elements.base import WorldElement
    from mvsim_core.objects.actor import Actor
    from mvsim_core.objects.block import Block
    from mvsim_core.objects.joint import Joint
    from mvsim_core.objects.marker import Marker
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.sensors.base import Sensor
    from mvsim_core.sensors.scheduler import SensorScheduler

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
    _steps: int = 0
    _physics: Physics | None = field(default=None, repr=False)
    _scheduler: SensorScheduler | None = field(default=None, repr=False)
    _dt: float | None = field(default=None, repr=False)

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
        from mvsim_core.dynamics.physics import Physics
        from mvsim_core.io.csv_logger import VehicleLogger
        from mvsim_core.sensors.scheduler import SensorScheduler

        self._dt = self.timestep
        physics = Physics(self)
        scheduler = SensorScheduler(self, physics)
        if scheduler.not_simulated:
            self.warnings.append(f"sensors of class {', '.join(scheduler.not_simulated)} produce no observations "
                                 f"in this simulator")
        for v in self.vehicles.values():
            v.logger = VehicleLogger(v.name, len(v.wheels), v.log_path)
            if v.auto_start_recording:
                v.logger.start()
        self._physics, self._scheduler = physics, scheduler
        return self

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
        (each vehicle's pose composed with the sensor's pose on it; standalone sensors as placed). Starts the world."""
        return self.start().sensor_scheduler.ctx.sensor_poses(sensors)

    # ------------------------------------------------------------------ the step
    def step(self) -> None:
        """Advance exactly one physics step, in upstream MVSim's order.

        Raises:
            SimulationError: a body became NaN/inf or ran away (the message names it and the step).
        """
        physics, scheduler, dt = self._physics, self._scheduler, self._dt
        if physics is None or scheduler is None or dt is None:
            self.start()
            physics, scheduler, dt = self.physics, self.sensor_scheduler, self.timestep
        with self.step_guard or nullcontext():
            t = self.time + dt  # the end of this step, as sensors and loggers stamp it
            physics.fit_terrain()  # z, pitch, roll from the ground; slope gravity; terrain steps and grid walls
            physics.run_controllers(dt)  # wheel torques and steering
            physics.apply_friction(dt)  # wheel-ground forces summed into one force + torque per chassis
            physics.box2d_step(dt)  # rigid bodies and contacts
            physics.post_step(dt)  # read back; ideal twists, wheel spin, odometry, collisions, block poses
            scheduler.run(t)  # sensors due at t
            self._write_logs(t)  # CSV loggers that are recording
            self._steps += 1
            self.time = self._steps * dt
            for listener in self.step_listeners:
                listener(self)

    def run(self, seconds: float) -> None:
        """Advance ``seconds`` of simulated time, in whole steps (rounded to the nearest step count)."""
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"run() needs a finite, non-negative duration in seconds (got {seconds})")
        for _ in range(int(round(seconds / self.timestep))):
            self.step()

    def add_step_listener(self, listener: StepListener) -> None:
        """Call ``listener(world)`` after every step (inside the step guard), after the sensors and loggers."""
        self.step_listeners.append(listener)

    def remove_step_listener(self, listener: StepListener) -> None:
        """Stop calling ``listener``; nothing happens when it is not registered."""
        if listener in self.step_listeners:
            self.step_listeners.remove(listener)

    def _write_logs(self, t: float) -> None:
        """One row per recording vehicle: pose, twist, odometry and each wheel at simulated time ``t`` (s)."""
        physics = self.physics
        for k, v in enumerate(self.vehicles.values()):
            if v.logger is not None and v.logger.recording:
                v.logger.write(t, v.pose, v.twist, v.odometry, physics.wheel_log_rows(k))

    # ------------------------------------------------------------------ objects
    def set_pose(self, name: str, x: float, y: float, yaw: float) -> None:
        """Teleport a vehicle, block or actor to (x, y) m and ``yaw`` rad in the world frame."""
        obj = self.vehicles.get(name) or self.blocks.get(name) or self.actors.get(name)
        if obj is None:
            raise MvsimError(f"no object named '{name}'; objects: {', '.join(self.object_names()) or 'none'}")
        _, _, z, _, pitch, roll = obj.pose
        if self._physics is not None:
            self._physics.teleport(name, float(x), float(y), float(yaw))
        else:
            obj.sim.pose = (float(x), float(y), z, float(yaw), pitch, roll)

    def object_names(self) -> list[str]:
        return [*self.vehicles, *self.blocks, *self.actors]

    # ------------------------------------------------------------------ report
    def summary(self) -> str:
        """A human-readable summary (what ``mvsim check`` prints)."""
        lines = [f"world: {self.path}"]
        dt = float(self.params["simul_timestep"])
        lines.append(f"timestep: {self.timestep * 1000:g} ms" + (" (automatic)" if dt == 0 else ""))
        counts = Counter(getattr(e, "xml_class", type(e).__name__) for e in self.elements)
        lines.append("elements: " + (", ".join(f"{k} x{v}" for k, v in counts.items()) or "none"))
        for e in self.elements:
            lines.append(f"  - {e.summary()}")
        walls = sum(1 for n in self.blocks if n.startswith("wall_"))
        lines.append(f"blocks: {len(self.blocks)}" + (f" ({walls} wall segments)" if walls else ""))
        for b in self.blocks.values():
            if not b.name.startswith("wall_"):
                lines.append(f"  - {b.summary()}")
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
        return "\n".join(lines)

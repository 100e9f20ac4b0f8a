"""The World: every object of a simulation, its clock and (from the physics issue on) its step loop.

Simulation time is the only clock here: :meth:`World.run` advances as fast as the CPU allows; real-time pacing lives in
the runners (CLI, ROS node).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mvsim_core.errors import MvsimError
from mvsim_core.rng import WorldRandom
from mvsim_core.xml.params import ParamValues

AUTO_TIMESTEP_MAX = 0.005  # s: the automatic step is min(5 ms, shortest sensor period)


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
        warnings: warnings issued while loading (``file:line: message``).
        missing_assets: URI -> reason, for models/textures that could not be had.
        rng: the world's seeded random generator.
        time: simulated seconds since the start.
        step_guard: a context manager held around every step (the comms layer's lock, so that service calls from
            other threads never see a half-done step), or None.
        post_step_hooks: called as ``hook(world)`` after every step, inside ``step_guard`` (topic publishers).
    """

    path: Path
    params: ParamValues
    gui: ParamValues
    lights: ParamValues
    georeference: ParamValues | None
    rng: WorldRandom
    elements: list[Any] = field(default_factory=list)
    blocks: dict[str, Any] = field(default_factory=dict)
    vehicles: dict[str, Any] = field(default_factory=dict)
    sensors: dict[str, Any] = field(default_factory=dict)
    joints: list[Any] = field(default_factory=list)
    markers: list[Any] = field(default_factory=list)
    actors: dict[str, Any] = field(default_factory=dict)
    vehicle_classes: dict[str, Any] = field(default_factory=dict)
    block_classes: dict[str, Any] = field(default_factory=dict)
    actor_classes: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    missing_assets: dict[str, str] = field(default_factory=dict)
    time: float = 0.0
    step_guard: AbstractContextManager | None = field(default=None, repr=False)
    post_step_hooks: list[Callable[[World], None]] = field(default_factory=list, repr=False)
    _steps: int = 0
    _physics: Any = field(default=None, repr=False)
    _dt: float | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ clock
    @property
    def timestep(self) -> float:
        """Seconds per physics step: ``simul_timestep``, or when 0, min(5 ms, shortest sensor period).

        Fixed once the simulation has started (the first step).
        """
        if self._dt is not None:
            return self._dt
        dt = float(self.params["simul_timestep"])
        if dt > 0:
            return dt
        periods = [s.period for v in self.vehicles.values() for s in v.sensors.values()]
        periods += [s.period for s in self.sensors.values()]
        return min([AUTO_TIMESTEP_MAX, *periods])

    @property
    def physics(self):
        """The physics state (:class:`mvsim_core.dynamics.physics.Physics`), built on first use."""
        if self._physics is None:
            from mvsim_core.dynamics.physics import Physics

            self._physics = Physics(self)
        return self._physics

    def step(self) -> None:
        """Advance exactly one physics step (terrain → controllers and friction → Box2D → post-step).

        Raises:
            SimulationError: a body became NaN/inf or ran away (the message names it and the step).
        """
        with self.step_guard or nullcontext():
            if self._dt is None:
                self._dt = self.timestep
            self.physics.step(self._dt)
            self._steps += 1
            self.time = self._steps * self._dt
            for hook in self.post_step_hooks:
                hook(self)

    def run(self, seconds: float) -> None:
        """Advance ``seconds`` of simulated time, in whole steps (rounded to the nearest step count)."""
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"run() needs a finite, non-negative duration in seconds (got {seconds})")
        for _ in range(int(round(seconds / self.timestep))):
            self.step()

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

"""What a vehicle's command verbs accept: the one rule for every way in (Python API, ZMQ, ROS, ...).

:meth:`Vehicle.set_twist <mvsim_core.objects.vehicles.base.Vehicle.set_twist>`, ``drive`` and ``set_torques`` pass
their values through the vehicle's :class:`CommandGate` before the controller sees them:

* a NaN or infinite value refuses the whole command with :class:`~mvsim_core.errors.CommandValueError` (naming the
  field and the value); the controller keeps its last good command;
* a finite value beyond the vehicle's :class:`CommandLimits` is clamped to the limit, and the first clamp of each
  field of each vehicle is logged (logger ``mvsim_core.commands``, WARNING).

Each dynamics class declares its default limits (``VehicleDynamics.command_limits``); a user changes them with
``vehicle.command_limits = vehicle.command_limits.replace(max_speed=1.5)``. Setpoints written in the world file
(``V``, ``W``, ``STEER_ANG``, raw torques) are initial states, not commands: they are not clamped.

Placing an object (:meth:`World.set_pose <mvsim_core.world.World.set_pose>`, ``World.set_velocity``,
``World.spawn(pose=...)`` and the ZMQ / ROS services built on them) follows the same rule through
:func:`checked_pose` and :func:`checked_velocity`:

* a NaN or infinite value refuses the request with :class:`~mvsim_core.errors.StateValueError` (naming the field);
* a position or angle beyond :data:`MAX_POSITION` (|x|, |y| in m, |yaw| in rad) is refused too: a place cannot be
  clamped into a meaningful one;
* a velocity beyond the object's limits is clamped (a vehicle: its ``command_limits``' ``max_speed`` on each of vx,
  vy and ``max_omega`` on ω; a block: :data:`BLOCK_LIMITS`), logged once per object and field like commands.

Units: m/s, rad/s, rad, N·m; twists in the vehicle frame (x forward, y left).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace

from mvsim_core.errors import CommandValueError, StateValueError
from mvsim_core.xml.params import MAX_MAGNITUDE

log = logging.getLogger("mvsim_core.commands")

MAX_POSITION = MAX_MAGNITUDE
"""Largest |x|, |y| (m) and |yaw| (rad) an object may be placed at: the bound every number of a world file has
(:data:`mvsim_core.xml.params.MAX_MAGNITUDE`, 1e9). Beyond it Box2D's float32 state overflows or loses all
precision."""


@dataclass(frozen=True)
class CommandLimits:
    """Largest magnitude of each commanded quantity (``math.inf``: no limit).

    Attributes:
        max_speed: |vx| and |vy| of twists, |speed| of drive commands (m/s).
        max_omega: |ω| of twists (rad/s).
        max_steer: |steering angle| of drive and torque commands (rad).
        max_torque: |torque| of each raw torque command (N·m).

    Raises:
        ValueError: a limit that is NaN, zero or negative.
    """

    max_speed: float = math.inf
    max_omega: float = math.inf
    max_steer: float = math.inf
    max_torque: float = math.inf

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not (isinstance(v, (int, float)) and v > 0):  # also false for NaN
                raise ValueError(f"command limit {f.name} must be a number > 0 (math.inf: no limit), got {v!r}")

    def replace(self, **changes: float) -> CommandLimits:
        """A copy with some limits changed (keyword names as the attributes)."""
        return replace(self, **changes)


class CommandGate:
    """Validates and clamps the commands of one vehicle (see the module docstring).

    Args:
        vehicle: the vehicle's name (for messages).
        limits: its limits.

    Attributes:
        limits: the limits in force (assign a new :class:`CommandLimits` to change them).
    """

    def __init__(self, vehicle: str, limits: CommandLimits) -> None:
        self.vehicle = vehicle
        self.limits = limits
        self._logged: set[str] = set()

    def twist(self, vx: float, vy: float, wz: float) -> tuple[float, float, float]:
        """The twist (m/s, m/s, rad/s) to command, clamped to ``max_speed`` / ``max_omega``.

        Raises:
            CommandValueError: a NaN or infinite value.
        """
        vx, vy, wz = float(vx), float(vy), float(wz)
        lim = self.limits
        ms, mo = lim.max_speed, lim.max_omega
        if math.isfinite(vx + vy + wz) and -ms <= vx <= ms and -ms <= vy <= ms and -mo <= wz <= mo:
            return vx, vy, wz  # finite (a NaN or inf makes the sum so) and within the limits: as given
        vx, vy, wz = self._finite((("vx", vx), ("vy", vy), ("wz", wz)))
        return (self._clamp("vx", vx, ms, "m/s"), self._clamp("vy", vy, ms, "m/s"), self._clamp("wz", wz, mo, "rad/s"))

    def drive(self, speed: float, steer: float) -> tuple[float, float]:
        """The (speed m/s, steering angle rad) to command, clamped to ``max_speed`` / ``max_steer``.

        Raises:
            CommandValueError: a NaN or infinite value.
        """
        speed, steer = self._finite((("speed", speed), ("steer", steer)))
        lim = self.limits
        return self._clamp("speed", speed, lim.max_speed, "m/s"), self._clamp("steer", steer, lim.max_steer, "rad")

    def torques(self, torques: Sequence[float], steer: float | None) -> tuple[tuple[float, ...], float | None]:
        """The torques (N·m) and steering angle (rad, or None) to command, clamped to ``max_torque`` /
        ``max_steer``.

        Raises:
            CommandValueError: a NaN or infinite value.
        """
        named = [(f"torques[{i}]", t) for i, t in enumerate(torques)]
        if steer is not None:
            named.append(("steer", steer))
        values = self._finite(named)
        lim = self.limits
        out = tuple(self._clamp(name, v, lim.max_torque, "N·m") for (name, _), v in zip(named, values, strict=True))
        if steer is None:
            return out, None
        return out[:-1], self._clamp("steer", values[-1], lim.max_steer, "rad")

    # ------------------------------------------------------------------ helpers
    def _finite(self, named: Iterable[tuple[str, float]]) -> list[float]:
        out = []
        for name, value in named:
            v = float(value)
            if not math.isfinite(v):
                raise CommandValueError(self.vehicle, name, v)
            out.append(v)
        return out

    def _clamp(self, name: str, value: float, limit: float, unit: str) -> float:
        if -limit <= value <= limit:
            return value
        if name not in self._logged:
            self._logged.add(name)
            log.warning("vehicle '%s': %s = %g %s is beyond its limit of %g %s; clamped (Vehicle.command_limits; "
                        "said once per vehicle and field)", self.vehicle, name, value, unit, limit, unit)
        return math.copysign(limit, value)


BLOCK_LIMITS = CommandLimits(max_speed=100.0, max_omega=100.0)
"""The fastest a block may be set moving (``World.set_velocity``): 100 m/s on each of vx, vy and 100 rad/s, a tenth
of the speed the physics treats as a blow-up (:data:`mvsim_core.dynamics.physics.RUNAWAY_SPEED`)."""


def checked_pose(verb: str, name: str, x: float, y: float, yaw: float) -> tuple[float, float, float]:
    """(x, y, yaw) as floats (m, m, rad, world frame) when each is finite and within ±:data:`MAX_POSITION`.

    Raises:
        StateValueError: the first value that is not (``verb`` and ``name`` go into its message).
    """
    x, y, yaw = _bounded(verb, name, (("x", x, "m"), ("y", y, "m"), ("yaw", yaw, "rad")), MAX_POSITION)
    return x, y, yaw


def checked_velocity(verb: str, name: str, gate: CommandGate, vx: float, vy: float, wz: float
                     ) -> tuple[float, float, float]:
    """(vx, vy, ω) (m/s, m/s, rad/s) refused when not finite, then clamped by ``gate`` (its ``max_speed`` on vx and
    vy, ``max_omega`` on ω; the first clamp of each field logged).

    Raises:
        StateValueError: a NaN or infinite value.
    """
    vx, vy, wz = _bounded(verb, name, (("vx", vx, "m/s"), ("vy", vy, "m/s"), ("wz", wz, "rad/s")), math.inf)
    return gate.twist(vx, vy, wz)


def _bounded(verb: str, name: str, named: Iterable[tuple[str, float, str]], bound: float) -> tuple[float, ...]:
    out = []
    for field, value, unit in named:
        v = float(value)
        if not math.isfinite(v):
            raise StateValueError(verb, name, field, v, math.inf, unit)
        if abs(v) > bound:
            raise StateValueError(verb, name, field, v, bound, unit)
        out.append(v)
    return tuple(out)

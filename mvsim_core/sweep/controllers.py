"""What drives a run's vehicle: one twist command (vx, vy in m/s, wz in rad/s, vehicle frame) per control period,
given to ``Vehicle.set_twist`` (so through its command limits).

* ``none``: no command (the world's own controllers, keyframes and actors still move).
* ``twists``: a schedule of timed twists, each held until its ``until`` (simulated s); the last one to the end.
* ``goto``: to the goal point: heading error ``alpha`` to the goal, distance ``rho``; ``wz = clip(k_alpha·alpha,
  ±turn_rate)``, ``vx = clip(k_rho·rho, 0, speed)·max(0, cos alpha)`` (no driving away from it); within
  ``tolerance`` it stops, turning in place to the goal's yaw when the goal has one.
* ``policy``: ``function(world, ctx)`` (:mod:`mvsim_core.sweep.callables`) returning ``(vx, vy, wz)``,
  ``(vx, wz)`` or None (keep the last command).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mvsim_core.sweep.callables import resolve
from mvsim_core.sweep.context import RunContext
from mvsim_core.sweep.spec import ControllerSpec, Goal, TimedTwist

if TYPE_CHECKING:
    from mvsim_core.world import World

Twist = tuple[float, float, float]


class Controller(Protocol):
    """Called once per control period, before the steps of that period."""

    def command(self, world: World, ctx: RunContext) -> Twist | None:
        """The twist to command now (vx, vy m/s; wz rad/s), or None to leave the vehicle's command as it is."""
        ...


def wrap_angle(a: float) -> float:
    """``a`` (rad) wrapped into [-pi, pi)."""
    return (a + math.pi) % (2.0 * math.pi) - math.pi


class NoController:
    """Commands nothing."""

    def command(self, world: World, ctx: RunContext) -> Twist | None:
        return None


class TwistSchedule:
    """Timed twists (see the module docstring)."""

    def __init__(self, twists: tuple[TimedTwist, ...]) -> None:
        self.twists = twists

    def command(self, world: World, ctx: RunContext) -> Twist | None:
        t = world.time
        for tw in self.twists:
            if t < tw.until - 1e-9:
                return (tw.vx, tw.vy, tw.wz)
        last = self.twists[-1]
        return (last.vx, last.vy, last.wz)


class GoTo:
    """Drives to ``goal`` (see the module docstring)."""

    def __init__(self, spec: ControllerSpec, goal: Goal) -> None:
        self.spec, self.goal = spec, goal

    def command(self, world: World, ctx: RunContext) -> Twist | None:
        veh = ctx.vehicle
        if veh is None:
            return None
        x, y, _, yaw, _, _ = veh.pose
        g, s = self.goal, self.spec
        dx, dy = g.x - x, g.y - y
        rho = math.hypot(dx, dy)
        if rho <= g.tolerance:
            if g.yaw is None:
                return (0.0, 0.0, 0.0)
            err = wrap_angle(g.yaw - yaw)
            wz = 0.0 if abs(err) <= g.yaw_tolerance / 2 else max(-s.turn_rate, min(s.turn_rate, s.k_alpha * err))
            return (0.0, 0.0, wz)
        alpha = wrap_angle(math.atan2(dy, dx) - yaw)
        wz = max(-s.turn_rate, min(s.turn_rate, s.k_alpha * alpha))
        vx = min(s.speed, s.k_rho * rho) * max(0.0, math.cos(alpha))
        return (vx, 0.0, wz)


class Policy:
    """A user function called each control period (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn, self.name = fn, name

    def command(self, world: World, ctx: RunContext) -> Twist | None:
        out = self.fn(world, ctx)
        if out is None:
            return None
        try:
            values = [float(v) for v in out]
        except (TypeError, ValueError):
            values = []
        if len(values) == 2:
            return (values[0], 0.0, values[1])
        if len(values) == 3:
            return (values[0], values[1], values[2])
        raise TypeError(f"policy {self.name} returned {out!r:.80}; return (vx, vy, wz), (vx, wz) or None")


def make_controller(spec: ControllerSpec, goal: Goal | None, folder: Path | None = None) -> Controller:
    """The controller that ``spec`` describes (``policy``: its function imported, :func:`resolve`)."""
    if spec.type == "twists":
        return TwistSchedule(spec.twists)
    if spec.type == "goto":
        if goal is None:
            raise ValueError("controller goto needs a goal")
        return GoTo(spec, goal)
    if spec.type == "policy":
        return Policy(resolve(spec.function, folder), spec.function)
    return NoController()

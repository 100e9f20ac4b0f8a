"""``<controller class="trajectory">`` (differential and Ackermann vehicles; upstream MVSim 1.4): drive along a timed
polyline by pure pursuit, kinematically.

::

    <controller class="trajectory" loop="true" lookahead_distance="0.5" max_angular_speed="2.0">
      <waypoint t="0"  x="0"  y="0"/>
      <waypoint t="10" x="10" y="0"/>
      <waypoint t="20" x="10" y="10"/>
    </controller>

Parameters, as attributes or child tags (a child tag wins, as upstream): ``loop`` (true: start over after the last
waypoint), ``lookahead_distance`` (0.5 m), ``max_angular_speed`` (2.0 rad/s; ≤ 0: no limit). Waypoints: ``t``
(simulated s), ``x``, ``y`` (m, world frame; a missing attribute is 0, as upstream); at least two, sorted by ``t``,
times strictly increasing.

At simulated time t (wrapped into [t_first, t_last) when looping, else clamped) the *reference* is the point of its
segment interpolated linearly in time; its speed is the segment's length over its duration. The vehicle aims at the
point ``lookahead_distance`` further along the path (arc length, from the reference, not from the vehicle): with that
point at (lx, ly) in the vehicle frame, curvature κ = 2·ly/(lx² + ly²), vx = reference speed, ω = vx·κ. When |ω|
exceeds ``max_angular_speed`` both vx and ω are scaled down, so the curvature is kept. The twist is zero after the
last waypoint (not looping) and on a segment whose two waypoints coincide (a pause); vx = speed, ω = 0 when the
look-ahead point is within 1 mm.

Like ``twist_ideal``: no wheel torques, the twist is imposed after the physics step and no friction force acts on the
chassis; Ackermann vehicles steer the equivalent angle δ = atan(ω·L/vx) (|vx| > 1e-3) else sign(ω)·min(|ω·L|,
max_steer), clamped to ±max_steer. The twist is computed at the start of each step from the simulated time and the
pose then, and imposed at its end (upstream's Ackermann controller does the same; its differential one computes it at
the end of the step before, from the same pose).

The controller drives itself: it takes no commands (``commands`` is empty: ``set_twist``, ``drive``, ``set_torques``
and ``stop`` raise :class:`~mvsim_core.errors.ControllerError`; ROS ``cmd_vel``/``ackermann_cmd`` are refused with a
warning and the viewer's driving keys do nothing).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from mvsim_core.dynamics.controllers.base import Controller, Family
from mvsim_core.world_options import MIN_TIMESTEP
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param, read_params

CLOSE = 1e-6
"""Squared distance (m²) under which the look-ahead point counts as reached: drive straight."""
STEER_VX_MIN = 1e-3
"""|vx| (m/s) under which Ackermann vehicles steer from ω·L alone."""

WAYPOINT_PARAMS: tuple[Param, ...] = (
    Param("t", Kind.FLOAT, 0.0, "s", doc="simulated time at which the vehicle should be here"),
    Param("x", Kind.FLOAT, 0.0, "m", doc="world x"),
    Param("y", Kind.FLOAT, 0.0, "m", doc="world y"),
)


@dataclass(frozen=True)
class Waypoint:
    """A point of the path: time ``t`` (simulated s) and position ``x``, ``y`` (m, world frame)."""

    t: float
    x: float
    y: float


class TimedPath:
    """A polyline with a time per vertex, and the pure-pursuit twist that follows it (upstream's
    ``PoseTrajectoryFollower``).

    Args:
        waypoints: at least two, any order; times at least ``MIN_TIMESTEP`` (1e-4 s) apart.
        loop: wrap time (and arc length) around instead of stopping at the last waypoint.
        lookahead: look-ahead distance along the path (m).
        max_omega: largest |ω| (rad/s); ≤ 0: no limit.

    Raises:
        ValueError: fewer than two waypoints, or two times less than ``MIN_TIMESTEP`` (1e-4 s) apart.
    """

    def __init__(self, waypoints: Sequence[Waypoint], *, loop: bool = True, lookahead: float = 0.5,
                 max_omega: float = 2.0) -> None:
        wps = sorted(waypoints, key=lambda w: w.t)
        if len(wps) < 2:
            raise ValueError(f"at least 2 waypoints are required, got {len(wps)}")
        for a, b in zip(wps, wps[1:], strict=False):
            if not b.t > a.t:
                raise ValueError(f"waypoint times must be strictly increasing; t={b.t:g} is repeated")
            if not b.t - a.t >= MIN_TIMESTEP:
                raise ValueError(f"waypoint times must be at least {MIN_TIMESTEP:g} s apart; t={a.t:g} and t={b.t:g} "
                                 f"are not")
        self.waypoints = tuple(wps)
        self.loop = bool(loop)
        self.lookahead = float(lookahead)
        self.max_omega = float(max_omega)
        self.times = [w.t for w in wps]
        self.cum = [0.0]
        for a, b in zip(wps, wps[1:], strict=False):
            self.cum.append(self.cum[-1] + math.hypot(b.x - a.x, b.y - a.y))

    @property
    def length(self) -> float:
        """Total length of the polyline (m)."""
        return self.cum[-1]

    def finished(self, t: float) -> bool:
        """Past the last waypoint of a path that does not loop."""
        return not self.loop and t >= self.times[-1]

    def wrap_time(self, t: float) -> float:
        """``t`` folded into [t_first, t_last) when looping, else clamped to [t_first, t_last]."""
        t0, t1 = self.times[0], self.times[-1]
        if not self.loop:
            return min(max(t, t0), t1)
        r = math.fmod(t - t0, t1 - t0)
        return t0 + (r + (t1 - t0) if r < 0 else r)

    @staticmethod
    def _segment(keys: list[float], v: float) -> int:
        """Index i of the segment [keys[i], keys[i+1]] holding ``v`` (the first one whose end is ≥ v; the last one
        beyond it), as upstream's linear search."""
        return min(max(bisect.bisect_left(keys, v, 1) - 1, 0), len(keys) - 2)

    def reference(self, t: float) -> tuple[float, float, float, float]:
        """(x, y, arc length, speed) of the reference at simulated time ``t`` (m, m, m, m/s)."""
        tw = self.wrap_time(t)
        i = self._segment(self.times, tw)
        t0, t1 = self.times[i], self.times[i + 1]
        frac = min(max((tw - t0) / (t1 - t0), 0.0), 1.0)
        a, b = self.waypoints[i], self.waypoints[i + 1]
        seg = self.cum[i + 1] - self.cum[i]
        return (a.x + (b.x - a.x) * frac, a.y + (b.y - a.y) * frac, self.cum[i] + frac * seg, seg / (t1 - t0))

    def position_at(self, s: float) -> tuple[float, float]:
        """The point at arc length ``s`` (m), wrapped around when looping, else clamped to the ends."""
        total = self.length
        if total <= 0.0:
            return (self.waypoints[0].x, self.waypoints[0].y)
        if self.loop:
            s = math.fmod(s, total)
            if s < 0:
                s += total
        else:
            s = min(max(s, 0.0), total)
        i = self._segment(self.cum, s)
        seg = self.cum[i + 1] - self.cum[i]
        frac = min(max((s - self.cum[i]) / seg, 0.0), 1.0) if seg > 0 else 0.0
        a, b = self.waypoints[i], self.waypoints[i + 1]
        return (a.x + (b.x - a.x) * frac, a.y + (b.y - a.y) * frac)

    def twist(self, t: float, x: float, y: float, yaw: float) -> tuple[float, float, float]:
        """Body-frame (vx, 0, ω) (m/s, rad/s) for a vehicle at (x, y, yaw) (m, rad) at simulated time ``t``."""
        if self.finished(t):
            return (0.0, 0.0, 0.0)
        _, _, arc, speed = self.reference(t)
        if speed <= 0.0:
            return (0.0, 0.0, 0.0)
        px, py = self.position_at(arc + self.lookahead)
        dx, dy = px - x, py - y
        c, s = math.cos(yaw), math.sin(yaw)
        lx, ly = c * dx + s * dy, -s * dx + c * dy
        d2 = lx * lx + ly * ly
        if d2 < CLOSE:
            return (speed, 0.0, 0.0)
        vx = speed
        omega = speed * 2.0 * ly / d2
        if self.max_omega > 0 and abs(omega) > self.max_omega:
            vx *= self.max_omega / abs(omega)
            omega = math.copysign(self.max_omega, omega)
        return (vx, 0.0, omega)


class TrajectoryController(Controller):
    """Common base of the ``trajectory`` controllers (not registered itself).

    Attributes:
        path: the :class:`TimedPath`. twist: the body-frame twist imposed at the end of the current step.
    """

    xml_class: ClassVar[str] = "trajectory"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("loop", Kind.BOOL, True, doc="start over after the last waypoint"),
        Param("lookahead_distance", Kind.FLOAT, 0.5, "m", min=0.0, doc="pure-pursuit look-ahead along the path"),
        Param("max_angular_speed", Kind.FLOAT, 2.0, "rad/s", doc="largest |ω| (≤ 0: no limit); vx slows with it"),
    )
    CHILD_TAGS: ClassVar[frozenset[str]] = frozenset({"waypoint"})

    def _configure(self, ctx: ParseContext) -> None:
        node = self.node
        assert node is not None  # a trajectory is always written out
        attrs = read_params(self.PARAMS, [node], ctx, attrs=True)
        for p in self.PARAMS:  # attributes, unless the same parameter is also a child tag
            if p.name not in self.params.where and p.name in attrs.where:
                self.params[p.name] = attrs[p.name]
                self.params.where[p.name] = attrs.where[p.name]
        nodes = list(node.children_named("waypoint"))
        wps = []
        for n in nodes:
            v = read_params(WAYPOINT_PARAMS, [n], ctx, attrs=True)
            wps.append(Waypoint(float(v["t"]), float(v["x"]), float(v["y"])))
        if len(wps) < 2:
            raise ctx.error(node, f'<controller class="trajectory"> needs at least 2 <waypoint t=".." x=".." '
                                  f'y=".."/> entries (got {len(wps)})')
        try:
            self.path = TimedPath(wps, loop=bool(self.params["loop"]),
                                  lookahead=float(self.params["lookahead_distance"]),
                                  max_omega=float(self.params["max_angular_speed"]))
        except ValueError as e:
            order = sorted(range(len(wps)), key=lambda k: wps[k].t)
            first = next(a for a, b in zip(order, order[1:], strict=False) if not wps[b].t - wps[a].t >= MIN_TIMESTEP)
            raise ctx.error(nodes[first], f"{e} in <controller class=\"trajectory\">") from None
        self.twist = (0.0, 0.0, 0.0)
        self._steps = 0

    def _follow(self, veh, dt: float) -> tuple[float, float, float]:
        """This step's twist, from the controller's own clock (steps × dt, the World's time) and the pose now."""
        t = self._steps * dt
        self._steps += 1
        x, y, _, yaw, _, _ = veh.pose
        self.twist = self.path.twist(t, x, y, yaw)
        return self.twist

    def ideal_twist(self) -> tuple[float, float, float]:
        """The twist imposed after each physics step."""
        return self.twist

    def summary(self) -> str:
        p = self.path
        return (f"trajectory ({self.family.value}, {len(p.waypoints)} waypoints, {p.length:.3g} m in "
                f"{p.times[-1] - p.times[0]:g} s{', loop' if p.loop else ''})")


class DifferentialTrajectory(TrajectoryController):
    """``trajectory`` for differential vehicles."""

    families: ClassVar[tuple[Family, ...]] = (Family.DIFFERENTIAL,)

    def control(self, veh, dt: float) -> None:
        """No torques: compute this step's twist (imposed after the physics step)."""
        self._follow(veh, dt)
        veh.dynamics.set_lr_torques(veh, 0.0, 0.0)


class AckermannTrajectory(TrajectoryController):
    """``trajectory`` for Ackermann vehicles: also steers the front wheels to match the twist."""

    families: ClassVar[tuple[Family, ...]] = (Family.ACKERMANN,)

    def control(self, veh, dt: float) -> None:
        """No torques; compute this step's twist and steer to it (module docstring)."""
        vx, _, omega = self._follow(veh, dt)
        dyn = veh.dynamics
        if abs(vx) > STEER_VX_MIN:
            steer = math.atan(omega * dyn.wheelbase / vx)
        else:
            steer = math.copysign(min(abs(omega * dyn.wheelbase), dyn.max_steer), omega)
        steer = max(-dyn.max_steer, min(dyn.max_steer, steer))
        dyn.set_drive(veh, 0.0, 0.0, 0.0, 0.0)
        dyn.steer(veh, steer)

"""What a run measures, one or more results columns per metric.

Built-in (units in brackets):

* ``final_pose_error`` [m]: distance from the vehicle's final position to the goal; with a goal yaw, also
  ``final_yaw_error`` [rad], the absolute wrapped heading difference at the end.
* ``time_to_goal`` [s]: the first simulated time, checked after every physics step, at which the vehicle is within the
  goal's ``tolerance`` (and, with a goal yaw, within ``yaw_tolerance`` of it); NaN when it never is.
* ``collisions`` [count]: how many times the vehicle started touching something (a step where it touches and the
  step before it did not); 0 means it never touched anything.
* ``min_obstacle_distance`` [m]: the shortest valid range of any scan of the vehicle's 2D lidars (its sensors with a
  scan output) during the run (from the lidar, not from the vehicle's outline; noise included); NaN when no scan hit
  anything.

Custom: ``function(world, ctx)`` (:class:`~mvsim_core.sweep.context.RunContext`) called once after the last step; a
number becomes column ``NAME``, a dict ``{KEY: value}`` columns ``NAME.KEY`` (numbers, text or bools).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.sensors.outputs import OutputKind, output_of
from mvsim_core.sweep.callables import resolve
from mvsim_core.sweep.context import RunContext
from mvsim_core.sweep.controllers import wrap_angle
from mvsim_core.sweep.spec import MetricSpec

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.world import World


class Metric:
    """A metric: :meth:`on_step` after every physics step (when :attr:`per_step`), :meth:`result` at the end."""

    per_step = False

    def on_step(self, world: World, ctx: RunContext) -> None:
        """Look at the world after a physics step."""

    def result(self, world: World, ctx: RunContext) -> dict[str, Any]:
        """Column -> value, at the end of the run."""
        raise NotImplementedError


def _vehicle(ctx: RunContext, what: str) -> Vehicle:
    if ctx.vehicle is None:
        raise ValueError(f"metric {what} measures a vehicle, and the world has none")
    return ctx.vehicle


class FinalPoseError(Metric):
    def result(self, world: World, ctx: RunContext) -> dict[str, Any]:
        g = ctx.goal
        assert g is not None
        x, y, _, yaw, _, _ = _vehicle(ctx, "final_pose_error").pose
        out: dict[str, Any] = {"final_pose_error": math.hypot(g.x - x, g.y - y)}
        if g.yaw is not None:
            out["final_yaw_error"] = abs(wrap_angle(g.yaw - yaw))
        return out


class TimeToGoal(Metric):
    per_step = True

    def __init__(self) -> None:
        self.time = math.nan

    def on_step(self, world: World, ctx: RunContext) -> None:
        if not math.isnan(self.time):
            return
        g = ctx.goal
        assert g is not None
        x, y, _, yaw, _, _ = _vehicle(ctx, "time_to_goal").pose
        if math.hypot(g.x - x, g.y - y) <= g.tolerance and (g.yaw is None or
                                                            abs(wrap_angle(g.yaw - yaw)) <= g.yaw_tolerance):
            self.time = world.time

    def result(self, world: World, ctx: RunContext) -> dict[str, Any]:
        return {"time_to_goal": self.time}


class Collisions(Metric):
    per_step = True

    def __init__(self) -> None:
        self.count = 0
        self.touching = False

    def on_step(self, world: World, ctx: RunContext) -> None:
        now = _vehicle(ctx, "collisions").collision
        if now and not self.touching:
            self.count += 1
        self.touching = now

    def result(self, world: World, ctx: RunContext) -> dict[str, Any]:
        return {"collisions": self.count}


class MinObstacleDistance(Metric):
    per_step = True

    def __init__(self) -> None:
        self.min = math.inf
        self.stamps: dict[str, float] = {}
        self.scans: dict[int, bool] = {}  # id of a sensor -> whether it has a scan output (looked up once)

    def on_step(self, world: World, ctx: RunContext) -> None:
        for name, s in _vehicle(ctx, "min_obstacle_distance").sensors.items():
            scan = s.last
            if scan is None or not self._is_scan(s) or self.stamps.get(name) == scan.stamp:
                continue
            self.stamps[name] = scan.stamp
            hits = scan.ranges[scan.valid]
            if hits.size:
                self.min = min(self.min, float(np.min(hits)))

    def _is_scan(self, s: Any) -> bool:
        """Whether sensor ``s`` puts out planar scans (its observations have ``ranges`` and ``valid``)."""
        known = self.scans.get(id(s))
        if known is None:
            known = self.scans[id(s)] = output_of(s, OutputKind.SCAN) is not None
        return known

    def result(self, world: World, ctx: RunContext) -> dict[str, Any]:
        return {"min_obstacle_distance": self.min if math.isfinite(self.min) else math.nan}


class Custom(Metric):
    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self.name, self.fn = name, fn

    def result(self, world: World, ctx: RunContext) -> dict[str, Any]:
        out = self.fn(world, ctx)
        if isinstance(out, dict):
            return {f"{self.name}.{k}": _cell(self.name, v) for k, v in out.items()}
        return {self.name: _cell(self.name, out)}


def _cell(name: str, v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or isinstance(v, bool | int | float | str):
        return v
    raise TypeError(f"metric {name} returned a {type(v).__name__}; return a number, text, a bool, or a dict of them")


BUILTIN: dict[str, type[Metric]] = {
    "final_pose_error": FinalPoseError,
    "time_to_goal": TimeToGoal,
    "collisions": Collisions,
    "min_obstacle_distance": MinObstacleDistance,
}


def make_metrics(specs: tuple[MetricSpec, ...], folder: Path | None = None) -> list[Metric]:
    """The metrics of a run, fresh (custom functions imported, :func:`resolve`)."""
    return [Custom(m.name, resolve(m.function, folder)) if m.function else BUILTIN[m.name]() for m in specs]

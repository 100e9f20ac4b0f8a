"""Load-time estimate of what one simulated second costs, to warn about a timestep or sensor period that is allowed
but makes it cost minutes.

``simul_timestep`` and ``sensor_period`` may be as small as :data:`~mvsim_core.world_options.MIN_TIMESTEP`
(1e-4 s): 10 000 physics steps, and as many samples of each such sensor, per simulated second. That is right for
some studies, but a user who typed ``1e-4`` for ``1e-1`` should hear at load what ``run()`` will cost, not find out
after minutes. The estimate is rough and on the high side (wall seconds of one core, measured on this
implementation: ``demo_depth_camera.world.xml`` with a 1e-4 s timestep, 14 µs per physics step with one vehicle,
30 ms per sample of its 640 x 480 RGB-D camera sensing both images, whose arrays take 14.7 MB):

* a physics step costs :data:`STEP_SECONDS` plus :data:`VEHICLE_STEP_SECONDS` per vehicle;
* a sensor sample costs :data:`SAMPLE_SECONDS` plus :data:`SECONDS_PER_ARRAY_BYTE` per byte of its per-ray or
  per-pixel arrays (:func:`mvsim_core.loader.sensor_array_bytes`), at most once per physics step.

A part (the timestep, or one sensor) whose estimate passes :data:`COSTLY_SECONDS` per simulated second is named in a
warning with its estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

STEP_SECONDS = 2e-5
"""Wall seconds of one physics step of a world without vehicles (the clock, Box2D, the step's bookkeeping)."""
VEHICLE_STEP_SECONDS = 1e-5
"""Wall seconds one vehicle adds to a physics step (terrain, controller, friction, Box2D body)."""
SAMPLE_SECONDS = 2e-5
"""Wall seconds of one sensor sample besides its arrays."""
SECONDS_PER_ARRAY_BYTE = 2e-9
"""Wall seconds per byte of a sensor's per-ray or per-pixel arrays, per sample (a 640 x 480 RGB-D camera sensing
both images: 14.7 MB, 30 ms)."""
COSTLY_SECONDS = 60.0
"""A part costing more than this (wall seconds per simulated second) is warned about."""


@dataclass(frozen=True)
class CostlyPart:
    """One part of a world that makes a simulated second costly.

    Attributes:
        what: the part, as a warning names it (``"simul_timestep 0.0001 s"``, ``"sensor 'r1/camera1'
            (rgbd_camera) with sensor_period 0.0001 s"``).
        per_second: how often it runs per simulated second (steps or samples).
        seconds: its estimated wall seconds per simulated second.
        node: where it is written (for the warning's ``file:line``; None when unknown).
    """

    what: str
    per_second: float
    seconds: float
    node: Any

    def message(self) -> str:
        """The warning text: the part, how often it runs, its estimated cost, and what to change."""
        return (f"{self.what} runs {self.per_second:.0f} times per simulated second: an estimated "
                f"{format_duration(self.seconds)} of computing per simulated second (run(1.0) takes about that "
                f"long); allowed, but make the period longer unless this is meant")


def format_duration(seconds: float) -> str:
    """``"45 s"``, ``"5.1 min"``, ``"2.3 h"``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.2g} min"
    return f"{seconds / 3600:.2g} h"


def step_seconds(vehicles: int) -> float:
    """Estimated wall seconds of one physics step with ``vehicles`` vehicles."""
    return STEP_SECONDS + vehicles * VEHICLE_STEP_SECONDS


def sample_seconds(array_bytes: int) -> float:
    """Estimated wall seconds of one sample of a sensor whose arrays take ``array_bytes`` bytes."""
    return SAMPLE_SECONDS + array_bytes * SECONDS_PER_ARRAY_BYTE


def costly_parts(timestep: float, timestep_node: Any, vehicles: int, sensors: Iterable[tuple[str, Any]],
                 array_bytes: Callable[[Any], int], threshold: float = COSTLY_SECONDS) -> list[CostlyPart]:
    """The parts whose estimated cost per simulated second passes ``threshold`` wall seconds.

    Args:
        timestep: physics step (s; > 0).
        timestep_node: where ``simul_timestep`` is written (None: the automatic one).
        vehicles: number of vehicles.
        sensors: (name as shown, sensor) for every sensor; a sensor has ``period`` (s), ``xml_class`` and ``node``.
        array_bytes: bytes of a sensor's per-ray or per-pixel arrays.
        threshold: wall seconds per simulated second.
    """
    out: list[CostlyPart] = []
    if timestep <= 0:
        return out
    steps = 1.0 / timestep
    cost = steps * step_seconds(vehicles)
    if cost > threshold:
        who = f" with {vehicles} vehicles" if vehicles > 1 else ""
        out.append(CostlyPart(f"simul_timestep {timestep:g} s{who}", steps, cost, timestep_node))
    for name, s in sensors:
        period = max(float(s.period), timestep)
        samples = 1.0 / period
        cost = samples * sample_seconds(array_bytes(s))
        if cost > threshold:
            out.append(CostlyPart(f"sensor '{name}' ({s.xml_class}) with sensor_period {float(s.period):g} s",
                                  samples, cost, getattr(s, "node", None)))
    return out

"""Blow-ups as per-object events: what the physics does when one vehicle or block goes NaN/inf or runs away.

A body whose state (pose or velocity) becomes NaN or infinite, a vehicle faster than
:data:`~mvsim_core.dynamics.blowups.RUNAWAY_SPEED`, a vehicle whose friction forces or wheel spins are not finite:
each is one :class:`Fault`. Unless the world is strict (``World.strict``, ``mvsim launch --strict``, the ROS node's
``strict`` parameter), the step goes on and the object is **reset**:

* a vehicle goes back to its last finite pose (x, y, yaw at the start of the step), at rest (body velocity, wheel
  spins, torques zero); its controller goes back to its initial state with a zero command (``Vehicle.stop``, where
  the controller takes commands), so that the command that blew it up is not replayed;
* a block goes back to its last finite pose, at rest.

The other objects are untouched: the forces of a vehicle whose friction forces are not finite never reach Box2D, and
a vehicle that blows up inside Box2D is caught right after that step, so vehicles not in contact with it go on
bit-identically. Each fault is recorded in the world's :class:`FaultLog` (``World.faults``), given to its listeners,
and logged as a warning on logger ``mvsim_core.faults``, at most once per object per simulated second (the count of
those in between is in the next line). A strict world raises
:class:`~mvsim_core.dynamics.blowups.SimulationError` instead, as a step that cannot go on.

Frames and units: world frame, m, rad, m/s, rad/s; times in simulated seconds.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

log = logging.getLogger("mvsim_core.faults")

REPORT_PERIOD = 1.0
"""Simulated seconds between two log lines about one object (the faults in between are counted)."""
KEEP = 1000
"""Most recent faults :class:`FaultLog` keeps (the counts cover all of them)."""


class Blowup(NamedTuple):
    """What the physics found and did in one step about one object (the World turns it into a :class:`Fault`):
    its ``name``, ``kind`` (``"vehicle"`` / ``"block"``), ``what`` went wrong, its ``state`` then (x, y, yaw, vx,
    vy, ω) and the pose it was put back at, ``reset_to`` (x, y, yaw)."""

    name: str
    kind: str
    what: str
    state: tuple[float, ...]
    reset_to: tuple[float, float, float]


@dataclass(frozen=True)
class Fault:
    """One object that blew up and was reset (or, in a strict world, that stopped the step).

    Attributes:
        name: the vehicle's or block's name.
        kind: ``"vehicle"`` or ``"block"``.
        time: simulated time at the end of the step where it happened (s).
        step: that step's number (1 = the first step).
        what: what went wrong, e.g. ``NaN/inf in its state``, ``a runaway velocity``, ``wheel 2 spin NaN/inf``,
            ``NaN/inf friction force``.
        state: x, y (m), yaw (rad), vx, vy (m/s, world frame), ω (rad/s) read from the physics at that moment.
        reset_to: x, y (m), yaw (rad) it was put back at, at rest; None in a strict world (nothing was reset).
        reported: whether this fault was logged (at most one per object per :data:`REPORT_PERIOD` s).
        unreported: faults of this object since its last logged one that were not logged (in a reported fault).
    """

    name: str
    kind: str
    time: float
    step: int
    what: str
    state: tuple[float, ...]
    reset_to: tuple[float, float, float] | None
    reported: bool = True
    unreported: int = 0

    def message(self) -> str:
        """One line: ``vehicle 'x' blew up at t=1.2350 s (step 247): <what> (x, y, yaw, vx, vy, ω = [...]); reset
        to (x, y, yaw) = (...), at rest, its command zeroed``."""
        state = ", ".join(f"{v:.6g}" for v in self.state)
        head = (f"{self.kind} '{self.name}' blew up at t={self.time:.4f} s (step {self.step}): {self.what} "
                f"(x, y, yaw, vx, vy, ω = [{state}])")
        if self.reset_to is None:
            return head
        x, y, yaw = self.reset_to
        tail = ", its controller reset with a zero command" if self.kind == "vehicle" else ""
        more = f" ({self.unreported} more times since the last report)" if self.unreported else ""
        return f"{head}; reset to (x, y, yaw) = ({x:.6g}, {y:.6g}, {yaw:.6g}), at rest{tail}{more}"


FaultListener = Callable[[Fault], None]
"""Called as ``listener(fault)`` for every fault, right after the object was reset, inside the step."""


class FaultLog:
    """The faults of one world: the latest :data:`KEEP`, counts per object, listeners and the throttled log.

    Iterating gives the kept faults, oldest first; ``len()`` is how many happened in all.

    Attributes:
        counts: object name -> how many faults it had.
        listeners: called with every fault (see :data:`FaultListener`).
    """

    def __init__(self) -> None:
        self._kept: deque[Fault] = deque(maxlen=KEEP)
        self._total = 0
        self.counts: dict[str, int] = {}
        self.listeners: list[FaultListener] = []
        self._last_report: dict[str, float] = {}
        self._since: dict[str, int] = {}

    def __len__(self) -> int:
        return self._total

    def __iter__(self) -> Iterator[Fault]:
        return iter(list(self._kept))

    def __bool__(self) -> bool:
        return self._total > 0

    @property
    def last(self) -> Fault | None:
        """The latest fault, or None."""
        return self._kept[-1] if self._kept else None

    def add_listener(self, listener: FaultListener) -> None:
        """Call ``listener(fault)`` for every fault from now on."""
        self.listeners.append(listener)

    def remove_listener(self, listener: FaultListener) -> None:
        """Stop calling ``listener``; nothing happens when it is not registered."""
        if listener in self.listeners:
            self.listeners.remove(listener)

    def record(self, name: str, kind: str, time: float, step: int, what: str, state: tuple[float, ...],
               reset_to: tuple[float, float, float] | None) -> Fault:
        """Add one fault (decide whether it is logged now), log it if so and tell the listeners. Returns it."""
        last = self._last_report.get(name)
        reported = last is None or time - last >= REPORT_PERIOD - 1e-9
        if reported:
            unreported = self._since.pop(name, 0)
            self._last_report[name] = time
        else:
            unreported = 0
            self._since[name] = self._since.get(name, 0) + 1
        fault = Fault(name, kind, time, step, what, tuple(float(v) for v in state), reset_to, reported, unreported)
        self._kept.append(fault)
        self._total += 1
        self.counts[name] = self.counts.get(name, 0) + 1
        if reported:
            log.warning("%s", fault.message())
        for listener in list(self.listeners):
            listener(fault)
        return fault

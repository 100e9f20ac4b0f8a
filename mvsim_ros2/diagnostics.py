"""``/diagnostics`` (diagnostic_msgs/DiagnosticArray): how the simulation is keeping up, for ``rqt_robot_monitor``,
``diagnostic_aggregator`` and alarms.

Published every ``1 / diagnostics_rate`` wall seconds (the node parameter, Hz; 0 = off), from the run loop's ticks, so
it comes on time within one tick (``1 / simul_rate``) while the node runs, paused or not. One DiagnosticStatus, name
``mvsim: simulation``, hardware_id ``mvsim``, whose values (KeyValue, numbers as decimal text) are:

===========================  ================================================================================
key                          meaning
===========================  ================================================================================
``state``                    ``playing`` or ``paused`` (lockstep)
``sim_time_s``               simulated time now, s
``real_time_factor``         simulated seconds per wall second over the last period (achieved)
``target_real_time_factor``  the ``realtime_factor`` parameter (0 = as fast as possible)
``steps``                    physics steps made in the last period (paced, ``~/step``, StepSimulation, SimulateSteps)
``mean_step_time_ms``        mean wall time of those steps, ms (their publishing included); 0 without steps
``dropped_lag_s``            simulated seconds of lag dropped so far (the schedule could not be kept)
``late_ticks``               run-loop ticks that dropped lag so far (``late_ticks_in_period``: in the last period)
``faults``                   vehicles or blocks that blew up and were reset so far (``faults_in_period``)
``errors``                   internal errors of the services so far (``errors_in_period``)
``last_fault``               the latest blow-up, as logged (empty when none)
``vehicles``                 vehicles in the world
===========================  ================================================================================

Level: ERROR when a blow-up or an internal error happened in the last period, WARN when lag was dropped in it, OK
otherwise; ``message`` says which in words (``"running at 0.98x real time"``, ``"paused"``,
``"1 blow-up in the last 1 s: vehicle 'r1' blew up ..."``).
"""

from __future__ import annotations

import time
from typing import Any

from mvsim_ros2 import conversions as cv

try:
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

    IMPORT_ERROR: ImportError | None = None
except ImportError as _e:  # pragma: no cover - a ROS install without diagnostic_msgs
    IMPORT_ERROR = _e

TOPIC = "/diagnostics"
STATUS_NAME = "mvsim: simulation"
HARDWARE_ID = "mvsim"


def start(node: Any) -> SimulationDiagnostics | None:
    """The publisher on ``node`` (an :class:`mvsim_ros2.node.MvsimNode`), or None when ``diagnostics_rate`` is 0 or
    diagnostic_msgs is not installed (said once in the log)."""
    if node.opts.diagnostics_rate <= 0:
        return None
    if IMPORT_ERROR is not None:
        node.get_logger().info(f"diagnostic_msgs is not installed ({IMPORT_ERROR}): no /diagnostics")
        return None
    return SimulationDiagnostics(node, node.opts.diagnostics_rate)


class SimulationDiagnostics:
    """One DiagnosticStatus (see the module docstring) every ``1 / rate`` wall seconds.

    Args:
        node: the bridge node (its ``world``, ``runner``, ``opts``, ``sim_services``).
        rate: Hz, wall clock, > 0.
        clock: wall clock, monotonic seconds.
    """

    def __init__(self, node: Any, rate: float, clock: Any = time.monotonic) -> None:
        self.node = node
        self.period = 1.0 / rate
        self.clock = clock
        self.pub = node.create_publisher(DiagnosticArray, TOPIC, 10)
        self.sent = 0
        self._mark(clock())
        self._next = self._t_wall + self.period

    def _mark(self, now: float) -> None:
        """Remember the counters at wall time ``now``: the start of the next period."""
        r, w = self.node.runner, self.node.world
        self._t_wall, self._t_sim = now, w.time
        self._steps, self._step_s = r.steps, r.step_seconds
        self._drops, self._faults, self._errors = r.drops, len(w.faults), self._error_count()

    def _error_count(self) -> int:
        services = getattr(self.node, "sim_services", None)
        return int(getattr(services, "errors", 0))

    def tick(self) -> None:
        """Publish if a period has passed (called by the run loop after every tick)."""
        now = self.clock()
        if now < self._next:
            return
        self.pub.publish(self.message(now))
        self.sent += 1
        self._mark(now)
        self._next += self.period
        if self._next <= now:  # the loop was held up (a long service call): restart the schedule
            self._next = now + self.period

    def message(self, now: float) -> Any:
        """The DiagnosticArray for the period from the last mark to wall time ``now``."""
        node, r, w = self.node, self.node.runner, self.node.world
        wall = now - self._t_wall
        steps = r.steps - self._steps
        rtf = (w.time - self._t_sim) / wall if wall > 0 else 0.0
        step_ms = 1000.0 * (r.step_seconds - self._step_s) / steps if steps > 0 else 0.0
        late = r.drops - self._drops
        faults = len(w.faults) - self._faults
        errors = self._error_count() - self._errors
        last = w.faults.last
        last_text = last.message() if last is not None else ""
        st = DiagnosticStatus(name=STATUS_NAME, hardware_id=HARDWARE_ID)
        window = f"in the last {wall:.3g} s"
        if faults or errors:
            st.level = DiagnosticStatus.ERROR
            parts = []
            if faults:
                parts.append(f"{faults} blow-up{'s' if faults > 1 else ''}")
            if errors:
                parts.append(f"{errors} internal error{'s' if errors > 1 else ''} (see the log)")
            st.message = f"{' and '.join(parts)} {window}" + (f": {last_text}" if faults else "")
        elif late:
            st.level = DiagnosticStatus.WARN
            st.message = f"cannot keep up: lag dropped in {late} tick{'s' if late > 1 else ''} {window}"
        else:
            st.level = DiagnosticStatus.OK
            st.message = "paused" if r.paused else f"running at {rtf:.3g}x real time"
        values = {
            "state": "paused" if r.paused else "playing",
            "sim_time_s": f"{w.time:.6f}",
            "real_time_factor": f"{rtf:.6g}",
            "target_real_time_factor": f"{r.realtime_factor:g}",
            "steps": str(steps),
            "mean_step_time_ms": f"{step_ms:.6g}",
            "dropped_lag_s": f"{r.dropped:.6g}",
            "late_ticks": str(r.drops),
            "late_ticks_in_period": str(late),
            "faults": str(len(w.faults)),
            "faults_in_period": str(faults),
            "errors": str(self._error_count()),
            "errors_in_period": str(errors),
            "last_fault": last_text,
            "vehicles": str(len(w.vehicles)),
        }
        st.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        msg = DiagnosticArray(status=[st])
        cv.set_stamp(msg.header.stamp, node.stamp_time(w.time))
        return msg

    def close(self) -> None:
        self.node.destroy_publisher(self.pub)

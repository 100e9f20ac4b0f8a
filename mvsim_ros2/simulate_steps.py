"""The ``simulation_interfaces/action/SimulateSteps`` action server: N physics steps while paused, with feedback after
each step and cancel support, served as ``~/simulate_steps`` (``/mvsim/simulate_steps``) and, as upstream names the
simulation_interfaces set, ``simulate_steps`` in the node's namespace.

The node is single-threaded, so the steps are made by its run loop, not by the goal's callback: at each tick
(:meth:`SimulateStepsServer.tick`, from ``MvsimNode._on_tick``) the active goal advances for up to one tick of wall
time (``1 / simul_rate``), at least one step, one feedback message (``completed_steps``, ``remaining_steps``) per step;
between ticks the executor serves callbacks, cancel requests among them. /clock goes out after each tick that stepped
(and before anything stamped with a newer time, as always).

The feedback writer keeps :data:`FEEDBACK_DEPTH` messages. A client that wants every one should read with a deeper
history than rclpy's default (10) and take the feedback before it asks for the result: rclpy's ActionClient drops
feedback it has not handled yet once the result is in.

Goals, as the interface's comments say:

* accepted, then answered with ``result.result`` = ``RESULT_OPERATION_FAILED`` (status ABORTED) and a message when
  the simulation is not paused, or when it is resumed before the goal completes (how many steps were made is said);
* ``RESULT_INCORRECT_STATE`` (ABORTED) while another SimulateSteps goal runs (one at a time);
* ``RESULT_OPERATION_FAILED`` (ABORTED) for more than :data:`MAX_STEPS` steps;
* ``RESULT_OK``: SUCCEEDED after ``steps`` steps (0 steps: at once), or CANCELED after a cancel request, with
  ``error_message`` saying how many steps were made (``canceled after 37 of 1000 steps``).
"""

from __future__ import annotations

from typing import Any

try:
    from rclpy.action import ActionServer, CancelResponse, GoalResponse
    from rclpy.qos import QoSProfile
    from rclpy.task import Future
    from simulation_interfaces.action import SimulateSteps
    from simulation_interfaces.msg import Result

    IMPORT_ERROR: ImportError | None = None
except ImportError as _e:  # pragma: no cover - a ROS install without simulation_interfaces
    IMPORT_ERROR = _e

NAMES = ("~/simulate_steps", "simulate_steps")
"""Where the action is served: the node's private name and upstream's (relative) one."""
FEEDBACK_DEPTH = 1000
"""History of the feedback publisher (rclpy's default is 10): a goal publishes one message per step, thousands per
second, and a reliable reader that falls behind gets the ones still in the history."""
MAX_STEPS = 10_000_000
"""Most physics steps one goal may ask for."""


def start(node: Any) -> SimulateStepsServer | None:
    """The action server on ``node`` (an :class:`mvsim_ros2.node.MvsimNode`), or None without the
    ``simulation_interfaces`` package (said in the log by :mod:`mvsim_ros2.simulation_services`)."""
    if IMPORT_ERROR is not None:
        return None
    return SimulateStepsServer(node)


class _Goal:
    """The goal being stepped: its handle, how many steps it wants and has made, and the future its execute
    coroutine waits on (done with (status, result code, message))."""

    def __init__(self, handle: Any, steps: int) -> None:
        self.handle = handle
        self.steps = steps
        self.done = 0
        self.finished: Any = Future()


class SimulateStepsServer:
    """The SimulateSteps action (see the module docstring) on one node.

    Args:
        node: the bridge node (its ``world``, ``runner`` and ``publish_clock``).
    """

    def __init__(self, node: Any) -> None:
        self.node = node
        self.active: _Goal | None = None
        self.servers = [ActionServer(node, SimulateSteps, name, execute_callback=self._execute,
                                     goal_callback=lambda goal: GoalResponse.ACCEPT,
                                     cancel_callback=lambda handle: CancelResponse.ACCEPT,
                                     feedback_pub_qos_profile=QoSProfile(depth=FEEDBACK_DEPTH))
                        for name in NAMES]

    async def _execute(self, handle: Any) -> Any:
        """Check the goal, hand it to the run loop, wait until it is done; its result."""
        n = int(handle.request.steps)
        problem = self._refusal(n)
        if problem is not None:
            code, message = problem
            handle.abort()
            return _result(code, message)
        if n == 0:
            handle.succeed()
            return _result(Result.RESULT_OK)
        goal = self.active = _Goal(handle, n)
        status, code, message = await goal.finished
        getattr(handle, status)()
        return _result(code, message)

    def _refusal(self, n: int) -> tuple[int, str] | None:
        """(result code, message) when a goal of ``n`` steps cannot run now, else None."""
        if not self.node.runner.paused:
            return (Result.RESULT_OPERATION_FAILED, "the simulation is not paused: pause it first "
                                                    "(SetSimulationState STATE_PAUSED, or lockstep:=true)")
        if self.active is not None:
            return (Result.RESULT_INCORRECT_STATE, f"another SimulateSteps goal is running ({self.active.done} of "
                                                   f"{self.active.steps} steps made); wait for it or cancel it")
        if n > MAX_STEPS:
            return (Result.RESULT_OPERATION_FAILED, f"at most {MAX_STEPS} steps per goal (asked {n})")
        return None

    def tick(self, budget: float) -> int:
        """Advance the active goal for up to ``budget`` wall seconds (at least one step), a feedback message per
        step; finish it when done, canceled or no longer paused. Returns the steps made."""
        goal = self.active
        if goal is None:
            return 0
        runner = self.node.runner
        made = 0
        end = runner.step_seconds + budget
        while True:
            if goal.handle.is_cancel_requested:
                self._finish("canceled", Result.RESULT_OK, f"canceled after {goal.done} of {goal.steps} steps")
                break
            if not runner.paused:
                self._finish("abort", Result.RESULT_OPERATION_FAILED,
                             f"the simulation was resumed after {goal.done} of {goal.steps} steps")
                break
            if goal.done >= goal.steps:
                self._finish("succeed", Result.RESULT_OK, "")
                break
            if made and runner.step_seconds >= end:
                break
            runner.step(1)
            made += 1
            goal.done += 1
            fb = SimulateSteps.Feedback(completed_steps=goal.done, remaining_steps=goal.steps - goal.done)
            goal.handle.publish_feedback(fb)
        if made:
            self.node.publish_clock()
        return made

    def _finish(self, status: str, code: int, message: str) -> None:
        goal, self.active = self.active, None
        if goal is not None:
            goal.finished.set_result((status, code, message))

    def close(self) -> None:
        """Abort the active goal and destroy the action servers."""
        if self.active is not None:
            self._finish("abort", Result.RESULT_OPERATION_FAILED, "the node is shutting down")
        for s in self.servers:
            s.destroy()
        self.servers = []


def _result(code: int, message: str = "") -> Any:
    r = SimulateSteps.Result()
    r.result.result = code
    r.result.error_message = message
    return r

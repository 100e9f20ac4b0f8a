"""The SimulateSteps action across processes: the node as a subprocess, an rclpy ActionClient in this process over
DDS (the ``ros2 action`` CLI, package ros2action, is not installable here: not on PyPI, not in ../shared/third_party).

World ``data/siminf.world.xml`` (10 ms steps), started paused (``lockstep``); one node serves the module.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import Clock, NodeProcess, Probe, node_fixture, qos, secs

action_mod = pytest.importorskip("simulation_interfaces.action", reason="simulation_interfaces is not built")
si_srv = pytest.importorskip("simulation_interfaces.srv")
si_msg = pytest.importorskip("simulation_interfaces.msg")
from action_msgs.msg import GoalStatus  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import QoSProfile  # noqa: E402

SimulateSteps = action_mod.SimulateSteps
R = si_msg.Result
S = si_msg.SimulationState
DATA = Path(__file__).resolve().parent / "data"
DT = 0.01  # s: the world's timestep

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    yield from node_fixture(DATA / "siminf.world.xml", {"lockstep": True}, tmp_path_factory.mktemp("steps"),
                            ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_simulate_steps")
    p.watch = node
    p.subscribe(Clock, "/clock", qos(reliable=False, depth=1000))
    yield p
    p.close()


def client(probe: Probe, name: str = "/mvsim/simulate_steps") -> Any:
    """An action client whose feedback path is matched (while paused): a one-step goal's feedback has come back (a
    goal sent before the feedback reader and writer match loses its early feedback). Its feedback reader keeps 1000
    messages (rclpy's default, 10, drops some of a burst of one per step)."""
    ac = ActionClient(probe.node, SimulateSteps, name, feedback_sub_qos_profile=QoSProfile(depth=1000))
    probe.spin_until(ac.server_is_ready, 90.0, f"the action server {name}")
    if probe.call(si_srv.GetSimulationState, "/mvsim/get_simulation_state",
                  si_srv.GetSimulationState.Request()).state.state != S.STATE_PLAYING:
        for _ in range(30):
            feedback: list[Any] = []
            handle = send(probe, ac, 1, feedback)
            end = time.monotonic() + 2.0
            while not feedback and time.monotonic() < end:
                probe.executor.spin_once(timeout_sec=0.05)
            result(probe, handle)
            if feedback:
                break
    return ac


def send(probe: Probe, ac: Any, steps: int, feedback: list[Any]) -> Any:
    """Send a goal of ``steps``; its goal handle once accepted."""
    fut = ac.send_goal_async(SimulateSteps.Goal(steps=steps), feedback_callback=lambda m: feedback.append(m.feedback))
    probe.spin_until(fut.done, what="the goal response")
    handle = fut.result()
    assert handle.accepted
    return handle


def result(probe: Probe, handle: Any) -> Any:
    fut = handle.get_result_async()
    probe.spin_until(fut.done, what="the action result")
    return fut.result()


def sim_state(probe: Probe, state: int) -> None:
    req = si_srv.SetSimulationState.Request(state=si_msg.SimulationState(state=state))
    ans = probe.call(si_srv.SetSimulationState, "/mvsim/set_simulation_state", req)
    assert ans.result.result in (R.RESULT_OK, si_srv.SetSimulationState.Response.ALREADY_IN_TARGET_STATE)


def now(probe: Probe) -> float:
    ans = probe.call(si_srv.GetEntityState, "/mvsim/get_entity_state", si_srv.GetEntityState.Request(entity="r1"))
    return secs(ans.state.header.stamp)


def test_n_steps_advance_clock_by_n_dt_with_feedback_after_each(probe):
    sim_state(probe, S.STATE_PAUSED)
    ac = client(probe)
    t0 = now(probe)
    feedback: list[Any] = []
    handle = send(probe, ac, 25, feedback)
    # rclpy's ActionClient drops the feedback it has not taken yet once the result is in: take it all first
    probe.spin_until(lambda: len(feedback) == 25, what="25 feedback messages")
    res = result(probe, handle)
    assert res.status == GoalStatus.STATUS_SUCCEEDED
    assert (res.result.result.result, res.result.result.error_message) == (R.RESULT_OK, "")
    t1 = t0 + 25 * DT
    assert now(probe) == pytest.approx(t1, abs=1e-9)
    probe.next_message(probe.inbox["/clock"], lambda m: abs(secs(m.clock) - t1) < 1e-9, what=f"/clock {t1}", start=0)
    assert [(f.completed_steps, f.remaining_steps) for f in feedback] == [(k, 25 - k) for k in range(1, 26)]
    ac.destroy()


def test_upstream_style_name_serves_the_same_action(probe):
    sim_state(probe, S.STATE_PAUSED)
    ac = client(probe, "/simulate_steps")  # relative name, node in the root namespace
    t0 = now(probe)
    res = result(probe, send(probe, ac, 3, []))
    assert res.status == GoalStatus.STATUS_SUCCEEDED
    assert now(probe) == pytest.approx(t0 + 3 * DT, abs=1e-9)
    ac.destroy()


def test_cancel_stops_stepping(probe):
    sim_state(probe, S.STATE_PAUSED)
    ac = client(probe)
    t0 = now(probe)
    feedback: list[Any] = []
    handle = send(probe, ac, 1_000_000, feedback)
    probe.spin_until(lambda: len(feedback) >= 5, what="feedback of the long goal")
    cancel = handle.cancel_goal_async()
    probe.spin_until(cancel.done, what="the cancel response")
    assert len(cancel.result().goals_canceling) == 1
    res = result(probe, handle)
    assert res.status == GoalStatus.STATUS_CANCELED
    assert res.result.result.result == R.RESULT_OK
    m = re.fullmatch(r"canceled after (\d+) of 1000000 steps", res.result.result.error_message)
    assert m, res.result.result.error_message
    done = int(m.group(1))
    assert 5 <= done < 1_000_000
    assert feedback[-1].completed_steps <= done  # feedback after the result is dropped by the client
    assert now(probe) == pytest.approx(t0 + done * DT, abs=1e-6)
    ac.destroy()


def test_refused_while_playing_and_features_advertise_it(probe):
    ac = client(probe)
    sim_state(probe, S.STATE_PLAYING)
    try:
        res = result(probe, send(probe, ac, 10, []))
    finally:
        sim_state(probe, S.STATE_PAUSED)
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.result.result == R.RESULT_OPERATION_FAILED
    assert res.result.result.error_message.startswith("the simulation is not paused")
    ac.destroy()
    feats = probe.call(si_srv.GetSimulatorFeatures, "/mvsim/get_simulator_features",
                       si_srv.GetSimulatorFeatures.Request()).features.features
    F = si_msg.SimulatorFeatures
    assert {F.STEP_SIMULATION_ACTION, F.SPAWNABLES, F.ENTITY_BOUNDS} <= set(feats)


def test_one_goal_at_a_time(probe):
    sim_state(probe, S.STATE_PAUSED)
    ac = client(probe)
    feedback: list[Any] = []
    first = send(probe, ac, 1_000_000, feedback)
    probe.spin_until(lambda: len(feedback) >= 2, what="feedback of the first goal")
    second = result(probe, send(probe, ac, 5, []))
    assert second.status == GoalStatus.STATUS_ABORTED
    assert second.result.result.result == R.RESULT_INCORRECT_STATE
    assert second.result.result.error_message.startswith("another SimulateSteps goal is running (")
    cancel = first.cancel_goal_async()
    probe.spin_until(cancel.done, what="the cancel response")
    assert result(probe, first).status == GoalStatus.STATUS_CANCELED
    ac.destroy()

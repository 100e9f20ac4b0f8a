"""Real-time pacing of the node, driven in-process with made-up wall times: simulated time follows the anchor
schedule exactly (no drift), at most ``max_simul_catchup_time`` is advanced per tick and a larger lag is dropped,
``realtime_factor`` scales the schedule, and ``lockstep`` holds the time until ``~/step``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import RosParameter

from mvsim_ros2.node import MvsimNode

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def make_node(ros_context: Any) -> Iterator[Any]:
    made: list[MvsimNode] = []

    def make(**params: Any) -> MvsimNode:
        values = {"world_file": str(DATA / "multi.world.xml"), "zmq_server": False, **params}
        node = MvsimNode(context=ros_context, parameter_overrides=[RosParameter(k, value=v) for k, v in values.items()])
        made.append(node)
        return node

    yield make
    for n in made:
        n.close()


def test_schedule_has_no_drift_and_bounded_catch_up(make_node: Any) -> None:
    node = make_node(realtime_factor=1.0, max_simul_catchup_time=0.1)
    w0 = node._anchor_wall
    node.tick(w0 + 0.0123)
    assert node.world.time == pytest.approx(0.010)  # whole 5 ms steps, the remainder is kept for later
    for k in range(1, 200):  # 2 s of 10 ms ticks with jittered wall times: on schedule to within one step
        target = 0.0123 + 0.01 * k + (0.003 if k % 3 else -0.002)
        node.tick(w0 + target)
        assert target - 0.005 < node.world.time <= target + 1e-9
    node.tick(w0 + 2.1)
    assert node.world.time == pytest.approx(2.1, abs=1e-9)  # on schedule after 2 s: no accumulated drift
    node.tick(w0 + 7.1)  # 5 s late (a suspended process): catch up 0.1 s, drop the rest
    assert node.world.time == pytest.approx(2.2, abs=1e-9)
    assert node._dropped == pytest.approx(4.9, abs=1e-9)
    for k in range(1, 51):  # the schedule goes on from the new anchor, 10 ms ticks for 0.5 s
        node.tick(w0 + 7.1 + 0.01 * k)
    assert node.world.time == pytest.approx(2.7, abs=1e-9)
    assert node._dropped == pytest.approx(4.9, abs=1e-9)


def test_realtime_factor_scales_the_schedule(make_node: Any) -> None:
    node = make_node(realtime_factor=2.5, max_simul_catchup_time=1.0)
    w0 = node._anchor_wall
    for k in range(1, 101):
        node.tick(w0 + 0.01 * k)
    assert node.world.time == pytest.approx(2.5, abs=1e-9)


def test_lockstep_holds_time_until_step(make_node: Any) -> None:
    from std_srvs.srv import Trigger

    node = make_node(lockstep=True, lockstep_step=0.25)
    node.tick(node._anchor_wall + 10.0)
    assert node.world.time == 0.0
    ans = node._srv_step(Trigger.Request(), Trigger.Response())
    assert ans.success and float(ans.message) == pytest.approx(0.25) and node.world.time == pytest.approx(0.25)
    ans = make_node(lockstep=False)._srv_step(Trigger.Request(), Trigger.Response())
    assert not ans.success and "lockstep" in ans.message

"""Real-time pacing of the node (its :class:`mvsim_core.runner.Runner`), driven in-process with made-up wall times:
simulated time follows the anchor schedule exactly (no drift), at most ``max_simul_catchup_time`` is advanced per tick
and a larger lag is dropped, ``realtime_factor`` scales the schedule, ``lockstep`` holds the time until ``~/step``,
and ``mvsim launch`` paces exactly like the node."""

from __future__ import annotations

import io
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
    w0 = node.runner.anchor_wall
    node.runner.tick(w0 + 0.0123)
    assert node.world.time == pytest.approx(0.010)  # whole 5 ms steps, the remainder is kept for later
    for k in range(1, 200):  # 2 s of 10 ms ticks with jittered wall times: on schedule to within one step
        target = 0.0123 + 0.01 * k + (0.003 if k % 3 else -0.002)
        node.runner.tick(w0 + target)
        assert target - 0.005 < node.world.time <= target + 1e-9
    node.runner.tick(w0 + 2.1)
    assert node.world.time == pytest.approx(2.1, abs=1e-9)  # on schedule after 2 s: no accumulated drift
    node.runner.tick(w0 + 7.1)  # 5 s late (a suspended process): catch up 0.1 s, drop the rest
    assert node.world.time == pytest.approx(2.2, abs=1e-9)
    assert node.runner.dropped == pytest.approx(4.9, abs=1e-9)
    for k in range(1, 51):  # the schedule goes on from the new anchor, 10 ms ticks for 0.5 s
        node.runner.tick(w0 + 7.1 + 0.01 * k)
    assert node.world.time == pytest.approx(2.7, abs=1e-9)
    assert node.runner.dropped == pytest.approx(4.9, abs=1e-9)


def test_realtime_factor_scales_the_schedule(make_node: Any) -> None:
    node = make_node(realtime_factor=2.5, max_simul_catchup_time=1.0)
    w0 = node.runner.anchor_wall
    for k in range(1, 101):
        node.runner.tick(w0 + 0.01 * k)
    assert node.world.time == pytest.approx(2.5, abs=1e-9)


def test_lockstep_holds_time_until_step(make_node: Any) -> None:
    from std_srvs.srv import Trigger

    node = make_node(lockstep=True, lockstep_step=0.25)
    node.runner.tick(node.runner.anchor_wall + 10.0)
    assert node.world.time == 0.0
    ans = node._srv_step(Trigger.Request(), Trigger.Response())
    assert ans.success and float(ans.message) == pytest.approx(0.25) and node.world.time == pytest.approx(0.25)
    ans = make_node(lockstep=False)._srv_step(Trigger.Request(), Trigger.Response())
    assert not ans.success and "lockstep" in ans.message


class FakeWall:
    """A wall clock that only moves when the run loop waits, or when a step is made slow on purpose."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(seconds, 1e-4)


def _slow_step_scenario(world: Any, wall: FakeWall, stop_at: float | None = None,
                        on_stop: Any = None) -> list[tuple[float, float]]:
    """One step at t = 1.0 s takes 0.35 s of wall time; returns (wall − start, simulated time) after every step."""
    trace: list[tuple[float, float]] = []
    w0 = wall.t

    def listener(w: Any) -> None:
        if abs(w.time - 1.0) < 1e-9:
            wall.t += 0.35
        trace.append((round(wall.t - w0, 9), round(w.time, 9)))
        if stop_at is not None and w.time >= stop_at - 1e-9:
            on_stop()

    world.add_step_listener(listener)
    return trace


def test_cli_and_node_share_the_runner_and_drop_the_same_lag(make_node: Any) -> None:
    """`mvsim launch --realtime-factor 1` and `mvsim_node` (default pacing options each) through the same slow step:
    the same catch-up (0.1 s per tick), the same dropped lag (0.35 − 0.1 = 0.25 s), the same (wall, sim) schedule."""
    import mvsim_core as mv
    from mvsim_core import cli
    from mvsim_core.runner import Runner

    world_file = str(DATA / "multi.world.xml")
    # the CLI: its own option parsing and runner
    args = cli.build_parser().parse_args(["launch", world_file, "--headless", "--duration", "3"])
    cli_world = mv.load_world(world_file).start()
    cli_runner = cli.build_runner(cli_world, args, out=io.StringIO())
    cli_wall = FakeWall()
    cli_runner.clock = cli_wall
    cli_trace = _slow_step_scenario(cli_world, cli_wall)
    assert cli_runner.run(args.duration, wait=cli_wall.sleep) == "duration"

    # the node: its own parameters and run loop, the executor's wait replaced by the fake wall clock's
    node = make_node()
    assert isinstance(node.runner, Runner)
    node_wall = FakeWall()
    node.runner.clock = node_wall

    def stop() -> None:
        node._stop = True

    node_trace = _slow_step_scenario(node.world, node_wall, stop_at=3.0, on_stop=stop)

    class Executor:
        def spin_once(self, timeout_sec: float) -> None:
            node_wall.sleep(timeout_sec)

    node.run(Executor())

    assert cli_runner.dropped == pytest.approx(0.25, abs=0.011)  # within one 10 ms tick of 0.35 − 0.1
    assert node.runner.dropped == cli_runner.dropped
    assert node.world.time == pytest.approx(3.0) and cli_world.time == pytest.approx(3.0)
    assert node_trace == cli_trace
    # after the slow step the first tick advances exactly max_catchup, then the schedule goes on from there
    k = next(i for i, (_, t) in enumerate(cli_trace) if t > 1.0)
    wall_after, t_after = cli_trace[k + 19]
    assert t_after == pytest.approx(1.1, abs=1e-9) and wall_after == cli_trace[k][0]
    assert cli_trace[-1][0] == pytest.approx(3.0 + cli_runner.dropped, abs=0.011)

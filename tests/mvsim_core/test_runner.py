"""The runner (real-time pacing shared by ``mvsim launch`` and ``mvsim_node``), driven with a made-up wall clock that
moves only when the loop waits: schedule without drift, bounded catch-up and dropped lag, the duration bound, the
as-fast-as-possible budget, pausing, viewer frames and the status line."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from types import SimpleNamespace

import pytest

import mvsim_core as mv
from mvsim_core.runner import MAX_STATUS_CHARS, Runner, StatusLine, watched_terminal

WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <vehicle name="r1">
    <dynamics class="differential"><controller class="twist_ideal"/></dynamics>
    <init_pose>0 0 0</init_pose>
  </vehicle>
</mvsim_world>
"""


class FakeWall:
    def __init__(self, step_cost: float = 0.0) -> None:
        self.t = 50.0
        self.step_cost = step_cost  # wall seconds each physics step takes
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.t += max(seconds, 1e-4)


@pytest.fixture
def world(tmp_path):
    (tmp_path / "w.xml").write_text(WORLD)
    w = mv.load_world(tmp_path / "w.xml").start()
    w.vehicles["r1"].set_twist(0.5, 0.0, 0.2)
    return w


def costly(world, wall: FakeWall) -> None:
    world.add_step_listener(lambda w: setattr(wall, "t", wall.t + wall.step_cost))


def test_realtime_schedule_has_no_drift(world):
    wall = FakeWall()
    r = Runner(world, realtime_factor=1.0, clock=wall)
    assert r.run(2.0, wait=wall.sleep) == "duration"
    assert world.time == pytest.approx(2.0, abs=1e-12)  # exactly the duration, never past it
    assert wall.t - 50.0 == pytest.approx(2.0, abs=0.011)  # within one 10 ms tick of real time
    assert r.dropped == 0.0 and r.steps == 400


def test_realtime_factor_scales_and_catch_up_is_bounded(world):
    wall = FakeWall()
    r = Runner(world, realtime_factor=2.5, max_catchup=1.0, clock=wall)
    for k in range(1, 101):
        r.tick(r.anchor_wall + 0.01 * k)
    assert world.time == pytest.approx(2.5, abs=1e-9)
    r.tick(r.anchor_wall + 1.0 + 3.0)  # 3 s of wall time lost = 7.5 s of simulated time behind
    assert world.time == pytest.approx(3.5, abs=1e-9)  # catch up 1.0 s ...
    assert r.dropped == pytest.approx(6.5, abs=1e-9)  # ... and drop the rest


def test_slow_machine_runs_at_its_own_pace_without_dropping(world):
    """Each 5 ms step costs 8 ms: the simulation runs at 0.625 × real time; lag is dropped at each tick beyond
    max_catchup, never chased."""
    wall = FakeWall(step_cost=0.008)
    costly(world, wall)
    r = Runner(world, realtime_factor=1.0, max_catchup=0.1, clock=wall)
    r.run(1.0, wait=wall.sleep)
    assert world.time == pytest.approx(1.0)
    assert r.achieved_rtf(wall.t) == pytest.approx(0.625, rel=0.02)
    assert r.dropped > 0  # the lag grows past 0.1 s and the excess goes


def test_as_fast_as_possible_steps_for_one_tick_then_waits_zero(world):
    wall = FakeWall(step_cost=2.0 ** -10)  # ~0.98 ms per step, exact in binary
    costly(world, wall)
    r = Runner(world, realtime_factor=0.0, tick_rate=100.0, clock=wall)
    n = r.tick(wall.t)
    assert n == 11  # steps while the 10 ms budget lasts: the 11th starts at 9.77 ms
    r.run(1.0, wait=wall.sleep)
    assert world.time == pytest.approx(0.055 + 1.0) and set(wall.waits) == {0.0}


def test_paused_runner_only_advances_on_request(world):
    wall = FakeWall()
    r = Runner(world, clock=wall)
    r.paused = True
    assert r.tick(wall.t + 5.0) == 0 and world.time == 0.0
    assert r.advance_to(0.25) == 50 and world.time == pytest.approx(0.25)


def test_stop_event_and_should_stop(world):
    import threading

    wall = FakeWall()
    ev = threading.Event()
    world.add_step_listener(lambda w: ev.set() if w.time >= 0.5 else None)
    assert Runner(world, clock=wall).run(stop=ev, wait=wall.sleep) == "stop"
    assert world.time == pytest.approx(0.5, abs=0.0101)
    t = world.time
    assert Runner(world, clock=wall).run(should_stop=lambda: world.time >= t + 0.2, wait=wall.sleep) == "stop"
    assert world.time == pytest.approx(t + 0.2, abs=0.0101)


class Viewer:
    def __init__(self, wall: FakeWall, close_after: int) -> None:
        self.wall, self.frames, self.close_after, self.last = wall, [], close_after, -1e9

    def due(self, now: float, behind: bool = False) -> bool:
        return now - self.last >= 0.05

    def wait_time(self, now: float, behind: bool = False) -> float:
        return max(0.0, self.last + 0.05 - now)

    def frame(self, rtf: float | None = None) -> bool:
        self.last = self.wall.t
        self.frames.append(rtf)
        return len(self.frames) < self.close_after


def test_viewer_frames_at_their_rate_and_closing_stops(world):
    wall = FakeWall()
    v = Viewer(wall, close_after=21)
    r = Runner(world, viewer=v, clock=wall)
    assert r.run(wait=wall.sleep) == "window closed"
    assert len(v.frames) == 21 and wall.t - 50.0 == pytest.approx(1.0, abs=0.011)  # 20 frames/s
    assert v.frames[-1] == pytest.approx(1.0, abs=0.02)  # the achieved real-time factor goes to the window


def test_status_line_live_rewrites_one_line_in_place(world):
    out = io.StringIO()
    wall = FakeWall()
    r = Runner(world, clock=wall, status=StatusLine(out, mode="live", extra=lambda: "msgs 7"))
    r.run(1.2, wait=wall.sleep)
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # ended once, when the run ends
    updates = text[:-1].split("\r")
    assert updates[0] == "" and len(updates) == 5  # at 0, 0.5 and 1.0 s (0.5 s apart) and the final one
    # 1.2 simulated s over 1.21 wall s: the loop's last wait (to the next tick) comes before it sees the end
    assert updates[-1] == "sim time     1.200 s | real-time factor    0.99 | vehicles 1 | msgs 7"


class StubRunner:
    """What a status line reads of a runner: the world's time and vehicles, the achieved real-time factor."""

    def __init__(self) -> None:
        self.world = SimpleNamespace(time=0.0, vehicles={"r1": None})

    def achieved_rtf(self, now: float) -> float:
        return 1.0


def feed(status: StatusLine, seconds: float, every: float = 0.1) -> None:
    """Updates every ``every`` wall seconds for ``seconds`` (simulated time = wall time), then close."""
    runner = StubRunner()
    for k in range(round(seconds / every) + 1):
        runner.world.time = k * every
        status.update(runner, 100.0 + k * every)
    status.update(runner, 100.0 + seconds, force=True)
    status.close()


def test_status_line_periodic_writes_a_full_line_every_5_s():
    out = io.StringIO()
    feed(StatusLine(out, mode="periodic"), 12.0)
    assert out.getvalue().splitlines(keepends=True) == [
        f"sim time {t:9.3f} s | real-time factor    1.00 | vehicles 1\n" for t in (0.0, 5.0, 10.0, 12.0)]


def test_a_live_line_is_ended_every_minute_and_no_line_is_long():
    out = io.StringIO()
    feed(StatusLine(out, mode="live", extra=lambda: "x" * 500), 130.0)
    lines = out.getvalue().split("\n")
    assert len(lines) == 4 and lines[-1] == ""  # ended at 60 s, 120 s and on close
    assert [len(line.split("\r")) - 1 for line in lines[:-1]] == [120, 120, 22]  # rewrites on each (0.5 s apart)
    for update in "".join(lines).split("\r")[1:]:
        assert len(update) == MAX_STATUS_CHARS and update.startswith("sim time ")  # cut to the bound


def test_status_line_off_writes_nothing():
    out = io.StringIO()
    feed(StatusLine(out, mode="off"), 6.0)
    assert out.getvalue() == ""
    with pytest.raises(ValueError, match="status line mode must be one of auto, live, periodic, off \\(got 'on'\\)"):
        StatusLine(out, mode="on")


def test_auto_is_live_only_on_the_controlling_terminal(tmp_path):
    assert StatusLine(io.StringIO()).mode == "periodic"
    with open(tmp_path / "out.txt", "w") as f:
        assert StatusLine(f).mode == "periodic"
    r, w = os.pipe()
    with os.fdopen(r) as rf, os.fdopen(w, "w") as wf:
        assert not watched_terminal(wf) and not watched_terminal(rf)
    master, slave = pty.openpty()  # a terminal, but not this process's controlling one (what ros2 launch gives)
    with os.fdopen(master, "rb"), os.fdopen(slave, "w") as sl:
        assert os.isatty(sl.fileno()) and StatusLine(sl).mode == "periodic"
        # the same kind of terminal, made the controlling terminal of a process in its own session: live
        child = subprocess.run([sys.executable, "-c", "import fcntl, sys, termios\n"
                                "fcntl.ioctl(1, termios.TIOCSCTTY, 0)\n"
                                "from mvsim_core.runner import StatusLine\n"
                                "sys.stderr.write(StatusLine(sys.stdout).mode)"],
                               stdout=sl, stderr=subprocess.PIPE, text=True, start_new_session=True, timeout=120)
        assert child.stderr == "live"


@pytest.mark.parametrize("kwargs", [{"realtime_factor": -1.0}, {"realtime_factor": float("nan")},
                                    {"tick_rate": 0.0}, {"max_catchup": 0.0}])
def test_bad_options_are_refused(world, kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        Runner(world, **kwargs)


class BudgetViewer(Viewer):
    """Frames every 50 ms while the simulation keeps up, every 250 ms while it is behind (as the real viewer budgets
    them); records whether each frame was drawn behind."""

    def __init__(self, wall: FakeWall) -> None:
        super().__init__(wall, close_after=10**9)
        self.behind_flags: list[bool] = []

    def due(self, now: float, behind: bool = False) -> bool:
        return now - self.last >= (0.25 if behind else 0.05)

    def wait_time(self, now: float, behind: bool = False) -> float:
        return max(0.0, self.last + (0.25 if behind else 0.05) - now)

    def frame(self, rtf: float | None = None) -> bool:
        self.behind_flags.append(self.behind_now)
        return super().frame(rtf)


@pytest.mark.parametrize(("step_cost", "behind", "frames"), [(0.0, False, 20), (0.008, True, 4)])
def test_viewer_draws_sparingly_only_while_the_simulation_is_behind(world, step_cost, behind, frames):
    """Keeping up (free steps): 20 frames per wall second. Each 5 ms step costing 8 ms: the schedule cannot be kept,
    so frames come at the behind rate (4 per wall second) and leave the steps their time."""
    wall = FakeWall(step_cost=step_cost)
    costly(world, wall)
    v = BudgetViewer(wall)
    r = Runner(world, viewer=v, clock=wall)
    orig_due = v.due

    def due(now: float, b: bool = False) -> bool:
        v.behind_now = b
        return orig_due(now, b)

    v.due = due
    w0 = wall.t
    r.run(1.0 if not step_cost else 0.625, wait=wall.sleep)
    elapsed = wall.t - w0
    assert set(v.behind_flags[1:]) == {behind}  # the first frame comes before any tick
    assert len(v.frames) / elapsed == pytest.approx(frames, rel=0.15)
    assert not r.behind(wall.t) or step_cost  # a runner that keeps up is not behind


def test_behind_is_more_than_one_tick_of_lag(world):
    wall = FakeWall()
    r = Runner(world, realtime_factor=1.0, tick_rate=100.0, clock=wall)
    assert not r.behind(r.anchor_wall + 0.014)  # 14 ms of schedule, none simulated: within a tick and a step
    assert r.behind(r.anchor_wall + 0.016)
    r.paused = True
    assert not r.behind(r.anchor_wall + 5.0)
    r.paused = False
    r.set_realtime_factor(0.0)
    assert r.behind(wall.t)  # as fast as possible: always behind


class SlowFrames(Viewer):
    """A window whose frames take ``cost`` wall seconds, drawn every 50 ms, every 250 ms while behind."""

    def __init__(self, wall: FakeWall, cost: float) -> None:
        super().__init__(wall, close_after=10**9)
        self.cost = cost

    def due(self, now: float, behind: bool = False) -> bool:
        return now - self.last >= (0.25 if behind else 0.05)

    def wait_time(self, now: float, behind: bool = False) -> float:
        return max(0.0, self.last + (0.25 if behind else 0.05) - now)

    def frame(self, rtf: float | None = None) -> bool:
        self.wall.t += self.cost
        return super().frame(rtf)


@pytest.mark.parametrize(("step_cost", "rtf_with_window", "drops"), [
    (0.005 / 20.0, 10.0, False),  # the machine runs 20 x real time: frames' lag caught up, nothing dropped
    # 10.5 x: frames budgeted to 40 ms every 290 ms leave 86 % of the wall time, 9.05 x; once the frames' lag
    # passes half a wall second (5 simulated s), the rest is dropped
    (0.005 / 10.5, 9.05, True),
])
def test_viewer_frames_lag_is_caught_up_not_dropped(world, step_cost, rtf_with_window, drops):
    """At a requested real-time factor of 10, 40 ms frames put the simulation 0.4 s behind each time: that lag is
    caught up over the next ticks (back to back) instead of being dropped like a stall's."""
    wall = FakeWall(step_cost=step_cost)
    costly(world, wall)
    v = SlowFrames(wall, cost=0.04)
    r = Runner(world, realtime_factor=10.0, viewer=v, clock=wall)
    w0 = wall.t
    r.run(80.0, wait=wall.sleep)
    achieved = 80.0 / (wall.t - w0)
    assert achieved == pytest.approx(rtf_with_window, rel=0.05)
    assert (r.dropped > 0) is drops
    assert len(v.frames) >= 8  # the window kept drawing (sparingly while catching up)

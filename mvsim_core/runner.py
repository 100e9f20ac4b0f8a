"""Real-time pacing of a World: the one run loop behind ``mvsim launch`` and the ROS node ``mvsim_node``.

The runner ticks ``tick_rate`` times per wall second. At each tick it advances the world, in whole physics steps, to
the simulated time its schedule asks for::

    target = anchor_sim + realtime_factor × (wall now − anchor_wall)

Scheduling against a fixed anchor means no drift while the CPU keeps up. When it cannot (a slow step, a suspended
process), at most ``max_catchup`` simulated seconds are advanced in one tick and the rest of the lag is dropped: the
anchor moves by it and :attr:`Runner.dropped` adds it up, so the simulation resumes real-time pacing instead of
racing to catch up. The wall time of the runner's own viewer frames is the exception: the lag they cause (up to
:data:`FRAME_LAG_LIMIT` wall seconds' worth) is caught up over the next ticks, back to back, as fast as the machine
allows, and only dropped when the machine cannot catch up. ``realtime_factor`` 0 means as fast as possible (each
tick steps for one tick's worth of wall time, then lets the caller serve its callbacks). A paused runner (ROS
lockstep) advances only through :meth:`Runner.advance_to`.

Between ticks the runner draws the viewer's frames when they are due (sparingly while the simulation is behind, see
:class:`~mvsim_core.gui.window.Viewer`) and waits through a caller-given function: ``time.sleep`` for the CLI, the ROS
executor's ``spin_once`` for the node. A one-line status (simulated time, achieved real-time factor) goes to a
terminal twice a second, or as a full line every few seconds anywhere else (:class:`StatusLine`).

Wall times are seconds of a monotonic clock (``time.perf_counter`` unless another is given); simulated times are
seconds of :attr:`World.time <mvsim_core.world.World.time>`.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from mvsim_core.world import World

DEFAULT_TICK_RATE = 100.0  # Hz: ticks of the run loop
DEFAULT_MAX_CATCHUP = 0.1  # s of simulated time advanced in one tick at most
STATUS_PERIOD = 0.5  # s (wall) between two rewrites of the live status line
STEP_TOLERANCE = 1e-6  # steps: a target this close to a step boundary counts as reaching it
FRAME_LAG_LIMIT = 0.5  # wall s of viewer frames whose lag is caught up rather than dropped
BEHIND_HOLD = 0.5  # wall s a dropped lag keeps the runner "behind" (the viewer keeps drawing sparingly)


class FrameSink(Protocol):
    """What the runner needs of a viewer (:class:`mvsim_core.gui.window.Viewer` is one)."""

    def due(self, now: float, behind: bool = False) -> bool: ...

    def wait_time(self, now: float, behind: bool = False) -> float: ...

    def frame(self, rtf: float | None = None) -> bool: ...


def _check_factor(factor: float) -> None:
    if not (math.isfinite(factor) and factor >= 0):
        raise ValueError(f"realtime_factor must be a number >= 0 (got {factor})")


STATUS_MODES = ("auto", "live", "periodic", "off")
"""How the status line is shown (``mvsim launch --status-line``, the node's ``status_line``): ``live`` rewritten in
place (``\\r``) every :data:`STATUS_PERIOD` s, ``periodic`` a full line every :data:`PERIODIC_STATUS_PERIOD` s,
``off`` none, ``auto`` live on the terminal a person watches (:func:`watched_terminal`), periodic anywhere else."""
PERIODIC_STATUS_PERIOD = 5.0  # s (wall) between two lines of the periodic status
LIVE_LINE_PERIOD = 60.0  # s (wall): a live line is ended (newline) this often, so that no line grows without bound
MAX_STATUS_CHARS = 200  # longest status line written (characters); longer ones are cut


def watched_terminal(out: TextIO) -> bool:
    """Whether ``out`` is this process's controlling terminal: a person watches it, and a line rewritten in place
    (``\\r``) shows as one line. False for a pipe, a file, and the pseudo-terminal that ``ros2 launch`` gives a node
    with ``emulate_tty`` (a terminal, but not the node's controlling one: launch reads it line by line, so rewrites
    would pile up into one endless line)."""
    try:
        fd = out.fileno()
        if not os.isatty(fd):
            return False
        os.tcgetpgrp(fd)  # ENOTTY unless fd is this process's controlling terminal
    except (AttributeError, ValueError, OSError):  # no file descriptor (StringIO: UnsupportedOperation), closed
        return False
    return True


def status_mode(mode: str, out: TextIO) -> str:
    """``mode`` (one of :data:`STATUS_MODES`) with ``auto`` resolved for ``out``: ``live`` or ``periodic``.

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in STATUS_MODES:
        raise ValueError(f"status line mode must be one of {', '.join(STATUS_MODES)} (got {mode!r})")
    if mode == "auto":
        return "live" if watched_terminal(out) else "periodic"
    return mode


class StatusLine:
    """``sim time T s | real-time factor F | vehicles N`` (plus ``extra()`` fields).

    Args:
        out: where to write (default stdout).
        mode: one of :data:`STATUS_MODES`. ``live``: the line is rewritten in place (``\\r``) every
            :data:`STATUS_PERIOD` wall seconds and ended with a newline every :data:`LIVE_LINE_PERIOD` s;
            ``periodic``: a newline-terminated line every :data:`PERIODIC_STATUS_PERIOD` s; ``off``: nothing;
            ``auto`` (default): ``live`` on a watched terminal (:func:`watched_terminal`), else ``periodic``.
        extra: more `` | ``-separated fields to append (e.g. messages published).

    Every line is at most :data:`MAX_STATUS_CHARS` characters.
    """

    def __init__(self, out: TextIO | None = None, *, mode: str = "auto",
                 extra: Callable[[], str] | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.mode = status_mode(mode, self.out)
        self.period = STATUS_PERIOD if self.mode == "live" else PERIODIC_STATUS_PERIOD
        """Wall seconds between two updates."""
        self.extra = extra
        self._last = -math.inf
        self._line_start = -math.inf  # wall time the current live line began
        self._width = 0  # characters on the current live line (0: at the start of a line)

    def update(self, runner: Runner, now: float, *, force: bool = False) -> None:
        """Write the line for ``runner`` at wall time ``now`` if one is due (always with ``force``, unless off)."""
        if self.mode == "off" or (not force and now - self._last < self.period):
            return
        self._last = now
        w = runner.world
        line = (f"sim time {w.time:9.3f} s | real-time factor {runner.achieved_rtf(now):7.2f} | "
                f"vehicles {len(w.vehicles)}")
        if self.extra is not None:
            more = self.extra()
            if more:
                line += " | " + more
        line = line[:MAX_STATUS_CHARS]
        if self.mode == "live":
            if self._width and now - self._line_start >= LIVE_LINE_PERIOD:
                self.out.write("\n")  # keep this one; go on on a new line
                self._width = 0
            if not self._width:
                self._line_start = now
            self.out.write("\r" + line.ljust(self._width))  # spaces erase what a longer line left
            self._width = max(self._width, len(line))
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def close(self) -> None:
        """End the rewritten live line."""
        if self.mode == "live" and self._width:
            self.out.write("\n")
            self.out.flush()
            self._width = 0


class Runner:
    """Paces a World against wall time (see the module docstring).

    Args:
        world: the world to step.
        realtime_factor: simulated seconds per wall second; 0 = as fast as possible.
        tick_rate: run-loop ticks per wall second (Hz).
        max_catchup: most simulated seconds advanced in one tick; a larger lag is dropped.
        viewer: draws frames between ticks (None: no window).
        status: the status line (None: none).
        clock: wall clock, monotonic seconds.

    Attributes:
        paused: no paced advance while True (ROS lockstep); :meth:`advance_to` still steps.
        dropped: simulated seconds of lag dropped so far.
        drops: ticks that dropped lag (the schedule could not be kept) so far.
        step_seconds: wall seconds spent in physics steps made by this runner (step listeners included).
        anchor_wall, anchor_sim: the schedule's anchor (wall s, simulated s).
        steps: physics steps made by this runner.
    """

    def __init__(self, world: World, *, realtime_factor: float = 1.0, tick_rate: float = DEFAULT_TICK_RATE,
                 max_catchup: float = DEFAULT_MAX_CATCHUP, viewer: FrameSink | None = None,
                 status: StatusLine | None = None, clock: Callable[[], float] = time.perf_counter) -> None:
        _check_factor(realtime_factor)
        if not (math.isfinite(tick_rate) and tick_rate > 0):
            raise ValueError(f"tick_rate must be > 0 Hz (got {tick_rate})")
        if not max_catchup > 0:
            raise ValueError(f"max_catchup must be > 0 s (got {max_catchup})")
        self.world = world
        self.realtime_factor = float(realtime_factor)
        self.tick_rate = float(tick_rate)
        self.max_catchup = float(max_catchup)
        self.viewer = viewer
        self.status = status
        self.clock = clock
        self.paused = False
        self.dropped = 0.0
        self.steps = 0
        self.step_seconds = 0.0
        self.drops = 0
        self.catching_up = False
        """True when the last tick left lag to catch up (the loop then ticks again at once)."""
        self._owed = 0.0  # simulated s of lag caused by viewer frames, still to be caught up
        self._last_drop = -math.inf
        self.anchor_wall = self.anchor_sim = 0.0
        self._wall0 = self._sim0 = 0.0
        self.reanchor()

    # ------------------------------------------------------------------ schedule
    def reanchor(self, now: float | None = None) -> None:
        """Restart the schedule from the world's current time at wall time ``now`` (default: the clock's now); the
        achieved real-time factor is measured from here too."""
        now = self.clock() if now is None else now
        self.anchor_wall = self._wall0 = now
        self.anchor_sim = self._sim0 = self.world.time
        self._owed = 0.0
        self.catching_up = False

    def set_realtime_factor(self, factor: float) -> None:
        """Change the pace from now on (0 = as fast as possible)."""
        _check_factor(factor)
        self.realtime_factor = float(factor)
        self.reanchor()

    def achieved_rtf(self, now: float) -> float:
        """Simulated seconds per wall second since the last :meth:`reanchor` (0 before any wall time passed)."""
        wall = now - self._wall0
        return (self.world.time - self._sim0) / wall if wall > 0 else 0.0

    def behind(self, now: float) -> bool:
        """Whether the simulation lags its schedule at wall time ``now`` by more than one tick (always when running
        as fast as possible; never while paused): the viewer then draws sparingly."""
        if self.paused:
            return False
        if self.realtime_factor <= 0 or now - self._last_drop < BEHIND_HOLD:
            return True
        target = self.anchor_sim + (now - self.anchor_wall) * self.realtime_factor
        return target - self.world.time > self.realtime_factor / self.tick_rate + self.world.timestep

    def advance_to(self, target: float) -> int:
        """Step until simulated time reaches ``target`` s (whole steps; a target within a millionth of a step of a
        step boundary reaches it). Returns the number of steps made."""
        w = self.world
        n = int(math.floor((target - w.time) / w.timestep + STEP_TOLERANCE))
        return self.step(n)

    def step(self, n: int = 1) -> int:
        """Exactly ``n`` physics steps (none for ``n`` <= 0), paused or not; their wall time (``time.perf_counter``,
        whatever ``clock`` is, step listeners included) is added to :attr:`step_seconds`. Returns the steps made."""
        if n <= 0:
            return 0
        w = self.world
        t0 = time.perf_counter()
        for _ in range(n):
            w.step()
        self.step_seconds += time.perf_counter() - t0
        self.steps += n
        return n

    def tick(self, now: float, end: float | None = None) -> int:
        """One tick at wall time ``now``: advance to the paced target, never past simulated time ``end``. Returns
        the number of steps made."""
        w = self.world
        if self.paused or (end is not None and w.time >= end - 1e-12):
            return 0
        if self.realtime_factor <= 0:  # as fast as possible, for one tick of wall time
            budget_end = now + 1.0 / self.tick_rate
            n = 0
            while self.clock() < budget_end and (end is None or w.time < end - 1e-12):
                n += self.advance_to(w.time + w.timestep)
            return n
        target = self.anchor_sim + (now - self.anchor_wall) * self.realtime_factor
        lag = target - w.time
        allowed = self.max_catchup + self._owed
        if lag > allowed:  # cannot keep up (or was suspended): drop the excess
            excess = lag - allowed
            self.dropped += excess
            self.drops += 1
            self.anchor_sim -= excess
            target -= excess
            lag = allowed
            self._last_drop = now
        if lag > self.max_catchup:  # frames' lag: at most max_catchup now, the rest in the next ticks
            target = w.time + self.max_catchup
        if end is not None:
            target = min(target, end)
        t0 = w.time
        n = self.advance_to(target)
        left = lag - (w.time - t0)
        self._owed = min(self._owed, max(0.0, left))
        self.catching_up = left > w.timestep
        return n

    def frame_drawn(self, seconds: float) -> None:
        """The viewer took ``seconds`` of wall time: the lag that makes is caught up, not dropped (see the module
        docstring)."""
        if self.realtime_factor > 0 and not self.paused:
            limit = FRAME_LAG_LIMIT * self.realtime_factor
            self._owed = min(self._owed + seconds * self.realtime_factor, limit)

    # ------------------------------------------------------------------ the loop
    def run(self, duration: float | None = None, *, stop: threading.Event | None = None,
            should_stop: Callable[[], bool] | None = None, wait: Callable[[float], object] = time.sleep,
            on_tick: Callable[[int], object] | None = None) -> str:
        """Run until ``duration`` simulated seconds have passed (None: forever), ``stop`` is set, ``should_stop()``
        is true, or the viewer's window closes.

        Args:
            wait: called with the seconds to wait until the next tick or frame (0 when none should be lost).
            on_tick: called after every tick with the number of steps it made.

        Returns:
            Why it stopped: ``"duration"``, ``"stop"`` or ``"window closed"``.
        """
        w = self.world
        end = None if duration is None else w.time + duration
        period = 1.0 / self.tick_rate
        self.reanchor()
        next_tick = self.anchor_wall
        viewer = self.viewer
        reason = "stop"
        try:
            while True:
                if (stop is not None and stop.is_set()) or (should_stop is not None and should_stop()):
                    break
                if end is not None and w.time >= end - 1e-12:
                    reason = "duration"
                    break
                now = self.clock()
                if now >= next_tick:
                    n = self.tick(now, end)
                    if on_tick is not None:
                        on_tick(n)
                    next_tick += period
                    if self.catching_up:
                        next_tick = self.clock()  # tick again right after serving callbacks
                    elif next_tick <= now:
                        next_tick = now + period
                    if self.status is not None:
                        self.status.update(self, self.clock())
                fast = self.realtime_factor <= 0 and not self.paused
                pause = 0.0 if fast else max(0.0, next_tick - self.clock())
                if viewer is not None:
                    now = self.clock()
                    behind = self.behind(now)
                    if viewer.due(now, behind):
                        if not viewer.frame(self.achieved_rtf(now)):
                            reason = "window closed"
                            break
                        self.frame_drawn(self.clock() - now)
                        pause = 0.0 if fast else max(0.0, next_tick - self.clock())
                    pause = min(pause, viewer.wait_time(self.clock(), behind))
                wait(pause)
        finally:
            if self.status is not None:
                self.status.update(self, self.clock(), force=True)
                self.status.close()
        return reason

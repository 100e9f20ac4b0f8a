"""The ``mvsim_node`` console script, and how it stops on Ctrl-C (SIGINT) and SIGTERM: always with exit status 0,
no traceback, CSV loggers closed and the ZMQ server stopped.

This module imports nothing heavy, so that the handlers are in place before the second or so of imports (rclpy, DDS,
numpy, numba) that :mod:`mvsim_ros2.node` costs. rclpy's own handlers are not used (``rclpy.init`` gets
``SignalHandlerOptions.NO``): they shut the ROS context down from the signal, so that a publisher created or used a
moment later fails with ``RCLError: context is invalid`` — a traceback and exit status 1.

What a signal does depends on where the node is (:class:`StopSignals`):

* starting (imports, ``rclpy.init``, loading the world, compiling): the start is abandoned at once —
  :class:`Stopped` is raised where the program is, and whatever was already built is closed;
* running: the run loop ends at its next tick (within ``1 / simul_rate`` s), after a whole step;
* closing: nothing more (``ros2 launch`` on a terminal delivers Ctrl-C twice: once from the terminal, once from
  launch itself), so that the loggers and the ZMQ server are always closed.

A signal that was ignored when the program started (``nohup``, a background job of a non-interactive shell) stays
ignored, as Python itself does for SIGINT. A signal in the few milliseconds before this module runs (the interpreter's
own start) still gets Python's default behaviour.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["StopSignals", "Stopped", "main", "stop_signals"]

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Stopped(BaseException):
    """A stop signal arrived while the node was starting (a BaseException, like KeyboardInterrupt, so that no
    ``except Exception`` on the way swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


class StopSignals:
    """SIGINT / SIGTERM handling of ``mvsim_node``: raise :class:`Stopped` while starting, ask the running node to
    stop, ignore repeats (see the module docstring). One per process: :func:`stop_signals`."""

    def __init__(self) -> None:
        self.received: int | None = None  # the first stop signal, once one arrived
        self.stop_running: Callable[[], None] | None = None  # set once the node runs: what a signal then calls
        self.closing = False  # set while shutting down: signals change nothing any more
        self.installed = False
        self._next_hook: Callable[[Any], object] = sys.unraisablehook
        self._pending: int = signal.SIGINT  # the signal _on_alarm delivers again

    def install(self) -> StopSignals:
        """Handle SIGINT and SIGTERM from now on (idempotent; signals ignored at start stay ignored; nothing is
        installed from a thread other than the main one, where Python cannot handle signals)."""
        if not self.installed and threading.current_thread() is threading.main_thread():
            for signum in HANDLED:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    signal.signal(signum, self._on_signal)
            self._next_hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable
            self.installed = True
        return self

    def running(self, stop: Callable[[], None]) -> None:
        """The node runs from now on: a signal calls ``stop`` (which asks the run loop to end; called at once if a
        signal already arrived)."""
        self.stop_running = stop
        if self.received is not None:
            stop()

    def start_closing(self) -> None:
        """Shutting down: any later signal is ignored, to the very end. The handlers become SIG_IGN (from the main
        thread): at interpreter exit Python puts its own handlers back to the default action, so a repeated Ctrl-C
        arriving then (``ros2 launch`` forwards one after the terminal's) would kill the process with status -2."""
        self.closing = True
        self.stop_running = None
        if self.installed and threading.current_thread() is threading.main_thread():
            for signum in HANDLED:
                if signal.getsignal(signum) == self._on_signal:
                    signal.signal(signum, signal.SIG_IGN)

    @property
    def name(self) -> str:
        """The name of the signal received ('' if none)."""
        return signal.Signals(self.received).name if self.received is not None else ""

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        first = self.received is None
        if first:
            self.received = signum
        if self.closing or not first:
            return
        if self.stop_running is not None:
            self.stop_running()
            return
        raise Stopped(signum)

    def _unraisable(self, info: Any) -> None:
        """A :class:`Stopped` raised inside a ``__del__`` or a weakref callback (the import system has some), where
        Python prints exceptions and drops them: deliver the signal again 10 ms later (SIGALRM; a timer, because
        anything that runs Python signal handlers at once would raise right here), in ordinary code by then.
        Anything else goes to the previous hook."""
        if isinstance(info.exc_value, Stopped) and not self.closing:
            self.received = None
            self._pending = info.exc_value.signum
            signal.signal(signal.SIGALRM, self._on_alarm)
            signal.setitimer(signal.ITIMER_REAL, 0.01)
            return
        self._next_hook(info)

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        self._on_signal(self._pending, frame)


_SIGNALS = StopSignals()


def stop_signals() -> StopSignals:
    """This process's :class:`StopSignals`, installed."""
    return _SIGNALS.install()


def main(argv: list[str] | None = None) -> int:
    """Console entry point ``mvsim_node``: the stop handlers first, then :func:`mvsim_ros2.node.main`."""
    signals = stop_signals()
    try:
        from mvsim_ros2.node import main as node_main

        return node_main(argv)
    except Stopped:
        signals.start_closing()
        return 0

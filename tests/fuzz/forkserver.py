"""The fork server: a parent that imports the simulator and warms its compiled kernels once, then forks one child
per world file, each under a wall-time limit and a memory limit, and classifies how each child ended.

The parent warms by loading and stepping every source world (their cameras left out: an OpenGL context must not
cross a fork, so each child makes its own), so a child starts with numba's kernels in memory and runs a world in
tens of milliseconds instead of paying the imports and the kernel cache again.

Limits, per child:

* time: the parent kills the child (SIGKILL) ``timeout`` seconds after the fork; one second before that the child
  dumps its Python stacks (faulthandler) into its log, and the innermost ``mvsim_core`` frame names the hang's
  bucket. A child still stepping after 40 % of the limit stops there and reports (a big world that steps slowly is
  not a hang; the summary counts these runs as "truncated"), so a hang is a load, a start or one step that takes
  the rest of the limit;
* memory: ``RLIMIT_AS`` = the parent's address space at the fork + ``memory_mb`` (an allocation past it raises
  ``MemoryError`` or kills the child), and a peak resident size (``ru_maxrss``) over ``memory_mb`` counts as
  ``memory`` too. The simulator's load budget (``MVSIM_MAX_LOAD_MEMORY``) is half of ``memory_mb`` in a child, so
  a world too big for the limit must be refused at load: a ``memory`` outcome is an estimate that fell short.

A child ignores SIGINT (Ctrl-C stops the campaign in the parent, which then kills its children), writes stdout and
stderr to ``child.log`` in its work folder, and its :class:`~.outcome.Result` as ``result.json`` there.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import math
import os
import resource
import select
import signal
import sys
import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .child import MAX_STEPS, SIM_TIME, run_world
from .outcome import CRASH, HANG, MEMORY, UNCAUGHT, Result, dump_bucket

DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_MB = 2048
WALL_BUDGET_SHARE = 0.4
"""Share of the time limit after which a child that is still stepping stops and reports (a slow world, not a hang:
see :func:`~.child.run_world`)."""
LOG = "child.log"
RESULT = "result.json"


@dataclass
class Limits:
    """timeout: wall seconds per child; memory_mb: MiB a child may use (see the module docstring)."""

    timeout: float = DEFAULT_TIMEOUT
    memory_mb: int = DEFAULT_MEMORY_MB


@dataclass
class Job:
    """One world to run: ``path`` (the world file), ``workdir`` (an empty folder: the child's current directory,
    log and result), ``key`` (anything the caller wants back)."""

    key: Any
    path: str
    workdir: Path
    seed: int = 0


LOAD_BUDGET_ENV = "MVSIM_MAX_LOAD_MEMORY"
LOAD_BUDGET_SHARE = 0.5
"""Share of a child's memory limit given to the simulator's load budget (:mod:`mvsim_core.memory_budget`): the
budget bounds what a world keeps, and building it (decoding, meshes) briefly takes about as much again."""


def load_budget(limits: Limits) -> str:
    """The load budget a child runs with (unless the campaign's environment sets one): a world whose estimate fits
    it must run within the child's memory limit; a bigger one must be refused at load, by the budget's error."""
    return f"{int(limits.memory_mb * LOAD_BUDGET_SHARE)}MiB"


def prepare_environment() -> None:
    """What every fuzzing process sets before importing the simulator: no network (``MVSIM_OFFLINE=1``, as the test
    suite), no window."""
    os.environ["MVSIM_OFFLINE"] = "1"
    os.environ.pop("DISPLAY", None)
    os.environ.pop("WAYLAND_DISPLAY", None)


def _vm_size_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def probe_gl() -> str:
    """Which offscreen OpenGL backend works here (``egl``, ``osmesa``), or ``unavailable: <why>``; tried in a forked
    child, so that this process never holds a context."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            from mvsim_core.sensors.render.gl_context import get_context

            answer = get_context().backend
        except BaseException as e:  # noqa: BLE001 - any failure means no rendering
            answer = f"unavailable: {type(e).__name__}: {e}"
        with contextlib.suppress(BaseException):
            os.write(w, answer.encode()[:4000])
        os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 4096):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode(errors="replace") or "unavailable: the probe died"


def preload_gl(backend: str) -> None:
    """Import PyOpenGL for ``backend`` and the renderer (half a second a child would pay), without making a context:
    the platform is chosen by ``PYOPENGL_PLATFORM`` before the first import, as the simulator's own
    :mod:`~mvsim_core.sensors.render.gl_context` does."""
    os.environ["PYOPENGL_PLATFORM"] = backend
    if backend == "egl":
        os.environ.setdefault("EGL_PLATFORM", "surfaceless")
        import OpenGL.EGL  # noqa: F401
    import OpenGL.GL  # noqa: F401

    import mvsim_core.sensors.render.renderer  # noqa: F401


def warm_up(worlds: Iterable[Path]) -> list[str]:
    """Import the simulator and run each world for :data:`SIM_TIME` (cameras removed) so that its compiled kernels
    are in memory before the forks; preload OpenGL when a backend works. Returns one line per world that could not
    be warmed (those still run in the children, just slower)."""
    prepare_environment()
    import mvsim_core.cli  # noqa: F401  (the children call its main)
    from mvsim_core.loader import load_world
    from mvsim_core.sensors.camera import Camera
    from mvsim_core.sensors.rgbd_camera import RgbdCamera

    problems = []
    for path in worlds:
        try:
            world = load_world(path)
            for v in world.vehicles.values():
                v.sensors = {k: s for k, s in v.sensors.items() if not isinstance(s, (Camera, RgbdCamera))}
            world.sensors = {k: s for k, s in world.sensors.items() if not isinstance(s, (Camera, RgbdCamera))}
            world.start()
            for _ in range(max(1, min(MAX_STEPS, math.ceil(SIM_TIME / world.timestep)))):
                world.step()
        except Exception as e:  # noqa: BLE001 - a source world that fails is reported, not fatal
            problems.append(f"{path}: {type(e).__name__}: {e}"[:300])
    from mvsim_core.sensors.render import gl_context

    if getattr(gl_context, "_context", None) is not None:
        problems.append("an OpenGL context was made while warming up; children may not render")
    elif "OpenGL" not in sys.modules:
        gl = probe_gl()
        if gl in ("egl", "osmesa"):
            preload_gl(gl)
        else:
            problems.append(f"no offscreen OpenGL ({gl[:200]}): cameras cannot render")
    return problems


class Target(Protocol):
    """What a child runs: :func:`~.child.run_world` (tests pass others)."""

    def __call__(self, path: str, *, seed: int, sim_time: float, max_steps: int, wall_budget: float) -> Result: ...


def _child(job: Job, limits: Limits, as_limit: int, target: Target, sim_time: float, max_steps: int) -> None:
    """The forked child: never returns."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.chdir(job.workdir)
        fd = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 - the parent's may be a capture
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        if as_limit > 0:
            resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
        os.environ.setdefault(LOAD_BUDGET_ENV, load_budget(limits))
        faulthandler.enable(file=sys.stderr, all_threads=True)
        faulthandler.dump_traceback_later(max(0.2, limits.timeout - 1.0), exit=False, file=sys.stderr)
        try:
            res = target(job.path, seed=job.seed, sim_time=sim_time, max_steps=max_steps,
                         wall_budget=limits.timeout * WALL_BUDGET_SHARE)
        except MemoryError as e:  # escaped the target (the simulator's own are caught in run_world)
            res = Result(MEMORY, "MemoryError outside the run", f"MemoryError: {e}", stage="child")
        faulthandler.cancel_dump_traceback_later()
        with open(RESULT + ".tmp", "w") as f:
            json.dump(res.to_json(), f)
        os.rename(RESULT + ".tmp", RESULT)
    except BaseException:  # noqa: BLE001 - the child must never return into the parent's code
        code = 3
        with contextlib.suppress(BaseException):
            sys.stderr.write(traceback.format_exc())
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _read_log(workdir: Path, limit: int = 20000) -> str:
    try:
        data = (workdir / LOG).read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def _dump(log: str) -> str:
    """The faulthandler dump in a child's log (from its first line; innermost frames first), else the log's end."""
    starts = [i for i in (log.find("Fatal Python error"), log.find("Timeout (")) if i >= 0]
    return log[min(starts):min(starts) + 3000] if starts else log[-3000:]


def _classify_exit(job: Job, status: int, rusage: Any, killed: bool, limits: Limits, seconds: float) -> Result:
    rss_mb = rusage.ru_maxrss / 1024.0
    log = _read_log(job.workdir)
    if killed:
        res = Result(HANG, f"hang @ {dump_bucket(log)}", f"over the time limit of {limits.timeout:g} s", _dump(log))
    elif os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        if "MemoryError" in log or "bad_alloc" in log or "Cannot allocate memory" in log:
            res = Result(MEMORY, f"{sig} out of memory @ {dump_bucket(log)}", f"killed by {sig} out of memory",
                         _dump(log))
        else:
            res = Result(CRASH, f"{sig} @ {dump_bucket(log)}", f"killed by {sig}", _dump(log))
    else:
        try:
            res = Result.from_json(json.loads((job.workdir / RESULT).read_text()))
        except (OSError, ValueError, TypeError):
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
            res = Result(UNCAUGHT, f"child exited with status {code} without a result",
                         f"child exited with status {code} without a result", log[-3000:])
    if rss_mb > limits.memory_mb and res.outcome not in (HANG, CRASH, MEMORY):
        res.extra["outcome_before_rss"] = res.outcome
        res.outcome, res.bucket = MEMORY, f"peak RSS over {limits.memory_mb} MiB @ {res.stage or '?'}"
        res.message = f"peak RSS {rss_mb:.0f} MiB"
    res.max_rss_mb = rss_mb
    res.seconds = seconds
    return res


class ForkServer:
    """Runs :class:`Job` s in forked children, ``jobs`` at a time (see the module docstring).

    Args:
        limits: time and memory limits per child.
        jobs: children at a time.
        sim_time, max_steps: how long each world runs (simulated seconds, and at most that many steps).
        target: what a child runs (default :func:`~.child.run_world`).
    """

    def __init__(self, limits: Limits | None = None, jobs: int = 1, *, sim_time: float = SIM_TIME,
                 max_steps: int = MAX_STEPS, target: Target = run_world) -> None:
        self.limits = limits or Limits()
        self.target = target
        self.jobs = max(1, jobs)
        self.sim_time = sim_time
        self.max_steps = max_steps
        self._running: dict[int, tuple[Job, float, int | None]] = {}  # pid -> job, start, pidfd

    def _start(self, job: Job) -> None:
        job.workdir.mkdir(parents=True, exist_ok=True)
        as_limit = _vm_size_bytes() + self.limits.memory_mb * 1024 * 1024
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(job, self.limits, as_limit, self.target, self.sim_time, self.max_steps)
        try:
            pidfd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        self._running[pid] = (job, time.monotonic(), pidfd)

    def _reap(self, pid: int, killed: bool) -> tuple[Job, Result]:
        job, start, pidfd = self._running.pop(pid)
        _, status, rusage = os.wait4(pid, 0)
        if pidfd is not None:
            os.close(pidfd)
        return job, _classify_exit(job, status, rusage, killed, self.limits, time.monotonic() - start)

    def _wait_some(self) -> list[tuple[Job, Result]]:
        """Block until at least one child ends (or passes its limit); return the ended ones."""
        done: list[tuple[Job, Result]] = []
        while not done:
            now = time.monotonic()
            for pid, (_, start, _) in list(self._running.items()):
                if now - start > self.limits.timeout:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                    done.append(self._reap(pid, killed=True))
            if done:
                break
            next_deadline = min(start for _, start, _ in self._running.values()) + self.limits.timeout
            wait_s = max(0.0, next_deadline - time.monotonic()) + 0.001
            fds = {pidfd: pid for pid, (_, _, pidfd) in self._running.items() if pidfd is not None}
            if len(fds) == len(self._running):
                poller = select.poll()
                for fd in fds:
                    poller.register(fd, select.POLLIN)
                for fd, _ in poller.poll(wait_s * 1000.0):
                    done.append(self._reap(fds[fd], killed=False))
            else:  # no pidfd (old kernel): poll
                try:
                    wpid, status, rusage = os.wait4(-1, os.WNOHANG)
                except ChildProcessError:
                    wpid = 0
                if wpid and wpid in self._running:
                    job, start, _ = self._running.pop(wpid)
                    done.append((job, _classify_exit(job, status, rusage, False, self.limits,
                                                     time.monotonic() - start)))
                else:
                    time.sleep(min(wait_s, 0.005))
        return done

    def run(self, jobs: Iterable[Job]) -> Iterator[tuple[Job, Result]]:
        """Run every job; yields (job, result) as children end (not in job order)."""
        pending = iter(jobs)
        exhausted = False
        try:
            while True:
                while not exhausted and len(self._running) < self.jobs:
                    job = next(pending, None)
                    if job is None:
                        exhausted = True
                        break
                    self._start(job)
                if not self._running:
                    return
                yield from self._wait_some()
        finally:
            self.kill_all()

    def kill_all(self) -> None:
        """Kill and reap every child still running."""
        for pid in list(self._running):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
            _, _, pidfd = self._running.pop(pid)
            if pidfd is not None:
                os.close(pidfd)


"""What one fuzzing child does with one world file: load it, start it, step it with its sensors on, check that its
state is finite, and check the ``mvsim check`` contract for the outcome (:func:`run_world`). Runs in-process; the
fork server (:mod:`.forkserver`) calls it in a child under time and memory limits."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import re
import time
import traceback
from typing import Any

import numpy as np

from .outcome import (
    BAD_ERROR,
    CHECK_CONTRACT,
    MEMORY,
    OK,
    SILENT_NAN,
    UNCAUGHT,
    WORLD_FILE_ERROR,
    Result,
    exception_bucket,
    message_bucket,
)

SIM_TIME = 0.5
"""Simulated seconds each world runs (at most :data:`MAX_STEPS` steps)."""
MAX_STEPS = 200
MIN_TIMESTEP = 1e-4
"""Shortest timestep (s) a loaded world may have (issue 14: timesteps >= 1e-4 s); a shorter one is ``silent_nan``."""


def _finite(value: Any, path: str, depth: int = 0) -> str | None:
    """Path of the first non-finite number in ``value`` (floats, numpy arrays, tuples, lists, dataclasses), or
    None when all are finite."""
    if depth > 6 or value is None or isinstance(value, (str, bytes, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} = {value}"
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and value.size and not np.isfinite(value).all():
            bad = value[~np.isfinite(value)].ravel()[0]
            return f"{path} (array {value.shape}) holds {bad}"
        return None
    if isinstance(value, np.generic):
        return _finite(value.item(), path, depth + 1)
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value[:100000]):
            bad = _finite(v, f"{path}[{i}]", depth + 1)
            if bad:
                return bad
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            bad = _finite(getattr(value, f.name), f"{path}.{f.name}", depth + 1)
            if bad:
                return bad
    return None


def nonfinite_state(world: Any) -> str | None:
    """What is not finite in a running world (time, vehicles' pose / twist / odometry, blocks' and actors' poses,
    sensors' last observations), or None."""
    checks: list[tuple[str, Any]] = [("world.time", world.time), ("world.timestep", world.timestep)]
    for name, v in world.vehicles.items():
        checks += [(f"vehicle '{name}'.pose", v.pose), (f"vehicle '{name}'.twist", v.twist),
                   (f"vehicle '{name}'.odometry", v.odometry)]
        for sname, s in v.sensors.items():
            checks.append((f"sensor '{name}/{sname}' ({type(s).__name__}).last", s.last))
    for name, b in world.blocks.items():
        checks.append((f"block '{name}'.pose", b.pose))
    for name, a in world.actors.items():
        checks.append((f"actor '{name}'.pose", a.pose))
    for name, s in world.sensors.items():
        checks.append((f"sensor '{name}' ({type(s).__name__}).last", s.last))
    for path, value in checks:
        bad = _finite(value, path)
        if bad:
            return bad
    return None


def _state_bucket(what: str) -> str:
    """``vehicle 'bot1'.pose[3] = nan`` -> ``vehicle.pose``; ``sensor 'a/b' (Lidar2D).last.ranges ...`` ->
    ``sensor Lidar2D.last.ranges``."""
    kind = what.split(" ", 1)[0]
    if "'" not in what:
        return kind
    rest = what.split("'", 2)[-1]
    cls = ""
    if rest.startswith(" ("):
        cls, rest = rest[2:].split(")", 1)
        cls = " " + cls
    field = rest.split(" ", 1)[0].split("[", 1)[0]
    return f"{kind}{cls}{field}"


def check_cli(path: str, seed: int) -> tuple[int, str, str]:
    """Run ``mvsim check PATH --seed SEED`` in-process: (exit status, stdout, stderr). An exception that escapes it
    is what the real command would print as a traceback (exit status 1)."""
    from mvsim_core.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["check", path, "--seed", str(seed)])
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - the command would die with a traceback: that is the finding
        err.write(traceback.format_exc())
        rc = 1
    return rc, out.getvalue(), err.getvalue()


def run_world(path: str, *, seed: int = 0, sim_time: float = SIM_TIME, max_steps: int = MAX_STEPS,
              wall_budget: float | None = None, contract: bool = True) -> Result:
    """Load, start and step the world at ``path``; classify what happened (see :mod:`.outcome`).

    ``wall_budget``: stop stepping (and go on to the checks) once this many wall seconds have passed since the call,
    so that a big world that steps slowly but steadily is not taken for a hang (``extra["truncated"]`` then says
    so); a load, a start or a single step that never ends still runs into the fork server's time limit."""
    from mvsim_core.errors import WorldFileError
    from mvsim_core.loader import load_world

    t0 = time.perf_counter()
    res = Result(OK)
    stage = "load"
    error: WorldFileError | None = None
    try:
        world = load_world(path, seed=seed)
        stage = "start"
        world.start()
        dt = world.timestep
        res.dt = float(dt)
        if not (math.isfinite(dt) and dt >= MIN_TIMESTEP):
            res.outcome, res.bucket = SILENT_NAN, f"state: timestep below {MIN_TIMESTEP:g} s or not finite"
            res.message = f"world.timestep = {dt!r} s"
        else:
            stage = "step"
            n = max(1, min(max_steps, math.ceil(sim_time / dt)))
            for _ in range(n):
                world.step()
                res.steps += 1
                if wall_budget is not None and time.perf_counter() - t0 > wall_budget and res.steps < n:
                    res.extra["truncated"] = f"{res.steps} of {n} steps in {time.perf_counter() - t0:.1f} s"
                    break
            stage = "state"
            _note_faults(res, world)
            bad = nonfinite_state(world)
            if bad:
                res.outcome, res.bucket, res.message = SILENT_NAN, f"state: {_state_bucket(bad)}", bad
    except WorldFileError as e:
        error = e
        text = str(e)
        res.message = text[:2000]
        if e.file and e.line > 0 and text.startswith(f"{e.file}:{e.line}: "):  # one line: the contract check
            res.outcome, res.bucket = WORLD_FILE_ERROR, message_bucket(text)
        else:
            res.outcome, res.bucket = BAD_ERROR, f"{stage}: WorldFileError without file:line: {message_bucket(text)}"
            res.detail = text[-3000:]
    except MemoryError as e:
        res.outcome = MEMORY
        res.bucket, res.detail = exception_bucket(stage, e)
        res.message = f"MemoryError: {e}"[:2000]
    except BaseException as e:  # noqa: BLE001 - every other exception is a finding
        res.outcome = UNCAUGHT
        res.bucket, res.detail = exception_bucket(stage, e)
        res.message = f"{type(e).__name__}: {e}".splitlines()[0][:2000] if str(e) else type(e).__name__
    res.stage = stage
    if contract and res.outcome in (OK, WORLD_FILE_ERROR):
        _check_contract(res, path, seed, error)
    res.seconds = time.perf_counter() - t0
    return res


_DIGITS = re.compile(r"\d+")


def _note_faults(res: Result, world: Any) -> None:
    """Record the physics faults of the run (objects that blew up and were reset, :mod:`mvsim_core.dynamics.faults`)
    in ``res.extra``: not a failure (the world went on with finite state, as issue 14 asks), but counted apart in the
    summary, since a world file that loads and then blows up its objects is worth a look."""
    last = world.faults.last
    if last is None:
        return
    res.extra["faults"] = len(world.faults)
    res.extra["fault_bucket"] = f"{last.kind}: {_DIGITS.sub('#', last.what)}"
    res.extra["fault"] = last.message()[:500]


def _check_contract(res: Result, path: str, seed: int, error: Any) -> None:
    """``mvsim check`` must exit 0 for a world that ran, and 2 with exactly the error's line for a world file error
    (as the command prints it: control characters escaped, :func:`mvsim_core.errors.one_line`)."""
    from mvsim_core.errors import one_line

    rc, out, err = check_cli(path, seed)
    lines = err.splitlines()
    want = 0 if error is None else 2
    if rc == want and (error is None or lines == [one_line(str(error))]):
        return
    bad = CHECK_CONTRACT
    if rc == 1 and "Traceback" in err:
        last = lines[-1] if lines else ""
        why = f"traceback ({last.split(':', 1)[0]})"
    elif rc != want:
        why = f"exit {rc} where the run gave {res.outcome} (want {want})"
    elif len(lines) != 1:
        why = f"{len(lines)} lines on stderr (want 1)"
    else:
        why = "the line differs from the run's error"
    res.extra["run_outcome"] = res.outcome
    res.extra["run_message"] = res.message
    res.outcome, res.bucket = bad, f"{res.stage}: mvsim check {why}"
    res.message = f"mvsim check exit {rc}; stderr: {err.strip()[-500:]}" if err.strip() else f"mvsim check exit {rc}"
    res.detail = (err[-3000:] + ("\n--- stdout\n" + out[-1000:] if out.strip() else ""))
    res.stage = "check"

"""One run of a sweep, from world file to results row, in whatever process runs it (a Ray worker, or this one).

:func:`execute_run` loads the world with the run's seed and parameter values, drives the vehicle (one controller
command per control period, :mod:`mvsim_core.sweep.controllers`), measures (:mod:`mvsim_core.sweep.metrics`) and
returns the row. It never raises for the run's own sake: a run that raises is a row with status ``failed`` and
``Type: message (at file:line)`` of where it was raised; a run still going at its wall-clock deadline (checked before
every control period, world loading included) a row with status ``timeout``. A run that hangs inside one call is
stopped from outside (:mod:`mvsim_core.sweep.ray_runner`).

Row columns here: ``run_id``, ``status``, ``error``, ``seed``, the parameter columns, the metrics' columns,
``final_x``, ``final_y`` [m], ``final_yaw`` [rad], ``sim_time`` (simulated s reached), ``load_s`` (wall s to load and
start the world), ``sim_s`` (wall s of the steps, control and metrics), ``wall_s`` (wall s of the whole run),
``cpu_s`` (CPU s of the worker process during the run: below ``wall_s`` when the machine is shared), ``started_at``,
``finished_at`` (UTC), ``worker`` (host:pid) and ``mcap`` (the recording, relative to the results'
folder, or None).
"""

from __future__ import annotations

import copy
import math
import os
import socket
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mvsim_core.errors import one_line
from mvsim_core.sweep.context import RunContext
from mvsim_core.sweep.controllers import make_controller
from mvsim_core.sweep.expand import Run
from mvsim_core.sweep.metrics import make_metrics
from mvsim_core.sweep.spec import SweepSpec

ERROR_CHARS = 2000
"""Longest error text kept in a row (characters)."""


class RunTimeout(Exception):
    """The run went past its wall-clock deadline."""


def error_text(e: BaseException) -> str:
    """``Type: message (at file.py:line)``: the exception and the innermost frame it was raised in, on one line."""
    frames = traceback.extract_tb(e.__traceback__)
    at = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    text = f"{type(e).__name__}: {one_line(str(e))}{at}"
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + "…"


def _now() -> datetime:
    return datetime.now(timezone.utc)


def execute_run(spec: SweepSpec, run: Run, *, mcap: str | Path | None = None,
                results_dir: str | Path | None = None) -> dict[str, Any]:
    """Run ``run`` of ``spec`` and return its results row (see the module docstring).

    Args:
        spec: the sweep. run: which run.
        mcap: record the run to this MCAP file (its folder is made), or None.
        results_dir: the results file's folder; the row's ``mcap`` is written relative to it.
    """
    from mvsim_core.loader import load_world

    t0, cpu0 = time.perf_counter(), time.process_time()
    deadline = t0 + spec.timeout
    row: dict[str, Any] = {"run_id": run.run_id, "status": "ok", "error": None, "seed": run.seed}
    row.update(run.columns(spec))
    started = _now()
    world = vehicle = recorder = None
    load_s, sim_start = math.nan, t0
    try:
        world = load_world(spec.world, seed=run.seed, variables=run.variables(spec),
                           include_params=run.include_params(spec))
        vehicle = world.vehicles.get(spec.vehicle) if spec.vehicle else next(iter(world.vehicles.values()), None)
        if spec.vehicle and vehicle is None:
            raise ValueError(f"no vehicle '{spec.vehicle}' in the world; it has {', '.join(world.vehicles) or 'none'}")
        ctx = RunContext(run_id=run.run_id, seed=run.seed, parameters=run.columns(spec),
                         variables=run.variables(spec), include_params=run.include_params(spec), vehicle=vehicle,
                         goal=spec.goal, duration=spec.duration, params=copy.deepcopy(dict(spec.controller.params)))
        controller = make_controller(spec.controller, spec.goal, spec.base_dir)
        metrics = make_metrics(spec.metrics, spec.base_dir)
        world.start()
        if mcap is not None:
            from mvsim_core.record.mcap_recorder import Recorder

            Path(mcap).parent.mkdir(parents=True, exist_ok=True)
            recorder = Recorder(world, mcap)
            row["mcap"] = os.path.relpath(mcap, results_dir) if results_dir is not None else str(mcap)
        stepped = [m for m in metrics if m.per_step]
        if stepped:
            def look(w: Any) -> None:
                for m in stepped:
                    m.on_step(w, ctx)

            world.add_step_listener(look)
        sim_start = time.perf_counter()
        load_s = sim_start - t0
        dt = world.timestep
        total = int(round(spec.duration / dt))
        per = max(1, int(round(spec.control_period / dt)))
        done = 0
        while done < total:
            if time.perf_counter() > deadline:
                raise RunTimeout(f"ran past its {spec.timeout:g} s wall-clock timeout at t = {world.time:.4g} s of "
                                 f"{spec.duration:g} s simulated")
            cmd = controller.command(world, ctx)
            if cmd is not None and vehicle is not None:
                vehicle.set_twist(*cmd)
            for _ in range(min(per, total - done)):
                world.step()
            done += per
        measured: dict[str, Any] = {}
        for m in metrics:
            measured.update(m.result(world, ctx))
        row.update(measured)  # all of them or none
    except RunTimeout as e:
        row["status"], row["error"] = "timeout", str(e)
    except Exception as e:  # noqa: BLE001 (a run that raises is a failed row; the sweep goes on)
        row["status"], row["error"] = "failed", error_text(e)
    finally:
        if recorder is not None:
            try:
                recorder.close()
            except Exception as e:  # noqa: BLE001
                row["status"], row["error"] = "failed", f"closing the recording: {error_text(e)}"
    end = time.perf_counter()
    pose = vehicle.pose if vehicle is not None and world is not None and world.started else None
    row["final_x"] = pose[0] if pose else math.nan
    row["final_y"] = pose[1] if pose else math.nan
    row["final_yaw"] = pose[3] if pose else math.nan
    row["sim_time"] = world.time if world is not None else 0.0
    row["load_s"] = load_s
    row["sim_s"] = math.nan if math.isnan(load_s) else end - sim_start
    row["wall_s"] = end - t0
    row["cpu_s"] = time.process_time() - cpu0
    row["started_at"], row["finished_at"] = started, _now()
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    row.setdefault("mcap", None)
    return row

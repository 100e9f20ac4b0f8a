"""A sweep run on Ray: ``run_sweep(spec, out, workers=N, address=ADDRESS)``.

* Ray: a local instance with ``workers`` CPUs (``ray.init(num_cpus=N)``; default: this machine's CPU count), or the
  cluster at ``address`` (``ray.init(address=...)``; there, ``workers`` caps how many runs are in flight, default:
  the cluster's CPUs). When Ray is already initialised in this process, that session is used (and left running).
* One Ray task per run (``num_cpus=1``, never retried by Ray), at most ``workers`` in flight: a run's wall-clock time
  counts from when it is handed out. The workers import this package, and the spec's folder (custom functions) is
  put on their ``PYTHONPATH`` (with this package's folder when it is not an installed one), through the job's
  ``runtime_env``. On a cluster, the nodes must have mvsim installed and the world files at the same paths.
* Results as they arrive (:mod:`mvsim_core.sweep.results`); runs already recorded as ok in ``out`` are skipped, and
  failed or timed-out ones are run again (``attempt`` + 1).
* A run that raises is a ``failed`` row (its worker says where); a worker that dies (a crash, killed for memory)
  too. A run with no result :data:`GRACE_S` seconds after its own timeout (hung inside one call, where the run's own
  check cannot see it) is cancelled, its worker process killed, and recorded as ``timeout``.
* Progress on stderr: a bar with the ETA when stderr is a terminal, otherwise one line per finished run (with the
  ETA).
"""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray

import mvsim_core
from mvsim_core.errors import MvsimError, one_line
from mvsim_core.sweep.execute import execute_run
from mvsim_core.sweep.expand import Run, expand
from mvsim_core.sweep.results import ResultStore
from mvsim_core.sweep.spec import SweepSpec

GRACE_S = 10.0
"""Seconds past a run's timeout before its worker is killed (room for a fresh worker's start-up)."""
POLL_S = 0.5


@dataclass
class SweepSummary:
    """What a sweep did.

    Attributes:
        total: runs in the spec. skipped: already ok in the results. ran: run now (ok + failed + timeout).
        ok, failed, timeout: how the runs of now ended. rows: rows in the results file afterwards.
        all_ok: every run of the spec is recorded as ok. init_s: wall s to start (or reach) Ray.
        wall_s: wall s of the whole sweep. interrupted: stopped by Ctrl-C or SIGTERM before the end.
    """

    total: int
    skipped: int
    ran: int = 0
    ok: int = 0
    failed: int = 0
    timeout: int = 0
    rows: int = 0
    all_ok: bool = False
    init_s: float = 0.0
    wall_s: float = 0.0
    interrupted: bool = False


def _run_task(spec: SweepSpec, run: Run, mcap: str | None, results_dir: str) -> dict[str, Any]:
    """The body of one Ray task."""
    return execute_run(spec, run, mcap=mcap, results_dir=results_dir)


_remote_run = ray.remote(num_cpus=1, max_retries=0)(_run_task)


def worker_pythonpath(spec: SweepSpec) -> str:
    """``PYTHONPATH`` for the workers: the spec's folder, this package's folder when it is a source checkout (not
    under site-packages), then this process's own ``PYTHONPATH``."""
    root = Path(mvsim_core.__file__).resolve().parent.parent
    paths = [str(spec.base_dir)]
    if not any(part in ("site-packages", "dist-packages") for part in root.parts):
        paths.append(str(root))
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(dict.fromkeys(paths))


def _init_ray(spec: SweepSpec, workers: int | None, address: str | None) -> bool:
    """Start or reach Ray; True when this call started the session (and so must shut it down)."""
    if ray.is_initialized():
        return False
    runtime_env = {"env_vars": {"PYTHONPATH": worker_pythonpath(spec)}}
    main_thread = threading.current_thread() is threading.main_thread()
    on_term = signal.getsignal(signal.SIGTERM) if main_thread else None
    try:
        if address:
            ray.init(address=address, runtime_env=runtime_env, logging_level=logging.WARNING)
        else:
            ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False, runtime_env=runtime_env,
                     logging_level=logging.WARNING)
    except (ConnectionError, ValueError, RuntimeError) as e:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise MvsimError(f"cannot start or reach {where}: {one_line(str(e))[:300]}") from None
    if callable(on_term):  # Ray's driver takes SIGTERM over; the caller's handler (stop cleanly) comes back
        signal.signal(signal.SIGTERM, on_term)
    return True


def _failed_row(spec: SweepSpec, run: Run, status: str, error: str, wall: float) -> dict[str, Any]:
    """The row of a run whose worker gave nothing back."""
    from datetime import datetime, timezone

    row: dict[str, Any] = {"run_id": run.run_id, "status": status, "error": error, "seed": run.seed}
    row.update(run.columns(spec))
    now = datetime.now(timezone.utc)
    row.update({"final_x": math.nan, "final_y": math.nan, "final_yaw": math.nan, "sim_time": math.nan,
                "load_s": math.nan, "sim_s": math.nan, "wall_s": wall, "cpu_s": math.nan, "started_at": None,
                "finished_at": now, "worker": None, "mcap": None})
    return row


class _Progress:
    """A tqdm bar on a terminal, else a line per run; both with the ETA."""

    def __init__(self, total: int, enabled: bool, say: Callable[[str], None]) -> None:
        self.total, self.n, self.say, self.t0 = total, 0, say, time.monotonic()
        self.bar = None
        self.lines = enabled and not sys.stderr.isatty()
        if enabled and not self.lines:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="run", file=sys.stderr, dynamic_ncols=True, smoothing=0.1)

    def update(self, row: dict[str, Any], counts: dict[str, int]) -> None:
        self.n += 1
        if self.bar is not None:
            self.bar.set_postfix(counts, refresh=False)
            self.bar.update(1)
        elif self.lines:
            elapsed = time.monotonic() - self.t0
            eta = elapsed / self.n * (self.total - self.n)
            err = f": {row['error'][:200]}" if row.get("error") else ""
            self.say(f"sweep: [{self.n}/{self.total}] run {row['run_id']} seed {row['seed']} {row['status']} "
                     f"({row.get('wall_s', math.nan):.2f} s){err}; ETA {eta:.0f} s")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _say(text: str) -> None:
    print(one_line(text), file=sys.stderr, flush=True)


def run_sweep(spec: SweepSpec, out: str | Path, *, workers: int | None = None, address: str | None = None,
              progress: bool = True, say: Callable[[str], None] = _say) -> SweepSummary:
    """Run the runs of ``spec`` not yet recorded as ok in ``out`` on Ray (see the module docstring).

    Args:
        spec: the sweep (checked: :func:`~mvsim_core.sweep.validate.check_against_world`).
        out: the results file (``.parquet``).
        workers: local Ray CPUs and runs in flight (default: the CPU count; on a cluster, its CPUs).
        address: an existing Ray cluster (``ray.init(address=...)``); None starts a local one.
        progress: show progress on stderr.
        say: where the start and end lines go (default: stderr).

    Raises:
        MvsimError: ``out`` holds another spec's results; Ray cannot start or be reached.
        KeyboardInterrupt: after the runs in flight were cancelled and the results written.
    """
    t0 = time.monotonic()
    out = Path(out)
    store = ResultStore(out, spec.spec_hash, mvsim_core.__version__)
    runs = list(expand(spec))
    done = store.done()
    todo = deque(r for r in runs if r.run_id not in done)
    summary = SweepSummary(total=len(runs), skipped=len(runs) - len(todo))
    say(f"sweep {spec.path.name}: {len(runs)} runs, {summary.skipped} already done, {len(todo)} to run "
        f"(spec hash {spec.spec_hash}; results in {out})")
    started_ray = False
    broken = False
    try:
        if todo:
            started_ray = _init_ray(spec, workers, address)
            summary.init_s = time.monotonic() - t0
            slots = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            _dispatch(spec, out, store, todo, slots, summary, progress, say)
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C, SIGTERM: what arrived is kept, the end line says so
        summary.interrupted = True
        raise
    except BaseException:  # Ray cannot start, an error of ours: what arrived is kept; the error says the rest
        broken = True
        raise
    finally:
        store.close()
        if started_ray:
            ray.shutdown()
        summary.rows = len(store.rows)
        summary.all_ok = len(store.done() & {r.run_id for r in runs}) == len(runs)
        summary.wall_s = time.monotonic() - t0
        if not broken:
            what = "interrupted" if summary.interrupted else "done"
            say(f"sweep {what}: {summary.ran} runs in {summary.wall_s:.1f} s ({summary.ok} ok, {summary.failed} "
                f"failed, {summary.timeout} timed out); {out}: {summary.rows} rows"
                + ("; run the same command again to finish" if summary.interrupted else ""))
    return summary


def _dispatch(spec: SweepSpec, out: Path, store: ResultStore, todo: deque[Run], slots: int, summary: SweepSummary,
              progress: bool, say: Callable[[str], None]) -> None:
    """Hand the runs out, ``slots`` at a time, and record each result as it arrives."""
    spec_ref = ray.put(spec)
    runs_dir = out.with_name(out.stem + ".runs")
    inflight: dict[Any, tuple[Run, float]] = {}
    counts = {"ok": 0, "failed": 0, "timeout": 0}
    bar = _Progress(len(todo), progress, say)

    def record(row: dict[str, Any]) -> None:
        store.add(row)
        status = row["status"] if row["status"] in counts else "failed"
        counts[status] += 1
        summary.ran += 1
        setattr(summary, status, getattr(summary, status) + 1)
        bar.update(row, counts)

    try:
        while todo or inflight:
            while todo and len(inflight) < slots:
                run = todo.popleft()
                mcap = str((runs_dir / f"{run.run_id}.mcap").resolve()) if spec.record else None
                ref = _remote_run.remote(spec_ref, run, mcap, str(out.resolve().parent))
                inflight[ref] = (run, time.monotonic())
            now = time.monotonic()
            first_deadline = min(t + spec.timeout + GRACE_S for _, t in inflight.values())
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=max(0.0, min(POLL_S, first_deadline - now)))
            for ref in ready:
                run, t = inflight.pop(ref)
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayError as e:
                    text = one_line(str(e)).strip()
                    row = _failed_row(spec, run, "failed", f"{type(e).__name__}: {text[:1000]}",
                                      time.monotonic() - t)
                record(row)
            now = time.monotonic()
            for ref, (run, t) in list(inflight.items()):
                if now > t + spec.timeout + GRACE_S:
                    ray.cancel(ref, force=True)
                    del inflight[ref]
                    record(_failed_row(spec, run, "timeout", f"no result {spec.timeout:g} s (+ {GRACE_S:g} s) after "
                                                             f"it was handed to a worker; the worker was stopped",
                                       now - t))
    except BaseException:
        for ref in inflight:
            ray.cancel(ref, force=True)
        raise
    finally:
        bar.close()

"""Sweeps on Ray, two local workers: the 40-run friction sweep, failures and timeouts as rows, resume after a kill.

The tests in this process share one Ray session (its start costs seconds); ``run_sweep`` uses a session already
started and leaves it running.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mvsim_core.sweep import ray_runner
from mvsim_core.sweep.execute import execute_run
from mvsim_core.sweep.expand import expand
from mvsim_core.sweep.results import read_results
from mvsim_core.sweep.spec import load_spec
from mvsim_core.sweep.validate import check_against_world

ray = pytest.importorskip("ray", reason="ray is in the `sweep` extra")

REPO = Path(__file__).resolve().parents[3]
WORLD = REPO / "worlds" / "sweeps" / "friction.world.xml"
FRICTION = """world: WORLD
duration: DURATION
seeds: {range: [0, 10]}
variables:
  mu: [0.05, 0.1, 0.2, 0.8]
controller: {type: goto, speed: 1.0, turn_rate: 1.5}
goal: {x: 4.0, y: 0.0}
metrics: [final_pose_error, time_to_goal, collisions, min_obstacle_distance]
timeout: 120
"""


def friction_spec(tmp_path: Path, duration: float = 2.0) -> Path:
    p = tmp_path / "friction.yaml"
    p.write_text(FRICTION.replace("WORLD", str(WORLD)).replace("DURATION", str(duration)))
    return p


@pytest.fixture(scope="module")
def ray_session():
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    yield ray
    if started:
        ray.shutdown()


def test_forty_runs_on_two_workers(tmp_path, ray_session):
    spec = load_spec(friction_spec(tmp_path))
    check_against_world(spec)
    out = tmp_path / "friction.parquet"
    lines: list[str] = []
    s = ray_runner.run_sweep(spec, out, workers=2, progress=False, say=lines.append)
    assert (s.total, s.skipped, s.ran, s.ok, s.failed, s.timeout, s.rows, s.all_ok) == (40, 0, 40, 40, 0, 0, 40, True)
    assert lines[0].startswith("sweep friction.yaml: 40 runs, 0 already done, 40 to run")
    rows = read_results(out).to_pylist()
    assert len(rows) == 40 and len({r["run_id"] for r in rows}) == 40
    assert {r["status"] for r in rows} == {"ok"} and {r["attempt"] for r in rows} == {1}
    assert len({r["worker"] for r in rows}) >= 2  # both workers took runs
    # physics: less friction, less grip to accelerate: after 2 s the robot is further from its goal, for every seed
    by_seed: dict[int, dict[float, float]] = {}
    for r in rows:
        by_seed.setdefault(r["seed"], {})[r["var.mu"]] = r["final_pose_error"]
    for seed, errors in by_seed.items():
        ordered = [errors[mu] for mu in (0.05, 0.1, 0.2, 0.8)]
        assert ordered == sorted(ordered, reverse=True), (seed, ordered)
    mean = {mu: statistics.mean(by_seed[s][mu] for s in by_seed) for mu in (0.05, 0.8)}
    assert mean[0.05] - mean[0.8] > 0.8  # m: about half the acceleration for most of the 2 s
    assert all(r["collisions"] == 0 and r["time_to_goal"] != r["time_to_goal"] for r in rows)  # NaN: not reached
    assert all(1.5 < r["min_obstacle_distance"] < 5.0 for r in rows)
    # a worker's row is what this process computes for the same run (same seed, same world: same numbers)
    run = next(r for r in expand(spec) if r.seed == 3 and r.settings == (0.1,))
    here = execute_run(spec, run)
    there = next(r for r in rows if r["run_id"] == run.run_id)
    for k in ("final_pose_error", "collisions", "min_obstacle_distance", "final_x", "final_y", "final_yaw"):
        assert there[k] == here[k], k
    # the same sweep again: nothing to run
    lines.clear()
    again = ray_runner.run_sweep(spec, out, workers=2, progress=False, say=lines.append)
    assert (again.skipped, again.ran, again.rows, again.all_ok) == (40, 0, 40, True)


FAILING = """
import time

def act(world, ctx):
    if ctx.seed == 1:
        raise ValueError(f"seed {ctx.seed} is cursed")
    if ctx.seed == 2:
        time.sleep(0.2)
    return (0.2, 0.0)

def hang(world, ctx):
    if ctx.seed == 3:
        time.sleep(120)
    return 1.0
"""


def test_failures_and_timeouts_are_rows_and_the_others_go_on(tmp_path, ray_session, monkeypatch):
    monkeypatch.setattr(ray_runner, "GRACE_S", 1.0)
    mod = f"failing_{tmp_path.name}"
    (tmp_path / f"{mod}.py").write_text(FAILING)
    p = tmp_path / "failing.yaml"
    p.write_text(f"world: {WORLD}\nduration: 5\nseeds: [0, 1, 2, 3]\ntimeout: 5\ncontroller: {{type: policy, "
                 f"function: '{mod}:act'}}\nmetrics: [collisions, '{mod}:hang']\n")
    spec = load_spec(p)
    check_against_world(spec)
    out = tmp_path / "failing.parquet"
    t0 = time.monotonic()
    s = ray_runner.run_sweep(spec, out, workers=2, progress=True, say=lambda text: None)
    assert (s.ran, s.ok, s.failed, s.timeout, s.all_ok) == (4, 1, 1, 2, False)
    assert time.monotonic() - t0 < 60
    rows = {r["seed"]: r for r in read_results(out).to_pylist()}
    assert rows[0]["status"] == "ok" and rows[0]["hang"] == 1.0 and rows[0]["collisions"] == 0
    assert rows[1]["status"] == "failed"
    assert rows[1]["error"] == f"ValueError: seed 1 is cursed (at {mod}.py:6)"
    assert rows[2]["status"] == "timeout"
    assert rows[2]["error"].startswith("ran past its 5 s wall-clock timeout at t = ")
    assert 0 < rows[2]["sim_time"] < 5
    assert rows[3]["status"] == "timeout"  # hung inside one call: its worker was stopped from outside
    assert rows[3]["error"] == "no result 5 s (+ 1 s) after it was handed to a worker; the worker was stopped"
    assert 6.0 <= rows[3]["wall_s"] < 15.0


def _sweep_cli(spec: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])}
    return subprocess.Popen([sys.executable, "-m", "mvsim_core.cli", "sweep", str(spec), "--workers", "2", "--out",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGKILL what is left of the process group the test started (Ray's own processes of that sweep)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.mark.heavy
def test_killed_midway_then_rerun_completes_only_the_missing_runs(tmp_path):
    """The CLI as a user runs it: killed (SIGKILL) once at least 10 rows are on disk, then run again."""
    spec = friction_spec(tmp_path)
    out = tmp_path / "friction.parquet"
    first = _sweep_cli(spec, out)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and first.poll() is None:
            if read_results(out).num_rows >= 10:
                break
            time.sleep(0.2)
        assert first.poll() is None, first.communicate()[1]
        os.kill(first.pid, signal.SIGKILL)
        first.wait(30)
    finally:
        _stop_group(first)
    before = {r["run_id"]: r for r in read_results(out).to_pylist()}
    assert 10 <= len(before) < 40
    second = _sweep_cli(spec, out)
    try:
        _, err = second.communicate(timeout=300)
    finally:
        _stop_group(second)
    assert second.returncode == 0, err
    m = re.search(r"sweep friction.yaml: 40 runs, (\d+) already done, (\d+) to run", err)
    assert m is not None, err
    assert (int(m.group(1)), int(m.group(2))) == (len(before), 40 - len(before))
    assert len(re.findall(r"^sweep: \[\d+/\d+\] run ", err, re.M)) == 40 - len(before)  # one line per run done now
    after = {r["run_id"]: r for r in read_results(out).to_pylist()}
    assert len(after) == 40 and {r["status"] for r in after.values()} == {"ok"}
    assert {r["attempt"] for r in after.values()} == {1}
    for rid, r in before.items():  # the runs done before the kill were not run again
        assert after[rid]["finished_at"] == r["finished_at"] and after[rid]["worker"] == r["worker"]
    assert not out.with_name(out.name + ".parts").exists()


@pytest.mark.heavy
def test_address_runs_on_an_existing_cluster(tmp_path, ray_session):
    """``--address``: the sweep joins the Ray instance this test process started, and leaves it running; with
    ``record: true`` each run's MCAP file lies next to the results."""
    address = ray.get_runtime_context().gcs_address
    p = tmp_path / "small.yaml"
    p.write_text(f"world: {WORLD}\nduration: 0.5\nseeds: [0, 1, 2]\nrecord: true\n")
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])}
    r = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "sweep", str(p), "--address", address, "--out",
                        str(tmp_path / "small.parquet"), "--no-progress"], capture_output=True, text=True, env=env,
                       timeout=180)
    assert r.returncode == 0, r.stderr
    assert "sweep done: 3 runs in" in r.stderr and "small.parquet: 3 rows" in r.stderr
    rows = read_results(tmp_path / "small.parquet").to_pylist()
    assert sorted(row["seed"] for row in rows) == [0, 1, 2] and {row["status"] for row in rows} == {"ok"}
    for row in rows:  # each run recorded next to the results
        assert row["mcap"] == f"small.runs/{row['run_id']}.mcap"
        assert (tmp_path / row["mcap"]).read_bytes()[:8] == b"\x89MCAP0\r\n"
    assert ray.is_initialized() and ray.cluster_resources().get("CPU") == 2

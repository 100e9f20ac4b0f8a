"""One run, in this process: controllers, metrics, custom functions, errors and timeouts as rows, determinism."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.sweep.execute import execute_run
from mvsim_core.sweep.expand import expand
from mvsim_core.sweep.spec import load_spec

REPO = Path(__file__).resolve().parents[3]
WORLD = REPO / "worlds" / "sweeps" / "friction.world.xml"


def spec_of(tmp_path: Path, text: str, module: str = "", name: str = "s.yaml"):
    if module:
        (tmp_path / f"{tmp_path.name}_mod.py").write_text(module)
    p = tmp_path / name
    p.write_text(f"world: {WORLD}\n" + text.replace("MOD", f"{tmp_path.name}_mod"))
    spec = load_spec(p)
    return spec, list(expand(spec))


def start_pose(seed: int, mu: float = 0.8) -> tuple[float, ...]:
    return mv.load_world(WORLD, seed=seed, variables={"mu": mu}).vehicles["bot1"].pose


def test_same_seed_same_row_and_seeds_differ(tmp_path):
    spec, runs = spec_of(tmp_path, "duration: 2\nseeds: [0, 1]\ncontroller: {type: goto, speed: 1.0}\n"
                                   "goal: {x: 4, y: 0}\nmetrics: [final_pose_error, time_to_goal, collisions, "
                                   "min_obstacle_distance]\n")
    a, b = execute_run(spec, runs[0]), execute_run(spec, runs[0])
    measured = ("final_pose_error", "time_to_goal", "collisions", "min_obstacle_distance", "final_x", "final_y",
                "final_yaw", "sim_time")
    assert a["status"] == "ok" and a["error"] is None
    assert all(a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])) for k in measured), (a, b)
    other = execute_run(spec, runs[1])
    assert other["final_x"] != a["final_x"]  # the seed moves the start (unifrnd in the world file)
    assert a["sim_time"] == pytest.approx(2.0)
    assert math.isnan(a["time_to_goal"])  # 4 m away: not reached in 2 s
    assert a["final_pose_error"] == pytest.approx(math.hypot(4 - a["final_x"], a["final_y"]))
    assert 1.5 < 4 - a["final_pose_error"] < 2.0  # about 1 m/s after a short start
    assert a["min_obstacle_distance"] == pytest.approx(6.0 - 0.25 - a["final_x"], abs=0.05)  # lidar to crate face
    assert a["load_s"] > 0 and a["sim_s"] > 0 and a["wall_s"] >= a["load_s"] + a["sim_s"] - 1e-6
    assert a["cpu_s"] > 0


def test_twists_schedule(tmp_path):
    spec, (run,) = spec_of(tmp_path, "duration: 3\nseeds: [4]\ncontroller:\n  type: twists\n  twists:\n"
                                     "    - {until: 2.0, vx: 0.5}\n    - {until: 3.0, vx: 0.0}\n")
    row = execute_run(spec, run)
    x0, y0, _, yaw0, _, _ = start_pose(4)
    travelled = math.hypot(row["final_x"] - x0, row["final_y"] - y0)
    assert travelled == pytest.approx(1.0, abs=0.06)  # 0.5 m/s for 2 s, a PID's start and stop
    assert row["collisions"] == 0


def test_driving_into_the_crate_counts_one_collision(tmp_path):
    spec, (run,) = spec_of(tmp_path, "duration: 8\nseeds: [0]\ncontroller:\n  type: twists\n  twists:\n"
                                     "    - {until: 8, vx: 1.0}\nmetrics: [collisions, min_obstacle_distance]\n")
    row = execute_run(spec, run)
    assert row["collisions"] == 1  # pushes against it from the first touch on
    assert row["final_x"] == pytest.approx(6.0 - 0.35, abs=0.05)  # its nose (0.35 m ahead) at the crate's face
    assert row["min_obstacle_distance"] == pytest.approx(0.1, abs=0.05)  # the lidar is 0.25 m ahead of the centre


def test_goal_with_yaw(tmp_path):
    spec, (run,) = spec_of(tmp_path, "duration: 8\nseeds: [0]\ncontroller: {type: goto, speed: 1.0}\n"
                                     "goal: {x: 1.5, y: 0.5, yaw_deg: 90, tolerance: 0.15, yaw_tolerance_deg: 10}\n")
    row = execute_run(spec, run)
    assert row["final_pose_error"] < 0.15
    assert row["final_yaw_error"] < math.radians(10)
    assert 1.0 < row["time_to_goal"] < 8.0


POLICY = '''
import math

def act(world, ctx):
    ctx.state["calls"] = ctx.state.get("calls", 0) + 1
    return (ctx.params["vx"], ctx.params["wz"])

def summary(world, ctx):
    return {"calls": ctx.state["calls"], "mu": ctx.variables["mu"], "seed_again": ctx.seed}

def heading(world, ctx):
    return ctx.vehicle.pose[3]

def boom(world, ctx):
    return 1 / 0

def slow(world, ctx):
    import time
    time.sleep(0.05)
    return (0.1, 0.0, 0.0)
'''


def test_policy_and_custom_metrics(tmp_path):
    spec, (run,) = spec_of(tmp_path, "duration: 1\nseeds: [2]\nvariables: {mu: 0.4}\ncontroller:\n  type: policy\n"
                                     "  function: MOD:act\n  params: {vx: 0.0, wz: 0.5}\n"
                                     "metrics: [MOD:summary, {name: yaw, function: MOD:heading}]\n", POLICY)
    row = execute_run(spec, run)
    assert row["status"] == "ok", row["error"]
    assert row["summary.calls"] == 20  # 1 s / 0.05 s control period
    assert row["summary.mu"] == 0.4 and row["summary.seed_again"] == 2 and row["var.mu"] == 0.4
    assert row["yaw"] == row["final_yaw"]
    assert row["yaw"] - start_pose(2, 0.4)[3] == pytest.approx(0.5 * 1.0, abs=0.1)  # turned at 0.5 rad/s


def test_a_run_that_raises_is_a_failed_row(tmp_path):
    spec, (run,) = spec_of(tmp_path, "duration: 0.5\nseeds: [0]\nmetrics: [collisions, MOD:boom]\n", POLICY)
    row = execute_run(spec, run)
    assert row["status"] == "failed"
    assert row["error"] == f"ZeroDivisionError: division by zero (at {tmp_path.name}_mod.py:15)"
    assert row["sim_time"] == pytest.approx(0.5)  # it ran; the metric failed at the end
    assert "collisions" not in row and "boom" not in row


def test_a_bad_world_value_is_a_failed_row(tmp_path):
    spec, (run,) = spec_of(tmp_path, "duration: 0.5\nseeds: [0]\nvariables: {mu: [abc]}\n")
    row = execute_run(spec, run)
    assert row["status"] == "failed" and row["error"].startswith("WorldFileError: ")
    assert "friction.world.xml:" in row["error"] and math.isnan(row["final_x"]) and row["sim_time"] == 0.0


def test_a_run_past_its_timeout(tmp_path):
    spec, (run,) = spec_of(tmp_path, "duration: 5\nseeds: [0]\ntimeout: 0.5\ncontroller: {type: policy, "
                                     "function: MOD:slow}\n", POLICY)
    row = execute_run(spec, run)
    assert row["status"] == "timeout"
    assert row["error"].startswith("ran past its 0.5 s wall-clock timeout at t = ")
    assert 0.0 < row["sim_time"] < 5.0
    assert 0.5 <= row["wall_s"] < 1.5


def test_record(tmp_path):
    spec, (run,) = spec_of(tmp_path, "duration: 0.5\nseeds: [0]\nrecord: true\n")
    mcap = tmp_path / "out.runs" / f"{run.run_id}.mcap"
    row = execute_run(spec, run, mcap=mcap, results_dir=tmp_path)
    assert row["status"] == "ok", row["error"]
    assert row["mcap"] == f"out.runs/{run.run_id}.mcap"
    assert mcap.read_bytes()[:8] == b"\x89MCAP0\r\n" and mcap.stat().st_size > 1000


def test_include_parameter_reaches_the_run(tmp_path):
    """A noiseless lidar (include parameter noise = 0) sees the crate's face at exactly its distance."""
    spec, (run,) = spec_of(tmp_path, "duration: 1\nseeds: [0]\ninclude_params:\n  lidar2d.sensor.xml:\n"
                                     "    noise: 0.0\ncontroller: {type: twists, twists: [{until: 1, vx: 0.0}]}\n"
                                     "metrics: [min_obstacle_distance]\n")
    row = execute_run(spec, run)
    assert row["status"] == "ok", row["error"]
    assert row["include[lidar2d.sensor.xml].noise"] == 0.0
    x, y, _, yaw, _, _ = start_pose(0)
    lidar_x = x + 0.25 * math.cos(yaw)
    assert row["min_obstacle_distance"] == pytest.approx(6.0 - lidar_x, abs=2e-3)  # the ray square to the face

"""Trajectory CSV files and schedules (:mod:`mvsim_core.io.trajectory_csv`), and ``mvsim trajectory`` writing one that
lines up, column for column, with a C++ MVSim recording of ``../shared/reference-trajectories/cpp-1.2.0``."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mvsim_core.io.trajectory_csv import (
    COLUMNS,
    TrajectoryFileError,
    parse_schedule,
    read_trajectory,
    schedule_command,
)

REPO = Path(__file__).resolve().parents[3]


def mvsim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MVSIM_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "mvsim_core.cli", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, env=env, timeout=120)


def test_a_schedule_is_read_as_the_recordings_cases_write_it():
    s = parse_schedule("2,0.8,0;6,0.3,-0.6;9,0.6,0.3")
    assert s == [(2.0, 0.8, 0.0), (6.0, 0.3, -0.6), (9.0, 0.6, 0.3)]
    assert schedule_command(s, 0.0) == (0.8, 0.0)
    assert schedule_command(s, 1.999) == (0.8, 0.0)
    assert schedule_command(s, 2.0) == (0.3, -0.6)
    assert schedule_command(s, 100.0) == (0.6, 0.3)  # the last one stays


@pytest.mark.parametrize(("text", "message"), [
    ("2,0.8", "schedule segment 1 is '2,0.8': write it as t_end,vx,wz"),
    ("2,0.8,0;x,1,1", "schedule segment 2 is 'x,1,1'"),
    ("2,0.8,nan", "schedule segment 1 is '2,0.8,nan'"),
    ("3,1,0;2,1,0", "schedule segment 2 ends at t = 2 s, not after the previous one (3 s)"),
    ("-1,1,0", "schedule segment 1 ends at t = -1 s: end times are absolute and the first must be after 0"),
    ("0,1,0", "schedule segment 1 ends at t = 0 s"),
    ("", "the schedule is empty"),
])
def test_a_bad_schedule_says_which_segment_and_how_to_write_it(text, message):
    with pytest.raises(TrajectoryFileError) as ei:
        parse_schedule(text)
    assert str(ei.value).startswith(message)


def test_mvsim_trajectory_writes_the_recordings_columns_and_matches_the_cpp_run(shared_dir, tmp_path):
    ref_dir = shared_dir / "reference-trajectories" / "cpp-1.2.0"
    out = tmp_path / "ours.csv"
    r = mvsim("trajectory", str(ref_dir / "worlds" / "jackal_ideal.world.xml"), "--schedule",
              "2,0.8,0;6,0.3,-0.6;9,0.6,0.3", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"wrote {out}: vehicle 'r1', 91 samples every 0.1 s up to t = 9 s\n"
    with open(out, newline="") as f, open(ref_dir / "jackal_ideal_B.csv", newline="") as g:
        ours, ref = list(csv.DictReader(f)), list(csv.DictReader(g))
    assert list(ours[0]) == list(ref[0]) == [*COLUMNS, "wheel_w0", "wheel_w1", "wheel_w2", "wheel_w3"]
    assert [r["t"] for r in ours] == [r["t"] for r in ref]
    a, b = read_trajectory(out), read_trajectory(ref_dir / "jackal_ideal_B.csv")
    assert np.hypot(a.x - b.x, a.y - b.y).max() < 0.004  # 2.8 mm (test_reference_cpp.py), 9-decimal rounding
    # the commands as the recording has them: none at t = 0, then the schedule's
    assert [(float(r["cmd_v"]), float(r["cmd_w"])) for r in ours[:2]] == [(0.0, 0.0), (0.8, 0.0)]
    assert [(r["cmd_v"], r["cmd_w"]) for r in ours] == [(r["cmd_v"], r["cmd_w"]) for r in ref]
    # twist_ideal reports the commanded twist after each step, as the C++ engine does
    assert float(ours[50]["w_local"]) == pytest.approx(-0.6) == float(ref[50]["w_local"])


def test_mvsim_trajectory_refuses_a_bad_schedule_vehicle_or_period(shared_dir, tmp_path):
    world = str(shared_dir / "reference-trajectories" / "cpp-1.2.0" / "worlds" / "jackal_ideal.world.xml")
    out = str(tmp_path / "o.csv")
    r = mvsim("trajectory", world, "--schedule", "2,0.8", "-o", out)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith("mvsim: schedule segment 1 is '2,0.8'") and r.stderr.count("\n") == 1
    r = mvsim("trajectory", world, "--schedule", "2,0.8,0", "--vehicle", "r9", "-o", out)
    assert (r.returncode, r.stderr) == (2, f"mvsim: no vehicle 'r9' in {world}; it has r1\n")
    r = mvsim("trajectory", world, "--schedule", "2,0.8,0", "--period", "0", "-o", out)
    assert (r.returncode, r.stderr) == (2, "mvsim: --period must be a number of seconds above 0 (got 0)\n")
    r = mvsim("trajectory", world, "--schedule", "2,0.8,0", "--period", "0.001", "-o", out)
    assert (r.returncode, r.stderr) == (2, "mvsim: --period 0.001 s is shorter than the world's timestep (0.005 s): "
                                           "samples are taken between physics steps\n")
    assert not Path(out).exists()
    r = mvsim("trajectory", world, "--schedule", "2,0.8,0", "-o", str(tmp_path / "no" / "such" / "dir.csv"))
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"mvsim: cannot write {tmp_path / 'no' / 'such' / 'dir.csv'}: No such file or directory\n"


def test_read_trajectory_reads_a_pose_log_too(tmp_path):
    p = tmp_path / "mvsim_r1_pose.csv"
    p.write_text("Timestamp,q0x,q1y,q2z,q3yaw,q4pitch,q5roll,dqx,dqy,dqw,odo_x,odo_y,odo_yaw\n"
                 "0,1,2,0,0.5,0,0,0,0,0,0,0,0\n0.1,1.1,2,0,0.6,0,0,0,0,0,0,0,0\n")
    t = read_trajectory(p)
    assert t.t.tolist() == [0.0, 0.1] and t.x.tolist() == [1.0, 1.1] and t.yaw.tolist() == [0.5, 0.6]
    assert t.path_length == pytest.approx(0.1)


@pytest.mark.parametrize(("text", "message"), [
    ("a,b,c\n1,2,3\n", "no trajectory columns: the header needs t,x,y,yaw"),
    ("t,x,y,yaw\n0,0,0,0\n0.1,zz,0,0\n", ":3: x = 'zz' is not a finite number"),
    ("t,x,y,yaw\n0,0,0,0\n0.1,nan,0,0\n", ":3: x = 'nan' is not a finite number"),
    ("t,x,y,yaw\n0,0,0,0\n0.2,1,0,0\n0.1,2,0,0\n", ":4: t = 0.1 s does not come after the previous sample (0.2 s)"),
    ("t,x,y,yaw\n0," + "1" * 200_000 + ",0,0\n", "not a CSV file the reader accepts (field larger than field limit"),
    ("t,x,y,yaw\n", "no samples below the header"),
])
def test_read_trajectory_says_what_is_wrong_and_where(tmp_path, text, message):
    p = tmp_path / "t.csv"
    p.write_text(text)
    with pytest.raises(TrajectoryFileError) as ei:
        read_trajectory(p)
    assert str(ei.value).startswith(str(p)) and message in str(ei.value)
    with pytest.raises(TrajectoryFileError) as ei:
        read_trajectory(tmp_path / "missing.csv")
    assert "cannot read it" in str(ei.value)

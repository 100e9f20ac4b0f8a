"""``mvsim_node`` as a command: bad parameters and bad worlds exit with 2 and one clear line (no traceback); --help;
and the parameter checks behind it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from ros_harness import NODE_EXE, REPO, pick_domain_id, ros_env

from mvsim_ros2.node import PARAMS, ConfigError, Options, resolve_world_file

DATA = Path(__file__).resolve().parent / "data"


def run_node(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NODE_EXE), *args], capture_output=True, text=True, timeout=timeout,
                          env=ros_env(pick_domain_id()), cwd=REPO)


@pytest.mark.parametrize(("args", "message"), [
    ((), "no world file"),
    (("--ros-args", "-p", "world_file:=/nonexistent/x.world.xml"), "world file not found: /nonexistent/x.world.xml"),
    (("--ros-args", "-p", f"world_file:={DATA / 'single.world.xml'}", "-p", "realtime_factor:=-1.0"),
     "parameter realtime_factor=-1.0 is invalid"),
    (("--ros-args", "-p", f"world_file:={DATA / 'single.world.xml'}", "-p", "depth_image_encoding:=8UC1"),
     "depth_image_encoding"),
    (("--ros-args", "-p", f"world_file:={DATA / 'single.world.xml'}", "-p", "lockstep:=maybe"),
     "parameter lockstep='maybe' has the wrong type: expected bool"),
], ids=["no-world", "missing-file", "negative-rtf", "bad-encoding", "bad-bool"])
def test_bad_parameters_exit_2_without_traceback(args: tuple[str, ...], message: str) -> None:
    r = run_node(*args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_bad_world_file_reports_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.world.xml"
    bad.write_text('<mvsim_world version="1.0">\n  <vehicle name="v">\n    <init_pose>0 0 0</init_pose>\n'
                   '  </vehicle>\n</mvsim_world>\n')
    r = run_node("--ros-args", "-p", f"world_file:={bad}")
    assert r.returncode == 2, r.stderr
    assert f"{bad}:2" in r.stderr and "dynamics" in r.stderr
    assert "Traceback" not in r.stderr


def test_strict_stops_at_the_first_blow_up_with_one_line() -> None:
    """data/commands.world.xml: vehicle 'wreck' blows up by itself at step 72 (without strict: reset and logged,
    test_node_command_inputs.py)."""
    r = run_node("--ros-args", "-p", f"world_file:={DATA / 'commands.world.xml'}", "-p", "headless:=true", "-p",
                 "strict:=true", "-p", "zmq_server:=false", "-p", "realtime_factor:=0.0", timeout=120.0)
    assert r.returncode == 2, r.stderr
    last = r.stderr.splitlines()[-1]
    assert last.startswith("mvsim_node: vehicle 'wreck': wheel 3 spin became NaN/inf at step 72 (t = 0.3600 s)")
    assert sum("wreck" in line for line in r.stderr.splitlines()) == 1
    assert "Traceback" not in r.stderr + r.stdout


def test_help_lists_every_parameter() -> None:
    r = run_node("--help")
    assert r.returncode == 0
    assert "--ros-args -p world_file:=PATH" in r.stdout
    for spec in PARAMS:
        assert spec.name in r.stdout


def test_options_convert_and_check() -> None:
    o = Options.from_values({"realtime_factor": 2, "publisher_history_len": 10.0, "lockstep": "true"})
    assert o.realtime_factor == 2.0 and isinstance(o.realtime_factor, float)
    assert o.publisher_history_len == 10 and o.lockstep is True
    assert Options().base_watchdog_timeout == 1.0 and Options().do_fake_localization is True
    assert Options().publisher_history_len == 50  # upstream's code default
    with pytest.raises(ConfigError, match="simul_rate"):
        Options.from_values({"simul_rate": 0.0})
    with pytest.raises(ConfigError, match="max_simul_catchup_time"):
        Options.from_values({"max_simul_catchup_time": -1.0})
    with pytest.raises(ConfigError, match="zmq_port"):
        Options.from_values({"zmq_port": 70000})
    with pytest.raises(ConfigError, match="wrong type"):
        Options.from_values({"world_file": 3})


def test_world_file_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_world_file("demo.world.xml") == REPO / "worlds" / "demo.world.xml"  # the package's worlds/
    with pytest.raises(ConfigError, match="no world file"):
        resolve_world_file("")

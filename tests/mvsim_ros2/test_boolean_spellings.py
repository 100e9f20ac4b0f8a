"""Booleans as people write them: true/false, True/False, 1/0 (and yes/no, on/off), in the node's parameters
(:func:`mvsim_ros2.params._convert`: ``ros2 launch`` YAML-parses its arguments, so ``headless:=0`` arrives as the
integer 0) and in the launch files' arguments (launch_world.launch.py's ``Flag``). The real ``ros2 launch`` runs in
test_ros2_launch_cli.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from mvsim_ros2.params import ConfigError, Options

REPO = Path(__file__).resolve().parents[2]
TRUE = [True, 1, "1", "true", "True", "TRUE", "yes", "Yes", "on", " true "]
FALSE = [False, 0, "0", "false", "False", "FALSE", "no", "NO", "off"]
NOT_BOOL = [2, -1, 0.5, 1.0, "", "maybe", "tru", "01", None]


@pytest.mark.parametrize("value", TRUE, ids=repr)
def test_true_spellings(value: Any) -> None:
    assert Options.from_values({"lockstep": value, "headless": value}).lockstep is True


@pytest.mark.parametrize("value", FALSE, ids=repr)
def test_false_spellings(value: Any) -> None:
    assert Options.from_values({"do_fake_localization": value}).do_fake_localization is False


@pytest.mark.parametrize("value", NOT_BOOL, ids=repr)
def test_other_values_are_refused_with_the_fix(value: Any) -> None:
    with pytest.raises(ConfigError) as e:
        Options.from_values({"lockstep": value})
    msg = str(e.value)
    assert msg.startswith(f"parameter lockstep={value!r} has the wrong type: expected bool")
    assert "-p lockstep:=true" in msg


def test_numbers_are_not_booleans_for_other_types() -> None:
    assert Options.from_values({"realtime_factor": 1, "zmq_port": 0}).realtime_factor == 1.0
    with pytest.raises(ConfigError, match=r"realtime_factor=True has the wrong type: expected float \(a number"):
        Options.from_values({"realtime_factor": True})
    with pytest.raises(ConfigError, match="world_frame_id=1 has the wrong type: expected str"):
        Options.from_values({"world_frame_id": 1})


def test_status_line_off_and_on_as_yaml_reads_them() -> None:
    """``-p status_line:=off`` reaches the node as the bool False (YAML 1.1): it means off; on means auto."""
    assert Options.from_values({"status_line": False}).status_line == "off"
    assert Options.from_values({"status_line": True}).status_line == "auto"
    assert Options.from_values({"status_line": "periodic"}).status_line == "periodic"


# ---------------------------------------------------------------------- launch_world.launch.py
@pytest.fixture(scope="module")
def launch_world() -> Any:
    pytest.importorskip("launch_ros", reason="the ROS 2 launch tools are not installed (make setup)")
    spec = importlib.util.spec_from_file_location("launch_world_launch", REPO / "launch" / "launch_world.launch.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(("raw", "want"), [(v, "true") for v in TRUE if isinstance(v, str)]
                         + [(v, "false") for v in FALSE if isinstance(v, str)])
def test_launch_flag_normalises_every_spelling(launch_world: Any, raw: str, want: str) -> None:
    import launch

    ctx = launch.LaunchContext()
    ctx.launch_configurations["use_rviz"] = raw
    assert launch_world.Flag("use_rviz").perform(ctx) == want


def test_launch_flags_are_checked_before_anything_starts(launch_world: Any) -> None:
    from launch.substitutions.substitution_failure import SubstitutionFailure

    import launch

    ctx = launch.LaunchContext()
    for name in launch_world.FLAGS:
        ctx.launch_configurations[name] = "0"
    assert launch_world.check_flags(ctx) == []
    ctx.launch_configurations["lockstep"] = "maybe"
    with pytest.raises(SubstitutionFailure, match="launch argument lockstep:='maybe' is not a boolean: write "
                                                  "lockstep:=true or lockstep:=false"):
        launch_world.check_flags(ctx)
    assert set(launch_world.FLAGS) == {name for name, *_ in launch_world.NODE_ARGUMENTS} - {"realtime_factor"} | {
        "use_rviz"}

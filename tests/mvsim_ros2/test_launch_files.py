"""launch/ and config/: parameter files name real parameters, and the launch files describe the node (when launch_ros
exists). The RViz configs are checked against running nodes in test_rviz_configs.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml
from ros_harness import REPO

from mvsim_ros2.node import PARAMS

UPSTREAM_LAUNCH_ARGS = {"world_file", "headless", "do_fake_localization", "publish_tf_odom2baselink",
                        "force_publish_vehicle_namespace", "publish_log_topics", "use_rviz", "rviz_config_file"}


@pytest.mark.parametrize("path", sorted((REPO / "config").glob("*.yaml")), ids=lambda p: p.name)
def test_config_files_set_known_parameters(path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    params = doc["/**/mvsim"]["ros__parameters"]
    specs = {s.name: s for s in PARAMS}
    for name, value in params.items():
        assert name in specs or name == "use_sim_time", f"{path.name}: unknown parameter {name}"
        if name in specs:
            want = type(specs[name].default)
            assert isinstance(value, want) or (want is float and isinstance(value, int)), \
                f"{path.name}: {name}={value!r} should be a {want.__name__}"


# ---------------------------------------------------------------------- launch files (need launch_ros)
def load_launch(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def launch_api() -> Any:
    pytest.importorskip("launch_ros", reason="launch_ros is not installable on this machine (no ROS 2 launch on PyPI)")
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        get_package_share_directory("mvsim_ros2")
    except PackageNotFoundError:
        pytest.skip("mvsim_ros2 is not installed in an ament prefix (colcon build it first)")
    import launch_ros

    import launch

    return launch, launch_ros


def test_launch_world_declares_upstream_arguments_and_nodes(launch_api: Any) -> None:
    launch, launch_ros = launch_api
    desc = load_launch(REPO / "launch" / "launch_world.launch.py").generate_launch_description()
    args = {a.name for a in desc.entities if isinstance(a, launch.actions.DeclareLaunchArgument)}
    assert UPSTREAM_LAUNCH_ARGS <= args
    nodes = [e for e in desc.entities if isinstance(e, launch_ros.actions.Node)]
    assert [n.node_executable for n in nodes].count("mvsim_node") == 1
    assert all(n.node_package in ("mvsim_ros2", "rviz2") for n in nodes)
    assert sum(n.node_executable == "rviz2" for n in nodes) == 2  # plain, or remapped to one vehicle's tf
    assert all(n.condition is not None for n in nodes if n.node_executable == "rviz2")


def test_demo_launch_includes_the_demo_world(launch_api: Any) -> None:
    launch, _ = launch_api
    desc = load_launch(REPO / "launch" / "demo.launch.py").generate_launch_description()
    args = {a.name: a for a in desc.entities if isinstance(a, launch.actions.DeclareLaunchArgument)}
    assert {"use_rviz", "world_file"} <= set(args)
    ctx = launch.LaunchContext()
    default = "".join(s.perform(ctx) for s in args["world_file"].default_value)
    assert default.endswith("demo.world.xml")
    assert any(isinstance(e, launch.actions.IncludeLaunchDescription) for e in desc.entities)

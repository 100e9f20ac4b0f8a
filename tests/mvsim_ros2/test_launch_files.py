"""launch/, config/ and rviz/: parameter files name real parameters, RViz displays subscribe to topics the node
really publishes (checked against running nodes), and the launch files describe the node (when launch_ros exists).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ros_harness import FIRST_MESSAGE_TIMEOUT, REPO, NodeProcess, Probe

from mvsim_ros2.node import PARAMS

DATA = Path(__file__).resolve().parent / "data"
RVIZ_WORLDS = {  # rviz config -> the world it is made for
    "demo.rviz": REPO / "worlds" / "demo.world.xml",
    "mvsim.rviz": DATA / "single.world.xml",  # launch_world's default: one vehicle with a 2D lidar "laser1"
}
UPSTREAM_LAUNCH_ARGS = {"world_file", "headless", "do_fake_localization", "publish_tf_odom2baselink",
                        "force_publish_vehicle_namespace", "publish_log_topics", "use_rviz", "rviz_config_file"}


def rviz_topics(path: Path) -> set[str]:
    """Topics the displays of an RViz config subscribe to (tools such as SetGoal publish, and are left out)."""
    doc = yaml.safe_load(path.read_text())
    out = set()
    for d in doc["Visualization Manager"]["Displays"]:
        topic = d.get("Topic")
        if isinstance(topic, dict) and topic.get("Value"):
            out.add(topic["Value"])
    return out


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


def test_rviz_configs_exist_for_every_world() -> None:
    assert {p.name for p in (REPO / "rviz").glob("*.rviz")} == set(RVIZ_WORLDS)


@pytest.fixture(scope="module")
def namespaced_nodes(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory
                     ) -> Iterator[dict[str, str]]:
    """One node per RViz world, each in its own namespace, loaded with config/mvsim_params.yaml; rviz -> ns."""
    tmp = tmp_path_factory.mktemp("rviz")
    procs, spaces = [], {}
    for i, (rviz, world) in enumerate(sorted(RVIZ_WORLDS.items())):
        ns = f"/rvizcheck{i}"
        spaces[rviz] = ns
        procs.append(NodeProcess(world, {"lockstep": True}, ros_domain, tmp / f"node{i}.log",
                                 extra_args=["--params-file", str(REPO / "config" / "mvsim_params.yaml"),
                                             "-r", f"__ns:={ns}"]))
    try:
        yield spaces
    finally:
        codes = [p.stop() for p in procs]
    assert codes == [0] * len(procs), [p.log()[-2000:] for p in procs]
    for p in procs:  # the parameters file applied (headless: true there; the node notes its absence otherwise)
        assert "running headless" not in p.log()


@pytest.mark.slow
@pytest.mark.parametrize("rviz", sorted(RVIZ_WORLDS))
def test_rviz_displays_use_published_topics(ros_context: Any, namespaced_nodes: dict[str, str], rviz: str) -> None:
    ns = namespaced_nodes[rviz]
    wanted = {ns + t for t in rviz_topics(REPO / "rviz" / rviz)}
    assert len(wanted) >= 5
    probe = Probe(ros_context, f"probe_{Path(rviz).stem}")
    try:
        def published() -> set[str]:
            return {name for name, _ in probe.node.get_topic_names_and_types()
                    if probe.node.get_publishers_info_by_topic(name)}

        got = probe.spin_until(lambda: wanted <= published() and published(), FIRST_MESSAGE_TIMEOUT,
                               f"the topics of {rviz} under {ns}")
        assert wanted <= got
    finally:
        probe.close()


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

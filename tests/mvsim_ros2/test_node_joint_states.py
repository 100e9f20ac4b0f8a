"""The node's robot_description, joint_states and wheel tf (lockstep, two vehicles): a late subscriber gets the
URDF, the joint states follow the wheels, and an independent forward kinematics (yourdfpy) of the received URDF at
the received joint states gives exactly the transforms the node publishes.

World ``data/joints.world.xml``: r1 (differential, wheel radius 0.1 m, laser1) at (0, 0), car1 (Ackermann) at (0, 8).
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ros_cli_harness import Session, cli_env, executable, wait_for
from ros_harness import (
    FIRST_MESSAGE_TIMEOUT,
    NodeProcess,
    Odometry,
    Probe,
    TFMessage,
    Trigger,
    Twist,
    latched,
    message_at,
    node_fixture,
    qos,
    secs,
    transform_matrix,
)
from sensor_msgs.msg import JointState
from std_msgs.msg import String

yourdfpy = pytest.importorskip("yourdfpy")
urdf = pytest.importorskip("urdf_parser_py.urdf")

DATA = Path(__file__).resolve().parent / "data"
STEP = 0.1  # s: lockstep_step
VEHICLES = ("r1", "car1")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = {"lockstep": True, "lockstep_step": STEP, "do_fake_localization": False}
    yield from node_fixture(DATA / "joints.world.xml", params, tmp_path_factory.mktemp("joints"), ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_joints")
    p.watch = node
    for v in VEHICLES:
        p.subscribe(JointState, f"/{v}/joint_states", qos(depth=500))
        p.subscribe(TFMessage, f"/{v}/tf", qos(depth=500))
        p.subscribe(Odometry, f"/{v}/base_pose_ground_truth", qos(depth=500))
    yield p
    p.close()


def step(probe: Probe, n: int, cmds: dict[str, tuple[float, float]]) -> float:
    """``n`` lockstep steps, publishing cmd_vel (v, w) to each vehicle before each; the final simulated time."""
    pubs = {v: probe.publisher(Twist, f"/{v}/cmd_vel") for v in cmds}
    for pub in pubs.values():
        probe.wait_matched(pub)
    t = math.nan
    for _ in range(n):
        for v, (lin, ang) in cmds.items():
            msg = Twist()
            msg.linear.x, msg.angular.z = lin, ang
            pubs[v].publish(msg)
        ans = probe.call(Trigger, "/mvsim/step", Trigger.Request())
        assert ans.success, ans.message
        t = float(ans.message)
    return t


@pytest.fixture(scope="module")
def driven(probe: Probe) -> float:
    """About 1 m straight for r1 (0.5 m/s for 2 s), car1 turning left; the simulated time after."""
    return step(probe, 20, {"r1": (0.5, 0.0), "car1": (1.0, 0.3)})


def test_a_late_subscriber_gets_the_robot_description(probe: Probe) -> None:
    msg = latched(probe, String, "/r1/robot_description")
    robot = urdf.URDF.from_xml_string(msg.data)
    assert robot.get_root() == "base_link"
    assert [j.name for j in robot.joints] == ["base_footprint_joint", "chassis_joint", "l_wheel_joint",
                                              "r_wheel_joint", "laser1_joint"]
    assert robot.link_map["l_wheel"].visual.geometry.radius == 0.1
    car = urdf.URDF.from_xml_string(latched(probe, String, "/car1/robot_description").data)
    assert {"fl_wheel_steer_joint", "fr_wheel_steer_joint", "fl_wheel_joint"} <= set(car.joint_map)


def test_joint_states_follow_the_wheels(probe: Probe, driven: float) -> None:
    js = message_at(probe, "/r1/joint_states", driven)
    assert secs(js.header.stamp) == pytest.approx(driven, abs=1e-9)  # sim time
    assert list(js.name) == ["l_wheel_joint", "r_wheel_joint"]
    x = message_at(probe, "/r1/base_pose_ground_truth", driven).pose.pose.position.x
    assert x == pytest.approx(1.0, abs=0.15)
    for angle in js.position:
        assert angle == pytest.approx(x / 0.1, rel=0.05)
    assert js.velocity[0] == pytest.approx(0.5 / 0.1, rel=0.05)
    car = message_at(probe, "/car1/joint_states", driven)
    pos = dict(zip(car.name, car.position, strict=True))
    assert pos["fl_wheel_steer_joint"] > pos["fr_wheel_steer_joint"] > 0.05  # turning left


@pytest.mark.parametrize("vehicle", VEHICLES)
def test_forward_kinematics_of_the_description_is_the_published_tf(probe: Probe, driven: float,
                                                                   vehicle: str) -> None:
    description = latched(probe, String, f"/{vehicle}/robot_description").data
    static = latched(probe, TFMessage, f"/{vehicle}/tf_static")
    js = message_at(probe, f"/{vehicle}/joint_states", driven)
    wheels = message_at(probe, f"/{vehicle}/tf", driven, lambda m: any(t.child_frame_id.endswith("_wheel")
                                                                for t in m.transforms))
    robot = yourdfpy.URDF.load(io.StringIO(description), build_scene_graph=True, load_meshes=False)
    robot.update_cfg(dict(zip(js.name, js.position, strict=True)))
    parents: dict[str, str] = {}
    for tf in [*static.transforms, *wheels.transforms]:
        assert tf.child_frame_id not in parents, f"{tf.child_frame_id} has two parents"
        parents[tf.child_frame_id] = tf.header.frame_id
        fk = robot.get_transform(tf.child_frame_id, tf.header.frame_id)
        np.testing.assert_allclose(transform_matrix(tf), fk, atol=1e-6, err_msg=tf.child_frame_id)
    movable = {j.child for j in robot.robot.joints if j.type != "fixed"}
    assert movable <= {tf.child_frame_id for tf in wheels.transforms}
    assert "base_footprint" in parents and "chassis" in parents
    if vehicle == "r1":
        assert parents["laser1"] == "base_link"
    else:
        assert parents["fl_wheel"] == "fl_wheel_steer" and parents["fl_wheel_steer"] == "base_link"


def test_ros2_topic_echo_prints_the_urdf(probe: Probe, node: NodeProcess, ros_domain: int, tmp_path: Path) -> None:
    """The real CLI (its own process, a late subscriber; ``--full-length``: it shortens long strings otherwise;
    transient local asked for: it may subscribe before it discovers the publisher, and would then pick volatile)."""
    env = cli_env(ros_domain, None, tmp_path)
    echo = Session([executable("ros2"), "topic", "echo", "--once", "--no-daemon", "--full-length",
                    "--qos-durability", "transient_local", "--qos-reliability", "reliable",
                    "/r1/robot_description", "std_msgs/msg/String"], env, tmp_path / "echo.log")
    try:
        wait_for(lambda: not echo.alive(), "`ros2 topic echo --once /r1/robot_description`", FIRST_MESSAGE_TIMEOUT,
                 node)
        assert echo.wait(5.0, "its message") == 0, echo.log()
    finally:
        if echo.alive():
            echo.kill()
    out = echo.log()
    assert out.startswith('data: "<?xml version=\\"1.0\\"?>\\n<robot name=\\"r1\\">\\n')
    assert 'joint name=\\"l_wheel_joint\\" type=\\"continuous\\"' in out and out.count("</robot>") == 1

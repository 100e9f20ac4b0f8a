"""The five shared URDF robots (../shared/robots) end to end under the node, in lockstep: each vehicle built from its
user's URDF (``<vehicle:class urdf=...>``) publishes that URDF as robot_description, drives from ros2_control-style
joint commands under the URDF's joint names, reports joint_states under those names, and publishes a tf tree that an
independent forward kinematics (yourdfpy, standing in for robot_state_publisher) of the received description at the
received joint states reproduces.

World (written per module): one vehicle per robot, named as the robot, 5 m apart along y; the TurtleBot3 burger also
carries a 2D laser named ``base_scan``, as its URDF link (it takes that link's pose). Phase 1 (``straight``): 2 s of
equal wheel rates for every robot, the carlikebot's steering at 0. Phase 2 (``turning``): 2 s more with the diffbot's
wheels at different rates and the carlikebot steered by 0.3 rad; the rest keep phase 1's commands.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ros_harness import (
    NodeProcess,
    Odometry,
    Probe,
    TFMessage,
    Trigger,
    latched,
    message_at,
    node_fixture,
    qos,
    secs,
    transform_matrix,
)
from sensor_msgs.msg import JointState, LaserScan
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from mvsim_core.io.urdf import read_urdf

yourdfpy = pytest.importorskip("yourdfpy")
urdf = pytest.importorskip("urdf_parser_py.urdf")

ROBOTS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "robots"
STEP = 0.1  # s: lockstep_step
PHASE = 20  # steps per phase (2 s)
STEER = 0.3  # rad: the carlikebot's steering in phase 2
CARLIKE_WHEELBASE = 0.325  # m

# robot -> (wheel radius m, its wheel joints by velocity in phase 1 (rad/s); the URDF's root link)
ROBOTS: dict[str, tuple[float, dict[str, float], str]] = {
    "turtlebot3_burger": (0.033, {"wheel_left_joint": 10.0, "wheel_right_joint": 10.0}, "base_footprint"),
    "turtlebot3_waffle": (0.033, {"wheel_left_joint": 10.0, "wheel_right_joint": 10.0}, "base_footprint"),
    "husky": (0.1651, dict.fromkeys(["front_left_wheel_joint", "front_right_wheel_joint", "rear_left_wheel_joint",
                                     "rear_right_wheel_joint"], 3.0), "base_link"),
    "diffbot": (0.015, {"left_wheel_joint": 20.0, "right_wheel_joint": 20.0}, "base_link"),
    "carlikebot": (0.05, {"virtual_rear_wheel_joint": 8.0}, "base_link"),
}
# phase 2: diffbot's left_wheel_joint sits at y = -0.05 (the vehicle's right side): faster there turns it left
DIFFBOT_TURN = {"left_wheel_joint": 30.0, "right_wheel_joint": 10.0}
DIFFBOT_TRACK = 0.1  # m

pytestmark = pytest.mark.slow


def urdf_file(robot: str) -> Path:
    return ROBOTS_DIR / robot / f"{robot}.urdf"


def world_text() -> str:
    classes = "".join(f'<vehicle:class name="{r}_class" urdf="{urdf_file(r)}"/>' for r in ROBOTS)
    laser = '<sensor class="laser" name="base_scan"><nrays>31</nrays><sensor_period>0.1</sensor_period></sensor>'
    vehicles = "".join(f'<vehicle name="{r}" class="{r}_class"><init_pose>0 {5 * i} 0</init_pose>'
                       f'{laser if r == "turtlebot3_burger" else ""}</vehicle>' for i, r in enumerate(ROBOTS))
    return f'<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>{classes}{vehicles}</mvsim_world>'


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    if not ROBOTS_DIR.is_dir():
        pytest.skip(f"no shared robots at {ROBOTS_DIR}")
    tmp = tmp_path_factory.mktemp("urdf_robots")
    world = tmp / "robots.world.xml"
    world.write_text(world_text())
    params = {"lockstep": True, "lockstep_step": STEP, "do_fake_localization": False, "base_watchdog_timeout": 0.0}
    yield from node_fixture(world, params, tmp, ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_urdf_robots")
    p.watch = node
    for r in ROBOTS:
        p.subscribe(JointState, f"/{r}/joint_states", qos(depth=500))
        p.subscribe(TFMessage, f"/{r}/tf", qos(depth=1000))
        p.subscribe(Odometry, f"/{r}/base_pose_ground_truth", qos(depth=500))
    p.subscribe(LaserScan, "/turtlebot3_burger/base_scan", qos(depth=100))
    yield p
    p.close()


def joint_command(velocities: dict[str, float], positions: dict[str, float] | None = None) -> JointState:
    msg = JointState()
    msg.name = list(velocities) + list(positions or {})
    msg.velocity = list(velocities.values()) + [0.0] * len(positions or {})
    msg.position = [0.0] * len(velocities) + list((positions or {}).values())
    return msg


def step(probe: Probe, n: int, cmds: dict[str, JointState]) -> float:
    """``n`` lockstep steps, publishing each vehicle's joint command before each; the final simulated time."""
    pubs = {r: probe.publisher(JointState, f"/{r}/joint_commands") for r in cmds}
    for pub in pubs.values():
        probe.wait_matched(pub)
    t = math.nan
    for _ in range(n):
        for r, msg in cmds.items():
            pubs[r].publish(msg)
        ans = probe.call(Trigger, "/mvsim/step", Trigger.Request())
        assert ans.success, ans.message
        t = float(ans.message)
    return t


def phase1() -> dict[str, JointState]:
    cmds = {r: joint_command(v) for r, (_, v, _) in ROBOTS.items()}
    cmds["carlikebot"] = joint_command(ROBOTS["carlikebot"][1], {"virtual_front_wheel_joint": 0.0})
    return cmds


@pytest.fixture(scope="module")
def straight(probe: Probe) -> float:
    return step(probe, PHASE, phase1())


@pytest.fixture(scope="module")
def turning(probe: Probe, straight: float) -> float:
    cmds = phase1()
    cmds["diffbot"] = joint_command(DIFFBOT_TURN)
    cmds["carlikebot"] = joint_command(ROBOTS["carlikebot"][1], {"virtual_front_wheel_joint": STEER})
    return step(probe, PHASE, cmds)


def tf_at(probe: Probe, robot: str, t: float) -> list[Any]:
    """Every transform on ``/<robot>/tf`` stamped ``t`` (odom -> root, then the movable joints)."""
    message_at(probe, f"/{robot}/tf", t)  # waits for the first
    probe.spin_for(0.2)  # the joints' message goes right after odom's, in the same publish cycle
    return [tf for m in probe.inbox[f"/{robot}/tf"] for tf in m.transforms if abs(secs(tf.header.stamp) - t) < 1e-6]


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_a_late_subscriber_gets_the_users_urdf(probe: Probe, robot: str) -> None:
    text = latched(probe, String, f"/{robot}/robot_description").data
    assert text == read_urdf(urdf_file(robot)).text
    parsed = urdf.URDF.from_xml_string(text)
    assert parsed.get_root() == ROBOTS[robot][2]
    assert set(ROBOTS[robot][1]) <= {j.name for j in parsed.joints if j.type in ("continuous", "revolute")}


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_wheel_rates_drive_at_rate_times_radius(probe: Probe, straight: float, robot: str) -> None:
    radius, rates, _ = ROBOTS[robot]
    tw = message_at(probe, f"/{robot}/base_pose_ground_truth", straight).twist.twist
    assert tw.linear.x == pytest.approx(next(iter(rates.values())) * radius, rel=0.05)
    assert abs(tw.angular.z) < 0.01


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_joint_states_are_distance_over_radius(probe: Probe, straight: float, robot: str) -> None:
    radius, rates, _ = ROBOTS[robot]
    start = probe.inbox[f"/{robot}/base_pose_ground_truth"][0].pose.pose.position.x
    x = message_at(probe, f"/{robot}/base_pose_ground_truth", straight).pose.pose.position.x
    js = message_at(probe, f"/{robot}/joint_states", straight)
    pos = dict(zip(js.name, js.position, strict=True))
    assert x - start == pytest.approx(0.8 if robot == "diffbot" else 1.0, abs=0.5)  # about 1 m (diffbot 0.6)
    for name in rates:
        assert pos[name] == pytest.approx((x - start) / radius, rel=0.05), name


def test_diffbot_turns_left_when_its_negative_y_joint_is_faster(probe: Probe, turning: float) -> None:
    tw = message_at(probe, "/diffbot/base_pose_ground_truth", turning).twist.twist
    r = ROBOTS["diffbot"][0]
    s_right, s_left = DIFFBOT_TURN["left_wheel_joint"] * r, DIFFBOT_TURN["right_wheel_joint"] * r
    assert tw.angular.z == pytest.approx((s_right - s_left) / DIFFBOT_TRACK, rel=0.05)  # 3.0 rad/s
    assert tw.linear.x == pytest.approx((s_right + s_left) / 2, rel=0.05)


def test_carlikebot_turns_at_v_tan_steer_over_wheelbase(probe: Probe, turning: float) -> None:
    tw = message_at(probe, "/carlikebot/base_pose_ground_truth", turning).twist.twist
    v = 8.0 * ROBOTS["carlikebot"][0]
    assert tw.linear.x == pytest.approx(v, rel=0.05)
    assert tw.angular.z == pytest.approx(v * math.tan(STEER) / CARLIKE_WHEELBASE, rel=0.05)
    js = message_at(probe, "/carlikebot/joint_states", turning)
    pos = dict(zip(js.name, js.position, strict=True))
    robot = urdf.URDF.from_xml_string(urdf_file("carlikebot").read_text())
    assert pos["virtual_front_wheel_joint"] == pytest.approx(STEER, abs=1e-9)
    mimics = [j for j in robot.joints if j.mimic is not None]
    assert len(mimics) == 4
    for j in mimics:
        expected = (j.mimic.multiplier or 1.0) * pos[j.mimic.joint] + (j.mimic.offset or 0.0)
        assert pos[j.name] == pytest.approx(expected, abs=1e-9), j.name


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_forward_kinematics_of_the_description_is_the_published_tf(probe: Probe, turning: float,
                                                                   robot: str) -> None:
    description = latched(probe, String, f"/{robot}/robot_description").data
    static = latched(probe, TFMessage, f"/{robot}/tf_static")
    js = message_at(probe, f"/{robot}/joint_states", turning)
    model = yourdfpy.URDF.load(io.StringIO(description), build_scene_graph=True, load_meshes=False)
    model.update_cfg(dict(zip(js.name, js.position, strict=True)))
    links = {link.name for link in model.robot.links}
    root = ROBOTS[robot][2]
    parents: dict[str, str] = {}
    height = math.nan
    for tf in [*static.transforms, *tf_at(probe, robot, turning)]:
        child, parent = tf.child_frame_id, tf.header.frame_id
        assert child not in parents, f"{child} has two parents ({parents.get(child)}, {parent})"
        parents[child] = parent
        if parent == "odom":
            assert child == root
            height = tf.transform.translation.z
        elif child in links and parent in links:
            fk = model.get_transform(child, parent)
            np.testing.assert_allclose(transform_matrix(tf), fk, atol=1e-6, err_msg=f"{parent} -> {child}")
    expected_height = {"husky": 0.13228, "diffbot": 0.04}.get(robot, 0.0)
    assert height == pytest.approx(expected_height, abs=1e-6)
    for link in links:  # every link chained up to the root, and the root to odom
        chain, frame = [link], link
        while frame != "odom":
            assert frame in parents, f"{frame} (on the way up from {link}: {chain}) has no parent on tf"
            frame = parents[frame]
            chain.append(frame)
            assert len(chain) < 50, chain
        assert root in chain


def test_the_laser_named_as_a_urdf_link_scans_in_that_link(probe: Probe, straight: float) -> None:
    scan = probe.next_message(probe.inbox["/turtlebot3_burger/base_scan"], what="a LaserScan of base_scan", start=0)
    assert scan.header.frame_id == "base_scan"
    static = latched(probe, TFMessage, "/turtlebot3_burger/tf_static")
    mounts = [tf for tf in static.transforms if tf.child_frame_id == "base_scan"]
    assert len(mounts) == 1 and mounts[0].header.frame_id == "base_link"
    model = yourdfpy.URDF.load(urdf_file("turtlebot3_burger"), build_scene_graph=True, load_meshes=False)
    np.testing.assert_allclose(transform_matrix(mounts[0]), model.get_transform("base_scan", "base_link"), atol=1e-9)
    t = mounts[0].transform.translation
    assert (t.x, t.y, t.z) == pytest.approx((-0.032, 0.0, 0.172))


@pytest.mark.parametrize("robot", ["turtlebot3_burger", "diffbot"])
def test_chassis_markers_sit_on_the_ground_frame(probe: Probe, robot: str) -> None:
    """base_footprint, not base_link: the burger's base_link is 0.010 m up, the diffbot's (its root) 0.04 m."""
    markers = latched(probe, MarkerArray, f"/{robot}/chassis_markers").markers
    assert {m.header.frame_id for m in markers} == {"base_footprint"}
    assert len(markers) == 3  # the chassis and 2 wheels

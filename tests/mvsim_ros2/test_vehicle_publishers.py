"""The vehicle's topics come from its declared outputs: one encoder per kind, topics and frames from the rows."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy")

import mvsim_core as mv  # noqa: E402
from mvsim_core.outputs import Output, OutputKind  # noqa: E402
from mvsim_ros2 import conversions as cv  # noqa: E402
from mvsim_ros2 import vehicle_publishers as vp  # noqa: E402
from mvsim_ros2.params import Options  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


class FakePublisher:
    def __init__(self, msg_type: Any, topic: str) -> None:
        self.msg_type, self.topic = msg_type, topic
        self.sent: list[Any] = []

    def get_subscription_count(self) -> int:
        return 1

    def publish(self, msg: Any) -> None:
        self.sent.append(msg)


class Made:
    def __init__(self) -> None:
        self.pubs: dict[str, FakePublisher] = {}

    def __call__(self, msg_type: Any, topic: str, qos: Any) -> FakePublisher:
        p = self.pubs[topic] = FakePublisher(msg_type, topic)
        return p


def _link(veh: Any, prefix: str = "bot1/") -> tuple[vp.VehicleLink, Made]:
    made = Made()
    return vp.make_vehicle_link(made, veh, prefix, Options()), made


def test_topics_and_types_follow_the_declared_outputs():
    w = mv.load_world(REPO / "worlds/demo.world.xml")
    link, made = _link(w.vehicles["bot1"])
    assert [(p.topic, p.msg_type.__name__) for p in made.pubs.values()][:3] == [
        ("bot1/odom", "Odometry"), ("bot1/base_pose_ground_truth", "Odometry"), ("bot1/collision", "Bool")]
    assert [ol.output.name for ol in link.outputs] == ["odom", "base_pose_ground_truth", "collision",
                                                       "joint_states", "robot_description"]
    assert link.estimate is link.outputs[0] and link.truth is link.outputs[1]
    frames = [(ol.msg.header.frame_id, ol.msg.child_frame_id) for ol in link.outputs[:2]]
    assert frames == [("odom", "base_link"), ("map", "base_link")]


def test_a_renamed_output_renames_its_topic_and_frames():
    """An adapter knows kinds, not names: a vehicle that declares its odometry as ``wheel_odom`` in a frame
    ``chassis`` and no ground truth gets exactly that."""
    w = mv.load_world(REPO / "worlds/demo.world.xml")
    veh = w.vehicles["bot1"]
    base = veh.outputs()
    veh.outputs = lambda: (Output(OutputKind.ODOMETRY, "wheel_odom", "chassis", 0.0, options={"parent": "odom"},
                                  observe=base[0].observe), base[2])
    link, made = _link(veh)
    assert list(made.pubs)[:2] == ["bot1/wheel_odom", "bot1/collision"]
    assert "bot1/base_pose_ground_truth" not in made.pubs
    assert (link.outputs[0].msg.header.frame_id, link.outputs[0].msg.child_frame_id) == ("odom", "chassis")
    assert link.truth is None


def test_odometry_covariance_grows_with_the_path_and_collision_latches():
    w = mv.load_world(REPO / "worlds/demo.world.xml")
    veh = w.vehicles["bot1"]
    veh.set_twist(0.5, 0.0, 0.3)
    link, made = _link(veh)
    o = Options()
    prev, travelled, turned = (0.0, 0.0, 0.0), 0.0, 0.0
    for _ in range(50):  # 50 periods of 20 ms
        w.run(0.02)
        vp.publish_periodic(link, o, w.time)
        ox, oy, oyaw = veh.odometry
        travelled += math.hypot(ox - prev[0], oy - prev[1])
        turned += abs(math.remainder(oyaw - prev[2], 2.0 * math.pi))
        prev = (ox, oy, oyaw)
    odom = made.pubs["bot1/odom"].sent
    assert len(odom) == 50 and travelled > 0.4
    s = link.outputs[0].sample
    pose_var, twist_var = cv.odometry_variances(veh.odometry_std, travelled, turned, s.twist)
    last = odom[-1]
    assert [last.pose.covariance[i * 7] for i in range(6)] == list(pose_var)
    assert [last.twist.covariance[i * 7] for i in range(6)] == list(twist_var)
    gt = made.pubs["bot1/base_pose_ground_truth"].sent[-1]
    assert [gt.pose.covariance[i * 7] for i in range(6)] == list(cv.EXACT_VARIANCES)
    assert (gt.pose.pose.position.x, gt.pose.pose.position.y) == veh.pose[:2]
    bump = link.outputs[2]
    bump.latched = False
    veh.collision = True
    link.note_step()
    veh.collision = False
    seen = []
    for _ in range(2):  # the message is refilled in place: read it as it goes out
        vp.publish_periodic(link, o, w.time)
        seen.append(made.pubs["bot1/collision"].sent[-1].data)
    assert seen == [True, False]


def test_a_urdf_vehicle_static_frames_come_from_its_urdf():
    """A vehicle from a URDF: its fixed joints on tf_static, no sensor frame the URDF already has, our own
    base_footprint only when the URDF has none (down to the ground: z = −height), odom → its root link."""
    from dataclasses import replace

    from mvsim_core.objects.vehicles.description import Joint

    w = mv.load_world(REPO / "worlds/demo.world.xml")
    veh = w.vehicles["bot1"]
    sensors = list(veh.sensors)
    joints = (Joint("body_joint", "fixed", "body", "top", (0.1, 0.0, 0.2, 0.0, 0.0, 0.0)),
              Joint("wheel_joint", "continuous", "body", "wheel", (0.0, 0.3, -0.05, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
              Joint(f"{sensors[0]}_joint", "fixed", "top", sensors[0]))
    veh.description = replace(veh.robot_description(), root="body", height=0.15, joints=joints,
                              links=("body", "top", "wheel", sensors[0]), source="bot.urdf")
    link, made = _link(veh, "")
    assert link.estimate is not None and link.estimate.msg.child_frame_id == "body"
    pairs = [(tf.header.frame_id, tf.child_frame_id, round(tf.transform.translation.z, 9))
             for tf in vp.static_transforms(link, 0.0)]
    own = [p for p in pairs if p[1] in sensors[1:]]
    assert pairs[:3] == [("body", "base_footprint", -0.15), ("body", "top", 0.2), ("top", sensors[0], 0.0)]
    assert all(p[0] == "body" for p in own) and len(own) == len(sensors) - 1
    assert [p[1] for p in pairs].count(sensors[0]) == 1
    assert link.joint_frames is not None
    assert [(t.header.frame_id, t.child_frame_id) for t in link.joint_frames.msg.transforms] == [("body", "wheel")]

"""``publish_wheel_tf:=false`` and ``publish_sensor_tf:=false``: the wheels leave tf, the sensor frames leave
tf_static (``base_link`` → ``base_footprint`` stays), joint_states and robot_description still go out.

World ``data/joints.world.xml`` (r1 with laser1, car1), lockstep.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import NodeProcess, Probe, TFMessage, Trigger, node_fixture, qos, secs
from sensor_msgs.msg import JointState
from std_msgs.msg import String

DATA = Path(__file__).resolve().parent / "data"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = {"lockstep": True, "lockstep_step": 0.1, "publish_wheel_tf": False, "publish_sensor_tf": False}
    yield from node_fixture(DATA / "joints.world.xml", params, tmp_path_factory.mktemp("tf_off"), ros_domain)


def test_switched_off_frames_are_gone(ros_context: Any, node: NodeProcess) -> None:
    p = Probe(ros_context, "probe_tf_off")
    p.watch = node
    try:
        tf = p.subscribe(TFMessage, "/car1/tf", qos(depth=100))
        js = p.subscribe(JointState, "/car1/joint_states", qos(depth=100))
        t = 0.0
        for _ in range(3):
            ans = p.call(Trigger, "/mvsim/step", Trigger.Request())
            assert ans.success, ans.message
            t = float(ans.message)
        p.next_message(js, lambda m: abs(secs(m.header.stamp) - t) < 1e-6, what="car1 joint_states", start=0)
        p.next_message(tf, lambda m: abs(secs(m.transforms[0].header.stamp) - t) < 1e-6, what="car1 tf", start=0)
        assert {(x.header.frame_id, x.child_frame_id) for m in tf for x in m.transforms} == {
            ("odom", "base_link"), ("map", "odom")}
        for v in ("r1", "car1"):
            box = p.subscribe(TFMessage, f"/{v}/tf_static", qos(transient_local=True, depth=1))
            static = p.next_message(box, what=f"/{v}/tf_static", start=0)
            assert [(x.header.frame_id, x.child_frame_id) for x in static.transforms] == [
                ("base_link", "base_footprint")]
        desc = p.subscribe(String, "/r1/robot_description", qos(transient_local=True, depth=1))
        assert "laser1_joint" in p.next_message(desc, what="/r1/robot_description", start=0).data
    finally:
        p.close()

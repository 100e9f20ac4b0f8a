"""The node samples a sensor only while one of its topics has a subscriber (issue 38): with only ``/odom`` read, no
camera is rendered, no lidar cast; a new subscriber gets the sensor's next sample, at its own period; when it leaves,
the sensor stops again. The node runs in this process (to look at its sensors) and talks to the probe over DDS.

World ``data/cameras.world.xml``: cam1, rgbd1 and lidar1 on r1, each at 10 Hz.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import Image, Odometry, Probe, RosParameter, qos_profile_sensor_data

from mvsim_ros2.node import MvsimNode

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def setup(ros_context: Any) -> Iterator[tuple[MvsimNode, Probe]]:
    values = {"world_file": str(DATA / "cameras.world.xml"), "zmq_server": False, "lockstep": True,
              "headless": True}
    node = MvsimNode(context=ros_context, parameter_overrides=[RosParameter(k, value=v) for k, v in values.items()])
    probe = Probe(ros_context, "probe_sensor_demand")
    probe.executor.add_node(node)  # the node's matched events are served as the probe spins
    yield node, probe
    probe.executor.remove_node(node)
    node.close()
    probe.close()


def advance(node: MvsimNode, probe: Probe, seconds: float) -> None:
    """Step the node ``seconds`` of simulated time (it publishes as it goes), serving callbacks every 10 ms."""
    end = node.world.time + seconds
    while node.world.time < end - 1e-9:
        node.runner.advance_to(min(end, node.world.time + 0.01))
        probe.executor.spin_once(timeout_sec=0.0)


def test_only_what_is_subscribed_is_sampled(setup: tuple[MvsimNode, Probe]) -> None:
    node, probe = setup
    assert node.world.sensors_on_demand
    sensors = node.world.vehicles["r1"].sensors
    odom = probe.subscribe(Odometry, "/odom")
    odom_pub = next(p for p in node.publishers if p.topic_name == "/odom")
    probe.spin_until(lambda: odom_pub.get_subscription_count() > 0, what="the /odom subscriber matched")
    advance(node, probe, 1.0)
    probe.next_message(odom, what="odometry")
    assert {n: s.last for n, s in sensors.items()} == {"cam1": None, "rgbd1": None, "lidar1": None}
    assert node.world.sensor_scheduler.runs == 0

    images: list[Any] = []
    sub = probe.node.create_subscription(Image, "/cam1/image_raw", images.append, qos_profile_sensor_data)
    cam = sensors["cam1"]
    probe.spin_until(lambda: "ros" in cam.readers, what="cam1 wanted once its image has a subscriber")
    t_subscribed = node.world.time
    advance(node, probe, 0.2)  # two periods
    msg = probe.next_message(images, what="an image within two periods")
    assert cam.last is not None and t_subscribed < cam.last.stamp <= t_subscribed + 0.2 + 1e-9
    assert msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9 == pytest.approx(cam.last.stamp, abs=1e-6)
    assert (msg.width, msg.height) == (80, 60)
    assert sensors["rgbd1"].last is None and sensors["lidar1"].last is None  # still nobody reads them

    probe.node.destroy_subscription(sub)
    probe.spin_until(lambda: "ros" not in cam.readers, what="cam1 released when its subscriber left")
    last = cam.last.stamp
    advance(node, probe, 0.5)
    assert cam.last.stamp == last

"""Issue 33's acceptance, the ROS part: a sensor class that only the tests know (``tests/mvsim_core/sensors/
sonar_ring.py``, a ring of ultrasonic ranges declaring a scan output) is published by the node as a
``sensor_msgs/LaserScan`` on ``<name>``, without the node naming the class. The node runs in this process (where the
class is registered, in lockstep) and talks to a probe over DDS.

The sonar is 2.0 m from a wall; its ranges are ``sonar_ring.EXPECTED`` from the geometry, +inf where a beam missed
(REP 117). ZMQ, MCAP and Foxglove: ``tests/mvsim_core/sensors/test_throwaway_sensor.py``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ros_harness import LaserScan, Probe, RosParameter, qos_profile_sensor_data

from mvsim_ros2.node import MvsimNode

_SENSOR_TESTS = str(Path(__file__).resolve().parents[1] / "mvsim_core" / "sensors")
if _SENSOR_TESTS not in sys.path:  # where the throwaway class lives (shared with the core adapters' test)
    sys.path.append(_SENSOR_TESTS)
import sonar_ring as sr  # noqa: E402


@pytest.fixture
def setup(ros_context: Any, tmp_path: Path) -> Iterator[tuple[MvsimNode, Probe]]:
    """The node on the sonar world (loaded while the class is registered), in lockstep, and a probe."""
    values = {"world_file": str(sr.write_world(tmp_path)), "zmq_server": False, "lockstep": True, "headless": True}
    with sr.registered():
        node = MvsimNode(context=ros_context,
                         parameter_overrides=[RosParameter(k, value=v) for k, v in values.items()])
    probe = Probe(ros_context, "probe_throwaway_sensor")
    probe.executor.add_node(node)  # the node's matched events are served as the probe spins
    yield node, probe
    probe.executor.remove_node(node)
    node.close()
    probe.close()


def test_the_node_publishes_the_sonar_as_a_laser_scan(setup: tuple[MvsimNode, Probe]) -> None:
    node, probe = setup
    assert type(node.world.vehicles["r1"].sensors[sr.NAME]) is sr.SonarRing
    assert "/sonar1" in [p.topic_name for p in node.publishers]  # a lone vehicle: no prefix
    scans: list[Any] = []
    probe.node.create_subscription(LaserScan, "/sonar1", scans.append, qos_profile_sensor_data)
    pub = next(p for p in node.publishers if p.topic_name == "/sonar1")
    probe.spin_until(lambda: pub.get_subscription_count() > 0, what="the /sonar1 subscriber matched")

    def advance() -> bool:
        node.runner.advance_to(node.world.time + 0.01)
        probe.executor.spin_once(timeout_sec=0.0)
        return bool(scans)

    probe.spin_until(advance, what="a scan on /sonar1")
    m = scans[0]
    assert m.header.frame_id == "sonar1"
    t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
    assert t > 0 and t / 0.1 == pytest.approx(round(t / 0.1), abs=1e-6)  # a sample time of the 10 Hz sonar
    np.testing.assert_allclose(np.asarray(m.ranges), np.where(sr.EXPECTED_VALID, sr.EXPECTED, np.inf), atol=1e-5)
    assert (m.angle_min, m.angle_max, m.angle_increment) == pytest.approx((-math.pi, 0.75 * math.pi, 0.25 * math.pi))
    assert (m.range_min, m.range_max, m.scan_time) == pytest.approx((sr.MIN_RANGE, sr.MAX_RANGE, sr.PERIOD))

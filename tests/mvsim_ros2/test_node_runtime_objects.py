"""Run-time objects over ROS, across processes (issue 16, Deliver 5): the node as a subprocess, a probe node publishing
MarkerArrays on ``runtime_objects`` / ``runtime_overlays`` over DDS. 20 cubes published while the robot drives stop it
and appear in its scan; DELETEALL removes them and the scan clears; an overlay neither stops it nor shows in the scan;
bad markers are warned about (once) and skipped while the rest goes on; ``objects_ground_truth`` carries every
object, the walking actor and the run-time blocks included.

World ``data/runtime.world.xml``: r1 (front at x + 0.6 m, lidar 0.2 m ahead, ray 90 along +x) at the origin facing
+x; a wall whose face is at x = 8 m; bob walking between (0, 5) and (4, 5) at 1 m/s. The node runs at 3x real time,
with the command watchdog off (one cmd_vel keeps r1 going) and objects_ground_truth at 10 Hz. One node serves the
module; the tests run in file order (the robot goes on from where the previous test left it).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import (
    FIRST_MESSAGE_TIMEOUT,
    LaserScan,
    MarkerArray,
    NodeProcess,
    Odometry,
    Probe,
    TFMessage,
    Twist,
    node_fixture,
    qos,
    qos_profile_sensor_data,
    secs,
)
from visualization_msgs.msg import Marker

DATA = Path(__file__).resolve().parent / "data"
CUBE_FACE, FAR_WALL, LIDAR_X, FRONT = 3.0, 8.0, 0.2, 0.6  # m

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = {"realtime_factor": 3.0, "force_publish_vehicle_namespace": True, "base_watchdog_timeout": 0.0,
              "objects_ground_truth_rate": 10.0}
    yield from node_fixture(DATA / "runtime.world.xml", params, tmp_path_factory.mktemp("runtime"), ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_runtime")
    p.watch = node
    p.subscribe(LaserScan, "/r1/laser1", qos_profile_sensor_data)
    p.subscribe(Odometry, "/r1/base_pose_ground_truth", qos(depth=100))
    p.subscribe(TFMessage, "/objects_ground_truth", qos(depth=100))
    p.pubs = {topic: p.publisher(MarkerArray, f"/{topic}") for topic in ("runtime_objects", "runtime_overlays")}
    p.pubs["cmd_vel"] = p.publisher(Twist, "/r1/cmd_vel")
    for pub in p.pubs.values():
        p.wait_matched(pub)  # the node's subscriptions exist and have matched
    # the node is up; under load its publishers may match the probe's subscriptions one by one, seconds apart: wait
    # for the first message of each topic the tests read, each with the generous first-message bound
    for topic, what in (("/r1/laser1", "a first scan"), ("/r1/base_pose_ground_truth", "a first ground truth"),
                        ("/objects_ground_truth", "a first objects_ground_truth")):
        p.next_message(p.inbox[topic], timeout=FIRST_MESSAGE_TIMEOUT, what=what, start=0)
    yield p
    p.close()


# ---------------------------------------------------------------------- helpers
def marker(ns: str, mid: int, kind: int = Marker.CUBE, *, x: float = 0.0, y: float = 0.0, z: float = 0.15,
           size: tuple[float, float, float] = (0.3, 0.3, 0.3), action: int = Marker.ADD, frame: str = "map") -> Marker:
    m = Marker(ns=ns, id=mid, type=kind, action=action)
    m.header.frame_id = frame
    m.pose.position.x, m.pose.position.y, m.pose.position.z = x, y, z
    m.pose.orientation.w = 1.0
    m.scale.x, m.scale.y, m.scale.z = size
    m.color.r, m.color.g, m.color.a = 1.0, 0.5, 1.0
    return m


def publish(probe: Probe, topic: str, markers: list[Marker], expect: str | None = None) -> None:
    """Publish one MarkerArray; with ``expect``, wait until the node's log has one more line containing it."""
    before = probe.watch.log().count(expect) if expect else 0
    probe.pubs[topic].publish(MarkerArray(markers=markers))
    if expect:
        probe.spin_until(lambda: probe.watch.log().count(expect) > before, what=f"'{expect}' in the node's log")


def drive(probe: Probe, vx: float) -> None:
    t = Twist()
    t.linear.x = vx
    probe.pubs["cmd_vel"].publish(t)


def latest_x(probe: Probe) -> tuple[float, float]:
    """(stamp s, x m) of r1's latest ground truth."""
    m = probe.inbox["/r1/base_pose_ground_truth"][-1]
    return secs(m.header.stamp), m.pose.pose.position.x


def scan_after(probe: Probe, t: float, cond: Any = lambda s: True, what: str = "a scan") -> Any:
    """The first scan stamped after ``t`` s that satisfies ``cond``."""
    return probe.next_message(probe.inbox["/r1/laser1"], lambda s: secs(s.header.stamp) > t + 1e-9 and cond(s),
                              what=what, start=0)


def wait_sim_time(probe: Probe, t: float) -> None:
    probe.spin_until(lambda: latest_x(probe)[0] >= t, timeout=60, what=f"simulated time {t:g} s")


def cubes(action: int = Marker.ADD) -> list[Marker]:
    """The barrier: 20 cubes of 0.3 m, centres at x = 3.15 m, y = -2.85 + 0.3 k: a face at x = 3 m."""
    return [marker("cubes", k, x=CUBE_FACE + 0.15, y=-2.85 + 0.3 * k, action=action) for k in range(20)]


# ---------------------------------------------------------------------- tests
def test_twenty_cubes_stop_the_driving_robot_and_deleteall_clears_the_scan(probe: Probe) -> None:
    t0, x0 = latest_x(probe)
    s = scan_after(probe, t0)
    assert s.ranges[90] == pytest.approx(FAR_WALL - LIDAR_X - x0, abs=0.02)
    drive(probe, 0.5)
    probe.spin_until(lambda: latest_x(probe)[1] > 0.2, timeout=60, what="r1 moving")

    publish(probe, "runtime_objects", cubes(), expect="runtime_objects: 20 added, 0 removed")
    t1, x1 = latest_x(probe)
    assert x1 < 1.5  # spawned well before r1 reached them
    s = scan_after(probe, t1, lambda s: s.ranges[90] < FAR_WALL - 2, what="the cubes in the scan")
    wait_sim_time(probe, t1 + 8.0)  # unhindered, r1 would be at x > 4.3 m
    t2, x2 = latest_x(probe)
    assert x2 + FRONT == pytest.approx(CUBE_FACE, abs=0.03) and x2 + FRONT < CUBE_FACE + 0.01
    s = scan_after(probe, t2)
    for ray in (60, 90, 120):
        assert s.ranges[ray] == pytest.approx((CUBE_FACE - x2 - LIDAR_X) / math.cos(math.radians(ray - 90)),
                                              abs=0.02), ray

    drive(probe, 0.0)
    publish(probe, "runtime_objects", [Marker(action=Marker.DELETEALL)],
            expect="runtime_objects: 0 added, 20 removed")
    t3, x3 = latest_x(probe)
    s = scan_after(probe, t3, lambda s: s.ranges[90] > CUBE_FACE, what="the scan cleared")
    assert s.ranges[90] == pytest.approx(FAR_WALL - x3 - LIDAR_X, abs=0.02)


def test_an_overlay_neither_stops_the_robot_nor_shows_in_its_scan(probe: Probe) -> None:
    t0, x0 = latest_x(probe)
    ox = x0 + FRONT + 1.0  # a 0.3 m cube 1 m ahead of r1's front
    publish(probe, "runtime_overlays", [marker("ghost", 1, x=ox, size=(0.3, 2.0, 1.0), z=0.5)],
            expect="runtime_overlays: 1 added, 0 removed")
    t1, _ = latest_x(probe)
    for _ in range(3):  # scans of after the overlay came: the wall behind it
        s = scan_after(probe, t1)
        t1 = secs(s.header.stamp)
        assert s.ranges[90] == pytest.approx(FAR_WALL - x0 - LIDAR_X, abs=0.02)
    drive(probe, 0.5)
    probe.spin_until(lambda: latest_x(probe)[1] > ox + 0.2, timeout=60, what="r1 through the overlay")
    drive(probe, 0.0)
    publish(probe, "runtime_overlays", [marker("ghost", 1, action=Marker.DELETE)],
            expect="runtime_overlays: 0 added, 1 removed")


def test_bad_markers_are_warned_once_and_skipped(probe: Probe) -> None:
    nan = marker("bad", 1, x=math.nan)
    arrow = marker("bad", 2, Marker.ARROW)
    elsewhere = marker("bad", 3, frame="base_link")
    tri = marker("bad", 4, Marker.TRIANGLE_LIST, size=(1.0, 1.0, 1.0))
    tri.points = [tri.pose.position, tri.pose.position]
    flat = marker("bad", 5, size=(0.0, 1.0, 1.0))
    good = marker("fine", 1, x=6.0, y=-4.0)
    batch = [nan, arrow, elsewhere, tri, flat, good]
    publish(probe, "runtime_objects", batch, expect="runtime_objects: 1 added, 0 removed")
    publish(probe, "runtime_objects", batch, expect="runtime_objects: 1 added, 0 removed")  # again: good replaced
    log = probe.watch.log()
    for text in (
            "runtime_objects: marker 'runtime_objects/bad/1': pose.position.x is nan; every number of a marker must "
            "be finite; skipped",
            "runtime_objects: markers of type ARROW (0) are not supported (CUBE, SPHERE, CYLINDER and TRIANGLE_LIST "
            "are); skipped (said once)",
            "runtime_objects: marker 'runtime_objects/bad/3': header.frame_id 'base_link' is not the world frame "
            "'map'; skipped",
            "runtime_objects: marker 'runtime_objects/bad/4': a TRIANGLE_LIST needs at least 3 points, got 2; skipped",
            "runtime_objects: marker 'runtime_objects/bad/5': scale.x is 0; a CUBE needs sizes > 0 m; skipped"):
        assert log.count(text) == 1, text  # said once, though published twice
    assert probe.watch.alive()
    publish(probe, "runtime_objects", [Marker(action=Marker.DELETEALL)], expect="runtime_objects: 0 added, 1 removed")


def test_objects_ground_truth_has_every_object_the_walking_actor_and_runtime_blocks(probe: Probe) -> None:
    tri = marker("shapes", 1, Marker.TRIANGLE_LIST, x=6.0, y=3.0, z=0.0, size=(1.0, 1.0, 1.0))
    from geometry_msgs.msg import Point

    tri.points = [Point(x=-0.5, y=-0.5, z=0.0), Point(x=0.5, y=-0.5, z=0.0), Point(x=0.0, y=0.5, z=0.8)]
    cyl = marker("shapes", 2, Marker.CYLINDER, x=6.0, y=-3.0, z=0.5, size=(0.4, 0.4, 1.0))
    publish(probe, "runtime_objects", [tri, cyl], expect="runtime_objects: 2 added, 0 removed")
    box = probe.inbox["/objects_ground_truth"]

    def has_shapes(m: Any) -> bool:
        return "runtime_objects/shapes/1" in {tf.child_frame_id for tf in m.transforms}

    first = probe.next_message(box, has_shapes, what="objects_ground_truth with the new blocks")
    later = probe.next_message(box, lambda m: secs(m.transforms[0].header.stamp)
                               >= secs(first.transforms[0].header.stamp) + 0.5, what="a later objects_ground_truth")
    for m in (first, later):
        tfs = {tf.child_frame_id: tf for tf in m.transforms}
        assert set(tfs) == {"r1", "far_wall", "bob", "runtime_objects/shapes/1", "runtime_objects/shapes/2"}
        assert {tf.header.frame_id for tf in m.transforms} == {"map"}
        assert (tfs["runtime_objects/shapes/1"].transform.translation.x,
                tfs["runtime_objects/shapes/1"].transform.translation.y) == pytest.approx((6.0, 3.0))
        assert tfs["far_wall"].transform.translation.x == pytest.approx(8.0)
        assert tfs["bob"].transform.translation.y == pytest.approx(5.0, abs=1e-6)
    dt = secs(later.transforms[0].header.stamp) - secs(first.transforms[0].header.stamp)

    def bob_x(m: Any) -> float:
        return next(tf.transform.translation.x for tf in m.transforms if tf.child_frame_id == "bob")

    # bob walks at 1 m/s along x (between 0 and 4): his x moved by dt, or less where he turned at an end
    moved = abs(bob_x(later) - bob_x(first))
    assert 0.0 < moved <= dt + 0.01
    publish(probe, "runtime_objects", [Marker(action=Marker.DELETEALL)], expect="runtime_objects: 0 added, 2 removed")

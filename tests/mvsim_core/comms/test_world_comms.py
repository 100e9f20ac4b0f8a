"""A World served on a live server, in this process: services, topics, threads; and the core without zmq."""

from __future__ import annotations

import math
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.comms import Client, WorldComms
from mvsim_core.comms.proto import (
    ObservationLidar2D_pb2,
    SrvGetPose_pb2,
    SrvGetPoseAnswer_pb2,
    SrvSetControllerTwist_pb2,
    SrvSetControllerTwistAnswer_pb2,
    SrvSetPose_pb2,
    SrvSetPoseAnswer_pb2,
    SrvShutdown_pb2,
    SrvShutdownAnswer_pb2,
    TimeStampedPose_pb2,
    mvsim_core_msgs_pb2,
)
from mvsim_core.comms.world_comms import (
    FairLock,
    camera_message,
    gnss_message,
    lidar3d_message,
    rgbd_message,
)

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def served(comms_world_file, server):
    """(world, WorldComms, caller Client): the test world as node World; nobody steps it unless the test does."""
    world = mv.load_world(comms_world_file)
    world.start()
    comms = WorldComms(world, port=server.port, timeout=10.0).attach()
    caller = Client("caller", port=server.port, timeout=60.0).connect()
    yield world, comms, caller
    caller.shutdown()
    comms.close()


def _get(caller, name):
    return caller.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId=name),
                               SrvGetPoseAnswer_pb2.SrvGetPoseAnswer)


def _set(caller, name, x, y, yaw, relative_=None, z=0.0):
    req = SrvSetPose_pb2.SrvSetPose(objectId=name)
    req.pose.x, req.pose.y, req.pose.z, req.pose.yaw, req.pose.pitch, req.pose.roll = x, y, z, yaw, 0.0, 0.0
    if relative_ is not None:
        req.relativeIncrement = relative_
    return caller.call_service("set_pose", req, SrvSetPoseAnswer_pb2.SrvSetPoseAnswer)


def _twist(caller, name, vx, vy, wz):
    req = SrvSetControllerTwist_pb2.SrvSetControllerTwist(objectId=name)
    t = req.twistSetPoint
    t.vx, t.vy, t.vz, t.wx, t.wy, t.wz = vx, vy, 0.0, 0.0, 0.0, wz
    return caller.call_service("set_controller_twist", req, SrvSetControllerTwistAnswer_pb2.SrvSetControllerTwistAnswer)


def test_node_services_and_topics_are_registered(served):
    world, comms, caller = served
    assert caller.list_nodes() == ["World", "caller"]
    for s in ("set_pose", "get_pose", "set_controller_twist", "shutdown", "spawn_xml_objects", "remove_objects_by_name",
              "remove_spawned_objects"):
        info = caller.service_info(s)
        assert info.success and info.serviceNodeName == "World"
    topics = {t.topicName: t.topicType for t in caller.list_topics()}
    assert topics == {"/r1/laser1_scan": "mvsim_msgs.ObservationLidar2D",
                      "/r1/imu1": "mvsim_core_msgs.ObservationIMU",
                      "/r1/gnss1": "mvsim_core_msgs.ObservationGNSS",
                      "/r1/pose": "mvsim_msgs.TimeStampedPose",
                      "/r1/relative_poses": "mvsim_msgs.TimeStampedPose"}
    assert world.step_guard is comms.lock and comms.publish in world.step_listeners


def test_get_pose_set_pose_and_collision_flag(served):
    world, comms, caller = served
    a = _get(caller, "r2")
    assert a.success and not a.objectIsInCollision
    assert (a.pose.x, a.pose.y) == (0.0, 5.0)
    assert a.pose.yaw == pytest.approx(math.pi / 2)
    assert (a.twist.vx, a.twist.vy, a.twist.vz, a.twist.wx, a.twist.wy, a.twist.wz) == (0, 0, 0, 0, 0, 0)
    b = _get(caller, "box1")
    assert (b.success, b.pose.x, b.pose.y) == (True, 5.0, 0.0)

    ans = _set(caller, "r2", 3.0, -4.0, 1.0)
    assert ans.success and not ans.HasField("objectGlobalPose")
    world.step()
    a = _get(caller, "r2")
    assert (a.pose.x, a.pose.y, a.pose.yaw) == pytest.approx((3.0, -4.0, 1.0), abs=1e-6)
    # relative increment: 1 m forward in the robot frame (yaw 1 rad), then a quarter turn
    ans = _set(caller, "r2", 1.0, 0.0, math.pi / 2, relative_=True)
    assert ans.success
    g = ans.objectGlobalPose
    assert (g.x, g.y, g.yaw) == pytest.approx((3.0 + math.cos(1.0), -4.0 + math.sin(1.0), 1.0 + math.pi / 2))
    assert tuple(world.vehicles["r2"].pose[:2]) == pytest.approx((g.x, g.y))
    # blocks too
    assert _set(caller, "box1", 8.0, 1.0, 0.0).success
    assert world.blocks["box1"].pose[:2] == pytest.approx((8.0, 1.0))

    world.vehicles["r1"].had_collision = True
    assert _get(caller, "r1").objectIsInCollision
    assert not _get(caller, "r1").objectIsInCollision  # reset by the previous answer
    world.vehicles["r1"].had_collision = True
    assert _set(caller, "r1", 0.0, 0.0, 0.0).objectIsInCollision
    assert not world.vehicles["r1"].had_collision


def test_unknown_objects_and_refused_twists(served):
    _, _, caller = served
    a = _get(caller, "ghost")
    assert (a.success, a.errorMessage, a.HasField("pose")) == (False, "objectId not found", False)
    s = _set(caller, "ghost", 0, 0, 0)
    assert (s.success, s.errorMessage) == (False, "objectId not found")
    assert _twist(caller, "ghost", 1, 0, 0).errorMessage == "objectId not found"
    assert _twist(caller, "box1", 1, 0, 0).errorMessage == "objectId is not of VehicleBase type"
    r = _twist(caller, "r2", 1, 0, 0)  # raw controller
    assert (r.success, r.errorMessage) == (False, "objectId vehicle controller did not accept the twist command")
    assert _twist(caller, "r1", float("nan"), 0, 0).errorMessage == ("vehicle 'r1': vx is nan; command ignored, the "
                                                                     "last good one stays")
    s = _set(caller, "r1", float("inf"), 0, 0)
    assert (s.success, s.errorMessage) == (False, "set_pose('r1'): pose.x is inf; it must be a finite number; "
                                                  "refused, nothing changed")


ABSURD = (math.nan, math.inf, -math.inf, 1e30, -1e30, 1e308)
POSE_FIELDS = ("x", "y", "z", "yaw", "pitch", "roll")
TWIST_FIELDS = ("vx", "vy", "vz", "wx", "wy", "wz")


def test_absurd_values_in_every_field_of_every_service_leave_the_world_running(served):
    """NaN, ±inf, ±1e30 and 1e308 in each field of set_pose (absolute and relative) and set_controller_twist: the
    answer names the field (poses: refused beyond ±1e9; twists: NaN/inf refused, finite ones clamped), nothing moves
    out of bounds, and the world steps on with finite poses."""
    world, _, caller = served
    r1, r2 = world.vehicles["r1"], world.vehicles["r2"]
    assert _twist(caller, "r1", 0.5, 0.0, 0.1).success
    for name in ("r1", "r2", "box1"):
        for relative_ in (False, True):
            for field in POSE_FIELDS:
                for bad in ABSURD:
                    before = world.object(name).pose
                    req = SrvSetPose_pb2.SrvSetPose(objectId=name, relativeIncrement=relative_)
                    for f in POSE_FIELDS:
                        setattr(req.pose, f, bad if f == field else 0.0)
                    a = caller.call_service("set_pose", req, SrvSetPoseAnswer_pb2.SrvSetPoseAnswer)
                    unit = "m" if field in "xyz" else "rad"
                    why = (f"pose.{field} is {bad}; it must be a finite number" if not math.isfinite(bad) else
                           f"pose.{field} = {bad:g} {unit} is beyond ±1e+09 {unit}")
                    assert (a.success, a.errorMessage) == (False, f"set_pose('{name}'): {why}; refused, nothing "
                                                                  f"changed")
                    assert world.object(name).pose == before
    for field in TWIST_FIELDS:
        for bad in ABSURD:
            req = SrvSetControllerTwist_pb2.SrvSetControllerTwist(objectId="r1")
            for f in TWIST_FIELDS:
                setattr(req.twistSetPoint, f, bad if f == field else 0.0)
            a = caller.call_service("set_controller_twist", req,
                                    SrvSetControllerTwistAnswer_pb2.SrvSetControllerTwistAnswer)
            if math.isfinite(bad):
                assert (a.success, a.errorMessage) == (True, "")  # clamped (vz, wx, wy: not used)
            else:
                assert (a.success, a.errorMessage) == (False, f"vehicle 'r1': {field} is {bad}; command ignored, "
                                                              f"the last good one stays")
    lim = r1.command_limits
    assert tuple(r1.controller.setpoint) == (0.0, 0.0, lim.max_omega)  # the last one: wz = 1e308, clamped
    # a relative increment within bounds whose result is not: refused after composing, nothing moves
    assert _set(caller, "r2", 6e8, 0.0, 0.0).success
    a = _set(caller, "r2", 9e8, 0.0, 0.0, relative_=True)
    assert (a.success, a.errorMessage) == (False, "set_pose('r2'): x = 1.5e+09 m is beyond ±1e+09 m; refused, "
                                                  "nothing changed")
    assert r2.pose[:2] == pytest.approx((6e8, 0.0), rel=1e-6)
    assert _set(caller, "r2", 0.0, 5.0, 0.0).success
    world.run(1.0)
    assert all(math.isfinite(v) for o in ("r1", "r2", "box1") for v in world.object(o).pose)
    assert r1.twist[2] == pytest.approx(lim.max_omega, rel=1e-6)
    assert len(world.faults) == 0 and _get(caller, "r1").success


def test_non_finite_twists_are_refused_and_large_ones_clamped(served):
    """Over real sockets: NaN/inf in any field answers an error naming it and leaves the last good command in force;
    1e9 is clamped to the vehicle's limits; the server keeps serving and the world keeps stepping."""
    world, _, caller = served
    r1 = world.vehicles["r1"]
    assert _twist(caller, "r1", 0.5, 0.0, 0.1).success
    good = r1.controller.setpoint
    for i, field in enumerate(("vx", "vy", "wz")):
        for bad in (math.nan, math.inf, -math.inf):
            args = [0.2, 0.0, 0.0]
            args[i] = bad
            a = _twist(caller, "r1", *args)
            assert (a.success, a.errorMessage) == (False, f"vehicle 'r1': {field} is {bad}; command ignored, the "
                                                          f"last good one stays")
            assert r1.controller.setpoint == good
    lim = r1.command_limits
    assert _twist(caller, "r1", 1e9, -1e9, -1e9).success
    assert tuple(r1.controller.setpoint) == (lim.max_speed, -lim.max_speed, -lim.max_omega)
    world.run(0.5)
    assert all(math.isfinite(v) for v in r1.pose)
    assert r1.twist[0] == pytest.approx(lim.max_speed, rel=1e-6)  # twist_ideal: the clamped setpoint exactly
    assert _get(caller, "r1").success


def test_twist_moves_the_robot_while_the_world_runs_in_another_thread(served):
    """The simulator steps in its own thread; calls come from this one (and get whole-step states)."""
    world, comms, caller = served
    assert _twist(caller, "r1", 0.05, 0.0, 0.0).success
    stop = threading.Event()
    limit = 60.0  # simulated seconds (12 000 steps): at most 3 m, short of box1

    def run() -> None:  # flat out until the caller has its answers (or the limit)
        while not stop.is_set() and world.time < limit - 1e-9:
            world.step()

    t = threading.Thread(target=run)
    t.start()
    samples = []
    try:
        end = time.monotonic() + 300
        while t.is_alive() and time.monotonic() < end and len(samples) < 5:
            samples.append(_get(caller, "r1"))
    finally:
        stop.set()
        t.join(120)
    # five calls were served while the world was still stepping flat out (fair lock), not after it finished
    assert len(samples) == 5 and world.time < limit - 1e-9
    assert world.vehicles["r1"].pose[0] == pytest.approx(0.05 * world.time, abs=0.01)  # ideal controller
    xs = [s.pose.x for s in samples]
    assert xs == sorted(xs) and xs[-1] > xs[0]
    assert samples[-1].twist.vx == pytest.approx(0.05, abs=1e-6)


def test_shutdown_service(served):
    world, comms, caller = served
    assert not comms.shutdown_requested.is_set()
    ans = caller.call_service("shutdown", SrvShutdown_pb2.SrvShutdown())
    assert isinstance(ans, SrvShutdownAnswer_pb2.SrvShutdownAnswer) and ans.accepted
    assert comms.shutdown_requested.is_set()


def test_topics_carry_the_sensor_data(served):
    world, comms, caller = served
    got: dict[str, list] = {}
    lock = threading.Lock()

    def collect(topic):
        def cb(type_name, payload):
            with lock:
                got.setdefault(topic, []).append(Client.decode(type_name, payload))
        return cb

    for topic in ("/r1/laser1_scan", "/r1/imu1", "/r1/gnss1", "/r1/pose", "/r1/relative_poses"):
        caller.subscribe(topic, collect(topic))
    end = time.monotonic() + 20
    while not all(comms.client.has_subscribers(t.topic) for t in comms.sensor_topics + comms.pose_topics):
        assert time.monotonic() < end
        time.sleep(0.01)
    world.run(1.0)
    time.sleep(0.3)
    end = time.monotonic() + 10
    while len(got.get("/r1/laser1_scan", [])) < 10 and time.monotonic() < end:
        time.sleep(0.05)
    scans = got["/r1/laser1_scan"]
    assert len(scans) == 10  # 1 s of a 10 Hz lidar
    s = scans[-1]
    assert isinstance(s, ObservationLidar2D_pb2.ObservationLidar2D)
    assert s.sourceObjectId == "laser1"
    assert len(s.scanRanges) == len(s.validRanges) == 181
    assert s.scanRanges[90] == pytest.approx(4.3, abs=1e-4)  # box1's face 5 - 0.5 m, laser 0.2 m ahead of r1
    assert s.validRanges[90] and not s.validRanges[0]
    assert (s.aperture, s.ccw, s.maxRange) == (pytest.approx(math.pi), True, 20.0)
    assert (s.sensorPose.x, s.sensorPose.z) == pytest.approx((0.2, 0.3))
    stamps = np.array([m.unixTimestamp for m in scans]) - comms.t0_unix
    np.testing.assert_allclose(stamps, np.arange(1, 11) * 0.1, atol=1e-6)
    assert abs(comms.t0_unix - time.time()) < 120

    imu = got["/r1/imu1"]
    assert len(imu) == 50
    assert isinstance(imu[-1], mvsim_core_msgs_pb2.ObservationIMU)
    assert imu[-1].simTime == pytest.approx(1.0)
    assert imu[-1].linearAcceleration.z == pytest.approx(9.8, abs=0.2)
    assert not imu[-1].HasField("orientation")
    gnss = got["/r1/gnss1"]
    assert len(gnss) == 5
    assert gnss[0].latitude == pytest.approx(36.8947, abs=1e-3)
    assert list(gnss[0].positionCovariance) == [4, 0, 0, 0, 4, 0, 0, 0, 16]
    poses = got["/r1/pose"]
    assert len(poses) == 10  # every 0.1 s from t = 5 ms
    assert all(isinstance(p, TimeStampedPose_pb2.TimeStampedPose) and p.objectId == "r1" for p in poses)
    assert np.diff([p.unixTimestamp for p in poses]) == pytest.approx(0.1, abs=1e-6)
    rel = {m.objectId: m for m in got["/r1/relative_poses"]}
    assert set(rel) == {"box1", "r2"}
    assert rel["box1"].relativeToObjectId == "r1"
    assert (rel["box1"].pose.x, rel["box1"].pose.y) == pytest.approx((5.0, 0.0), abs=1e-6)
    assert (rel["r2"].pose.x, rel["r2"].pose.y, rel["r2"].pose.yaw) == pytest.approx((0.0, 5.0, math.pi / 2), abs=1e-6)


def test_nothing_is_built_without_subscribers(served):
    world, comms, _ = served
    world.run(0.5)
    assert comms.published == 0


def test_on_demand_a_sensor_samples_while_its_topic_has_a_subscriber(served, server):
    """In a world that samples on demand (``mvsim launch``), the lidar with a ZMQ topic is cast only while someone
    subscribes to it: nothing before; from the next due time after the subscription (10 Hz: within 0.1 s); nothing
    once the subscriber left."""
    world, comms, _ = served
    world.sensors_on_demand = True
    lidar = world.vehicles["r1"].sensors["laser1"]
    watcher = Client("watcher", port=server.port, timeout=60.0).connect()
    world.run(0.5)
    assert lidar.last is None and lidar.readers == frozenset()
    got: list[float] = []
    watcher.subscribe("/r1/laser1_scan", lambda t, p: got.append(
        ObservationLidar2D_pb2.ObservationLidar2D.FromString(p).unixTimestamp - comms.t0_unix))
    end = time.monotonic() + 20
    while not comms.client.has_subscribers("/r1/laser1_scan"):
        assert time.monotonic() < end
        time.sleep(0.01)
    world.run(0.005)  # the step after which the comms see the subscriber
    assert lidar.readers == frozenset({"zmq"})
    world.run(0.2)
    assert lidar.last.stamp == pytest.approx(0.7)  # 0.6 and 0.7 sampled: the first due time after 0.505
    end = time.monotonic() + 10
    while len(got) < 2 and time.monotonic() < end:
        time.sleep(0.02)
    np.testing.assert_allclose(got, [0.6, 0.7], atol=1e-6)
    watcher.shutdown()
    end = time.monotonic() + 20
    while comms.client.has_subscribers("/r1/laser1_scan"):
        assert time.monotonic() < end
        time.sleep(0.01)
    world.run(0.5)
    assert lidar.readers == frozenset() and lidar.last.stamp == pytest.approx(0.7)


LIDAR3D_WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.01</simul_timestep>
  <element class="horizontal_plane"><x_min>-20</x_min><x_max>20</x_max><y_min>-20</y_min><y_max>20</y_max></element>
  <vehicle name="r1">
    <init_pose>0 0 0</init_pose>
    <dynamics class="differential">
      <l_wheel pos="0 0.25" mass="2" width="0.05" diameter="0.3"/>
      <r_wheel pos="0 -0.25" mass="2" width="0.05" diameter="0.3"/>
    </dynamics>
    <sensor class="lidar3d" name="lidar1">
      <pose_3d>0 0 0.8 0 0 0</pose_3d>
      <sensor_period>0.1</sensor_period>
      <vert_nrays>8</vert_nrays>
      <horz_nrays>90</horz_nrays>
      <publish><publish_topic>/r1/lidar1</publish_topic></publish>
    </sensor>
  </vehicle>
  <block name="box1"><init_pose>4 0 0</init_pose>
    <shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape><zmin>0</zmin><zmax>2</zmax>
  </block>
</mvsim_world>
"""


def test_a_3d_lidar_publishes_its_point_cloud(tmp_path, server):
    """Sensors other than the 2D lidar: the typed message is filled from the observation's attributes."""
    (tmp_path / "w.world.xml").write_text(LIDAR3D_WORLD)
    world = mv.load_world(tmp_path / "w.world.xml")
    sensor = world.vehicles["r1"].sensors["lidar1"]
    if not type(sensor).simulated:
        pytest.skip("3D lidar not simulated in this build")
    with WorldComms(world, port=server.port, timeout=10.0) as comms, \
            Client("caller", port=server.port, timeout=30.0) as caller:
        got: queue.Queue = queue.Queue()
        caller.subscribe("/r1/lidar1", lambda t, p: got.put((t, p)))
        end = time.monotonic() + 20
        while not comms.client.has_subscribers("/r1/lidar1"):
            assert time.monotonic() < end
            time.sleep(0.01)
        world.run(0.1)
        type_name, payload = got.get(timeout=30)
    assert type_name == "mvsim_core_msgs.ObservationLidar3D"
    m = mvsim_core_msgs_pb2.ObservationLidar3D.FromString(payload)
    obs = sensor.last
    assert (m.sourceObjectId, m.simTime, m.numPoints) == ("lidar1", pytest.approx(0.1), len(obs.points))
    assert m.numPoints > 0
    np.testing.assert_array_equal(np.frombuffer(m.points, "<f4").reshape(-1, 3), obs.points)
    np.testing.assert_array_equal(np.frombuffer(m.ring, "<u2"), obs.ring)
    assert (m.sensorPose.z, m.unixTimestamp - comms.t0_unix) == (pytest.approx(0.8), pytest.approx(0.1))


# ---------------------------------------------------------------------- generic observation messages
@dataclass
class _Obs:
    stamp: float


class _Sensor:
    name = "s1"
    pose = (0.1, 0.2, 0.3, 0.4, 0.0, 0.0)


def test_lidar2d_fast_encoding_is_what_protobuf_writes():
    from mvsim_core.comms.world_comms import lidar2d_bytes

    class Laser:
        name, pose, params = "laser1", (0.2, 0.0, 0.3, 0.1, 0.0, 0.0), {"fov_degrees": 4.71, "max_range": 30.0}

    obs = _Obs(3.25)
    rng = np.random.default_rng(1)
    obs.ranges = rng.uniform(0, 30, 1440).astype(np.float32)
    obs.valid = rng.random(1440) > 0.2
    obs.max_range = 30.0
    ref = ObservationLidar2D_pb2.ObservationLidar2D(unixTimestamp=1e9 + 3.25, sourceObjectId="laser1", aperture=4.71,
                                                    ccw=True, maxRange=30.0)
    ref.scanRanges.extend(obs.ranges.tolist())
    ref.validRanges.extend(obs.valid.tolist())
    p = ref.sensorPose
    p.x, p.y, p.z, p.yaw, p.pitch, p.roll = Laser.pose
    assert lidar2d_bytes(Laser(), obs, 1e9) == ref.SerializeToString()


def test_lidar3d_message_from_observation_attributes():
    obs = _Obs(2.5)
    obs.points = np.random.default_rng(0).normal(size=(100, 3)).astype(np.float32)
    obs.intensity = np.linspace(0, 1, 100, dtype=np.float32)
    obs.ring = (np.arange(100) % 16).astype(np.uint16)
    m = lidar3d_message(_Sensor(), obs, 1000.0)
    back = mvsim_core_msgs_pb2.ObservationLidar3D.FromString(m.SerializeToString())
    assert (back.unixTimestamp, back.simTime, back.sourceObjectId, back.numPoints) == (1002.5, 2.5, "s1", 100)
    assert (back.sensorPose.x, back.sensorPose.yaw) == (0.1, 0.4)
    np.testing.assert_array_equal(np.frombuffer(back.points, "<f4").reshape(-1, 3), obs.points)
    np.testing.assert_array_equal(np.frombuffer(back.intensity, "<f4"), obs.intensity)
    np.testing.assert_array_equal(np.frombuffer(back.ring, "<u2"), obs.ring)


def test_camera_and_rgbd_messages():
    obs = _Obs(1.0)
    obs.rgb = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    m = camera_message(_Sensor(), obs, 0.0)
    img = mvsim_core_msgs_pb2.ObservationImage.FromString(m.SerializeToString()).image
    assert (img.width, img.height, img.encoding, img.step) == (6, 4, "rgb8", 18)
    np.testing.assert_array_equal(np.frombuffer(img.data, np.uint8).reshape(4, 6, 3), obs.rgb)
    obs.depth = np.linspace(0, 10, 24, dtype=np.float32).reshape(4, 6)
    r = mvsim_core_msgs_pb2.ObservationRGBD.FromString(rgbd_message(_Sensor(), obs, 0.0).SerializeToString())
    assert (r.depth.encoding, r.depth.step, r.rgb.encoding) == ("32FC1", 24, "rgb8")
    np.testing.assert_array_equal(np.frombuffer(r.depth.data, "<f4").reshape(4, 6), obs.depth)
    del obs.rgb
    assert not rgbd_message(_Sensor(), obs, 0.0).HasField("rgb")
    obs.depth = None
    obs.rgb = np.zeros((2, 2, 3), np.uint8)
    r = rgbd_message(_Sensor(), obs, 0.0)
    assert not r.HasField("depth") and r.rgb.width == 2


def test_gnss_message_from_a_fix():
    from mvsim_core.sensors.gnss import GnssFix

    fix = GnssFix(stamp=0.4, latitude=36.5, longitude=-2.25, altitude=100.0, covariance=np.diag([1.0, 1.0, 4.0]),
                  frame="g", hdop=0.2)
    m = gnss_message(_Sensor(), fix, 10.0)
    assert (m.latitude, m.longitude, m.altitude, m.fixQuality, m.hdop, m.simTime) == (36.5, -2.25, 100.0, 2, 0.2, 0.4)
    assert list(m.positionCovariance) == [1, 0, 0, 0, 1, 0, 0, 0, 4]


def test_fair_lock_serves_in_arrival_order():
    lock = FairLock()
    order: list[int] = []
    lock.acquire()
    threads = []
    for k in range(5):
        t = threading.Thread(target=lambda k=k: (lock.acquire(), order.append(k), lock.release()))
        t.start()
        threads.append(t)
        time.sleep(0.05)
    lock.release()
    for t in threads:
        t.join(10)
    assert order == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------- the core does not need zmq
def test_library_and_check_do_not_import_zmq(comms_world_file):
    code = ("import sys, mvsim_core as mv\n"
            f"w = mv.load_world({str(comms_world_file)!r})\n"
            "w.run(0.2)\n"
            "from mvsim_core import cli\n"
            f"assert cli.main(['check', {str(comms_world_file)!r}]) == 0\n"
            f"assert cli.main(['launch', {str(comms_world_file)!r}, '--no-server', '--duration', '0.1', "
            "'--realtime-factor', '0']) == 0\n"
            "bad = sorted(m for m in sys.modules if m == 'zmq' or m.startswith(('zmq.', 'google.protobuf', "
            "'mvsim_core.comms')))\n"
            "print('IMPORTED', bad)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "IMPORTED []" in r.stdout


def test_queue_is_drained_per_subscription(served):
    """Publishing happens in the stepping thread; a subscriber that reads nothing does not block the world."""
    world, comms, caller = served
    q: queue.Queue = queue.Queue()
    caller.subscribe("/r1/imu1", lambda t, p: None)
    end = time.monotonic() + 20
    while not comms.client.has_subscribers("/r1/imu1"):
        assert time.monotonic() < end
        time.sleep(0.01)
    t = time.perf_counter()
    world.run(2.0)
    assert time.perf_counter() - t < 60
    assert comms.published >= 100
    assert q.empty()

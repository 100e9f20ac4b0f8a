"""The MCAP recorder: a recording of the demo world read back with rosbags (the independent reader) and mcap's own."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import NonSeekingReader, make_reader
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

import mvsim_core as mv
from mvsim_core.record.mcap_recorder import Recorder

REPO = Path(__file__).resolve().parents[3]
SECONDS = 60.0  # the acceptance: a 60 s recording
TYPESTORE = get_typestore(Stores.ROS2_HUMBLE)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """60 simulated seconds of worlds/demo.world.xml with bot1 driving a curve; the scans and poses seen meanwhile."""
    world = mv.load_world(REPO / "worlds/demo.world.xml")
    world.vehicles["bot1"].set_twist(0.5, 0.0, 0.3)
    path = tmp_path_factory.mktemp("rec") / "demo.mcap"
    scans: dict[int, np.ndarray] = {}
    gt: dict[int, tuple] = {}
    laser = world.vehicles["bot1"].sensors["laser1"]

    def watch(w):
        if laser.last is not None:
            scans[round(laser.last.stamp * 1e9)] = laser.last.ranges.copy()
        gt[round(w.time * 1e9)] = w.vehicles["bot1"].pose

    with Recorder(world, path):
        world.add_step_listener(watch)
        world.run(SECONDS)
    msgs: dict[str, list] = {}
    with AnyReader([path], default_typestore=TYPESTORE) as r:
        for con, t, raw in r.messages():
            msgs.setdefault(con.topic, []).append((t, r.deserialize(raw, con.msgtype)))
    return path, msgs, scans, gt, laser


def test_topics_and_counts_match_the_rates(recording):
    _, msgs, _, _, laser = recording
    n_tf = SECONDS / 0.02 + 1  # every 20 ms, and once at the start
    for topic in ("/bot1/odom", "/bot1/base_pose_ground_truth", "/bot1/collision", "/bot1/tf", "/car1/odom",
                  "/car1/tf"):
        assert abs(len(msgs[topic]) - n_tf) <= 1, topic
    assert abs(len(msgs["/bot1/laser1"]) - SECONDS / laser.period) <= 1
    assert len(msgs["/bot1/tf_static"]) == 1 and len(msgs["/simul_map"]) == 1
    assert len(msgs["/clock"]) >= n_tf


def test_stamps_span_the_simulated_time(recording):
    _, msgs, _, _, _ = recording
    odom = msgs["/bot1/odom"]
    assert odom[0][0] == 0 and odom[-1][0] == round(SECONDS * 1e9)
    for t, m in odom:
        assert m.header.stamp.sec * 10**9 + m.header.stamp.nanosec == t
    assert odom[0][1].header.frame_id == "odom" and odom[0][1].child_frame_id == "base_link"


def test_scans_equal_the_simulator_bit_for_bit(recording):
    _, msgs, scans, _, _ = recording
    assert len(msgs["/bot1/laser1"]) == round(SECONDS * 10)  # 10 Hz
    for t, m in msgs["/bot1/laser1"]:
        ours = scans[t]
        got = np.asarray(m.ranges, np.float32)
        finite = np.isfinite(got)
        assert np.array_equal(got[finite].view(np.uint32), ours[finite].view(np.uint32))
        assert m.header.frame_id == "laser1"


def test_tf_gives_the_ground_truth_pose(recording):
    _, msgs, _, gt, _ = recording
    t, tfm = msgs["/bot1/tf"][75]  # t = 1.5 s
    tr = {(x.header.frame_id, x.child_frame_id): x.transform for x in tfm.transforms}
    m2o, o2b = tr[("map", "odom")], tr[("odom", "base_link")]

    def planar(x):
        return x.translation.x, x.translation.y, 2.0 * math.atan2(x.rotation.z, x.rotation.w)

    a, b = planar(m2o), planar(o2b)
    x = a[0] + math.cos(a[2]) * b[0] - math.sin(a[2]) * b[1]
    y = a[1] + math.sin(a[2]) * b[0] + math.cos(a[2]) * b[1]
    truth = gt[t]
    assert t == 1_500_000_000
    assert abs(x - truth[0]) < 1e-9 and abs(y - truth[1]) < 1e-9
    assert abs(math.remainder(a[2] + b[2] - truth[3], 2 * math.pi)) < 1e-9
    g = dict(msgs["/bot1/base_pose_ground_truth"])[t]
    assert (g.pose.pose.position.x, g.pose.pose.position.y) == (truth[0], truth[1])
    assert g.header.frame_id == "map"


def test_mcap_reader_lists_ros2_schemas_and_channels(recording):
    path = recording[0]
    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None
    schemas = {s.name: s for s in summary.schemas.values()}
    assert {"nav_msgs/msg/Odometry", "sensor_msgs/msg/LaserScan", "tf2_msgs/msg/TFMessage",
            "rosgraph_msgs/msg/Clock", "std_msgs/msg/Bool", "nav_msgs/msg/OccupancyGrid"} <= set(schemas)
    assert all(s.encoding == "ros2msg" for s in schemas.values())
    assert "MSG: geometry_msgs/PoseWithCovariance" in schemas["nav_msgs/msg/Odometry"].data.decode()
    assert all(c.message_encoding == "cdr" for c in summary.channels.values())
    assert summary.statistics.message_count == sum(summary.statistics.channel_message_counts.values())
    from rosbags.typesys import get_types_from_msg

    for name, schema in schemas.items():  # every definition parses with rosbags' own parser, dependencies included
        text = schema.data.decode()
        parsed = {}
        for i, part in enumerate(text.split("=" * 80 + "\n")):
            if i == 0:
                parsed.update(get_types_from_msg(part, name))
            else:
                head, _, body = part.partition("\n")
                assert head.startswith("MSG: "), head
                pkg, _, msg = head[5:].partition("/")
                parsed.update(get_types_from_msg(body, f"{pkg}/msg/{msg}"))
        assert name in parsed


def test_topic_selection_and_throttle(tmp_path):
    world = mv.load_world(REPO / "worlds/demo.world.xml")
    path = tmp_path / "sel.mcap"
    with Recorder(world, path, include=["/bot1/*", "/clock"], exclude=["*ground_truth"],
                  rates={"/bot1/odom": 10.0}):
        world.run(1.0)
    with AnyReader([path], default_typestore=TYPESTORE) as r:
        counts = {c.topic: c.msgcount for c in r.connections}
    assert "/car1/odom" not in counts and "/bot1/base_pose_ground_truth" not in counts
    assert counts["/bot1/odom"] == 11  # 0, 0.1, ..., 1.0 s
    assert counts["/bot1/tf"] == 51


def test_it_wants_the_sensors_it_records_and_no_others(tmp_path):
    """In a world that samples on demand (``mvsim launch --record``), the recorder is bot1's laser's reader while it
    records the laser's topic: the scans are there, and with the topic left out the laser is never cast."""
    for include, wanted in ((["*"], True), (["/bot1/odom"], False)):
        world = mv.load_world(REPO / "worlds/demo.world.xml")
        world.sensors_on_demand = True
        laser = world.vehicles["bot1"].sensors["laser1"]
        path = tmp_path / f"{wanted}.mcap"
        with Recorder(world, path, include=include):
            assert laser.readers == (frozenset({"record"}) if wanted else frozenset())
            world.run(1.0)
        assert laser.readers == frozenset()  # released when the recording ends
        assert (laser.last is not None) == wanted
        with AnyReader([path], default_typestore=TYPESTORE) as r:
            counts = {c.topic: c.msgcount for c in r.connections}
        assert counts.get("/bot1/laser1", 0) == (10 if wanted else 0)


def test_a_truncated_file_still_gives_its_complete_chunks(recording, tmp_path):
    """What SIGKILL leaves: the file cut anywhere; mcap's NonSeekingReader (log_time_order=False: it yields as it
    reads) gives the messages of the whole chunks."""
    data = recording[0].read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: int(len(data) * 0.7)])
    stamps = []
    with open(cut, "rb") as f:
        try:
            for _, channel, m in NonSeekingReader(f).iter_messages(log_time_order=False):
                if channel.topic == "/bot1/odom":
                    stamps.append(m.log_time)
        except Exception:  # noqa: BLE001 (the truncated end)
            pass
    assert stamps and stamps[0] == 0 and stamps[-1] >= 1_000_000_000


def test_cmd_vel_as_given(tmp_path):
    """Twists given during the recording are on /bot1/cmd_vel at the simulated time they came, as given: one beyond
    the vehicle's limits unclamped (the vehicle drives at its limit), in order; a vehicle with none has no messages."""
    world = mv.load_world(REPO / "worlds/demo.world.xml")
    bot = world.vehicles["bot1"]
    path = tmp_path / "cmd.mcap"
    with Recorder(world, path):
        world.run(0.5)
        bot.set_twist(0.4, 0.0, 0.2)
        world.run(0.25)
        bot.set_twist(99.0, 0.0, -0.1)  # clamped by the command gate, recorded as given
        world.run(0.25)
    assert bot.command_listeners == []  # the recorder left
    with AnyReader([path], default_typestore=TYPESTORE) as r:
        got = [(t, r.deserialize(raw, con.msgtype)) for con, t, raw in r.messages() if con.topic == "/bot1/cmd_vel"]
        counts = {c.topic: c.msgcount for c in r.connections}
    assert [t for t, _ in got] == [500_000_000, 750_000_000]
    assert [(m.linear.x, m.linear.y, m.angular.z) for _, m in got] == [(0.4, 0.0, 0.2), (99.0, 0.0, -0.1)]
    assert counts.get("/car1/cmd_vel", 0) == 0
    assert bot.twist[0] < 99.0


def test_vehicle_channels_follow_the_declared_outputs(tmp_path):
    """The recorder knows output kinds, not names: bot1 declaring its odometry as ``wheel_odom`` in a frame
    ``chassis`` and no ground truth is recorded as exactly that."""
    from mvsim_core.outputs import Output, OutputKind

    world = mv.load_world(REPO / "worlds/demo.world.xml")
    veh = world.vehicles["bot1"]
    base = veh.outputs()
    veh.outputs = lambda: (Output(OutputKind.ODOMETRY, "wheel_odom", "chassis", 0.0, options={"parent": "odom"},
                                  observe=base[0].observe), base[2])
    path = tmp_path / "renamed.mcap"
    with Recorder(world, path):
        world.run(0.1)
    with AnyReader([path], default_typestore=TYPESTORE) as r:
        counts = {c.topic: c.msgcount for c in r.connections}
        odom = [r.deserialize(raw, con.msgtype) for con, _, raw in r.messages()
                if con.topic == "/bot1/wheel_odom"]
    assert counts["/bot1/wheel_odom"] == 6 and counts["/bot1/collision"] == 6  # 0, 0.02, ..., 0.1 s
    assert "/bot1/base_pose_ground_truth" not in counts and "/bot1/odom" not in counts
    assert counts["/car1/base_pose_ground_truth"] == 6
    assert (odom[-1].header.frame_id, odom[-1].child_frame_id) == ("odom", "chassis")

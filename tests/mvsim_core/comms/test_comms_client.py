"""The Python client against a live server: topics between clients, services, errors, timeouts."""

from __future__ import annotations

import queue
import threading
import time

import pytest

from mvsim_core.comms import Client, CommsError, CommsTimeout, ServiceError, UnexpectedMessageError
from mvsim_core.comms.framing import pack
from mvsim_core.comms.proto import (
    GenericAnswer_pb2,
    Pose_pb2,
    SrvGetPose_pb2,
    SrvGetPoseAnswer_pb2,
    SrvShutdown_pb2,
    SrvShutdownAnswer_pb2,
    TimeStampedPose_pb2,
)


def _pose(x: float) -> TimeStampedPose_pb2.TimeStampedPose:
    m = TimeStampedPose_pb2.TimeStampedPose(unixTimestamp=x, objectId="r1")
    m.pose.x, m.pose.y, m.pose.z, m.pose.yaw, m.pose.pitch, m.pose.roll = x, 2.0, 0.0, 0.5, 0.0, 0.0
    return m


def _wait(cond, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not met in time"
        time.sleep(0.01)


def test_register_and_list(make_client):
    a = make_client("alpha")
    make_client("beta")
    assert a.list_nodes() == ["alpha", "beta"]
    assert a.list_nodes("b") == ["beta"]
    q = make_client("quiet", register=False)
    assert q.list_nodes() == ["alpha", "beta"]
    a.shutdown()
    assert q.list_nodes() == ["beta"]


def test_publish_subscribe_between_clients(make_client):
    pub = make_client("pub")
    sub = make_client("sub")
    got: queue.Queue = queue.Queue()
    sub.subscribe("/r1/pose", lambda t, p: got.put((t, p, threading.current_thread().name)))  # before advertising
    pub.advertise_topic("/r1/pose", TimeStampedPose_pb2.TimeStampedPose)
    assert not pub.publish("/r1/pose", _pose(0.0)) or True  # may already have the subscriber
    _wait(lambda: pub.has_subscribers("/r1/pose"))
    for i in range(5):
        assert pub.publish("/r1/pose", _pose(float(i + 1)))
    msgs = []
    while len(msgs) < 5:
        type_name, payload, thread = got.get(timeout=10)
        m = Client.decode(type_name, payload)
        if m.unixTimestamp >= 1:
            msgs.append(m)
    assert type_name == "mvsim_msgs.TimeStampedPose"
    assert thread.startswith("mvsim-client-topics-sub")
    assert [m.unixTimestamp for m in msgs] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert (msgs[0].objectId, msgs[0].pose.y, msgs[0].pose.yaw) == ("r1", 2.0, 0.5)
    [info] = sub.list_topics()
    assert (info.topicName, info.topicType, list(info.publisherName)) == ("/r1/pose", "mvsim_msgs.TimeStampedPose",
                                                                          ["pub"])
    assert info.publisherEndpoint[0].startswith("tcp://127.0.0.1:")


def test_nothing_is_sent_without_subscribers(make_client):
    pub = make_client("pub")
    pub.advertise_topic("/lonely", Pose_pb2.Pose)
    assert not pub.has_subscribers("/lonely")
    assert pub.publish("/lonely", Pose_pb2.Pose(x=0, y=0, z=0, yaw=0, pitch=0, roll=0)) is False


def test_subscriber_reconnects_to_a_new_publisher(make_client):
    sub = make_client("sub")
    got: queue.Queue = queue.Queue()
    sub.subscribe("/t", lambda t, p: got.put(p))
    for round_ in range(2):
        pub = make_client(f"pub{round_}")
        pub.advertise_topic("/t", TimeStampedPose_pb2.TimeStampedPose)
        _wait(lambda pub=pub: pub.has_subscribers("/t"))
        assert pub.publish("/t", _pose(10.0 + round_))
        assert TimeStampedPose_pb2.TimeStampedPose.FromString(got.get(timeout=10)).unixTimestamp == 10.0 + round_
        pub.shutdown()


def test_publish_checks_the_type_and_the_topic(make_client):
    pub = make_client("pub")
    pub.advertise_topic("/p", TimeStampedPose_pb2.TimeStampedPose)
    with pytest.raises(CommsError, match="Topic `/p` has type `mvsim_msgs.TimeStampedPose`, not `mvsim_msgs.Pose`"):
        pub.publish("/p", Pose_pb2.Pose())
    with pytest.raises(CommsError, match="Topic `/q` has not been advertised by this client"):
        pub.publish("/q", _pose(1))
    with pytest.raises(CommsError, match="Topic `/p` already advertised by this client"):
        pub.advertise_topic("/p", TimeStampedPose_pb2.TimeStampedPose)
    other = make_client("other")
    with pytest.raises(CommsError, match=r"Error registering topic `/p` in server: `Trying to register topic `/p` "
                                         r"\[mvsim_msgs.Pose\] but already known"):
        other.advertise_topic("/p", Pose_pb2.Pose)


def test_services_between_clients(make_client):
    srv = make_client("provider")
    calls = []

    def get_pose(req: SrvGetPose_pb2.SrvGetPose) -> SrvGetPoseAnswer_pb2.SrvGetPoseAnswer:
        calls.append(threading.current_thread().name)
        if req.objectId == "boom":
            raise ValueError("exploded")
        ans = SrvGetPoseAnswer_pb2.SrvGetPoseAnswer(success=True, objectIsInCollision=False)
        ans.pose.x, ans.pose.y, ans.pose.z, ans.pose.yaw, ans.pose.pitch, ans.pose.roll = 1.5, -2, 0, 0.25, 0, 0
        return ans

    srv.advertise_service("get_pose", SrvGetPose_pb2.SrvGetPose, SrvGetPoseAnswer_pb2.SrvGetPoseAnswer, get_pose)
    c = make_client("caller")
    ans = c.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1"))
    assert isinstance(ans, SrvGetPoseAnswer_pb2.SrvGetPoseAnswer)
    assert (ans.success, ans.pose.x, ans.pose.y, ans.pose.yaw) == (True, 1.5, -2.0, 0.25)
    assert calls == ["mvsim-client-services-provider"]
    # upstream's bytes-in, bytes-out call
    raw = c.callService("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1").SerializeToString())
    assert SrvGetPoseAnswer_pb2.SrvGetPoseAnswer.FromString(raw).pose.x == 1.5
    with pytest.raises(ServiceError, match="service `get_pose` failed: service handler failed: ValueError: exploded"):
        c.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="boom"))
    with pytest.raises(ServiceError, match="Error requesting information about service `teleport`: Could not find "
                                           "service `teleport`"):
        c.call_service("teleport", SrvGetPose_pb2.SrvGetPose(objectId="r1"))
    with pytest.raises(ServiceError, match="input of service `get_pose`: payload of 0 bytes is not a valid "
                                           "mvsim_msgs.SrvGetPose: missing required field"):
        c.call_service("get_pose", SrvShutdown_pb2.SrvShutdown())
    with pytest.raises(UnexpectedMessageError, match="expected a mvsim_msgs.SrvShutdownAnswer message, got "
                                                     "mvsim_msgs.SrvGetPoseAnswer"):
        c.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1"), SrvShutdownAnswer_pb2.SrvShutdownAnswer)
    # the provider still serves after all that
    assert c.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1")).success
    with pytest.raises(CommsError, match="Service `get_pose` already registered in this same client"):
        srv.advertise_service("get_pose", SrvGetPose_pb2.SrvGetPose, SrvGetPoseAnswer_pb2.SrvGetPoseAnswer, get_pose)


def test_unknown_service_at_the_provider(make_client, server):
    """A server record pointing at a node that does not offer the service: upstream's error text."""
    srv = make_client("provider")
    srv.advertise_service("a", SrvGetPose_pb2.SrvGetPose, SrvGetPoseAnswer_pb2.SrvGetPoseAnswer, lambda r: None)
    server.services["b"] = type(server.services["a"])("b", "x.A", "x.B", server.services["a"].endpoint, "provider")
    c = make_client("caller")
    with pytest.raises(ServiceError, match="service `b` failed: Requested unknown service `b`"):
        c.call_service_raw("b", b"")


def test_calls_from_many_threads(make_client):
    srv = make_client("provider")
    srv.advertise_service("echo", SrvGetPose_pb2.SrvGetPose, GenericAnswer_pb2.GenericAnswer,
                          lambda r: GenericAnswer_pb2.GenericAnswer(success=True, errorMessage=r.objectId))
    c = make_client("caller")
    errors: list[str] = []

    def worker(k: int) -> None:
        for i in range(20):
            a = c.call_service("echo", SrvGetPose_pb2.SrvGetPose(objectId=f"{k}-{i}"))
            if a.errorMessage != f"{k}-{i}":
                errors.append(a.errorMessage)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []


def test_no_server_is_a_timeout_with_advice():
    c = Client("lost", port=1, timeout=0.3)
    t = time.perf_counter()
    with pytest.raises(CommsTimeout, match=r"no answer from the MVSim server at tcp://127.0.0.1:1 within 0.3 s; is "
                                           r"the simulator \(mvsim launch\) or `mvsim server` running"):
        c.connect()
    assert time.perf_counter() - t < 3.0
    assert not c.connected


def test_not_connected_errors():
    c = Client("x")
    with pytest.raises(CommsError, match="client 'x' is not connected; call connect\\(\\) first"):
        c.list_nodes()
    with pytest.raises(CommsError, match="not connected"):
        c.subscribe("/t", lambda t, p: None)


def test_a_failing_callback_does_not_stop_the_others(make_client):
    pub = make_client("pub")
    sub = make_client("sub")
    got: queue.Queue = queue.Queue()

    def bad(t: str, p: bytes) -> None:
        raise RuntimeError("callback bug")

    sub.subscribe("/t", bad)
    sub.subscribe("/t", lambda t, p: got.put(p))
    pub.advertise_topic("/t", TimeStampedPose_pb2.TimeStampedPose)
    _wait(lambda: pub.has_subscribers("/t"))
    for i in range(3):
        pub.publish("/t", _pose(float(i)))
    assert [TimeStampedPose_pb2.TimeStampedPose.FromString(got.get(timeout=10)).unixTimestamp
            for _ in range(3)] == [0.0, 1.0, 2.0]


def test_malformed_data_on_a_topic_is_skipped(make_client):
    pub = make_client("pub")
    sub = make_client("sub")
    got: queue.Queue = queue.Queue()
    sub.subscribe("/t", lambda t, p: got.put((t, p)))
    pub.advertise_topic("/t", TimeStampedPose_pb2.TimeStampedPose)
    _wait(lambda: pub.has_subscribers("/t"))
    with pub._publishers["/t"].lock:
        pub._publishers["/t"].sock.send(b"\x01\x02garbage")
    pub.publish_raw("/t", "mvsim_msgs.TimeStampedPose", _pose(7.0).SerializeToString())
    t, p = got.get(timeout=10)
    assert t == "mvsim_msgs.TimeStampedPose" and TimeStampedPose_pb2.TimeStampedPose.FromString(p).unixTimestamp == 7


def test_frames_are_upstream_framing(make_client):
    """What a publisher sends is exactly [u32 len][type][u32 len][bytes]."""
    import zmq

    pub = make_client("pub")
    ep = pub.advertise_topic("/t", TimeStampedPose_pb2.TimeStampedPose)
    ctx = zmq.Context()
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.SUBSCRIBE, b"")
    s.connect(ep)
    try:
        _wait(lambda: pub.has_subscribers("/t"))
        msg = _pose(3.0)
        pub.publish("/t", msg)
        assert s.poll(5000)
        assert s.recv() == pack("mvsim_msgs.TimeStampedPose", msg.SerializeToString())
    finally:
        s.close(linger=0)
        ctx.term()

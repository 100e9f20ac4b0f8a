"""The comms server over real sockets: registries, answers, topic-update notifications, error answers."""

from __future__ import annotations

import re
import socket

import pytest
import zmq

from mvsim_core.comms import AddressInUse, CommsError, Server
from mvsim_core.comms.framing import pack, pack_message, parse, unpack
from mvsim_core.comms.proto import (
    AdvertiseServiceRequest_pb2,
    AdvertiseTopicRequest_pb2,
    GenericAnswer_pb2,
    GetServiceInfoAnswer_pb2,
    GetServiceInfoRequest_pb2,
    ListNodesAnswer_pb2,
    ListNodesRequest_pb2,
    ListTopicsAnswer_pb2,
    ListTopicsRequest_pb2,
    RegisterNodeAnswer_pb2,
    RegisterNodeRequest_pb2,
    SubscribeAnswer_pb2,
    SubscribeRequest_pb2,
    TopicInfo_pb2,
    UnregisterNodeRequest_pb2,
)


class Raw:
    """A bare REQ socket speaking frames to the server (what any upstream client does)."""

    def __init__(self, server: Server) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.REQ)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(f"tcp://127.0.0.1:{server.port}")

    def ask(self, msg, answer_cls=None):
        return self.ask_frame(pack_message(msg), answer_cls)

    def ask_frame(self, frame: bytes, answer_cls=None):
        self.sock.send(frame)
        assert self.sock.poll(5000), "no answer within 5 s"
        reply = self.sock.recv()
        return parse(reply, answer_cls) if answer_cls else unpack(reply)

    def close(self) -> None:
        self.sock.close()
        self.ctx.term()


@pytest.fixture
def raw(server):
    r = Raw(server)
    yield r
    r.close()


def _register(raw, name):
    req = RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName=name)
    return raw.ask(req, RegisterNodeAnswer_pb2.RegisterNodeAnswer)


def _nodes(raw, prefix=None):
    req = ListNodesRequest_pb2.ListNodesRequest()
    if prefix is not None:
        req.nodeStartsWith = prefix
    return list(raw.ask(req, ListNodesAnswer_pb2.ListNodesAnswer).nodes)


def _topics(raw, prefix=None):
    req = ListTopicsRequest_pb2.ListTopicsRequest()
    if prefix is not None:
        req.topicStartsWith = prefix
    return {t.topicName: (t.topicType, list(t.publisherName), list(t.publisherEndpoint))
            for t in raw.ask(req, ListTopicsAnswer_pb2.ListTopicsAnswer).topics}


def _advertise(raw, topic, type_name, endpoint, node):
    return raw.ask(AdvertiseTopicRequest_pb2.AdvertiseTopicRequest(topicName=topic, topicTypeName=type_name,
                                                                    endpoint=endpoint, nodeName=node),
                   GenericAnswer_pb2.GenericAnswer)


def test_binds_loopback_by_default(server):
    assert server.endpoint == f"tcp://127.0.0.1:{server.port}"
    assert server.port > 0
    assert Server().port == 23700 and Server().bind_host == "127.0.0.1"
    # nothing listens on the port on another address of this machine
    others = {ai[4][0] for ai in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
    for addr in others:
        if addr.startswith("127."):
            continue
        with socket.socket() as s:
            s.settimeout(1.0)
            assert s.connect_ex((addr, server.port)) != 0


def test_busy_port_is_a_clear_error(server):
    with pytest.raises(AddressInUse, match=re.escape(f"cannot listen on tcp://127.0.0.1:{server.port}: Address "
                                                     f"already in use (another simulation or MVSim server?)")) as e:
        Server(port=server.port).start()
    assert e.value.port == server.port and isinstance(e.value, CommsError)


def test_register_list_and_unregister_nodes(raw):
    assert _nodes(raw) == []
    for n in ("World", "teleop", "tool-1"):
        ans = _register(raw, n)
        assert ans.success and not ans.HasField("errorMessage")
    assert _nodes(raw) == ["World", "teleop", "tool-1"]
    assert _nodes(raw, "t") == ["teleop", "tool-1"]
    assert _nodes(raw, "zzz") == []
    ans = raw.ask(UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName="teleop"), GenericAnswer_pb2.GenericAnswer)
    assert ans.success
    assert _nodes(raw) == ["World", "tool-1"]
    ans = raw.ask(RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName=""), GenericAnswer_pb2.GenericAnswer)
    assert not ans.success and ans.errorMessage == "nodeName must not be empty"


def test_topics_registry_and_type_conflict(raw):
    assert _advertise(raw, "/r1/pose", "mvsim_msgs.TimeStampedPose", "tcp://127.0.0.1:40001", "World").success
    assert _advertise(raw, "/r1/pose", "mvsim_msgs.TimeStampedPose", "tcp://127.0.0.1:40002", "other").success
    assert _advertise(raw, "/r2/pose", "mvsim_msgs.TimeStampedPose", "tcp://127.0.0.1:40003", "World").success
    bad = _advertise(raw, "/r1/pose", "mvsim_msgs.Pose", "tcp://127.0.0.1:40004", "x")
    assert not bad.success
    assert bad.errorMessage == ("Trying to register topic `/r1/pose` [mvsim_msgs.Pose] but already known with type "
                                "[mvsim_msgs.TimeStampedPose]")
    bad = _advertise(raw, "/r3", "mvsim_msgs.Pose", "http://example.org", "x")
    assert not bad.success and "is not tcp://HOST:PORT or ipc://PATH" in bad.errorMessage
    assert _topics(raw) == {
        "/r1/pose": ("mvsim_msgs.TimeStampedPose", ["World", "other"], ["tcp://127.0.0.1:40001",
                                                                         "tcp://127.0.0.1:40002"]),
        "/r2/pose": ("mvsim_msgs.TimeStampedPose", ["World"], ["tcp://127.0.0.1:40003"]),
    }
    assert list(_topics(raw, "/r2")) == ["/r2/pose"]
    # unregistering a node drops its publishers, and topics nobody publishes or subscribes
    raw.ask(UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName="World"), GenericAnswer_pb2.GenericAnswer)
    assert _topics(raw) == {"/r1/pose": ("mvsim_msgs.TimeStampedPose", ["other"], ["tcp://127.0.0.1:40002"])}


def test_services_registry(raw):
    def adv(name, tin, tout, ep, node):
        return raw.ask(AdvertiseServiceRequest_pb2.AdvertiseServiceRequest(
            serviceName=name, inputTypeName=tin, outputTypeName=tout, endpoint=ep, nodeName=node),
            GenericAnswer_pb2.GenericAnswer)

    def info(name):
        return raw.ask(GetServiceInfoRequest_pb2.GetServiceInfoRequest(serviceName=name),
                       GetServiceInfoAnswer_pb2.GetServiceInfoAnswer)

    assert adv("get_pose", "mvsim_msgs.SrvGetPose", "mvsim_msgs.SrvGetPoseAnswer", "tcp://127.0.0.1:41000",
               "World").success
    a = info("get_pose")
    assert (a.success, a.serviceEndpoint, a.serviceNodeName) == (True, "tcp://127.0.0.1:41000", "World")
    a = info("teleport")
    assert not a.success and a.errorMessage == "Could not find service `teleport`"
    bad = adv("get_pose", "mvsim_msgs.SrvSetPose", "mvsim_msgs.SrvGetPoseAnswer", "tcp://127.0.0.1:41001", "x")
    assert not bad.success
    assert bad.errorMessage == ("Trying to register service `get_pose` [mvsim_msgs.SrvSetPose->"
                                "mvsim_msgs.SrvGetPoseAnswer] but already known with types [mvsim_msgs.SrvGetPose->"
                                "mvsim_msgs.SrvGetPoseAnswer]")
    # the same types from a new endpoint: the last offer wins
    assert adv("get_pose", "mvsim_msgs.SrvGetPose", "mvsim_msgs.SrvGetPoseAnswer", "tcp://127.0.0.1:41002",
               "World2").success
    assert info("get_pose").serviceEndpoint == "tcp://127.0.0.1:41002"
    raw.ask(UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName="World2"), GenericAnswer_pb2.GenericAnswer)
    assert not info("get_pose").success


def test_subscribe_sends_topic_updates_to_the_pair_endpoint(raw):
    """As upstream: a TopicInfo now, and again whenever publishers change; the subscriber acknowledges each."""
    ctx = zmq.Context()
    pair = ctx.socket(zmq.PAIR)
    pair.setsockopt(zmq.LINGER, 0)
    pair.bind("tcp://127.0.0.1:*")
    ep = pair.getsockopt_string(zmq.LAST_ENDPOINT)

    def next_update() -> TopicInfo_pb2.TopicInfo:
        assert pair.poll(5000), "no topic update within 5 s"
        info = parse(pair.recv(), TopicInfo_pb2.TopicInfo)
        pair.send(pack_message(GenericAnswer_pb2.GenericAnswer(success=True)))
        return info

    try:
        ans = raw.ask(SubscribeRequest_pb2.SubscribeRequest(topic="/r1/laser1_scan", updatesEndpoint=ep),
                      SubscribeAnswer_pb2.SubscribeAnswer)
        assert (ans.topic, ans.success) == ("/r1/laser1_scan", True)
        first = next_update()
        assert (first.topicName, first.topicType, list(first.publisherEndpoint)) == ("/r1/laser1_scan", "", [])
        assert _topics(raw) == {"/r1/laser1_scan": ("", [], [])}
        _advertise(raw, "/r1/laser1_scan", "mvsim_msgs.ObservationLidar2D", "tcp://127.0.0.1:42000", "World")
        second = next_update()
        assert second.topicType == "mvsim_msgs.ObservationLidar2D"
        assert list(second.publisherName) == ["World"]
        assert list(second.publisherEndpoint) == ["tcp://127.0.0.1:42000"]
        raw.ask(UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName="World"), GenericAnswer_pb2.GenericAnswer)
        assert list(next_update().publisherEndpoint) == []
        bad = raw.ask(SubscribeRequest_pb2.SubscribeRequest(topic="/x", updatesEndpoint="nowhere"),
                      SubscribeAnswer_pb2.SubscribeAnswer)
        assert (bad.topic, bad.success) == ("/x", False)
    finally:
        pair.close()
        ctx.term()


@pytest.mark.parametrize(("frame", "error"), [
    (b"hello", "frame of 5 bytes is too short: need at least 8 (two uint32 lengths)"),
    (pack("mvsim_msgs.SrvGetPose", b"\x0a\x02r1"),
     "unknown request type mvsim_msgs.SrvGetPose; the server answers mvsim_msgs.AdvertiseServiceRequest, "
     "mvsim_msgs.AdvertiseTopicRequest, mvsim_msgs.GetServiceInfoRequest, mvsim_msgs.ListNodesRequest, "
     "mvsim_msgs.ListTopicsRequest, mvsim_msgs.RegisterNodeRequest, mvsim_msgs.SubscribeRequest, "
     "mvsim_msgs.UnregisterNodeRequest"),
    (pack("mvsim_msgs.RegisterNodeRequest", b""),
     "payload of 0 bytes is not a valid mvsim_msgs.RegisterNodeRequest: missing required field(s) nodeName"),
    (pack("mvsim_msgs.RegisterNodeRequest", b"\x0a\x10ab"),
     "payload of 4 bytes is not a valid mvsim_msgs.RegisterNodeRequest: Error parsing message with type "
     "'mvsim_msgs.RegisterNodeRequest': Wire format was corrupt"),
    (b"\xff\xff\xff\xff" + b"x" * 20, "type-name length 4294967295 out of range 1..512"),
    (b"\x05\x00\x00\x00a.b.c\xff\xff\xff\x7f" + b"x" * 10,
     "truncated payload: length field says 2147483647 bytes, the frame holds 10"),
])
def test_bad_requests_get_an_error_answer_and_the_server_goes_on(raw, server, frame, error):
    ans = raw.ask_frame(frame, GenericAnswer_pb2.GenericAnswer)
    assert not ans.success
    assert ans.errorMessage == error
    assert raw.ask(RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="after"),
                   RegisterNodeAnswer_pb2.RegisterNodeAnswer).success
    assert server.errors == 1 and server.requests == 2


def test_multipart_request_is_refused(raw):
    raw.sock.send_multipart([b"a", b"b"])
    assert raw.sock.poll(5000)
    ans = parse(raw.sock.recv(), GenericAnswer_pb2.GenericAnswer)
    assert ans.errorMessage == "expected one frame per request, got 2"


def test_oversized_request_drops_only_that_peer(server, raw):
    """A frame above the size limit makes ZMQ drop the sender; the server keeps answering the others."""
    big = Raw(server)
    try:
        big.sock.send(pack("mvsim_msgs.RegisterNodeRequest", b"\x0a" + b"x" * (2 << 20)))
        assert not big.sock.poll(500)
    finally:
        big.close()
    assert _nodes(raw) == []


def test_many_nodes_are_bounded(raw, monkeypatch):
    import mvsim_core.comms.server as srv

    monkeypatch.setattr(srv, "MAX_NODES", 3)
    for i in range(3):
        _register(raw, f"n{i}")
    ans = _register(raw, "n3")
    assert not ans.success and ans.errorMessage == "too many nodes registered (3)"
    # re-registering a known name is always possible
    assert raw.ask(RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="n1"),
                   RegisterNodeAnswer_pb2.RegisterNodeAnswer).success


def test_stop_is_prompt_and_idempotent():
    import time

    srv = Server(port=0).start()
    t = time.perf_counter()
    srv.stop()
    srv.stop()
    assert time.perf_counter() - t < 2.0
    assert not srv.running

"""The one name rule (mvsim_core.comms.names) and where it is applied: the server refuses bad node, topic and
service names cleanly, the client refuses to make them, a world's bad topic is left unpublished with a warning."""

from __future__ import annotations

import pytest

from mvsim_core.comms import InvalidName, Server
from mvsim_core.comms.framing import pack_message, parse
from mvsim_core.comms.names import MAX_NAME_LENGTH, RULE, check_name, is_valid_name, name_problem
from mvsim_core.comms.proto import (
    AdvertiseServiceRequest_pb2,
    AdvertiseTopicRequest_pb2,
    GenericAnswer_pb2,
    GetServiceInfoAnswer_pb2,
    GetServiceInfoRequest_pb2,
    ListNodesAnswer_pb2,
    ListNodesRequest_pb2,
    RegisterNodeAnswer_pb2,
    RegisterNodeRequest_pb2,
    SubscribeRequest_pb2,
    UnregisterNodeRequest_pb2,
)

GOOD = ["World", "get_pose", "/r1/laser1_scan", "r1/pose", "mvsim-cli-1234", "tool-1", "_x", "1", "/a.b/c-d_e",
        "a" * MAX_NAME_LENGTH]
BAD = {
    "": "is empty",
    "../../": "has the token '..'",
    "tcp://x": "has the token 'tcp:'",
    "//": "has an empty token ('//' or a trailing '/')",
    "/a//b": "has an empty token ('//' or a trailing '/')",
    "/r1/": "has an empty token ('//' or a trailing '/')",
    "/": "has no token after '/'",
    "./x": "has the token '.'",
    "-x": "has the token '-x'",
    "r1 ": "has a space, control or non-ASCII character (' ') at position 2",
    "a\nb": "has a space, control or non-ASCII character ('\\n') at position 1",
    "a\x7f": "has a space, control or non-ASCII character ('\\x7f') at position 1",
    "rób": "has a space, control or non-ASCII character ('ó') at position 1",
    "a" * (MAX_NAME_LENGTH + 1): f"is {MAX_NAME_LENGTH + 1} characters long; the limit is {MAX_NAME_LENGTH}",
    "~/private": "has the token '~'",
    "{node}/x": "has the token '{node}'",
}


@pytest.mark.parametrize("name", GOOD)
def test_valid_names(name):
    assert name_problem(name) is None and is_valid_name(name) and check_name("topic", name) == name


@pytest.mark.parametrize(("name", "problem"), BAD.items())
def test_invalid_names_say_why(name, problem):
    assert name_problem(name) == problem and not is_valid_name(name)
    with pytest.raises(InvalidName) as e:
        check_name("topicName", name)
    if name:
        assert str(e.value).startswith(f"topicName {name[:64] + ('...' if len(name) > 64 else '')!r} is not a valid "
                                       f"name: {problem}; names are tokens separated by single '/'")
    else:
        assert str(e.value) == "topicName must not be empty"


def _ask(srv: Server, msg, answer=GenericAnswer_pb2.GenericAnswer):
    return parse(srv.handle(pack_message(msg)), answer)


@pytest.mark.parametrize("bad", ["../../", "tcp://x", "//", "a\x01b", "é", "", "n" * 300])
def test_server_refuses_bad_names_in_every_request(bad):
    srv = Server(port=0)  # not started: handle() alone
    reqs = [
        ("nodeName", RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName=bad)),
        ("nodeName", UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName=bad)),
        ("topicName", AdvertiseTopicRequest_pb2.AdvertiseTopicRequest(
            topicName=bad, topicTypeName="mvsim_msgs.Pose", endpoint="tcp://127.0.0.1:9", nodeName="n")),
        ("nodeName", AdvertiseTopicRequest_pb2.AdvertiseTopicRequest(
            topicName="/t", topicTypeName="mvsim_msgs.Pose", endpoint="tcp://127.0.0.1:9", nodeName=bad)),
        ("serviceName", AdvertiseServiceRequest_pb2.AdvertiseServiceRequest(
            serviceName=bad, inputTypeName="a.B", outputTypeName="a.C", endpoint="tcp://127.0.0.1:9", nodeName="n")),
        ("nodeName", AdvertiseServiceRequest_pb2.AdvertiseServiceRequest(
            serviceName="s", inputTypeName="a.B", outputTypeName="a.C", endpoint="tcp://127.0.0.1:9", nodeName=bad)),
        ("topic", SubscribeRequest_pb2.SubscribeRequest(topic=bad, updatesEndpoint="tcp://127.0.0.1:9")),
    ]
    for field, req in reqs:
        ans = _ask(srv, req)
        assert not ans.success
        assert ans.errorMessage.startswith(f"{field} "), ans.errorMessage
        assert "internal error" not in ans.errorMessage
    info = _ask(srv, GetServiceInfoRequest_pb2.GetServiceInfoRequest(serviceName=bad),
                GetServiceInfoAnswer_pb2.GetServiceInfoAnswer)
    assert not info.success and info.errorMessage.startswith("serviceName ")
    assert srv.errors == len(reqs) + 1
    assert _ask(srv, ListNodesRequest_pb2.ListNodesRequest(), ListNodesAnswer_pb2.ListNodesAnswer).nodes == []
    assert srv.topics == {} and srv.services == {}


def test_server_refusal_text():
    srv = Server(port=0)
    ans = _ask(srv, RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="../../"))
    assert ans.errorMessage == f"nodeName '../../' is not a valid name: has the token '..'; {RULE}"
    ok = parse(srv.handle(pack_message(RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="mvsim-cli-7"))),
               RegisterNodeAnswer_pb2.RegisterNodeAnswer)
    assert ok.success and list(srv.nodes) == ["mvsim-cli-7"]


def test_client_refuses_to_make_bad_names(server, make_client):
    from mvsim_core.comms import Client

    c = make_client("good")
    with pytest.raises(InvalidName, match=r"^topic name 'tcp://x' is not a valid name: has the token 'tcp:'"):
        c.advertise_topic("tcp://x", "mvsim_msgs.Pose")
    assert c._publishers == {}  # no socket was opened for it
    with pytest.raises(InvalidName, match=r"^topic name '/a//b' is not a valid name"):
        c.subscribe("/a//b", lambda t, p: None)
    with pytest.raises(InvalidName, match=r"^service name '../x' is not a valid name"):
        c.advertise_service("../x", GenericAnswer_pb2.GenericAnswer, GenericAnswer_pb2.GenericAnswer,
                            lambda r: r)
    bad = Client("bad name", port=server.port, timeout=5.0)
    with pytest.raises(InvalidName, match=r"^node name 'bad name' is not a valid name: has a space"):
        bad.connect()
    assert not bad.connected
    assert c.list_nodes() == ["good"] and c.list_topics() == []


def test_world_topic_breaking_the_rule_is_left_unpublished(server, tmp_path, caplog):
    from mvsim_core import load_world
    from mvsim_core.comms import Client, WorldComms

    world = tmp_path / "w.world.xml"
    world.write_text("""<mvsim_world version="1.0">
  <vehicle name="bad robot" class="">
    <init_pose>0 0 0</init_pose>
    <dynamics class="differential"/>
    <publish><publish_topic>/${NAME}/pose</publish_topic></publish>
  </vehicle>
  <vehicle name="good" class="">
    <init_pose>5 0 0</init_pose>
    <dynamics class="differential"/>
    <publish><publish_topic>/${NAME}/pose</publish_topic></publish>
  </vehicle>
</mvsim_world>
""")
    w = load_world(world)
    with caplog.at_level("WARNING", logger="mvsim.comms"), \
            WorldComms(w, port=server.port, timeout=10.0), Client("look", port=server.port, timeout=10.0) as c:
        assert [t.topicName for t in c.list_topics()] == ["/good/pose"]
    assert any("object 'bad robot': ZMQ topic '/bad robot/pose' not published: it has a space, control or "
               "non-ASCII character (' ') at position 4" in r.getMessage() for r in caplog.records)

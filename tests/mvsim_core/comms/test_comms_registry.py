"""Only the World can register the World's services: a World served in the server's process (mvsim launch) is
protected from clients over the wire (issue 14, item 6). Real sockets, real World."""

from __future__ import annotations

import pytest
import zmq

import mvsim_core as mv
from mvsim_core.comms import Client, WorldComms
from mvsim_core.comms.framing import pack_message, parse
from mvsim_core.comms.proto import (
    AdvertiseServiceRequest_pb2,
    AdvertiseTopicRequest_pb2,
    GenericAnswer_pb2,
    GetServiceInfoAnswer_pb2,
    GetServiceInfoRequest_pb2,
    RegisterNodeAnswer_pb2,
    RegisterNodeRequest_pb2,
    SrvGetPose_pb2,
    SrvGetPoseAnswer_pb2,
    UnregisterNodeRequest_pb2,
)

OWNED = "node `World` is served in the server's own process: "


class Wire:
    """A bare REQ socket: what any client, upstream's included, sends."""

    def __init__(self, port: int) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.REQ)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(f"tcp://127.0.0.1:{port}")

    def ask(self, msg, answer_cls):
        self.sock.send(pack_message(msg))
        assert self.sock.poll(5000), "no answer within 5 s"
        return parse(self.sock.recv(), answer_cls)

    def close(self) -> None:
        self.sock.close()
        self.ctx.term()


@pytest.fixture
def wire(server):
    w = Wire(server.port)
    yield w
    w.close()


def _service(name, node, endpoint="tcp://127.0.0.1:1"):
    kind = "SrvSetPose" if name == "set_pose" else "SrvGetPose"  # the World's own types: only ownership is wrong
    return AdvertiseServiceRequest_pb2.AdvertiseServiceRequest(
        serviceName=name, inputTypeName=f"mvsim_msgs.{kind}", outputTypeName=f"mvsim_msgs.{kind}Answer",
        endpoint=endpoint, nodeName=node)


def _info(wire, name):
    return wire.ask(GetServiceInfoRequest_pb2.GetServiceInfoRequest(serviceName=name),
                    GetServiceInfoAnswer_pb2.GetServiceInfoAnswer)


@pytest.fixture
def local_world(comms_world_file, server):
    world = mv.load_world(comms_world_file).start()
    comms = WorldComms(world, port=server.port, timeout=10.0, server=server).attach()
    yield world, comms
    comms.close()


def test_clients_cannot_take_over_or_remove_a_world_served_in_process(server, local_world, wire):
    world, comms = local_world
    endpoint = _info(wire, "get_pose").serviceEndpoint
    assert server.local_nodes == {"World"} and endpoint.startswith("tcp://127.0.0.1:")
    refused = [
        (RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="World"), RegisterNodeAnswer_pb2.RegisterNodeAnswer,
         "another client cannot register under its name; choose another nodeName"),
        (UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName="World"), GenericAnswer_pb2.GenericAnswer,
         "only that node can unregister itself"),
        (_service("set_pose", "evil"), GenericAnswer_pb2.GenericAnswer,
         "it offers service `set_pose`, which no other node can take over"),
        (_service("my_service", "World"), GenericAnswer_pb2.GenericAnswer,
         "another client cannot advertise service `my_service` under its name"),
        (AdvertiseTopicRequest_pb2.AdvertiseTopicRequest(topicName="/r1/pose", topicTypeName="mvsim_msgs.Pose",
                                                         endpoint="tcp://127.0.0.1:1", nodeName="World"),
         GenericAnswer_pb2.GenericAnswer, "another client cannot advertise topic `/r1/pose` under its name"),
    ]
    errors = server.errors
    for msg, answer, why in refused:
        ans = wire.ask(msg, answer)
        assert (ans.success, ans.errorMessage) == (False, OWNED + why)
    assert server.errors == errors + len(refused)
    # nothing changed: the World is listed, its services point at it and answer
    assert "World" in server.nodes
    assert (_info(wire, "set_pose").serviceEndpoint, _info(wire, "set_pose").serviceNodeName) == (endpoint, "World")
    assert not _info(wire, "my_service").success
    with Client("caller", port=server.port, timeout=10.0) as caller:
        ans = caller.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1"),
                                  SrvGetPoseAnswer_pb2.SrvGetPoseAnswer)
        assert ans.success and ans.pose.x == pytest.approx(world.vehicles["r1"].pose[0])
    # other clients keep every right upstream gives them
    assert wire.ask(RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="mine"),
                    RegisterNodeAnswer_pb2.RegisterNodeAnswer).success
    assert wire.ask(_service("mine_srv", "mine"), GenericAnswer_pb2.GenericAnswer).success
    assert wire.ask(_service("mine_srv", "other", "tcp://127.0.0.1:2"), GenericAnswer_pb2.GenericAnswer).success
    assert wire.ask(UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName="mine"),
                    GenericAnswer_pb2.GenericAnswer).success


def test_the_world_itself_unregisters_and_then_the_name_is_free(server, comms_world_file, wire):
    world = mv.load_world(comms_world_file).start()
    comms = WorldComms(world, port=server.port, timeout=10.0, server=server).attach()
    assert sorted(s for s, r in server.services.items() if r.node == "World") == \
        ["get_all_poses", "get_pose", "remove_objects_by_name", "remove_spawned_objects", "set_controller_twist",
         "set_pose", "shutdown", "spawn_xml_objects"]
    comms.close()
    assert "World" not in server.nodes and server.local_nodes == set() and not server.services
    assert wire.ask(RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="World"),
                    RegisterNodeAnswer_pb2.RegisterNodeAnswer).success


def test_a_world_joining_over_the_wire_can_be_replaced_as_upstream(server, comms_world_file, wire):
    """A server in another process cannot tell a World from an impostor, and a World restarted after a crash must
    get its name back: over the wire the registry stays as upstream's."""
    world = mv.load_world(comms_world_file).start()
    comms = WorldComms(world, port=server.port, timeout=10.0).attach()
    try:
        assert server.local_nodes == set()
        assert wire.ask(_service("set_pose", "evil"), GenericAnswer_pb2.GenericAnswer).success
        assert _info(wire, "set_pose").serviceNodeName == "evil"
    finally:
        comms.close()

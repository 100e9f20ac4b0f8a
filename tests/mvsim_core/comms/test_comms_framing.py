"""The frame format [u32 LE len][type name][u32 LE len][protobuf bytes] and its strict checks."""

from __future__ import annotations

import struct

import pytest

from mvsim_core.comms.errors import FramingError, UnexpectedMessageError
from mvsim_core.comms.framing import MAX_TYPE_NAME, decode, pack, pack_message, parse, parse_bytes, unpack
from mvsim_core.comms.proto import Pose_pb2, SrvGetPose_pb2


def test_pack_is_two_length_prefixed_strings():
    frame = pack("mvsim_msgs.SrvGetPose", b"\x0a\x02r1")
    assert frame == b"\x15\x00\x00\x00mvsim_msgs.SrvGetPose\x04\x00\x00\x00\x0a\x02r1"
    assert unpack(frame) == ("mvsim_msgs.SrvGetPose", b"\x0a\x02r1")


def test_pack_message_round_trip():
    msg = SrvGetPose_pb2.SrvGetPose(objectId="veh_1")
    frame = pack_message(msg)
    assert frame[4:25] == b"mvsim_msgs.SrvGetPose"
    back = parse(frame, SrvGetPose_pb2.SrvGetPose)
    assert back.objectId == "veh_1"
    assert decode(frame) == msg


def test_empty_payload_is_valid():
    assert unpack(pack("mvsim_msgs.SrvShutdown", b"")) == ("mvsim_msgs.SrvShutdown", b"")


@pytest.mark.parametrize(("frame", "text"), [
    (b"", "frame of 0 bytes is too short"),
    (b"\x01\x00\x00", "frame of 3 bytes is too short"),
    (b"\x00\x00\x00\x00\x00\x00\x00\x00", "type-name length 0 out of range"),
    (struct.pack("<I", 0xFFFFFFFF) + b"abcd", "type-name length 4294967295 out of range"),
    (struct.pack("<I", MAX_TYPE_NAME + 1) + b"a" * 600, f"type-name length {MAX_TYPE_NAME + 1} out of range"),
    (struct.pack("<I", 10) + b"mvsim", "truncated frame"),
    (struct.pack("<I", 5) + b"a.b.c" + struct.pack("<I", 0xFFFFFFFF) + b"xy", "truncated payload: length field says "
                                                                             "4294967295 bytes, the frame holds 2"),
    (struct.pack("<I", 5) + b"a.b.c" + struct.pack("<I", 1) + b"xy", "trailing bytes after the payload"),
    (struct.pack("<I", 5) + b"a b.c" + struct.pack("<I", 0), "is not a protobuf type name"),
    (struct.pack("<I", 4) + b"\xff\xfe.a" + struct.pack("<I", 0), "is not a protobuf type name"),
    (struct.pack("<I", 4) + b".abc" + struct.pack("<I", 0), "is not a protobuf type name"),
])
def test_malformed_frames_raise(frame, text):
    with pytest.raises(FramingError, match=text.replace("(", r"\(")):
        unpack(frame)


def test_parse_checks_the_type_and_required_fields():
    with pytest.raises(UnexpectedMessageError, match="expected a mvsim_msgs.Pose message, got mvsim_msgs.SrvGetPose"):
        parse(pack_message(SrvGetPose_pb2.SrvGetPose(objectId="a")), Pose_pb2.Pose)
    # a Pose with only x set misses five required fields
    with pytest.raises(FramingError, match="is not a valid mvsim_msgs.Pose"):
        parse(pack("mvsim_msgs.Pose", b"\x09" + struct.pack("<d", 1.0)), Pose_pb2.Pose)
    with pytest.raises(FramingError, match="is not a valid mvsim_msgs.SrvGetPose"):
        parse(pack("mvsim_msgs.SrvGetPose", b"\x0a\xff"), SrvGetPose_pb2.SrvGetPose)


def test_decode_unknown_type():
    with pytest.raises(UnexpectedMessageError, match="unknown message type mvsim_msgs.Teleporter"):
        decode(pack("mvsim_msgs.Teleporter", b""))


def test_unpack_accepts_memoryview_and_copies():
    buf = bytearray(pack("x.Y", b"abc"))
    name, payload = unpack(memoryview(buf))
    buf[-1] = ord("z")
    assert (name, payload) == ("x.Y", b"abc")


def test_strings_are_decoded_strictly():
    """protobuf's upb hands back bytes for a proto2 string that is not UTF-8; parse refuses it, naming the field."""
    from mvsim_core.comms.proto import ListTopicsAnswer_pb2, RegisterNodeRequest_pb2

    with pytest.raises(FramingError) as e:
        parse_bytes(b"\x0a\x02\xff\xfe", RegisterNodeRequest_pb2.RegisterNodeRequest)
    assert str(e.value) == ("payload of 4 bytes is not a valid mvsim_msgs.RegisterNodeRequest: field nodeName is not "
                            "valid UTF-8")
    ans = ListTopicsAnswer_pb2.ListTopicsAnswer()
    ans.topics.add(topicName="/a", topicType="t")
    ans.topics.add(topicName="/b", topicType="t", publisherName=["ok", "QQ"])
    raw = ans.SerializeToString().replace(b"QQ", b"\xc3Q")  # a lead byte without its continuation
    with pytest.raises(FramingError, match=r"field topics\[1\]\.publisherName\[1\] is not valid UTF-8$"):
        parse_bytes(raw, ListTopicsAnswer_pb2.ListTopicsAnswer)
    assert parse_bytes(b"\x0a\x02\xc3\xb3", RegisterNodeRequest_pb2.RegisterNodeRequest).nodeName == "ó"


def test_server_answers_invalid_utf8_cleanly():
    from mvsim_core.comms import Server
    from mvsim_core.comms.proto import GenericAnswer_pb2

    srv = Server(port=0)
    ans = parse(srv.handle(pack("mvsim_msgs.RegisterNodeRequest", b"\x0a\x04fu\xfaz")), GenericAnswer_pb2.GenericAnswer)
    assert not ans.success
    assert ans.errorMessage == ("payload of 6 bytes is not a valid mvsim_msgs.RegisterNodeRequest: field nodeName is "
                                "not valid UTF-8")
    assert srv.nodes == {}

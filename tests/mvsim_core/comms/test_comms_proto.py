"""The message set: upstream's mvsim_msgs (names, fields, labels, tags exactly as the facts say) and ours."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from google.protobuf import descriptor_pb2

from mvsim_core.comms.proto import MODULES, generate, message_class, mvsim_core_msgs_pb2

R, OPT, P = "required", "optional", "repeated"
# From shared/reference/mvsim-wire-protocol.md (upstream v1.2.0).
UPSTREAM = {
    "AdvertiseServiceRequest": [(R, "string", "serviceName", 1), (R, "string", "inputTypeName", 2),
                                (R, "string", "outputTypeName", 3), (R, "string", "endpoint", 4),
                                (R, "string", "nodeName", 5)],
    "AdvertiseTopicRequest": [(R, "string", "topicName", 1), (R, "string", "topicTypeName", 2),
                              (R, "string", "endpoint", 3), (R, "string", "nodeName", 4)],
    "CallService": [(R, "string", "serviceName", 1), (R, "bytes", "serializedInput", 2)],
    "GenericAnswer": [(R, "bool", "success", 1), (OPT, "string", "errorMessage", 2)],
    "GenericObservation": [(R, "double", "unixTimestamp", 1), (R, "string", "sourceObjectId", 2),
                           (R, "bytes", "mrptSerializedObservation", 3)],
    "GetServiceInfoAnswer": [(R, "bool", "success", 1), (OPT, "string", "errorMessage", 2),
                             (OPT, "string", "serviceEndpoint", 3), (OPT, "string", "serviceNodeName", 4)],
    "GetServiceInfoRequest": [(R, "string", "serviceName", 1)],
    "ListNodesAnswer": [(P, "string", "nodes", 1)],
    "ListNodesRequest": [(OPT, "string", "nodeStartsWith", 1)],
    "ListTopicsAnswer": [(P, "mvsim_msgs.TopicInfo", "topics", 1)],
    "ListTopicsRequest": [(OPT, "string", "topicStartsWith", 1)],
    "ObservationLidar2D": [(R, "double", "unixTimestamp", 1), (R, "string", "sourceObjectId", 2),
                           (P, "float", "scanRanges", 3), (P, "bool", "validRanges", 4), (R, "float", "aperture", 5),
                           (R, "bool", "ccw", 6), (R, "float", "maxRange", 7), (R, "mvsim_msgs.Pose", "sensorPose", 8)],
    "Pose": [(R, "double", n, i + 1) for i, n in enumerate(["x", "y", "z", "yaw", "pitch", "roll"])],
    "RegisterNodeAnswer": [(R, "bool", "success", 1), (OPT, "string", "errorMessage", 2)],
    "RegisterNodeRequest": [(R, "string", "nodeName", 1)],
    # get_all_poses: upstream after v1.2.0 (modules/msgs/proto/SrvGetAllPoses*.proto); NamedPose is in the answer's
    "SrvGetAllPoses": [(OPT, "string", "prefix", 1)],
    "SrvGetAllPosesAnswer": [(R, "bool", "success", 1), (OPT, "string", "errorMessage", 2),
                             (OPT, "double", "simulTime", 3), (P, "mvsim_msgs.NamedPose", "objects", 4)],
    "SrvGetPose": [(R, "string", "objectId", 1)],
    "SrvGetPoseAnswer": [(R, "bool", "success", 1), (OPT, "string", "errorMessage", 2),
                         (OPT, "mvsim_msgs.Pose", "pose", 3), (R, "bool", "objectIsInCollision", 4),
                         (OPT, "mvsim_msgs.Twist", "twist", 5)],
    "SrvSetControllerTwist": [(R, "string", "objectId", 1), (R, "mvsim_msgs.Twist", "twistSetPoint", 2)],
    "SrvSetControllerTwistAnswer": [(R, "bool", "success", 1), (OPT, "string", "errorMessage", 2)],
    "SrvSetPose": [(R, "string", "objectId", 1), (R, "mvsim_msgs.Pose", "pose", 2),
                   (OPT, "bool", "relativeIncrement", 3)],
    "SrvSetPoseAnswer": [(R, "bool", "success", 1), (OPT, "string", "errorMessage", 2),
                         (R, "bool", "objectIsInCollision", 4), (OPT, "mvsim_msgs.Pose", "objectGlobalPose", 5)],
    "SrvSetPoseTwist": [(R, "string", "objectId", 1), (R, "mvsim_msgs.Pose", "pose", 2),
                        (R, "mvsim_msgs.Twist", "twist", 3)],
    "SrvShutdown": [],
    "SrvShutdownAnswer": [(R, "bool", "accepted", 1)],
    "SubscribeAnswer": [(R, "string", "topic", 1), (R, "bool", "success", 2)],
    "SubscribeRequest": [(R, "string", "topic", 1), (R, "string", "updatesEndpoint", 2)],
    "TimeStampedPose": [(R, "double", "unixTimestamp", 1), (R, "string", "objectId", 2),
                        (R, "mvsim_msgs.Pose", "pose", 3), (OPT, "string", "relativeToObjectId", 4)],
    "TopicInfo": [(R, "string", "topicName", 1), (R, "string", "topicType", 2),
                  (P, "string", "publisherEndpoint", 3), (P, "string", "publisherName", 4)],
    "Twist": [(R, "double", n, i + 1) for i, n in enumerate(["vx", "vy", "vz", "wx", "wy", "wz"])],
    "UnregisterNodeRequest": [(R, "string", "nodeName", 1)],
}
_FDP = descriptor_pb2.FieldDescriptorProto
_TYPES = {_FDP.TYPE_STRING: "string", _FDP.TYPE_BYTES: "bytes", _FDP.TYPE_BOOL: "bool", _FDP.TYPE_DOUBLE: "double",
          _FDP.TYPE_FLOAT: "float"}
_LABELS = {_FDP.LABEL_REQUIRED: R, _FDP.LABEL_OPTIONAL: OPT, _FDP.LABEL_REPEATED: P}


def _proto(cls) -> descriptor_pb2.DescriptorProto:
    """The message's descriptor as written in its .proto (labels included, whatever the runtime version)."""
    d = descriptor_pb2.DescriptorProto()
    cls.DESCRIPTOR.CopyToProto(d)
    return d


def _fields(cls) -> list[tuple[str, str, str, int]]:
    out = []
    for f in _proto(cls).field:
        t = f.type_name.lstrip(".") if f.type == _FDP.TYPE_MESSAGE else _TYPES[f.type]
        out.append((_LABELS[f.label], t, f.name, f.number))
    return out


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_upstream_message_matches_the_facts(name):
    cls = message_class(f"mvsim_msgs.{name}")
    assert cls is not None
    assert cls.DESCRIPTOR.file.name == f"{name}.proto"  # one message per file, named as upstream
    fdp = descriptor_pb2.FileDescriptorProto()
    cls.DESCRIPTOR.file.CopyToProto(fdp)
    assert fdp.syntax in ("", "proto2") and fdp.package == "mvsim_msgs"
    assert _fields(cls) == UPSTREAM[name]
    for f in _proto(cls).field:  # proto2 repeated scalars upstream are not packed: same bytes on the wire
        assert not f.options.packed


def test_named_pose_of_get_all_poses_matches_upstream():
    cls = message_class("mvsim_msgs.NamedPose")
    assert cls is not None and cls.DESCRIPTOR.file.name == "SrvGetAllPosesAnswer.proto"
    assert _fields(cls) == [(R, "string", "name", 1), (R, "mvsim_msgs.Pose", "pose", 2),
                            (OPT, "mvsim_msgs.Twist", "twist", 3)]


def test_exactly_the_upstream_set_in_mvsim_msgs():
    names = {m[:-len("_pb2")] for m in MODULES} - {"mvsim_core_msgs"}
    assert names == set(UPSTREAM)


def test_our_messages_live_in_their_own_package():
    names = sorted(mvsim_core_msgs_pb2.DESCRIPTOR.message_types_by_name)
    assert names == ["Image", "ObservationGNSS", "ObservationIMU", "ObservationImage", "ObservationLidar3D",
                     "ObservationRGBD", "Quaternion", "SpawnObject", "SrvRemoveObjectsAnswer", "SrvRemoveObjectsByName",
                     "SrvRemoveSpawnedObjects", "SrvSpawnXmlObjects", "SrvSpawnXmlObjectsAnswer", "Vector3"]
    assert mvsim_core_msgs_pb2.DESCRIPTOR.package == "mvsim_core_msgs"
    assert message_class("mvsim_core_msgs.ObservationLidar3D") is mvsim_core_msgs_pb2.ObservationLidar3D
    for n in names:  # the stamp convention shared by every observation
        if n.startswith("Observation"):
            f = {x.name: x.number for x in getattr(mvsim_core_msgs_pb2, n).DESCRIPTOR.fields}
            assert (f["unixTimestamp"], f["simTime"], f["sourceObjectId"], f["sensorPose"]) == (1, 2, 3, 4)


def test_classes_carry_their_package_module():
    cls = message_class("mvsim_msgs.Pose")
    assert cls.__module__ == "mvsim_core.comms.proto.Pose_pb2"


def test_packed_array_round_trip():
    pts = np.arange(12, dtype=np.float32).reshape(4, 3)
    m = mvsim_core_msgs_pb2.ObservationLidar3D(unixTimestamp=1.0, simTime=0.5, sourceObjectId="l",
                                               numPoints=4, points=pts.astype("<f4").tobytes())
    m.sensorPose.x = m.sensorPose.y = m.sensorPose.z = m.sensorPose.yaw = m.sensorPose.pitch = m.sensorPose.roll = 0
    back = mvsim_core_msgs_pb2.ObservationLidar3D.FromString(m.SerializeToString())
    np.testing.assert_array_equal(np.frombuffer(back.points, dtype="<f4").reshape(-1, 3), pts)


@pytest.mark.skipif(shutil.which("protoc") is None, reason="protoc not installed (apt-get install protobuf-compiler)")
def test_committed_generated_code_is_up_to_date(capsys):
    assert generate.main(["--check"]) == 0, capsys.readouterr().err

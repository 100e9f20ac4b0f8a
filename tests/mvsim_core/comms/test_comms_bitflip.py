"""A bit-flip sweep of every request type: every single-bit flip of a valid frame of each of the 8 requests the
server answers goes through Server.handle() in-process, and every third one over real sockets to an
`mvsim launch --headless` in another process. No answer may be an "internal error", nothing may be logged as an
unexpected error, and the server must be alive and its World stepping afterwards."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq

from mvsim_core.comms import Client, CommsError, Server
from mvsim_core.comms.framing import decode, pack_message, unpack
from mvsim_core.comms.proto import (
    AdvertiseServiceRequest_pb2,
    AdvertiseTopicRequest_pb2,
    GetServiceInfoRequest_pb2,
    ListNodesRequest_pb2,
    ListTopicsRequest_pb2,
    RegisterNodeRequest_pb2,
    SrvGetPose_pb2,
    SubscribeRequest_pb2,
    UnregisterNodeRequest_pb2,
)

REPO = Path(__file__).resolve().parents[3]
WORLD = Path(__file__).resolve().parent / "data" / "comms.world.xml"
READY_S = 300.0  # the first steps may compile numba kernels on a cold cache
ANSWERS = {"mvsim_msgs.GenericAnswer", "mvsim_msgs.RegisterNodeAnswer", "mvsim_msgs.ListNodesAnswer",
           "mvsim_msgs.ListTopicsAnswer", "mvsim_msgs.GetServiceInfoAnswer", "mvsim_msgs.SubscribeAnswer"}

VALID = {
    "RegisterNodeRequest": RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="flip-node"),
    "UnregisterNodeRequest": UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName="flip-node"),
    "AdvertiseTopicRequest": AdvertiseTopicRequest_pb2.AdvertiseTopicRequest(
        topicName="/flip/pose", topicTypeName="mvsim_msgs.TimeStampedPose", endpoint="tcp://127.0.0.1:9",
        nodeName="flip-node"),
    "AdvertiseServiceRequest": AdvertiseServiceRequest_pb2.AdvertiseServiceRequest(
        serviceName="flip_srv", inputTypeName="mvsim_msgs.SrvGetPose", outputTypeName="mvsim_msgs.SrvGetPoseAnswer",
        endpoint="tcp://127.0.0.1:9", nodeName="flip-node"),
    "GetServiceInfoRequest": GetServiceInfoRequest_pb2.GetServiceInfoRequest(serviceName="get_pose"),
    "ListNodesRequest": ListNodesRequest_pb2.ListNodesRequest(nodeStartsWith="Wor"),
    "ListTopicsRequest": ListTopicsRequest_pb2.ListTopicsRequest(topicStartsWith="/r1"),
    "SubscribeRequest": SubscribeRequest_pb2.SubscribeRequest(topic="/flip/pose", updatesEndpoint="tcp://127.0.0.1:9"),
}


def flips() -> list[tuple[str, int, bytes]]:
    """(request type, flipped bit index, frame) for every single-bit flip of every valid frame."""
    out = []
    for kind, msg in VALID.items():
        frame = pack_message(msg)
        for bit in range(8 * len(frame)):
            b = bytearray(frame)
            b[bit // 8] ^= 1 << (bit % 8)
            out.append((kind, bit, bytes(b)))
    return out


def error_text(reply: bytes) -> str:
    """The errorMessage of an answer ("" when it has none)."""
    type_name, _ = unpack(reply)
    assert type_name in ANSWERS, type_name
    msg = decode(reply)
    return getattr(msg, "errorMessage", "") if msg.DESCRIPTOR.fields_by_name.get("errorMessage") else ""


def test_every_single_bit_flip_in_process(caplog):
    srv = Server(port=0)  # not started: handle() alone
    sweep = flips()
    assert len(sweep) == 8 * sum(len(pack_message(m)) for m in VALID.values()) == 4328
    refused = 0
    with caplog.at_level(logging.WARNING, logger="mvsim.comms"):
        for kind, bit, frame in sweep:
            err = error_text(srv.handle(frame))
            assert "internal error" not in err, (kind, bit, err)
            refused += bool(err)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert srv.requests == len(sweep)
    assert 1000 < refused < len(sweep)
    # every request type still answered correctly afterwards
    for msg in VALID.values():
        assert unpack(srv.handle(pack_message(msg)))[0] in ANSWERS
    print(f"bit-flip sweep in process: {len(sweep)} frames, {refused} refused, 0 internal errors")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(proc: subprocess.Popen, port: int) -> None:
    end = time.monotonic() + READY_S
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"mvsim exited with {proc.returncode}:\n{proc.stderr.read()}")
        c = Client("ready-probe", port=port, timeout=2.0)
        try:
            c.connect(register=False)
            if c.service_info("get_pose").success:
                c.timeout = max(5.0, end - time.monotonic())
                if c.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1")).success:
                    return
        except CommsError:
            pass
        finally:
            c.shutdown()
        assert time.monotonic() < end, "mvsim launch did not become ready"
        time.sleep(0.2)


@pytest.mark.slow
def test_bit_flips_over_sockets_to_mvsim_launch():
    port = _free_port()
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "mvsim_core.cli", "launch", str(WORLD), "--headless", "--port",
                             str(port)], cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ctx = zmq.Context()
    sweep = flips()[::3]
    try:
        _wait_ready(proc, port)
        sock = ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://127.0.0.1:{port}")
        internal = []
        for kind, bit, frame in sweep:
            sock.send(frame)
            assert sock.poll(10000), f"no answer to the flip of bit {bit} of {kind}"
            err = error_text(sock.recv())
            if "internal error" in err:
                internal.append((kind, bit, err))
        sock.close()
        assert internal == []
        # alive, World listed, and stepping: its pose topic's stamps advance
        stamps: list[float] = []
        got = threading.Event()

        def on_pose(type_name: str, payload: bytes) -> None:
            stamps.append(Client.decode(type_name, payload).unixTimestamp)  # type: ignore[attr-defined]
            if len(set(stamps)) >= 3:
                got.set()

        with Client("after-flips", port=port, timeout=30.0) as c:
            assert "World" in c.list_nodes()
            c.subscribe("/r1/pose", on_pose)
            assert got.wait(60), f"World time not advancing: {stamps}"
        assert stamps[-1] > stamps[0]
        print(f"bit-flip sweep over sockets: {len(sweep)} frames, 0 internal errors; World stepping")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        ctx.term()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "internal error" not in err

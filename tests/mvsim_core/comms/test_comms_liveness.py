"""Node liveness: nodes of closed connections leave the registry node_timeout later unless an endpoint they
advertised still answers; ZMQ heartbeats close the connection of a peer that went silent; quiet live clients stay.
Real sockets and real processes (SIGKILLed clients, `mvsim server`, `mvsim node list`)."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq

import mvsim_core.comms.server as server_mod
from mvsim_core.comms import Client, CommsError, Server
from mvsim_core.comms.framing import pack_message, parse
from mvsim_core.comms.proto import (
    AdvertiseTopicRequest_pb2,
    GenericAnswer_pb2,
    RegisterNodeAnswer_pb2,
    RegisterNodeRequest_pb2,
    SubscribeAnswer_pb2,
    SubscribeRequest_pb2,
)
from mvsim_core.comms.server import endpoint_answers, node_timeout_from_env

REPO = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ask(sock: zmq.Socket, msg, answer):
    sock.send(pack_message(msg))
    assert sock.poll(5000), "no answer within 5 s"
    return parse(sock.recv(), answer)


def _wait(cond, timeout: float, what: str) -> float:
    """Poll ``cond`` until true; the seconds it took."""
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, f"{what}: not within {timeout} s"
        time.sleep(0.05)
    return time.monotonic() - t0


def test_node_timeout_setting(monkeypatch):
    monkeypatch.delenv("MVSIM_NODE_TIMEOUT", raising=False)
    assert node_timeout_from_env() == 10.0 and Server(port=0).node_timeout == 10.0
    monkeypatch.setenv("MVSIM_NODE_TIMEOUT", "2.5")
    assert Server(port=0).node_timeout == 2.5
    assert Server(port=0, node_timeout=0).node_timeout == 0.0
    monkeypatch.setenv("MVSIM_NODE_TIMEOUT", "soon")
    with pytest.raises(CommsError) as e:
        Server(port=0)
    assert str(e.value) == ("MVSIM_NODE_TIMEOUT='soon' is not a number of seconds >= 0; set it to e.g. 10 (0 = nodes "
                            "never expire) or unset it")
    with pytest.raises(CommsError, match=r"^node_timeout -1 is not a number of seconds >= 0 \(0 = never\)$"):
        Server(port=0, node_timeout=-1)


def test_endpoint_probe():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert endpoint_answers(f"tcp://127.0.0.1:{port}")
        assert endpoint_answers(f"tcp://0.0.0.0:{port}", peer="127.0.0.1")
    assert not endpoint_answers(f"tcp://127.0.0.1:{port}")
    assert not endpoint_answers("tcp://127.0.0.1:notaport")
    assert not endpoint_answers("inproc://x")


def test_closed_connections_expire_unless_an_endpoint_answers():
    """Over bare REQ sockets (the upstream framing): 'keeper' advertises a topic at a listening endpoint, 'goner' one
    at a dead endpoint, 'subscriber' subscribes with a dead updates endpoint; all close their REQ sockets."""
    srv = Server(port=0, node_timeout=0.4).start()
    ctx = zmq.Context()
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    live_ep = f"tcp://127.0.0.1:{listening.getsockname()[1]}"
    dead_ep = f"tcp://127.0.0.1:{_free_port()}"
    try:
        for name, ep in (("keeper", live_ep), ("goner", dead_ep)):
            s = ctx.socket(zmq.REQ)
            s.setsockopt(zmq.LINGER, 0)
            s.connect(srv.endpoint)
            assert _ask(s, RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName=name),
                        RegisterNodeAnswer_pb2.RegisterNodeAnswer).success
            assert _ask(s, AdvertiseTopicRequest_pb2.AdvertiseTopicRequest(
                topicName=f"/{name}/pose", topicTypeName="mvsim_msgs.TimeStampedPose", endpoint=ep, nodeName=name),
                GenericAnswer_pb2.GenericAnswer).success
            s.close()
        s = ctx.socket(zmq.REQ)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(srv.endpoint)
        assert _ask(s, SubscribeRequest_pb2.SubscribeRequest(topic="/keeper/pose", updatesEndpoint=dead_ep),
                    SubscribeAnswer_pb2.SubscribeAnswer).success
        s.close()
        assert set(srv.nodes) == {"keeper", "goner"}
        took = _wait(lambda: "goner" not in srv.nodes, 10.0, "goner expires")
        assert took >= 0.3
        assert list(srv.nodes) == ["keeper"] and srv.expired == 1
        assert sorted(srv.topics) == ["/keeper/pose"]
        _wait(lambda: not srv.topics["/keeper/pose"].subscribers, 10.0, "the dead subscription goes")
        time.sleep(1.0)  # keeper is probed again meanwhile, and answers
        assert list(srv.nodes) == ["keeper"]
        listening.close()
        _wait(lambda: not srv.nodes, 10.0, "keeper expires once its endpoint is gone")
        assert srv.topics == {} and srv.expired == 2
    finally:
        listening.close()
        srv.stop()
        ctx.term()


def test_node_timeout_zero_keeps_nodes_forever():
    srv = Server(port=0, node_timeout=0).start()
    try:
        c = Client("forever", port=srv.port, timeout=5.0).connect()
        c._stop.set()  # vanish without unregistering: close the sockets under it
        c.registered = False
        c.shutdown()
        time.sleep(0.5)
        assert list(srv.nodes) == ["forever"]
    finally:
        srv.stop()


def _zmtp_req_client(port: int, frame: bytes) -> tuple[socket.socket, bytes]:
    """A REQ peer speaking ZMTP 3.0 by hand (NULL mechanism) that sends one request, reads the answer, and then
    never answers a heartbeat: a host that vanished, as the server sees it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5.0)
    s.sendall(b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31)
    greeting = b""
    while len(greeting) < 64:
        greeting += s.recv(64 - len(greeting))
    body = b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", 3) + b"REQ"
    s.sendall(b"\x04" + bytes([len(body)]) + body)
    s.sendall(b"\x01\x00" + b"\x02" + struct.pack(">Q", len(frame)) + frame)  # empty delimiter, then the request
    got = b""
    while b"RegisterNodeAnswer" not in got:
        got += s.recv(4096)
    return s, got


def test_heartbeats_drop_silent_peers_and_keep_quiet_live_ones(monkeypatch):
    monkeypatch.setattr(server_mod, "HEARTBEAT_IVL_MS", 200)
    monkeypatch.setattr(server_mod, "HEARTBEAT_TIMEOUT_MS", 600)
    srv = Server(port=0, node_timeout=0.2).start()
    quiet = Client("quiet", port=srv.port, timeout=5.0)
    try:
        quiet.connect()
        silent, answer = _zmtp_req_client(srv.port, pack_message(
            RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName="silent")))
        assert b"mvsim_msgs.RegisterNodeAnswer" in answer
        assert set(srv.nodes) == {"quiet", "silent"}
        took = _wait(lambda: "silent" not in srv.nodes, 10.0, "the silent peer's node expires")
        assert 0.5 < took < 5.0
        time.sleep(1.0)  # many heartbeat periods: the quiet client's libzmq answers them
        assert list(srv.nodes) == ["quiet"] and srv.expired == 1
        silent.close()
        assert quiet.list_nodes() == ["quiet"]
    finally:
        quiet.shutdown()
        srv.stop()


_VICTIM = """
import sys, time
from mvsim_core.comms import Client
from mvsim_core.comms.proto import GenericAnswer_pb2
c = Client(sys.argv[1], port=int(sys.argv[2]), timeout=30.0).connect()
if sys.argv[3] == "busy":
    c.advertise_topic("/" + sys.argv[1] + "/pose", "mvsim_msgs.TimeStampedPose")
    c.advertise_service(sys.argv[1] + "_ping", GenericAnswer_pb2.GenericAnswer, GenericAnswer_pb2.GenericAnswer,
                        lambda r: r)
print("ready", flush=True)
time.sleep(600)
"""


def test_sigkilled_clients_leave_the_node_list():
    """`mvsim server` (MVSIM_NODE_TIMEOUT=1) and four client processes; two are SIGKILLed: they leave
    `mvsim node list` about a second later, the two quiet survivors stay."""
    port = _free_port()
    env = {**os.environ, "MVSIM_NODE_TIMEOUT": "1", "MVSIM_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen([sys.executable, "-m", "mvsim_core.cli", "server", "--port", str(port)], cwd=REPO,
                              env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    clients: dict[str, subprocess.Popen] = {}
    try:
        for name, kind in (("victim-busy", "busy"), ("victim-idle", "idle"), ("survivor-busy", "busy"),
                           ("survivor-idle", "idle")):
            clients[name] = subprocess.Popen([sys.executable, "-c", _VICTIM, name, str(port), kind], cwd=REPO,
                                             env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for name, p in clients.items():
            line = p.stdout.readline()
            assert line == "ready\n", (name, line, p.stderr.read() if p.poll() is not None else "")

        def node_list() -> list[str]:
            r = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "node", "list", "--port", str(port)],
                               cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr
            return r.stdout.split()

        everyone = ["survivor-busy", "survivor-idle", "victim-busy", "victim-idle"]
        assert node_list() == everyone
        for name in ("victim-busy", "victim-idle"):
            clients[name].send_signal(signal.SIGKILL)
            clients[name].wait(10)
        t0 = time.monotonic()
        with Client("watcher", port=port, timeout=10.0) as w:
            _wait(lambda: [n for n in w.list_nodes() if n != "watcher"] == everyone[:2], 15.0, "victims leave")
            took = time.monotonic() - t0
            assert 0.8 < took < 8.0, took
            assert [t.topicName for t in w.list_topics()] == ["/survivor-busy/pose"]
            assert not w.service_info("victim-busy_ping").success
            assert w.service_info("survivor-busy_ping").success
        time.sleep(1.5)
        assert node_list() == everyone[:2]
        print(f"SIGKILLed nodes left the list {took:.2f} s after the kill (node_timeout 1 s)")
    finally:
        for p in clients.values():
            p.kill()
            p.communicate()
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "Traceback" not in err

"""ZMQ ``get_all_poses`` over real sockets between processes: ``mvsim launch`` serves the test world, this process asks
with :meth:`Client.get_all_poses` and with the raw upstream-style call (``callService`` bytes in, bytes out).

World ``data/comms.world.xml`` (5 ms steps): r1 at (0, 0, 0°), r2 at (0, 5, 90°), block box1 at (5, 0); nothing is
commanded, so every pose stays where the file puts it.
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mvsim_core.comms import Client
from mvsim_core.comms.errors import CommsError
from mvsim_core.comms.proto import SrvGetAllPoses_pb2, SrvGetAllPosesAnswer_pb2

REPO = Path(__file__).resolve().parents[3]
WORLD = Path(__file__).resolve().parent / "data" / "comms.world.xml"
READY_S = 120.0  # s: process start + a cold numba cache


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready_client(proc: subprocess.Popen[str], port: int) -> Client:
    """A connected client, once the launched World answers ``get_all_poses``."""
    end = time.monotonic() + READY_S
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"mvsim exited with {proc.returncode}:\n{proc.stderr.read() if proc.stderr else ''}")
        c = Client("poses-probe", port=port, timeout=2.0)
        try:
            c.connect(register=False)
            if c.service_info("get_all_poses").success:
                c.timeout = 30.0
                return c
        except CommsError:
            pass
        c.shutdown()
        assert time.monotonic() < end, "mvsim launch did not offer get_all_poses"
        time.sleep(0.2)  # polling a process that is starting: there is nothing to wait on


@pytest.mark.slow
def test_get_all_poses_from_another_process():
    port = _free_port()
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "mvsim_core.cli", "launch", str(WORLD), "--headless", "--port",
                             str(port)], cwd=REPO, env=env, text=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        c = _ready_client(proc, port)
        try:
            t, objs = c.get_all_poses()
            assert list(objs) == ["r1", "r2", "box1"]
            assert t >= 0.0 and t == pytest.approx(round(t / 0.005) * 0.005, abs=1e-9)  # whole 5 ms steps
            expected = {"r1": (0.0, 0.0, 0.0), "r2": (0.0, 5.0, math.pi / 2), "box1": (5.0, 0.0, 0.0)}
            for name, (x, y, yaw) in expected.items():
                pose, twist = objs[name]
                assert len(pose) == 6
                assert (pose[0], pose[1], pose[3]) == pytest.approx((x, y, yaw), abs=1e-3), name
                assert twist == pytest.approx((0.0, 0.0, 0.0), abs=1e-3), name
            t2, only = c.get_all_poses(prefix="r")
            assert list(only) == ["r1", "r2"] and t2 >= t
            assert c.get_all_poses(prefix="nobody")[1] == {}
            # upstream's scripts: serialized request in, serialized answer out
            raw = c.callService("get_all_poses", SrvGetAllPoses_pb2.SrvGetAllPoses(prefix="box").SerializeToString())
            ans = SrvGetAllPosesAnswer_pb2.SrvGetAllPosesAnswer()
            ans.ParseFromString(raw)
            assert ans.success and [o.name for o in ans.objects] == ["box1"]
            assert (ans.objects[0].pose.x, ans.objects[0].pose.y) == pytest.approx((5.0, 0.0), abs=1e-3)
            assert ans.simulTime >= t2
        finally:
            c.shutdown()
    finally:
        proc.terminate()
        proc.wait(30)

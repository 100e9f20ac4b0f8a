"""Fixtures of the ZMQ interface tests: an in-process server on a free port, clients, the test world."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mvsim_core.comms import Client, Server

WORLD = Path(__file__).resolve().parent / "data" / "comms.world.xml"


@pytest.fixture
def comms_world_file() -> Path:
    """r1 (ideal twist controller; pose, 2D lidar, IMU and GNSS topics), r2 (raw controller), box1 5 m ahead."""
    return WORLD


@pytest.fixture
def server() -> Iterator[Server]:
    """A server on an ephemeral loopback port."""
    srv = Server(port=0).start()
    yield srv
    srv.stop()


@pytest.fixture
def make_client(server: Server) -> Iterator[Callable[..., Client]]:
    """make_client(name, register=True) -> a connected Client of ``server`` (shut down after the test)."""
    made: list[Client] = []

    def make(name: str = "test", register: bool = True, timeout: float = 10.0) -> Client:
        c = Client(name, port=server.port, timeout=timeout).connect(register=register)
        made.append(c)
        return c

    yield make
    for c in made:
        c.shutdown()

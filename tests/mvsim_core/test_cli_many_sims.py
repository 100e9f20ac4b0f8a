"""Many simulations on one machine, with real ``mvsim`` processes and real ZMQ sockets between them.

A simulation started without ``--port`` serves on 23700, or on a free port (said in one line) when 23700 is taken:
a second ``mvsim launch`` runs beside a first one, which goes on stepping. A port the user names must be free (one
line, exit 2). ``--join`` is the explicit way onto a running server; the client tools find a server through
``--host``/``--port`` or ``MVSIM_SERVER``. The status line: ``--status-line live|periodic|off`` and, by default,
full lines of bounded length when stdout is a pipe.

No test here assumes that 23700 (or 8765) is free: another simulation may run on this machine meanwhile.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from test_cli_comms import WORLD, _collect, _env, _free_port, mvsim, spawn, stop, wait_ready

from mvsim_core.cli import parse_address, server_address
from mvsim_core.comms import Client
from mvsim_core.errors import MvsimError

STATUS = re.compile(r"sim time +\d+\.\d{3} s \| real-time factor +\d+\.\d{2} \| vehicles \d+")
MOVED = re.compile(r"mvsim: port 23700 is in use \(another simulation\?\); this one serves on "
                   r"tcp://127\.0\.0\.1:(\d+) \(reach it with --port (\d+)\)$", re.M)


@contextmanager
def held(port: int) -> Iterator[None]:
    """``port`` on 127.0.0.1 taken for the block: by this socket, or already by someone else."""
    s = socket.socket()
    try:
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
        except OSError:
            pass  # taken already (another simulation?): just as good
        yield
    finally:
        s.close()


def served_port(proc) -> int:
    """The port a starting ``mvsim launch`` says it serves on (its stderr lines, read until the address)."""
    seen = []
    while True:
        line = proc.stderr.readline()
        if not line:
            raise AssertionError(f"mvsim launch exited ({proc.wait()}) before saying its address:\n{''.join(seen)}")
        seen.append(line)
        m = re.search(r"(?:ZMQ server listening on|this one serves on) tcp://127\.0\.0\.1:(\d+)", line)
        if m:
            return int(m.group(1))


def assert_status_lines(out: str, at_least: int) -> list[str]:
    """Periodic status output: only whole lines (no ``\\r``), each a status line of bounded length."""
    assert "\r" not in out and out.endswith("\n"), out[-300:]
    lines = out.splitlines()
    assert len(lines) >= at_least, out
    for line in lines:
        assert STATUS.fullmatch(line) and len(line) <= 200, line
    return lines


@pytest.mark.slow
def test_a_second_launch_runs_beside_the_first_which_goes_on():
    a = spawn("launch", str(WORLD), "--headless")  # 23700, or a free port if something holds 23700
    try:
        port = served_port(a)
        wait_ready(a, port)
        # what test_cli.py::test_launch_headless_runs_for_duration runs, while a simulation runs beside it
        b = mvsim("launch", "worlds/demo.world.xml", "--headless", "--realtime-factor", "0", "--duration", "2",
                  timeout=300)
        assert b.returncode == 0, b.stderr
        m = MOVED.search(b.stderr)
        assert m and m.group(1) == m.group(2) and int(m.group(1)) != port, b.stderr
        assert_status_lines(b.stdout, 2)[-1].startswith("sim time     2.000 s | real-time factor")

        # a port named that is taken: one line, exit 2, before loading anything
        c = mvsim("launch", str(WORLD), "--headless", "--port", str(port))
        assert (c.returncode, c.stderr) == (2, (
            f"cannot listen on tcp://127.0.0.1:{port}: Address already in use (another simulation or MVSim "
            f"server?); choose another --port, or leave --port out to serve on a free one\n"))

        # the first one goes on: its World (not B's) still answers, and still steps
        assert mvsim("node", "list", "--port", str(port)).stdout == "World\n"
        with Client("after-b", port=port, timeout=60.0) as client:
            stamps = [m.simTime for _, m in _collect(client, "/r1/imu1", 3)]
        assert stamps[0] < stamps[1] < stamps[2]
    finally:
        out, err = stop(a)
    assert a.returncode == 0, err
    assert "Traceback" not in err
    assert_status_lines(out, 2)  # the default when stdout is a pipe: a full line every 5 s, and the last one


def test_default_ports_taken_move_to_free_ones():
    """23700 and 8765 held (by this test, or by someone else already): the simulation and its Foxglove view each
    take a free port and say where; a standalone server does the same."""
    pytest.importorskip("foxglove")
    with held(23700), held(8765):
        r = mvsim("launch", str(WORLD), "--headless", "--realtime-factor", "0", "--duration", "0.5", "--foxglove",
                  timeout=300)
        assert r.returncode == 0, r.stderr
        m = MOVED.search(r.stderr)
        assert m and m.group(1) == m.group(2), r.stderr
        fox = re.search(r"^mvsim: port 8765 is in use \(another simulation\?\); this Foxglove view serves on "
                        r"ws://127\.0\.0\.1:(\d+)$", r.stderr, re.M)
        assert fox and int(fox.group(1)) not in (8765, 0), r.stderr
        assert "ZMQ server listening" not in r.stderr and "Foxglove view: ws://" not in r.stderr  # said once

        server = spawn("server")
        try:
            moved = MOVED.search(server.stderr.readline())
            assert moved, "mvsim server did not say where it moved"
            assert server.stdout.readline() == (f"mvsim server: listening on tcp://127.0.0.1:{moved.group(1)}; "
                                                f"Ctrl-C to stop\n")
            assert mvsim("node", "list", "--port", moved.group(1)).returncode == 0
        finally:
            stop(server, signal.SIGINT)
        assert server.returncode == 0


def test_named_foxglove_port_taken_is_an_error():
    pytest.importorskip("foxglove")
    port = _free_port()
    with held(port):
        r = mvsim("launch", str(WORLD), "--headless", "--no-server", "--duration", "0", "--foxglove", str(port),
                  timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.endswith(f"cannot start the Foxglove server on 127.0.0.1:{port}: FoxgloveError: Failed to bind "
                             f"port: Address already in use (os error 98); choose another --foxglove PORT, or give "
                             f"--foxglove without a port to serve on a free one\n"), r.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--join", "nope"], "--join 'nope' is not a server address: write tcp://HOST:PORT, e.g. tcp://127.0.0.1:23700"),
    (["--join", "tcp://127.0.0.1:1"], "--join tcp://127.0.0.1:1: no MVSim server answered at tcp://127.0.0.1:1; "
                                      "start one there (mvsim server --port 1) or leave --join out to start this "
                                      "simulation's own"),
    (["--join", "23700", "--port", "23701"], "--join and --port exclude each other: --join serves the world on a "
                                             "server already running, --port starts this simulation's own there"),
    (["--join", "23700", "--no-server"], "--join and --no-server exclude each other: --join serves the world on a "
                                         "running server"),
], ids=["not-an-address", "nobody-there", "with-port", "with-no-server"])
def test_join_mistakes_are_one_line_errors(args, message):
    r = mvsim("launch", str(WORLD), "--headless", *args)
    assert (r.returncode, r.stderr) == (2, message + "\n")


def test_addresses_and_mvsim_server():
    assert parse_address("tcp://10.0.0.2:4000", "--join") == ("10.0.0.2", 4000)
    assert parse_address("localhost:4000", "--join") == ("localhost", 4000)
    assert parse_address(" 4000 ", "--join") == ("127.0.0.1", 4000)
    for bad in ("", "tcp://", ":4000", "host:0", "host:65536", "host:x", "tcp://host"):
        with pytest.raises(MvsimError, match="is not a server address: write tcp://HOST:PORT"):
            parse_address(bad, "--join")
    assert server_address(None, None, {}) == ("127.0.0.1", 23700)
    env = {"MVSIM_SERVER": "tcp://127.0.0.1:40123"}
    assert server_address(None, None, env) == ("127.0.0.1", 40123)
    assert server_address(None, 5000, env) == ("127.0.0.1", 5000)  # --port wins over the variable
    assert server_address("otherhost", None, env) == ("otherhost", 40123)
    with pytest.raises(MvsimError, match="MVSIM_SERVER 'x' is not a server address"):
        server_address(None, None, {"MVSIM_SERVER": "x"})


def test_client_tools_reach_the_server_in_mvsim_server():
    """``MVSIM_SERVER`` (as ``mvsim launch`` prints the address) takes a client tool to a server on any port."""
    port = _free_port()
    server = spawn("server", "--port", str(port))
    try:
        assert server.stdout.readline().startswith(f"mvsim server: listening on tcp://127.0.0.1:{port};")
        env = {**_env(), "MVSIM_SERVER": f"tcp://127.0.0.1:{port}"}
        r = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "topic", "list"], capture_output=True, text=True,
                           env=env, timeout=120)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")  # reached (no topics yet); no error
        r = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "node", "list", "--port", "1", "--timeout",
                            "0.5"], capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 2 and "tcp://127.0.0.1:1" in r.stderr  # --port wins
    finally:
        stop(server)


@pytest.mark.parametrize("mode", ["off", "live"])  # periodic: the default into a pipe, seen above
def test_status_line_modes(mode):
    r = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "launch", str(WORLD), "--headless", "--no-server",
                        "--realtime-factor", "0", "--duration", "0.5", "--status-line", mode], capture_output=True,
                       env=_env(), timeout=300)  # bytes: text mode would read each \r as a line end
    assert r.returncode == 0, r.stderr
    if mode == "off":
        assert r.stdout == b""
    else:  # rewritten in place (\r), ended once at the end
        assert r.stdout.startswith(b"\rsim time ") and r.stdout.count(b"\n") == 1 and r.stdout.endswith(b"\n")
        assert r.stdout.rstrip().split(b"\r")[-1].startswith(b"sim time     0.500 s")

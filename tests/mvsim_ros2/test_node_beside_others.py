"""``mvsim_node`` and other simulations on one machine (real processes, real ZMQ sockets): with the node running
(its ZMQ server on 23700, or on a free port when something else holds 23700), ``mvsim launch`` of another world runs
to its end (exit 0) on a free port of its own, a second node that names the first one's port with ``zmq_port`` stops
with one line and exit 2, and the first node goes on stepping, its status line (stdout to a file: full lines every
5 s) advancing. Nothing here assumes that 23700 is free.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from ros_harness import FIRST_MESSAGE_TIMEOUT, REPO, NodeProcess

DATA = Path(__file__).resolve().parent / "data"
STATUS = re.compile(r"sim time +(\d+\.\d{3}) s \| real-time factor +\d+\.\d{2} \| vehicles \d+ \| msgs \d+"
                    r"( \| dropped \d+\.\d{2} s)?")

pytestmark = pytest.mark.slow


def wait_until(cond: Callable[[], object], what: str, node: NodeProcess,
               timeout: float = FIRST_MESSAGE_TIMEOUT) -> None:
    """Poll ``cond()`` every 50 ms; fail with the node's log at the deadline or when the node exits."""
    end = time.monotonic() + timeout
    while not cond():
        if not node.alive() or time.monotonic() > end:
            pytest.fail(f"{'mvsim_node exited' if not node.alive() else f'timed out after {timeout:g} s'} waiting "
                        f"for {what}\n{node.log()[-4000:]}")
        time.sleep(0.05)


def status_times(log: str) -> list[float]:
    """Simulated times of the node's status lines; every line that starts like one must be one, of bounded length."""
    times = []
    for line in log.splitlines():
        if line.startswith("sim time"):
            m = STATUS.fullmatch(line)
            assert m and len(line) <= 200, line
            times.append(float(m.group(1)))
    return times


def test_launch_and_a_second_node_beside_a_running_node(ros_domain: int, tmp_path: Path) -> None:
    node = NodeProcess(DATA / "single.world.xml", {"zmq_server": True}, ros_domain, tmp_path / "node.log")
    try:
        served = re.compile(r"ZMQ: world served as node 'World' on tcp://127\.0\.0\.1:(\d+) ")
        wait_until(lambda: served.search(node.log()) and status_times(node.log()), "the node's ZMQ server and status",
                   node)
        m = served.search(node.log())
        assert m
        port = int(m.group(1))

        b = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "launch", "worlds/demo.world.xml", "--headless",
                            "--realtime-factor", "0", "--duration", "2"], capture_output=True, text=True, cwd=REPO,
                           timeout=300)
        assert b.returncode == 0, b.stderr
        assert re.search(r"^mvsim: port 23700 is in use \(another simulation\?\); this one serves on "
                         rf"tcp://127\.0\.0\.1:(?!{port}\b)\d+ \(reach it with --port \d+\)$", b.stderr, re.M), b.stderr
        assert b.stdout.splitlines()[-1].startswith("sim time     2.000 s | real-time factor")
        after_b = max(status_times(node.log()))

        second = NodeProcess(DATA / "single.world.xml", {"zmq_server": True, "zmq_port": port}, ros_domain,
                             tmp_path / "second.log")
        code = second.proc.wait(FIRST_MESSAGE_TIMEOUT)
        second.stop()
        log = second.log()
        assert code == 2 and "Traceback" not in log, log
        assert log.splitlines()[-1] == (
            f"mvsim_node: parameter zmq_port={port}: cannot listen on tcp://127.0.0.1:{port}: Address already in use "
            f"(another simulation or MVSim server?); set another zmq_port, leave it unset to serve on a free one, or "
            f"zmq_server:=false")

        # the first node goes on stepping: a later status line says a later simulated time
        wait_until(lambda: max(status_times(node.log())) > after_b, "a later status line of the first node", node)
    finally:
        code = node.stop()
    log = node.log()
    assert code == 0, log[-3000:]
    assert "\r" not in log and len(status_times(log)) >= 3


def test_bad_status_line_value_is_one_line(ros_domain: int, tmp_path: Path) -> None:
    node = NodeProcess(DATA / "single.world.xml", {"status_line": "sometimes"}, ros_domain, tmp_path / "node.log")
    code = node.proc.wait(FIRST_MESSAGE_TIMEOUT)
    node.stop()
    assert (code, node.log()) == (2, "mvsim_node: parameter status_line='sometimes' is invalid: expected auto, live, "
                                     "periodic, off\n")

"""``mvsim_node`` on Ctrl-C (SIGINT) and SIGTERM, standalone (the console script that setup.py declares, as
``ros2 run`` starts it): exit status 0 and no traceback whether the signal comes while it runs or while it is still
loading its world, with the CSV loggers' rows flushed up to the last step; and the signal handling itself
(:mod:`mvsim_ros2.entry`), including a signal that lands inside a ``__del__``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ros_cli_harness import Session, assert_clean_exit, cli_env, make_prefix, wait_for
from ros_harness import FIRST_MESSAGE_TIMEOUT, REPO, Clock, Probe, qos, secs

from mvsim_ros2.entry import Stopped, StopSignals

DATA = Path(__file__).resolve().parent / "data"
SIGNALS = [signal.SIGINT, signal.SIGTERM]
LOADING_WORLD = """<mvsim_world version="1.0">
    <simul_timestep>$(touch {mark} && sleep 120 && echo 0.005)</simul_timestep>
    <vehicle name="r1">
        <init_pose>0 0 0</init_pose>
        <dynamics class="differential">
            <l_wheel pos="0.0  0.25" mass="1.5" width="0.06" diameter="0.20"/>
            <r_wheel pos="0.0 -0.25" mass="1.5" width="0.06" diameter="0.20"/>
            <chassis mass="25.0" zmin="0.05" zmax="0.40"/>
            <controller class="twist_ideal"/>
        </dynamics>
    </vehicle>
</mvsim_world>
"""


@pytest.fixture(scope="module")
def node_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``lib/mvsim_ros2/mvsim_node`` of an ament prefix holding this checkout (what ``ros2 run`` starts)."""
    return make_prefix(tmp_path_factory.mktemp("ament") / "prefix") / "lib" / "mvsim_ros2" / "mvsim_node"


def start_node(node_script: Path, world: Path, domain: int, tmp: Path, *params: str,
               env: dict[str, str] | None = None) -> Session:
    args = [str(node_script), "--ros-args", "-p", f"world_file:={world}", "-p", "headless:=true",
            "-p", "zmq_server:=false", *(a for p in params for a in ("-p", p))]
    return Session(args, {**cli_env(domain, None, tmp), **(env or {})}, tmp / "node.log")


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_while_running_exits_0_with_loggers_flushed(node_script: Path, ros_context: Any, ros_domain: int,
                                                             tmp_path: Path, signum: int) -> None:
    logs = tmp_path / "csv"
    node = start_node(node_script, DATA / "logging.world.xml", ros_domain, tmp_path,
                      env={"MVSIM_TEST_LOG_DIR": str(logs)})
    probe = Probe(ros_context, f"signal_probe_{signal.Signals(signum).name.lower()}")
    probe.watch = node  # type: ignore[assignment]  # a Session: alive(), proc and log() as a NodeProcess
    clock = probe.subscribe(Clock, "/clock", qos(reliable=False))
    try:
        probe.spin_until(lambda: clock and secs(clock[-1].clock) >= 1.0, FIRST_MESSAGE_TIMEOUT, "1 s of /clock")
        node.proc.send_signal(signum)
        probe.watch = None
        code = node.wait(30.0, signal.Signals(signum).name)
        last_clock = max(secs(m.clock) for m in clock)
    finally:
        probe.close()
        if node.alive():
            node.kill()
    log = node.log()
    assert_clean_exit(code, log, "mvsim_node")
    assert f"{signal.Signals(signum).name}: stopping" in log
    rows = (logs / "mvsim_r1_pose.csv").read_text().splitlines()
    assert len(rows) > 100 and all(len(r.split(",")) == 13 for r in rows), rows[-3:]
    assert float(rows[-1].split(",")[0]) >= last_clock - 1e-9  # every step up to the last /clock is on disk


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_while_loading_the_world_exits_0_at_once(node_script: Path, ros_domain: int, tmp_path: Path,
                                                         signum: int) -> None:
    mark = tmp_path / "loading"
    world = tmp_path / "loading.world.xml"
    world.write_text(LOADING_WORLD.format(mark=mark))  # $(...) blocks the load for 120 s once it touched `mark`
    node = start_node(node_script, world, ros_domain, tmp_path, "allow_shell:=true")
    try:
        wait_for(mark.exists, "the world's shell command", FIRST_MESSAGE_TIMEOUT, node)
        node.proc.send_signal(signum)
        code = node.wait(20.0, f"{signal.Signals(signum).name} while loading")  # not the 120 s of the load
    finally:
        if node.alive():
            node.kill()
    assert_clean_exit(code, node.log(), "mvsim_node")


def test_console_script_handles_signals_before_the_heavy_imports() -> None:
    """setup.py's ``mvsim_node`` is :func:`mvsim_ros2.entry.main`, which imports the node only once the handlers are
    in place (so that Ctrl-C during the second of imports exits quietly too)."""
    from ros_cli_harness import console_entry

    assert console_entry("mvsim_node") == ("mvsim_ros2.entry", "main")
    r = subprocess.run([sys.executable, "-c", "import sys, mvsim_ros2.entry; "
                        "print(sorted(m for m in sys.modules if m.startswith(('rclpy', 'mvsim_core', 'numpy'))))"],
                       capture_output=True, text=True, timeout=60, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


def test_signal_inside_a_destructor_is_delivered_again() -> None:
    """Python prints and drops an exception raised in a ``__del__`` or a weakref callback (the import system has
    some): the start must still be abandoned, without that printout."""
    script = textwrap.dedent("""
        import os, signal, sys, time
        from mvsim_ros2.entry import Stopped, stop_signals

        stop_signals()

        class Victim:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)  # Python runs the handler here, inside __del__

        try:
            Victim()
            end = time.monotonic() + 10
            while time.monotonic() < end:  # "loading"
                time.sleep(0.001)
            print("not stopped")
        except Stopped as e:
            print("stopped:", e)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "stopped: stopped by SIGTERM", r.stdout + r.stderr
    assert r.stderr == ""


def test_stop_signals_states() -> None:
    """Starting: a signal raises Stopped; running: it calls the stop function once; closing: nothing."""
    s = StopSignals()  # not installed: its handler is called directly
    with pytest.raises(Stopped, match="SIGINT"):
        s._on_signal(signal.SIGINT, None)
    assert s.name == "SIGINT"
    s._on_signal(signal.SIGINT, None)  # a repeat while the first one unwinds: ignored

    s = StopSignals()
    calls: list[int] = []
    s.running(lambda: calls.append(1))
    s._on_signal(signal.SIGTERM, None)
    s._on_signal(signal.SIGINT, None)  # a terminal's Ctrl-C and launch's own SIGINT: one stop
    assert calls == [1] and s.name == "SIGTERM"
    s.start_closing()
    s._on_signal(signal.SIGINT, None)
    assert calls == [1]

    s = StopSignals()
    with pytest.raises(Stopped):
        s._on_signal(signal.SIGTERM, None)
    s.running(lambda: calls.append(2))  # a signal came before the loop started: it stops at once
    assert calls == [1, 2]


def test_a_signal_during_interpreter_exit_after_closing_changes_nothing() -> None:
    """Once closing, the handlers are SIG_IGN: at exit Python puts its own handlers back to the default action, so a
    repeated Ctrl-C then (``ros2 launch`` forwards one after the terminal's) would end the process with status -2."""
    script = textwrap.dedent("""
        import atexit, os, signal
        from mvsim_ros2.entry import stop_signals
        s = stop_signals()
        s.start_closing()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        atexit.register(lambda: (os.kill(os.getpid(), signal.SIGINT), os.kill(os.getpid(), signal.SIGTERM)))
        print("closed")
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, "closed", "")

"""``ros2 launch mvsim_ros2 demo.launch.py`` as a user types it, with the real launch tools (ros_cli_harness.py):

* booleans in every spelling (false/False/0 and true/True/1) start the demo, and reach the node as booleans;
* ``ros2 topic echo --once /bot1/odom`` (the real CLI, another process) prints odometry;
* Ctrl-C (SIGINT to the process group, as a terminal sends it) ends launch and the node with exit status 0 and no
  traceback anywhere in the output; a bad boolean stops the launch before anything starts;
* ``ros2 run teleop_twist_keyboard teleop_twist_keyboard`` in tmux, driven with ``tmux send-keys``, moves bot1
  (``i``) and stops it (``k``), as seen in its odometry.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ros_cli_harness import (
    FIRST_MESSAGE_TIMEOUT,
    Session,
    assert_clean_exit,
    child_pids,
    cli_env,
    echo_once,
    executable,
    make_prefix,
    need,
    pid_running,
    wait_for,
)
from ros_harness import REPO, Odometry, Probe, qos

pytestmark = pytest.mark.slow

SPELLINGS = [("false", "true"), ("False", "True"), ("0", "1")]  # (a false, a true) as users write them
TELEOP_SPEED = 0.5  # m/s: teleop_twist_keyboard's default linear speed


@pytest.fixture(scope="module")
def prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout registered as mvsim_ros2 in an ament prefix of its own (needs launch_ros and ros2)."""
    need(importlib.util.find_spec("launch_ros") is not None, "launch_ros is not installed")
    executable("ros2")
    return make_prefix(tmp_path_factory.mktemp("ament") / "prefix")


def params_file(tmp: Path, **params: Any) -> Path:
    """A parameters file for the node: no ZMQ server (tests run side by side), plus ``params``."""
    path = tmp / "params.yaml"
    path.write_text(yaml.safe_dump({"/**/mvsim": {"ros__parameters": {"zmq_server": False, **params}}}))
    return path


def start_demo(prefix: Path, tmp: Path, domain: int, *args: str, **params: Any) -> tuple[Session, dict[str, str]]:
    env = cli_env(domain, prefix, tmp)
    launch = Session([executable("ros2"), "launch", "mvsim_ros2", "demo.launch.py", *args,
                      f"params_file:={params_file(tmp, **params)}"], env, tmp / "launch.log")
    return launch, env


def param_dump(node: str, env: dict[str, str], timeout: float = 60.0) -> dict[str, Any]:
    """``ros2 param dump NODE`` (no daemon): the node's parameters. Repeated while the CLI's own discovery window
    closes before it sees the node ("Node not found")."""
    end = time.monotonic() + timeout
    while True:
        r = subprocess.run([executable("ros2"), "param", "dump", "--no-daemon", node], env=env, capture_output=True,
                           text=True, timeout=timeout)
        if r.returncode == 0:
            params: dict[str, Any] = yaml.safe_load(r.stdout)[node]["ros__parameters"]
            return params
        assert "Node not found" in r.stderr and time.monotonic() < end, r.stdout + r.stderr


def stop_demo(launch: Session) -> None:
    """Ctrl-C: launch and the node exit with 0, print no traceback, and leave no process behind."""
    code = launch.ctrl_c()
    log = launch.log()
    assert_clean_exit(code, log, "ros2 launch")
    pids = child_pids(log)
    assert pids, log
    for pid in pids:
        assert f"process has finished cleanly [pid {pid}]" in log, log[-4000:]
        assert not pid_running(pid), f"pid {pid} outlived ros2 launch"


@pytest.mark.parametrize(("no", "yes"), SPELLINGS, ids=[f"{n}-{y}" for n, y in SPELLINGS])
def test_demo_launch_accepts_every_boolean_spelling(prefix: Path, ros_domain: int, tmp_path: Path,
                                                     no: str, yes: str) -> None:
    launch, env = start_demo(prefix, tmp_path, ros_domain, f"use_rviz:={no}", f"headless:={yes}",
                             f"do_fake_localization:={no}", f"force_publish_vehicle_namespace:={yes}",
                             f"lockstep:={no}", f"disable_sim_time_clock:={no}", f"publish_log_topics:={no}")
    try:
        odom = echo_once("/bot1/odom", "nav_msgs/msg/Odometry", env, tmp_path, launch)
        assert "child_frame_id: base_link" in odom and "pose:" in odom and "twist:" in odom, odom

        got = param_dump("/mvsim", env)
        want = {"headless": True, "force_publish_vehicle_namespace": True, "do_fake_localization": False,
                "lockstep": False, "disable_sim_time_clock": False, "publish_log_topics": False,
                "use_sim_time": False}
        assert {k: got[k] for k in want} == want  # booleans (not 0/1 or strings), whatever the spelling
        assert "rviz2" not in launch.log()
    finally:
        if launch.alive():
            stop_demo(launch)
        else:
            launch.kill()
            pytest.fail(f"ros2 launch exited early\n{launch.log()[-4000:]}")


def test_bad_boolean_stops_the_launch_before_anything_starts(prefix: Path, ros_domain: int, tmp_path: Path
                                                              ) -> None:
    launch, _ = start_demo(prefix, tmp_path, ros_domain, "use_rviz:=false", "headless:=maybe")
    try:
        code = launch.wait(60.0, "a bad argument")
    finally:
        launch.kill()
    log = launch.log()
    assert code != 0
    assert "launch argument headless:='maybe' is not a boolean" in log, log
    assert not child_pids(log), log  # nothing was started
    assert "Traceback" not in log


# ---------------------------------------------------------------------- the node's failure, its status line
@pytest.mark.parametrize("launch_file", ["launch_world.launch.py", "demo.launch.py"])
def test_a_node_that_fails_fails_the_launch(prefix: Path, ros_domain: int, tmp_path: Path, launch_file: str) -> None:
    """A world file that does not exist: the node's one-line error, then launch stops with a non-zero status."""
    env = cli_env(ros_domain, prefix, tmp_path)
    launch = Session([executable("ros2"), "launch", "mvsim_ros2", launch_file, "world_file:=/nonexistent.world.xml",
                      "use_rviz:=false", "headless:=true", f"params_file:={params_file(tmp_path)}"], env,
                     tmp_path / "launch.log")
    try:
        code = launch.wait(FIRST_MESSAGE_TIMEOUT, "the node's failure")
    finally:
        launch.kill()
    log = launch.log()
    assert code == 1, log  # launch's status when an exception reaches its event loop (here: the node failed)
    assert "[mvsim_node-1] mvsim_node: world file not found: /nonexistent.world.xml\n" in log, log
    assert ("[ERROR] [launch]: Caught exception in launch (see debug for traceback): mvsim_node-1 failed with exit "
            "status 2 (its error is above); stopping the launch\n") in log, log
    assert "Traceback" not in log


def test_status_lines_under_ros2_launch(prefix: Path, ros_domain: int, tmp_path: Path) -> None:
    """launch_world with a good world runs; its status line arrives as whole lines every 5 s (launch's emulated
    terminal is not one a person watches), and Ctrl-C ends everything cleanly."""
    env = cli_env(ros_domain, prefix, tmp_path)
    launch = Session([executable("ros2"), "launch", "mvsim_ros2", "launch_world.launch.py",
                      f"world_file:={REPO / 'worlds' / 'demo.world.xml'}", "use_rviz:=false", "headless:=true",
                      f"params_file:={params_file(tmp_path)}"], env, tmp_path / "launch.log")
    status = re.compile(r"\[mvsim_node-1\] sim time +\d+\.\d{3} s \| real-time factor +\d+\.\d{2} \| vehicles 2 "
                        r"\| msgs \d+( \| dropped \d+\.\d{2} s)?")

    def status_lines() -> list[str]:
        return [line for line in launch.log().splitlines() if line.startswith("[mvsim_node-1] sim time")]

    def stepping() -> bool:  # past the first steps (slow while numba compiles): 2 s simulated, 2+ lines
        times = [float(line.split()[3]) for line in status_lines()]
        return len(times) >= 2 and times[-1] >= 2.0

    try:
        wait_for(stepping, "status lines up to 2 s of simulated time", FIRST_MESSAGE_TIMEOUT + 30.0, launch)
    finally:
        if launch.alive():
            stop_demo(launch)
        else:
            launch.kill()
            pytest.fail(f"ros2 launch exited early\n{launch.log()[-4000:]}")
    lines = status_lines()
    assert len(lines) >= 3, launch.log()  # and the last one, on the way out
    for line in lines:
        assert status.fullmatch(line) and len(line) <= 230, line
    assert "\r" not in launch.log()


# ---------------------------------------------------------------------- teleop_twist_keyboard in tmux
class Tmux:
    """A private tmux server (its own socket) running one command in a detached session."""

    def __init__(self, name: str, command: list[str], env: dict[str, str]) -> None:
        need(Path("/usr/bin/tmux").exists() or bool(os.environ.get("TMUX_BIN")), "tmux is not installed")
        self.base = [os.environ.get("TMUX_BIN", "/usr/bin/tmux"), "-L", name, "-f", os.devnull]
        self.env = env
        self.run("new-session", "-d", "-s", "main", "-x", "120", "-y", "40", subprocess.list2cmdline(command))
        self.run("set-option", "-t", "main", "remain-on-exit", "on")

    def run(self, *args: str) -> str:
        r = subprocess.run([*self.base, *args], env=self.env, capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"tmux {' '.join(args)}: {r.stderr}"
        return r.stdout

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "main", *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "main")

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], env=self.env, capture_output=True, timeout=30)


@pytest.fixture
def teleop_demo(prefix: Path, ros_domain: int, tmp_path: Path) -> Iterator[tuple[Session, dict[str, str]]]:
    """The demo launched with the watchdog off (teleop sends one command per key press: only ``k`` may stop bot1)."""
    launch, env = start_demo(prefix, tmp_path, ros_domain, "use_rviz:=False", "headless:=True",
                             base_watchdog_timeout=0.0)
    try:
        yield launch, env
    finally:
        if launch.alive():
            stop_demo(launch)
        else:
            launch.kill()


def test_teleop_keyboard_in_tmux_moves_and_stops_bot1(teleop_demo: tuple[Session, dict[str, str]],
                                                       ros_context: Any, tmp_path: Path) -> None:
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        get_package_prefix("teleop_twist_keyboard")
    except PackageNotFoundError:
        need(False, "teleop_twist_keyboard is not installed")
    launch, env = teleop_demo
    probe = Probe(ros_context, "teleop_probe")
    odom = probe.subscribe(Odometry, "/bot1/odom", qos(reliable=False))
    tmux = Tmux(f"mvsim_teleop_{os.getpid()}", [executable("ros2"), "run", "teleop_twist_keyboard",
                                                 "teleop_twist_keyboard", "--ros-args", "-r", "cmd_vel:=/bot1/cmd_vel"],
                env)
    probe.watch = launch  # type: ignore[assignment]  # a Session: alive(), proc and log() as a NodeProcess
    try:
        def press_until(key: str, cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
            """Press ``key``, again every 2 s until ``cond()`` holds (teleop flushes the terminal's input between
            two reads: a key typed at that moment is lost, as it would be from a person's keyboard)."""
            end = time.monotonic() + timeout
            while not cond():
                if time.monotonic() > end:
                    pytest.fail(f"timed out after {timeout:g} s: {what}\n--- teleop ---\n{tmux.screen()}")
                tmux.keys(key)
                retry = time.monotonic() + 2.0
                probe.spin_until(lambda r=retry: cond() or time.monotonic() > r, timeout, what)

        probe.spin_until(lambda: odom, FIRST_MESSAGE_TIMEOUT, "bot1's odometry")
        probe.spin_until(lambda: probe.node.count_publishers("/bot1/cmd_vel") >= 1 and "currently:" in tmux.screen(),
                         FIRST_MESSAGE_TIMEOUT, "teleop_twist_keyboard's publisher on /bot1/cmd_vel")
        x0 = odom[-1].pose.pose.position.x

        press_until("i", lambda: odom[-1].twist.twist.linear.x > 0.5 * TELEOP_SPEED, "bot1 moving after `i`")
        probe.spin_until(lambda: odom[-1].pose.pose.position.x > x0 + 0.5, 30.0, "bot1 0.5 m further")
        top = max(m.twist.twist.linear.x for m in odom)
        assert 0.8 * TELEOP_SPEED < top < 1.2 * TELEOP_SPEED, top

        press_until("k", lambda: abs(odom[-1].twist.twist.linear.x) < 0.01, "bot1 stopped after `k`")
        t_stop, x_stop = odom[-1].header.stamp.sec, odom[-1].pose.pose.position.x
        probe.spin_until(lambda: odom[-1].header.stamp.sec >= t_stop + 2, 30.0, "1+ s of simulated time after `k`")
        assert abs(odom[-1].pose.pose.position.x - x_stop) < 0.02  # it stays where `k` stopped it
        assert x_stop > x0 + 0.5
    finally:
        tmux.close()
        probe.close()

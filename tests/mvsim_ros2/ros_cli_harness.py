"""Helpers of the tests that run the real ROS 2 command-line tools against this checkout: ``ros2 launch``,
``ros2 run``, ``ros2 topic echo``, ``ros2 param dump``, teleop_twist_keyboard (in tmux) and ``colcon build``.

The tools come from ``make setup`` (pip-installed into .venv from ``../shared/third_party/ros2``) or from a sourced
ROS 2 installation. Where ``../shared`` is beside the checkout (CI, the development machines) a missing tool fails
the test, with the command that installs it; elsewhere, or with ``MVSIM_SKIP_ROS=1``, the test skips.

The package under test is this checkout, registered in a temporary ament prefix (:func:`make_prefix`) put first on
``AMENT_PREFIX_PATH``, so that ``ros2 launch mvsim_ros2 ...`` finds this checkout's launch files whatever else is
registered (``make setup`` registers the checkout it ran in, which may be another one).

Every wait is for a condition (a process's exit, a file, a message), with generous deadlines; processes are started
in their own session so that "Ctrl-C" is what a terminal does: SIGINT to the whole process group.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from ros_harness import REPO, LoggedProcess, ros_env

SHARED_TOOLS = REPO.parent / "shared" / "third_party" / "ros2"
PACKAGE = "mvsim_ros2"
SHARE_DIRS = ("launch", "config", "rviz", "worlds")  # what setup.py installs under share/mvsim_ros2
FIRST_MESSAGE_TIMEOUT = 120.0  # s: launch + node start + discovery (+ a cold numba cache) on a small machine
STOP_TIMEOUT = 30.0  # s: from Ctrl-C to the exit of everything


def tools_expected() -> bool:
    """Whether the ROS 2 tools must be there: ``../shared`` is beside the checkout and ROS is not switched off."""
    return SHARED_TOOLS.is_dir() and os.environ.get("MVSIM_SKIP_ROS", "0") != "1"


def need(ok: bool, what: str) -> None:
    """Fail (tools expected) or skip (tools optional) unless ``ok``."""
    if ok:
        return
    if tools_expected():
        pytest.fail(f"{what}: run `make setup` (it installs the ROS 2 tools from {SHARED_TOOLS})")
    pytest.skip(f"{what} (`make setup` with ../shared/third_party, or a sourced ROS 2 installation, provides it)")


def executable(name: str) -> str:
    """The path of a command: the venv's own first (its scripts run with the venv's interpreter), else PATH's."""
    mine = Path(sys.executable).parent / name
    found = str(mine) if mine.is_file() else shutil.which(name)
    need(found is not None, f"the command `{name}` is not installed")
    assert found is not None
    return found


def console_entry(name: str) -> tuple[str, str]:
    """(module, function) of a console script declared in setup.py, e.g. ``("mvsim_ros2.entry", "main")``."""
    m = re.search(rf'"{re.escape(name)}\s*=\s*([\w.]+):(\w+)"', (REPO / "setup.py").read_text())
    assert m, f"setup.py declares no console script {name}"
    return m.group(1), m.group(2)


def make_prefix(root: Path) -> Path:
    """An ament prefix at ``root`` where this checkout is the package mvsim_ros2, laid out as ``colcon build``
    installs it: the package marker, ``share/mvsim_ros2/{package.xml, launch, config, rviz, worlds}`` (real
    folders with linked files: ros2 launch walks them) and the executable ``lib/mvsim_ros2/mvsim_node``, the console
    script that setup.py declares, run by this interpreter."""
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / PACKAGE).write_text("")
    share = root / "share" / PACKAGE
    share.mkdir(parents=True)
    (share / "package.xml").symlink_to(REPO / "package.xml")
    for d in SHARE_DIRS:
        shutil.copytree(REPO / d, share / d, copy_function=os.symlink)
    lib = root / "lib" / PACKAGE
    lib.mkdir(parents=True)
    module, function = console_entry("mvsim_node")
    script = lib / "mvsim_node"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\nsys.exit({function}())\n")
    script.chmod(0o755)
    return root


def cli_env(domain: int, prefix: Path | None, tmp: Path, *, checkout: bool = True) -> dict[str, str]:
    """The environment of a ROS tool: the test's domain, loopback discovery, ``prefix`` first on
    AMENT_PREFIX_PATH, this checkout's code first on PYTHONPATH (``checkout``), logs under ``tmp``."""
    env = ros_env(domain)
    if prefix is not None:
        env["AMENT_PREFIX_PATH"] = os.pathsep.join([str(prefix), *filter(None, [env.get("AMENT_PREFIX_PATH")])])
    if checkout:
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["ROS_LOG_DIR"] = str(tmp / "ros_log")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


class Session(LoggedProcess):
    """A command in its own session (process group), output to a log file; ``ctrl_c`` is a terminal's Ctrl-C."""

    def __init__(self, args: list[str], env: dict[str, str], log_path: Path, cwd: Path | None = None) -> None:
        self.args = args
        self.log_path = log_path
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in wait()/kill()
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, cwd=cwd or REPO, start_new_session=True)

    def signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.proc.pid, signum)
        except ProcessLookupError:
            pass

    def ctrl_c(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGINT to the whole process group (the command and everything it started); its exit status. Fails the
        test (with the log) if it is still running after ``timeout`` s."""
        self.signal_group(signal.SIGINT)
        return self.wait(timeout, "Ctrl-C")

    def terminate(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM to the command alone; its exit status (fails the test after ``timeout`` s)."""
        self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout, "SIGTERM")

    def wait(self, timeout: float, after: str) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.signal_group(signal.SIGUSR1)  # mvsim_node prints its threads' stacks (faulthandler)
            time.sleep(1.0)  # let the stacks reach the log before the kill
            self.kill()
            pytest.fail(f"{self.args[0]} still running {timeout:g} s after {after}\n{self.log()[-4000:]}")
        self._log.close()
        return code

    def kill(self) -> None:
        """SIGKILL to the whole group (cleanup: nothing may outlive a test)."""
        self.signal_group(signal.SIGKILL)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        self._log.close()


def wait_for(cond: Callable[[], object], what: str, timeout: float, *watched: Session) -> None:
    """Poll ``cond()`` every 50 ms until it is true; fail with the watched sessions' logs at the deadline or when
    one of them exits."""
    end = time.monotonic() + timeout
    while not cond():
        for s in watched:
            if not s.alive():
                pytest.fail(f"{s.args[0]} exited ({s.proc.returncode}) while waiting for {what}\n{s.log()[-4000:]}")
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}\n"
                        + "\n".join(s.log()[-4000:] for s in watched))
        time.sleep(0.05)


def echo_once(topic: str, msg_type: str, env: dict[str, str], tmp: Path, *watched: Session,
              timeout: float = FIRST_MESSAGE_TIMEOUT) -> str:
    """``ros2 topic echo --once TOPIC TYPE`` (the real CLI, in its own process): what it printed. The type is
    given so that it waits for the first message instead of giving up on a topic not discovered yet."""
    log = tmp / f"echo_{topic.strip('/').replace('/', '_')}.log"
    echo = Session([executable("ros2"), "topic", "echo", "--once", "--no-daemon", topic, msg_type], env, log)
    try:
        wait_for(lambda: not echo.alive(), f"`ros2 topic echo --once {topic}`", timeout, *watched)
        assert echo.wait(5.0, "its message") == 0, echo.log()
        return echo.log()
    finally:
        if echo.alive():
            echo.kill()


def child_pids(log: str) -> list[int]:
    """The pids of the processes that ``ros2 launch`` started (its "process started with pid [N]" lines)."""
    return [int(m) for m in re.findall(r"process started with pid \[(\d+)\]", log)]


def pid_running(pid: int) -> bool:
    """Whether a process (not a zombie) with this pid exists."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def assert_clean_exit(code: int, output: str, who: str) -> None:
    """Exit status 0 and no traceback (nor an exception Python could only print) anywhere in the output."""
    assert code == 0, f"{who} exited with {code}\n{output[-4000:]}"
    for bad in ("Traceback", "Exception ignored", "KeyboardInterrupt"):
        assert bad not in output, f"{who}: '{bad}' in its output\n{output[-4000:]}"

"""The install layout a ROS user gets: ``git clone`` of this checkout (its committed HEAD: uncommitted changes are not
in it), ``colcon build``, ``source install/local_setup.bash``, then ``ros2 run mvsim_ros2 mvsim_node`` publishes
/clock and ``ros2 launch mvsim_ros2 demo.launch.py`` publishes odometry — both from the install tree, not from the
checkout — and Ctrl-C ends each with exit status 0 and no traceback.

Marked ``heavy`` (a build, about a minute in all): deselected by default (pytest.ini); ``.ci/run`` runs it in its own
bounded step, ``.venv/bin/python -m pytest -m heavy``. colcon is the venv's (``make setup``), so that the installed
scripts get the venv's interpreter in their shebang.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from ros_cli_harness import Session, assert_clean_exit, cli_env, echo_once, executable, need
from ros_harness import REPO

pytestmark = [pytest.mark.heavy, pytest.mark.slow]


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``colcon build`` of a fresh clone of this checkout: the install folder."""
    colcon = executable("colcon")
    executable("ros2")
    need(shutil.which("git") is not None, "git is not installed")
    ws = tmp_path_factory.mktemp("colcon_ws")
    clone = subprocess.run(["git", "clone", "--quiet", str(REPO), str(ws / "src" / "mvsim_ros2")],
                           capture_output=True, text=True, timeout=120)
    assert clone.returncode == 0, clone.stderr
    env = build_env(ws)
    r = subprocess.run([colcon, "build", "--base-paths", "src"], cwd=ws, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return ws / "install"


def build_env(ws: Path) -> dict[str, str]:
    """No user configuration of colcon, no checkout on PYTHONPATH."""
    env = cli_env(0, None, ws, checkout=False)
    env.pop("PYTHONPATH", None)
    env["COLCON_HOME"] = str(ws / "colcon_home")
    return env


def sourced(install: Path, command: str) -> list[str]:
    """``command`` run by bash after ``source install/local_setup.bash``, as a user types it."""
    return ["bash", "-c", f'source "{install}/local_setup.bash" && exec {command}']


def run_env(domain: int, tmp: Path) -> dict[str, str]:
    """The test's ROS domain; what local_setup.bash sets is all that points at the package (commands run in
    ``tmp``, so that no interpreter finds the checkout through its working directory)."""
    env = cli_env(domain, None, tmp, checkout=False)
    env.pop("PYTHONPATH", None)
    return env


def test_installed_package_runs_from_the_install_tree(install: Path, tmp_path: Path) -> None:
    r = subprocess.run(sourced(install, "python -c 'import mvsim_ros2.entry, mvsim_core; "
                                        "print(mvsim_ros2.entry.__file__); print(mvsim_core.__file__)'"),
                       env=run_env(0, tmp_path), capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert all(line.startswith(str(install)) for line in r.stdout.split()), r.stdout
    script = install / "mvsim_ros2" / "lib" / "mvsim_ros2" / "mvsim_node"
    assert script.is_file()
    share = install / "mvsim_ros2" / "share" / "mvsim_ros2"
    for item in ("package.xml", "launch/demo.launch.py", "launch/launch_world.launch.py", "worlds/demo.world.xml",
                 "config/mvsim_params.yaml", "rviz/demo.rviz"):
        assert (share / item).is_file(), item


def test_ros2_run_publishes_clock(install: Path, ros_domain: int, tmp_path: Path) -> None:
    env = run_env(ros_domain, tmp_path)
    node = Session(sourced(install, "ros2 run mvsim_ros2 mvsim_node --ros-args -p world_file:=demo.world.xml "
                                    "-p headless:=true -p zmq_server:=false"), env, tmp_path / "run.log", cwd=tmp_path)
    try:
        clock = echo_once("/clock", "rosgraph_msgs/msg/Clock", env, tmp_path, node)
        assert "clock:" in clock and "sec:" in clock, clock
        assert f"{install}/mvsim_ros2/share/mvsim_ros2/worlds/demo.world.xml" in node.log()
    finally:
        code = node.ctrl_c() if node.alive() else node.proc.returncode
    assert_clean_exit(code, node.log(), "ros2 run mvsim_ros2 mvsim_node")


def test_ros2_launch_demo_from_the_install(install: Path, ros_domain: int, tmp_path: Path) -> None:
    env = run_env(ros_domain, tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"/**/mvsim": {"ros__parameters": {"zmq_server": False}}}))
    launch = Session(sourced(install, f"ros2 launch mvsim_ros2 demo.launch.py use_rviz:=false headless:=true "
                                      f"params_file:={params}"), env, tmp_path / "launch.log", cwd=tmp_path)
    try:
        odom = echo_once("/bot1/odom", "nav_msgs/msg/Odometry", env, tmp_path, launch)
        assert "child_frame_id: base_link" in odom, odom
    finally:
        code = launch.ctrl_c() if launch.alive() else launch.proc.returncode
    assert_clean_exit(code, launch.log(), "ros2 launch mvsim_ros2 demo.launch.py")
    assert f"{install}/mvsim_ros2/share/mvsim_ros2/worlds/demo.world.xml" in launch.log()

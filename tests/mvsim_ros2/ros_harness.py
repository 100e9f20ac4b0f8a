"""Test harness for the ROS 2 bridge: the node as a real subprocess, a probe node in the test process, over DDS.

Isolation: every test process gets its own ROS_DOMAIN_ID (from the pytest-xdist worker and the pid) and keeps DDS
discovery on the loopback (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``); the node subprocess inherits both.

Nothing here sleeps for a fixed time: every wait is "spin until a condition holds", with generous deadlines
(discovery sometimes takes ~4 s, a cold numba cache makes the node's first steps slow, and the machine is small).
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not importable (run `make setup`, or source a ROS 2 install)")
pytest.importorskip("tf2_msgs.msg", reason="tf2_msgs is not built (run `make setup`)")
pytest.importorskip("ackermann_msgs.msg", reason="ackermann_msgs is not built (run `make setup`)")

# below: only after the skips above (re-exported so that test modules import everything from here)
from ackermann_msgs.msg import AckermannDriveStamped  # noqa: E402, F401
from geometry_msgs.msg import Polygon, PoseArray, PoseWithCovarianceStamped, Twist  # noqa: E402, F401
from nav_msgs.msg import MapMetaData, OccupancyGrid, Odometry  # noqa: E402, F401
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue  # noqa: E402, F401
from rcl_interfaces.srv import SetParameters  # noqa: E402, F401
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter as RosParameter  # noqa: E402, F401
from rclpy.qos import (  # noqa: E402, F401
    DurabilityPolicy,
    QoSCompatibility,
    QoSProfile,
    ReliabilityPolicy,
    qos_check_compatible,
    qos_profile_sensor_data,
)
from rosgraph_msgs.msg import Clock  # noqa: E402, F401
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, NavSatFix, NavSatStatus, PointCloud2  # noqa: E402, F401
from std_msgs.msg import Bool, Float64  # noqa: E402, F401
from std_srvs.srv import Trigger  # noqa: E402, F401
from tf2_msgs.msg import TFMessage  # noqa: E402, F401
from visualization_msgs.msg import MarkerArray  # noqa: E402, F401

REPO = Path(__file__).resolve().parents[2]
NODE_EXE = Path(sys.executable).parent / "mvsim_node"

FIRST_MESSAGE_TIMEOUT = 90.0  # s: node start + discovery + (cold cache) numba compilation of the first steps
TIMEOUT = 30.0  # s: any later wait


def pick_domain_id() -> int:
    """A ROS domain for this test process (100..199; Fast DDS accepts up to 232)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    k = int("".join(c for c in worker if c.isdigit()) or 0)
    return 100 + (os.getpid() * 7 + k * 13) % 100


def ros_env(domain: int) -> dict[str, str]:
    env = dict(os.environ)
    env["ROS_DOMAIN_ID"] = str(domain)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env.pop("ROS_LOCALHOST_ONLY", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def secs(stamp: Any) -> float:
    """Seconds of a builtin_interfaces/Time."""
    return stamp.sec + stamp.nanosec * 1e-9


def yaw_of(q: Any) -> float:
    """Yaw (rad) of a geometry_msgs/Quaternion."""
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def qos(reliable: bool = True, transient_local: bool = False, depth: int = 50) -> QoSProfile:
    return QoSProfile(depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if transient_local else DurabilityPolicy.VOLATILE)


class LoggedProcess:
    """A subprocess whose stdout+stderr go to ``log_path`` (subclasses start ``self.proc`` and open ``self._log``)."""

    log_path: Path
    proc: subprocess.Popen[bytes]
    _log: Any

    def log(self) -> str:
        """Everything it printed so far."""
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None


class NodeProcess(LoggedProcess):
    """``mvsim_node`` running as a subprocess; its stdout+stderr go to a log file."""

    def __init__(self, world: Path, params: dict[str, Any], domain: int, log_path: Path,
                 extra_args: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        args = [str(NODE_EXE), "--ros-args", *(extra_args or [])]
        for k, v in {"world_file": str(world), "zmq_server": False, "headless": True, **params}.items():
            val = ("true" if v else "false") if isinstance(v, bool) else str(v)
            args += ["-p", f"{k}:={val}"]
        self.log_path = log_path
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT,
                                     env={**ros_env(domain), **(env or {})}, cwd=REPO)
        self.returncode: int | None = None

    def stop(self, timeout: float = 20.0) -> int:
        """SIGINT (Ctrl-C), then wait; SIGKILL if it hangs. The exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:  # stuck: have it print its threads' stacks into the log, then kill
                self.proc.send_signal(signal.SIGUSR1)
                try:
                    self.proc.wait(2.0)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
        self.returncode = self.proc.returncode
        self._log.close()
        return self.returncode


class Probe:
    """A test-side rclpy node with helpers to subscribe, publish, call services and wait for conditions."""

    def __init__(self, context: Any, name: str = "mvsim_test_probe") -> None:
        self.node = Node(name, context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.inbox: dict[str, list[Any]] = {}
        self.watch: NodeProcess | None = None

    def close(self) -> None:
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()

    # ------------------------------------------------------------------ plumbing
    def subscribe(self, msg_type: Any, topic: str, profile: QoSProfile | None = None, key: str | None = None
                  ) -> list[Any]:
        """Collect every message of ``topic`` into a list (returned, and kept in ``inbox[key or topic]``)."""
        box = self.inbox.setdefault(key or topic, [])
        self.node.create_subscription(msg_type, topic, box.append, profile or qos())
        return box

    def publisher(self, msg_type: Any, topic: str, profile: QoSProfile | None = None) -> Any:
        return self.node.create_publisher(msg_type, topic, profile or qos(depth=10))

    def spin_until(self, cond: Callable[[], Any], timeout: float = TIMEOUT, what: str = "condition") -> Any:
        """Spin until ``cond()`` is truthy; its value. Fails the test (with the node's log) at the deadline."""
        end = time.monotonic() + timeout
        while True:
            v = cond()
            if v:
                return v
            if time.monotonic() > end:
                pytest.fail(f"timed out after {timeout:g} s waiting for {what}" + self._node_log())
            if self.watch is not None and not self.watch.alive():
                pytest.fail(f"mvsim_node exited ({self.watch.proc.returncode}) while waiting for {what}"
                            + self._node_log())
            self.executor.spin_once(timeout_sec=0.05)

    def spin_for(self, seconds: float) -> None:
        """Serve callbacks for a fixed window of wall time — for measuring (rates, absence of messages), never to
        wait for something to happen."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    def _node_log(self) -> str:
        if self.watch is None:
            return ""
        return "\n--- mvsim_node log (tail) ---\n" + "\n".join(self.watch.log().splitlines()[-40:])

    def wait_matched(self, pub: Any, timeout: float = FIRST_MESSAGE_TIMEOUT) -> None:
        self.spin_until(lambda: pub.get_subscription_count() > 0, timeout, f"a subscriber of {pub.topic_name}")

    def next_message(self, box: list[Any], cond: Callable[[Any], bool] = lambda m: True, timeout: float = TIMEOUT,
                     what: str = "a message", start: int | None = None) -> Any:
        """The first message in ``box`` from index ``start`` (default: what arrives from now on) satisfying cond."""
        i0 = len(box) if start is None else start

        def found() -> Any:
            for m in box[i0:]:
                if cond(m):
                    return m
            return None

        return self.spin_until(found, timeout, what)

    def call(self, srv_type: Any, name: str, request: Any, timeout: float = TIMEOUT) -> Any:
        cli = self.node.create_client(srv_type, name)
        self.spin_until(lambda: cli.service_is_ready(), FIRST_MESSAGE_TIMEOUT, f"service {name}")
        fut = cli.call_async(request)
        self.spin_until(fut.done, timeout, f"the answer of {name}")
        self.node.destroy_client(cli)
        return fut.result()



def latched(probe: Probe, msg_type: Any, topic: str) -> Any:
    """The message a late transient-local subscriber of ``topic`` gets."""
    box = probe.subscribe(msg_type, topic, qos(transient_local=True, depth=1), key=f"{topic} (late)")
    return probe.next_message(box, what=f"the latched {topic}", start=0)


def message_at(probe: Probe, topic: str, t: float, cond: Callable[[Any], bool] = lambda m: True) -> Any:
    """The first message on ``topic`` (already subscribed, in ``probe.inbox``) stamped at simulated time ``t`` (a
    TFMessage by its first transform's stamp) that satisfies ``cond``."""
    def stamp(m: Any) -> float:
        return secs(m.transforms[0].header.stamp) if isinstance(m, TFMessage) else secs(m.header.stamp)

    return probe.next_message(probe.inbox[topic], lambda m: abs(stamp(m) - t) < 1e-6 and cond(m),
                              what=f"{topic} at t={t:.3f}", start=0)


def transform_matrix(tf: Any) -> Any:
    """The 4x4 homogeneous matrix (numpy) of a ``TransformStamped``: its frame in its parent's."""
    import numpy as np

    q, p = tf.transform.rotation, tf.transform.translation
    x, y, z, w = q.x, q.y, q.z, q.w
    m = np.eye(4)
    m[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    m[:3, 3] = (p.x, p.y, p.z)
    return m

def start_session(domain: int) -> Any:
    """An initialised rclpy Context on ``domain`` with loopback-only discovery."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.pop("ROS_LOCALHOST_ONLY", None)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    return ctx


def node_fixture(world: Path, params: dict[str, Any], tmp: Path, domain: int,
                 env: dict[str, str] | None = None) -> Iterator[NodeProcess]:
    """Start the node, yield it, stop it with SIGINT and check that it exited cleanly."""
    proc = NodeProcess(world, params, domain, tmp / "mvsim_node.log", env=env)
    try:
        yield proc
    finally:
        code = proc.stop()
    assert code == 0, f"mvsim_node exited with {code} after SIGINT\n{proc.log()[-3000:]}"

"""Benchmark of the node's ``joint_states``: its CPU time per simulated second with 10 robots, with every robot's
``joint_states`` subscribed (50 Hz, ``period_ms_publish_tf`` 20) and with nobody subscribed.

Each case runs in a fresh ``mvsim_node`` process, as fast as it can (``realtime_factor`` 0), on a world of 10
differential robots driving circles (no sensors, so that the vehicle state is most of the work). After a warm-up
(first /clock past ``--warmup`` simulated s: numba compiled, discovery done, subscriptions matched) the node's CPU
time (user + system, /proc) and simulated time (/clock) are read at the start and end of ``--seconds`` wall seconds.
The subscriber (this process) takes the joint states raw (CDR bytes) and only counts them.

    .venv/bin/python benchmarks/bench_joint_states.py [--seconds S] [--warmup S]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import rclpy
    import rclpy.executors
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
except ImportError as e:  # pragma: no cover
    print(f"bench_joint_states: ROS 2 is not available ({e}); run `make setup`", file=sys.stderr)
    sys.exit(2)

NODE_EXE = Path(os.environ.get("MVSIM_NODE_EXE") or Path(sys.executable).parent / "mvsim_node")
N_ROBOTS = 10


def write_world(folder: Path) -> Path:
    """10 differential robots on a grid, each driving a circle (initial twist setpoints), no sensors."""
    robots = "".join(f"""
    <vehicle name="r{i + 1}" class="bench_bot"><init_pose>{-8.0 + 4.0 * (i % 5)} {-4.0 + 8.0 * (i // 5)} {36 * i}
    </init_pose></vehicle>""" for i in range(N_ROBOTS))
    path = folder / "joints10.world.xml"
    path.write_text(f"""<mvsim_world version="1.0">
    <simul_timestep>0.005</simul_timestep>
    <vehicle:class name="bench_bot">
        <dynamics class="differential">
            <l_wheel pos="0.0  0.25" mass="1.5" width="0.06" diameter="0.20"/>
            <r_wheel pos="0.0 -0.25" mass="1.5" width="0.06" diameter="0.20"/>
            <chassis mass="25.0" zmin="0.05" zmax="0.40"/>
            <controller class="twist_pid">
                <KP>8</KP> <KI>4</KI> <max_torque>12</max_torque> <V>0.4</V> <W>0.5</W>
            </controller>
        </dynamics>
    </vehicle:class>{robots}
</mvsim_world>
""")
    return path


def cpu_seconds(pid: int) -> float:
    """User + system CPU time (s) of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_case(world: Path, subscribed: bool, seconds: float, warmup: float, domain: int, log: Path
             ) -> tuple[float, float, float]:
    """(node CPU s per simulated s, simulated s per wall s, joint_states messages received per simulated s)."""
    args = [str(NODE_EXE), "--ros-args"]
    for k, v in {"world_file": str(world), "headless": "true", "zmq_server": "false", "realtime_factor": 0.0,
                 "period_ms_publish_tf": 20.0, "do_fake_localization": "false"}.items():
        args += ["-p", f"{k}:={v}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    proc = subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env)  # noqa: SIM115
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = Node("bench_joint_states", context=ctx)
    ex = rclpy.executors.SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    sim = [0.0]
    count = [0]

    def on_clock(m: Clock) -> None:
        sim[0] = m.clock.sec + 1e-9 * m.clock.nanosec

    node.create_subscription(Clock, "/clock", on_clock,
                             QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
    if subscribed:
        for i in range(N_ROBOTS):
            node.create_subscription(JointState, f"/r{i + 1}/joint_states",
                                     lambda b: count.__setitem__(0, count[0] + 1), QoSProfile(depth=50), raw=True)
    try:
        deadline = time.monotonic() + 180.0
        while sim[0] < warmup:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"mvsim_node did not warm up; see {log}")
            ex.spin_once(timeout_sec=0.05)
        c0, s0, n0, w0 = cpu_seconds(proc.pid), sim[0], count[0], time.monotonic()
        while time.monotonic() - w0 < seconds:
            ex.spin_once(timeout_sec=0.05)
        c1, s1, n1, w1 = cpu_seconds(proc.pid), sim[0], count[0], time.monotonic()
        return (c1 - c0) / (s1 - s0), (s1 - s0) / (w1 - w0), (n1 - n0) / (s1 - s0)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        ex.shutdown()
        node.destroy_node()
        ctx.try_shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0, help="wall seconds measured per case")
    ap.add_argument("--warmup", type=float, default=3.0, help="simulated seconds before the measurement")
    a = ap.parse_args()
    domain = 150 + os.getpid() % 50
    with tempfile.TemporaryDirectory() as tmp:
        world = write_world(Path(tmp))
        rows = {}
        for subscribed in (False, True):
            rows[subscribed] = run_case(world, subscribed, a.seconds, a.warmup, domain, Path(tmp) / "node.log")
    print(f"{N_ROBOTS} robots, joint_states at 50 Hz, {a.seconds:g} wall s per case after {a.warmup:g} sim s")
    for subscribed, (cpu, rtf, n) in rows.items():
        what = "subscribed    " if subscribed else "not subscribed"
        rate = f", {n:.0f} joint_states per simulated s received (expected {N_ROBOTS * 50})" if subscribed else ""
        print(f"  {what}: {1000 * cpu:7.1f} ms node CPU per simulated s (real-time factor {rtf:5.2f}){rate}")
    base, sub = rows[False][0], rows[True][0]
    print(f"  joint_states cost: {1000 * (sub - base):+.1f} ms CPU per simulated s ({100 * (sub / base - 1):+.1f} %)")


if __name__ == "__main__":
    main()

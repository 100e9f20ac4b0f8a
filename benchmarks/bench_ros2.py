"""Benchmark of the ROS 2 bridge node (``mvsim_node``), measured from a separate rclpy process over DDS.

(i)  10 differential robots driving circles, each with a 181-ray 2D lidar at 10 Hz, odom / ground truth / tf at 50 Hz
     (``period_ms_publish_tf`` 20), ``realtime_factor`` 1, for ``--duration`` wall seconds (default 60):
     * drift: simulated vs wall time over the run, from /clock (goal < 1 %; upstream drifted 1.7-2.9 % behind);
     * publish latency of scans, odom and tf: arrival wall time minus the wall time at which the simulation reached
       the message's stamp on an exact real-time schedule (median, p99) — the schedule's origin is the earliest
       /clock arrival, so the figure includes waiting for the next tick (≤ 10 ms), conversion and DDS transport;
     * messages received vs expected, and CPU use of the node process (% of one core).
(ii) the highest real-time factor the node sustains on upstream's demo_many_robots (25 robots, 100-ray lidars at
     20 Hz): the node runs as fast as it can (``realtime_factor`` 0) for ``--fast-seconds``; simulated seconds per
     wall second from /clock, with nobody subscribed to the sensors and with this process taking all 25 scans.

The subscriber takes messages raw (CDR bytes) and reads the header stamp from the bytes, so that it stays light.

    .venv/bin/python benchmarks/bench_ros2.py [--duration S] [--fast-seconds S] [--skip-many]
"""

from __future__ import annotations

import argparse
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
NODE_EXE = Path(os.environ.get("MVSIM_NODE_EXE") or Path(sys.executable).parent / "mvsim_node")  # to compare builds
N_ROBOTS = 10

try:
    import rclpy
    import rclpy.executors
    from nav_msgs.msg import Odometry
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import LaserScan
    from tf2_msgs.msg import TFMessage
except ImportError as e:  # pragma: no cover
    print(f"bench_ros2: ROS 2 is not available ({e}); run `make setup`", file=sys.stderr)
    sys.exit(2)


def write_world(folder: Path) -> Path:
    """A 24 m x 24 m walled room, 10 robots spread on a grid, each driving a circle (initial twist setpoints)."""
    from PIL import Image

    px = np.full((240, 240), 255, np.uint8)
    px[:2, :] = px[-2:, :] = 0
    px[:, :2] = px[:, -2:] = 0
    Image.fromarray(px, "L").save(folder / "room.png")
    robots = []
    for i in range(N_ROBOTS):
        x, y = -8.0 + 4.0 * (i % 5), -4.0 + 8.0 * (i // 5)
        robots.append(f"""
    <vehicle name="r{i + 1}" class="bench_bot">
        <init_pose>{x} {y} {36 * i}</init_pose>
        <sensor class="laser" name="laser1">
            <pose_3d>0.25 0 0.3 0 0 0</pose_3d>
            <fov_degrees>180</fov_degrees> <nrays>181</nrays> <sensor_period>0.1</sensor_period>
            <max_range>20</max_range>
        </sensor>
    </vehicle>""")
    world = f"""<mvsim_world version="1.0">
    <simul_timestep>0.005</simul_timestep>
    <element class="occupancy_grid">
        <file>room.png</file> <resolution>0.1</resolution>
        <centerpixel_x>120</centerpixel_x> <centerpixel_y>120</centerpixel_y>
    </element>
    <vehicle:class name="bench_bot">
        <dynamics class="differential">
            <l_wheel pos="0.0  0.25" mass="1.5" width="0.06" diameter="0.20"/>
            <r_wheel pos="0.0 -0.25" mass="1.5" width="0.06" diameter="0.20"/>
            <chassis mass="25.0" zmin="0.05" zmax="0.40"/>
            <controller class="twist_pid">
                <KP>8</KP> <KI>4</KI> <max_torque>12</max_torque> <V>0.4</V> <W>20</W>
            </controller>
        </dynamics>
    </vehicle:class>
{"".join(robots)}
</mvsim_world>
"""
    path = folder / "bench10.world.xml"
    path.write_text(world)
    return path


def start_node(world: Path, params: dict[str, object], domain: int, log: Path) -> subprocess.Popen:
    args = [str(NODE_EXE), "--ros-args"]
    for k, v in {"world_file": str(world), "zmq_server": True, "zmq_port": 0, **params}.items():
        args += ["-p", f"{k}:={str(v).lower() if isinstance(v, bool) else v}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    return subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env)  # noqa: SIM115


def stop_node(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time (s) of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stamp_at(raw: bytes, offset: int = 4) -> float:
    """Seconds of the builtin_interfaces/Time at ``offset`` of a CDR message (after the 4-byte encapsulation)."""
    sec, nsec = struct.unpack_from("<iI", raw, offset)
    return sec + nsec * 1e-9


class Recorder:
    """Raw subscriptions; per stream, (arrival wall time, stamp) pairs."""

    def __init__(self, ctx: object, name: str) -> None:
        self.node = Node(name, context=ctx)
        self.data: dict[str, list[tuple[float, float]]] = {}

    def add(self, msg_type: type, topic: str, stream: str, qos: QoSProfile, offset: int = 4) -> None:
        box = self.data.setdefault(stream, [])
        self.node.create_subscription(msg_type, topic, lambda raw: box.append((time.time(), stamp_at(raw, offset))),
                                      qos, raw=True)

    def spin(self, executor: object, seconds: float, until: object = None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
            if until is not None and until():
                return


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def bench_ten_robots(ctx: object, executor: object, domain: int, duration: float, tmp: Path) -> dict[str, object]:
    world = write_world(tmp)
    proc = start_node(world, {"realtime_factor": 1.0, "period_ms_publish_tf": 20.0}, domain, tmp / "node10.log")
    rec = Recorder(ctx, "bench_ten")
    executor.add_node(rec.node)
    best_effort_1 = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    rec.add(Clock, "/clock", "clock", best_effort_1)
    for i in range(1, N_ROBOTS + 1):
        rec.add(LaserScan, f"/r{i}/laser1", "scan", qos_profile_sensor_data)
        rec.add(Odometry, f"/r{i}/odom", "odom", QoSProfile(depth=50))
        rec.add(TFMessage, f"/r{i}/tf", "tf", QoSProfile(depth=100), offset=8)  # after the sequence length
    try:
        # wait until everything flows (node start, discovery, first steps), then measure
        rec.spin(executor, 120.0, until=lambda: len(rec.data["scan"]) >= 2 * N_ROBOTS and len(rec.data["clock"]) > 50)
        if proc.poll() is not None:
            raise RuntimeError("mvsim_node exited:\n" + (tmp / "node10.log").read_text()[-2000:])
        for box in rec.data.values():
            box.clear()
        cpu0, w0 = cpu_seconds(proc.pid), time.monotonic()
        rec.spin(executor, duration)
        cpu1, w1 = cpu_seconds(proc.pid), time.monotonic()
    finally:
        stop_node(proc)
        executor.remove_node(rec.node)
        rec.node.destroy_node()
    clock = rec.data["clock"]
    (wa, sa), (wb, sb) = clock[0], clock[-1]
    drift = ((sb - sa) - (wb - wa)) / (wb - wa)
    origin = min(w - s for w, s in clock)  # wall time of sim time 0 on the exact schedule
    out: dict[str, object] = {"duration_s": w1 - w0, "drift_pct": 100.0 * drift, "sim_s": sb - sa,
                              "cpu_pct": 100.0 * (cpu1 - cpu0) / (w1 - w0)}
    rates = {"scan": 10.0 * N_ROBOTS, "odom": 50.0 * N_ROBOTS, "tf": 50.0 * N_ROBOTS, "clock": 100.0}
    for stream, box in rec.data.items():
        lat = [1000.0 * (w - origin - s) for w, s in box]
        out[stream] = {"received": len(box), "expected": int(rates[stream] * (sb - sa)),
                       "latency_ms_median": pct(lat, 50), "latency_ms_p99": pct(lat, 99)}
    return out


def bench_many_robots(ctx: object, executor: object, domain: int, seconds: float, tmp: Path, subscribe: bool
                      ) -> dict[str, float]:
    world = SHARED / "worlds" / "mvsim_tutorial" / "demo_many_robots.world.xml"
    proc = start_node(world, {"realtime_factor": 0.0}, domain, tmp / f"many_{subscribe}.log")
    rec = Recorder(ctx, f"bench_many_{int(subscribe)}")
    executor.add_node(rec.node)
    rec.add(Clock, "/clock", "clock", QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
    if subscribe:
        for i in range(1, 26):
            rec.add(LaserScan, f"/veh{i}/laser1", "scan", qos_profile_sensor_data)
    try:
        rec.spin(executor, 120.0, until=lambda: len(rec.data["clock"]) > 20 and (not subscribe or rec.data["scan"]))
        if proc.poll() is not None:
            raise RuntimeError("mvsim_node exited:\n" + (tmp / f"many_{subscribe}.log").read_text()[-2000:])
        rec.data["clock"].clear()
        rec.data.get("scan", []).clear()
        rec.spin(executor, seconds)
    finally:
        stop_node(proc)
        executor.remove_node(rec.node)
        rec.node.destroy_node()
    clock = rec.data["clock"]
    (wa, sa), (wb, sb) = clock[0], clock[-1]
    res = {"rtf": (sb - sa) / (wb - wa)}
    if subscribe:
        res["scans_per_sim_s"] = len(rec.data["scan"]) / (sb - sa)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=60.0, help="measured wall seconds of part (i) (default 60)")
    ap.add_argument("--fast-seconds", type=float, default=15.0, help="measured wall seconds per run of part (ii)")
    ap.add_argument("--skip-many", action="store_true", help="skip part (ii)")
    args = ap.parse_args()
    domain = 200 + os.getpid() % 30
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    executor = rclpy.executors.SingleThreadedExecutor(context=ctx)
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            r = bench_ten_robots(ctx, executor, domain, args.duration, tmp)
            print(f"(i) 10 robots, 181-ray lidars at 10 Hz, odom/tf at 50 Hz, realtime_factor 1, "
                  f"{r['duration_s']:.0f} s wall / {r['sim_s']:.2f} s simulated")
            print(f"    drift (simulated - wall) / wall: {r['drift_pct']:+.3f} %   (goal |drift| < 1 %)")
            print(f"    node CPU: {r['cpu_pct']:.0f} % of one core")
            print("    stream   received/expected   latency median / p99 (ms)")
            for s in ("scan", "odom", "tf", "clock"):
                v = r[s]
                print(f"    {s:7s}  {v['received']:8d}/{v['expected']:<8d}   "
                      f"{v['latency_ms_median']:6.2f} / {v['latency_ms_p99']:6.2f}")
            if args.skip_many:
                return 0
            if not (SHARED / "worlds" / "mvsim_tutorial" / "demo_many_robots.world.xml").is_file():
                print(f"(ii) skipped: {SHARED}/worlds not found")
                return 0
            quiet = bench_many_robots(ctx, executor, domain, args.fast_seconds, tmp, subscribe=False)
            busy = bench_many_robots(ctx, executor, domain, args.fast_seconds, tmp, subscribe=True)
            print("(ii) demo_many_robots (25 robots, 100-ray lidars at 20 Hz), as fast as possible:")
            print(f"    nobody subscribed to the scans: {quiet['rtf']:.2f} x real time")
            print(f"    this process taking all 25 scans: {busy['rtf']:.2f} x real time "
                  f"({busy['scans_per_sim_s']:.0f} scans per simulated s; 500 expected)")
    finally:
        executor.shutdown()
        ctx.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

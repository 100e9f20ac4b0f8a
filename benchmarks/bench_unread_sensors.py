"""What a sensor nobody reads costs (issue 38): upstream's turtlebot world, whose robot carries a 1920 × 1080 camera
at 30 Hz, a raytrace_3d laser at 10 Hz and an IMU at 200 Hz.

Rows, each measured in a fresh process after a warm-up (numba kernels, the OpenGL context, the first render):

* ``world``: simulated seconds per wall second of ``World.run`` on the turtlebot world as ``mvsim launch`` runs it
  (``sensors_on_demand``), with nobody reading, with the camera read (wanted), and on the same world without the
  camera, nobody reading;
* ``launch``: the whole ``mvsim launch WORLD --headless --realtime-factor 0 --duration D`` process (start included),
  simulated seconds per wall second, the same three ways (the camera read through ``--record`` of its topic);
* ``camera``: frames per second of one camera alone (``Camera.sample_batch``) at 1920 × 1080 and 640 × 480;
* ``node``: ``mvsim_node`` on the turtlebot world at real time, only ``/odom`` subscribed (from this process, over
  DDS): the real-time factor it holds (from ``/clock``) and its CPU use (% of one core), over ``--node-seconds``.

``--tree DIR`` runs the rows on another checkout of the code (``PYTHONPATH=DIR``, same virtual environment; the
children run in a temporary folder, so that the working directory shadows nothing): how the "before" figures were
measured.

    .venv/bin/python benchmarks/bench_unread_sensors.py [--part world|launch|camera|node] [--tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
WORLDS = SHARED / "worlds"
MIRROR = SHARED / "assets" / "mvsim-models"
CAMERA_INCLUDE_START = '<include file="../definitions/camera.sensor.xml"'


def turtlebot_worlds(folder: Path) -> dict[str, Path]:
    """The upstream world as it is, and a copy whose robot has no camera (its definition file, edited)."""
    (folder / "definitions").mkdir()
    for f in (WORLDS / "definitions").iterdir():
        text = f.read_text() if f.is_file() else None
        if text is None:
            (folder / "definitions" / f.name).symlink_to(f)
            continue
        if f.name == "turtlebot3_burger.vehicle.xml":
            a = text.index(CAMERA_INCLUDE_START)
            b = text.index("/>", a) + 2
            text = text[:a] + text[b:]
        (folder / "definitions" / f.name).write_text(text)
    (folder / "models").symlink_to(WORLDS / "models")
    (folder / "tutorial").mkdir()
    src = (WORLDS / "mvsim_tutorial" / "demo_turtlebot_world.world.xml").read_text()
    no_cam = folder / "tutorial" / "no_camera.world.xml"
    no_cam.write_text(src)
    return {"as is": WORLDS / "mvsim_tutorial" / "demo_turtlebot_world.world.xml", "no camera": no_cam}


def env_for(tree: Path | None) -> dict[str, str]:
    env = {**os.environ, "MVSIM_OFFLINE": "1", "MVSIM_ASSET_MIRROR": str(MIRROR)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


# ---------------------------------------------------------------------------------------------------- world
WORLD_CHILD = r"""
import json, sys, time
import mvsim_core as mv
path, read_camera, seconds = sys.argv[1], sys.argv[2] == "1", float(sys.argv[3])
w = mv.load_world(path, seed=0)
w.sensors_on_demand = True
cams = [s for s in w.vehicles["r1"].sensors.values() if s.xml_class == "camera"]
for c in cams:
    if read_camera and hasattr(c, "want"):  # (a tree from before sampling on demand samples everything)
        c.want("bench")
w.run(0.2)  # warm-up: kernels, the GL context, the first render
t0 = time.perf_counter()
w.run(seconds)
dt = time.perf_counter() - t0
print(json.dumps({"rate": seconds / dt, "frames": sum(1 for c in cams if c.last is not None)}))
"""


def part_world(worlds: dict[str, Path], tree: Path | None, seconds: float) -> list[str]:
    rows = []
    for label, path, read in (("nobody reads", worlds["as is"], False), ("camera read", worlds["as is"], True),
                              ("no camera, nobody reads", worlds["no camera"], False)):
        out = subprocess.run([sys.executable, "-c", WORLD_CHILD, str(path), "1" if read else "0", str(seconds)],
                             capture_output=True, text=True, env=env_for(tree), timeout=1800, check=True,
                             cwd=path.parent)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(f"world | {label} | {r['rate']:.1f} sim-s/s")
    return rows


# ---------------------------------------------------------------------------------------------------- launch
def part_launch(worlds: dict[str, Path], tree: Path | None, seconds: float, folder: Path) -> list[str]:
    rows = []
    for label, path, extra in (("nobody reads", worlds["as is"], []),
                               ("camera recorded", worlds["as is"],
                                ["--record", str(folder / "cam.mcap"), "--record-topics", "/camera1/image_raw"]),
                               ("no camera, nobody reads", worlds["no camera"], [])):
        base = [sys.executable, "-m", "mvsim_core.cli", "launch", str(path), "--headless", "--realtime-factor", "0",
                "--no-server"]
        subprocess.run([*base, "--duration", "0.1"], capture_output=True, env=env_for(tree), timeout=1800,
                       cwd=folder)  # warm-up
        cmd = [*base, "--duration", str(seconds), *extra]
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env_for(tree), timeout=3600, check=True, cwd=folder)
        rows.append(f"launch | {label} | {seconds / (time.perf_counter() - t0):.1f} sim-s/s (whole process)")
    return rows


# ---------------------------------------------------------------------------------------------------- camera
CAMERA_CHILD = r"""
import json, sys, time
import mvsim_core as mv
from mvsim_core.sensors.camera import Camera
w, h, n = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
world = mv.load_world(sys.argv[1], seed=0)
world.start()
cam = world.vehicles["r1"].sensors["camera1"]
cam.params["ncols"], cam.params["nrows"], cam.params["cx"], cam.params["cy"] = w, h, w / 2, h / 2
ctx = world.sensor_scheduler.ctx
Camera.sample_batch([cam], ctx, 0.0)
t0 = time.perf_counter()
for _ in range(n):
    Camera.sample_batch([cam], ctx, 0.0)
print(json.dumps({"fps": n / (time.perf_counter() - t0)}))
"""


def part_camera(worlds: dict[str, Path], tree: Path | None) -> list[str]:
    rows = []
    for w, h, n in ((1920, 1080, 30), (640, 480, 100)):
        out = subprocess.run([sys.executable, "-c", CAMERA_CHILD, str(worlds["as is"]), str(w), str(h), str(n)],
                             capture_output=True, text=True, env=env_for(tree), timeout=1800, check=True,
                             cwd=worlds["no camera"].parent)
        rows.append(f"camera | {w} x {h} | {json.loads(out.stdout.strip().splitlines()[-1])['fps']:.1f} frames/s")
    return rows


# ---------------------------------------------------------------------------------------------------- node
def part_node(worlds: dict[str, Path], tree: Path | None, seconds: float) -> list[str]:
    import rclpy
    from nav_msgs.msg import Odometry
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from rosgraph_msgs.msg import Clock

    domain = 50 + os.getpid() % 50
    env = {**env_for(tree), "ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    exe = Path(sys.executable).parent / "mvsim_node"
    proc = subprocess.Popen([sys.executable, str(exe), "--ros-args", "-p", f"world_file:={worlds['as is']}",
                             "-p", "headless:=true", "-p", "zmq_server:=false", "-p", "status_line:=off"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=worlds["no camera"].parent)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = Node("bench_unread_sensors", context=ctx)
    clocks: list[tuple[float, float]] = []
    odoms: list[float] = []
    node.create_subscription(Clock, "/clock", lambda m: clocks.append(
        (time.monotonic(), m.clock.sec + m.clock.nanosec * 1e-9)), qos_profile_sensor_data)
    node.create_subscription(Odometry, "/odom", lambda m: odoms.append(time.monotonic()), 10)
    ex = rclpy.executors.SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    try:
        end = time.monotonic() + 120
        while not odoms and time.monotonic() < end:  # up, matched and publishing
            ex.spin_once(timeout_sec=0.1)
        settle = time.monotonic() + 3.0
        while time.monotonic() < settle:
            ex.spin_once(timeout_sec=0.05)
        cpu0, w0, n0 = _cpu(proc.pid), time.monotonic(), len(clocks)
        while time.monotonic() < w0 + seconds:
            ex.spin_once(timeout_sec=0.05)
        cpu1, w1 = _cpu(proc.pid), time.monotonic()
        span = clocks[n0:]
        factor = (span[-1][1] - span[0][1]) / (span[-1][0] - span[0][0]) if len(span) > 1 else float("nan")
        return [f"node | only /odom subscribed | real-time factor {factor:.2f}, CPU "
                f"{100 * (cpu1 - cpu0) / (w1 - w0):.0f} % of one core"]
    finally:
        proc.terminate()
        proc.wait(30)
        ex.shutdown()
        node.destroy_node()
        ctx.try_shutdown()


def _cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("world", "launch", "camera", "node"), action="append")
    ap.add_argument("--tree", type=Path, default=None, help="run on this checkout (PYTHONPATH)")
    ap.add_argument("--seconds", type=float, default=4.0, help="simulated seconds timed per row (world, launch)")
    ap.add_argument("--node-seconds", type=float, default=10.0, help="wall seconds the node is measured")
    a = ap.parse_args()
    parts = a.part or ["world", "launch", "camera", "node"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        worlds = turtlebot_worlds(folder)
        print(f"tree: {a.tree or REPO}")
        for p in parts:
            if p == "world":
                rows = part_world(worlds, a.tree, a.seconds)
            elif p == "launch":
                rows = part_launch(worlds, a.tree, a.seconds, folder)
            elif p == "camera":
                rows = part_camera(worlds, a.tree)
            else:
                rows = part_node(worlds, a.tree, a.node_seconds)
            for r in rows:
                print(r, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

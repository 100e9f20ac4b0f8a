"""The ``mvsim`` command.

::

    mvsim check WORLD [--seed N] [--allow-shell] [--asset-mirror DIR]
    mvsim launch WORLD [--headless] [--realtime-factor F] [--max-catchup S] [--duration S] [--screenshot PNG]
                       [--port P | --join ADDRESS | --no-server] [--bind HOST] [--seed N] [--allow-shell] [--strict]
                       [--status-line auto|live|periodic|off] [--foxglove [PORT]] [--asset-mirror DIR]
                       [--record OUT.mcap [--record-topics GLOB ...] [--record-exclude GLOB ...]
                       [--record-rate GLOB=HZ ...]]
    mvsim record WORLD OUT.mcap --duration S [--realtime-factor F] [--record-topics ...] (headless, no server)
    mvsim server [--port P] [--bind HOST]
    mvsim node list                                   [--host H] [--port P] [--timeout S] (or MVSIM_SERVER)
    mvsim topic list [--details]                      (same connection options)
    mvsim topic echo TOPIC [-n N] [--duration S] [--full]
    mvsim topic hz TOPIC [--duration S] [--window N]
    mvsim topic pub TOPIC TYPE [FIELDS] [--rate HZ] [--count N] [--wait S]
    mvsim service call SERVICE TYPE [FIELDS]
    mvsim sweep SPEC.yaml [--workers N] [--address RAY_ADDRESS] [--out RESULTS.parquet] [--no-progress]

``launch`` opens the 3D viewer when a display exists (unless ``--headless``; without a display it runs headless with
a status line: live on a terminal, a full line every few seconds elsewhere, ``--status-line`` to choose) and starts
its own ZMQ server, serving the world as node ``World``: on 127.0.0.1:23700, or — when that port is taken, e.g. by
another simulation — on a free port, said in one line on stderr. A port given with ``--port`` must be free (else one
line and exit 2); ``--join ADDRESS`` serves the world on a server that already runs (``mvsim server``) instead. The
Foxglove view (``--foxglove``) picks its port the same way. The client tools reach a server at ``--host``/``--port``,
by default the address in the environment variable ``MVSIM_SERVER`` (``tcp://HOST:PORT``), else 127.0.0.1:23700.
Pacing is :class:`mvsim_core.runner.Runner`'s, the same as the ROS node's. FIELDS are
protobuf text format, e.g. ``'objectId: "r1" pose { x: 1 y: 2 z: 0 yaw: 0 pitch: 0 roll: 0 }'``.

User errors (a bad world file, a bad option, no server) print a one-line message without a traceback and exit with 2.
``topic echo`` / ``topic pub`` exit with 1 when nothing arrived (or no subscriber appeared) in the time given.
Ctrl-C (SIGINT) and SIGTERM stop every command cleanly (sockets closed, node unregistered).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mvsim_core.errors import MvsimError, one_line
from mvsim_core.runner import DEFAULT_MAX_CATCHUP, STATUS_MODES, Runner, StatusLine

if TYPE_CHECKING:
    from mvsim_core.comms import Server, WorldComms
    from mvsim_core.world import World

DEFAULT_PORT = 23700  # the ZMQ server's port (kept here too so that `check` never imports zmq)
LOOPBACK = "127.0.0.1"
FOXGLOVE_PORT = 8765  # mvsim_core.comms.foxglove_view.DEFAULT_PORT (not imported here: it would load the comms package)
FOXGLOVE_DEFAULT = -1  # --foxglove without a PORT: FOXGLOVE_PORT, or a free port when it is taken
SERVER_ENV = "MVSIM_SERVER"  # the server address the client tools use by default (tcp://HOST:PORT)


def _port_number(text: str) -> int:
    """A TCP port given on the command line (0..65535)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a number in 0..65535")
    return port


def _add_world_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("world", help="world file (.world.xml)")
    p.add_argument("--seed", type=int, default=0, help="seed of the world's random generator (default 0)")
    p.add_argument("--allow-shell", action="store_true",
                   help="let $(cmd) in the world file run shell commands (off by default)")
    p.add_argument("--asset-mirror", metavar="DIR", default=None,
                   help="a local copy of https://mrpt.github.io/mvsim-models/ (laid out as under that URL): models, "
                        "textures and skyboxes under it are read from DIR first (sets MVSIM_ASSET_MIRROR)")


def _add_server_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=None,
                   help=f"TCP port of the ZMQ server: it must be free (exit 2 otherwise); 0 = any free port "
                        f"(default {DEFAULT_PORT}, or a free port, said on stderr, when {DEFAULT_PORT} is taken)")
    p.add_argument("--bind", default=LOOPBACK, metavar="HOST",
                   help="interface the server listens on (default 127.0.0.1, this machine only; 0.0.0.0 exposes "
                        "the simulation to the network)")


def _add_client_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default=None,
                   help=f"host of the MVSim server (default: the host of ${SERVER_ENV}, else 127.0.0.1)")
    p.add_argument("--port", type=int, default=None,
                   help=f"port of the MVSim server (default: the port of ${SERVER_ENV}, else {DEFAULT_PORT})")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the server (default 5)")


def _add_record_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--record-topics", nargs="+", metavar="GLOB", default=["*"],
                   help="record only the topics matching these patterns (e.g. '/clock' '/*/odom'; default all)")
    p.add_argument("--record-exclude", nargs="+", metavar="GLOB", default=[],
                   help="do not record the topics matching these patterns (e.g. '*image*')")
    p.add_argument("--record-rate", action="append", metavar="GLOB=HZ", default=[],
                   help="at most HZ messages per simulated second on the topics matching GLOB (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mvsim", description="MVSim multi-vehicle simulator (Python).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = sub.add_parser("check", help="load a world, print a summary (warnings on stderr), exit 0; "
                                         "a bad file prints file:line: message and exits 2")
    _add_world_args(check)
    check.add_argument("--extents", action="store_true",
                       help="also print the box (world frame, m) of every object and element, where the physics "
                            "places it")

    launch = sub.add_parser("launch", help="load a world and run it, served on the ZMQ interface")
    _add_world_args(launch)
    launch.add_argument("--headless", action="store_true",
                        help="no window (the default when there is no display); OpenGL and glfw are never imported")
    launch.add_argument("--screenshot", metavar="PNG", default=None,
                        help="after loading (and after --duration, if given) save one frame of the 3D view as a PNG "
                             "and exit; rendered offscreen when there is no window")
    launch.add_argument("--realtime-factor", type=float, default=1.0,
                        help="simulated seconds per wall second (0 = as fast as possible; default 1)")
    launch.add_argument("--max-catchup", type=float, default=DEFAULT_MAX_CATCHUP, metavar="S",
                        help="most simulated seconds advanced per 10 ms tick when the machine falls behind; a larger "
                             f"lag is dropped rather than chased (default {DEFAULT_MAX_CATCHUP:g})")
    launch.add_argument("--duration", type=float, default=None, help="stop after this many simulated seconds")
    launch.add_argument("--strict", action="store_true",
                        help="stop (exit 2, one line) at the first vehicle or block that blows up (NaN/inf, runaway); "
                             "by default it is reset to its last finite pose, said on stderr, and the rest goes on")
    launch.add_argument("--tum", metavar="DIR", default=None,
                        help="write each vehicle's ground-truth trajectory to DIR/<vehicle>.txt in the TUM format "
                             "(t x y z qx qy qz qw) at the world's <ground_truth_rate> (default 50 Hz)")
    launch.add_argument("--foxglove", metavar="PORT", nargs="?", type=_port_number, const=FOXGLOVE_DEFAULT,
                        default=None,
                        help="serve a live view on the Foxglove WebSocket protocol (open it in Foxglove or "
                             f"Lichtblick: ws://localhost:PORT); no ROS needed. Without PORT: {FOXGLOVE_PORT}, or a "
                             f"free port (said on stderr) when {FOXGLOVE_PORT} is taken; a PORT given must be free")
    launch.add_argument("--foxglove-host", metavar="HOST", default=LOOPBACK,
                        help="address the Foxglove server binds (default 127.0.0.1, this machine only)")
    _add_server_args(launch)
    launch.add_argument("--join", metavar="ADDRESS", default=None,
                        help="serve the world on the MVSim server already running at ADDRESS (tcp://HOST:PORT, e.g. "
                             "one `mvsim server` started) instead of starting this simulation's own")
    launch.add_argument("--no-server", action="store_true", help="no ZMQ interface at all")
    launch.add_argument("--status-line", choices=STATUS_MODES, default="auto",
                        help="the status line (simulated time, real-time factor) on stdout: live = rewritten in place "
                             "twice a second, periodic = a full line every 5 s, off = none; auto (default): live on "
                             "the terminal you watch, periodic when stdout is a pipe, a file or ros2 launch's "
                             "emulated terminal")
    launch.add_argument("--record", metavar="OUT.mcap", default=None,
                        help="record the ROS 2 topics (as mvsim_node names them) to a rosbag2-compatible MCAP file, "
                             "flushed every simulated second and finalised on exit, Ctrl-C and SIGTERM")
    _add_record_args(launch)

    record = sub.add_parser("record", help="run a world headless (no server) as fast as possible and record its ROS 2 "
                                           "topics to an MCAP file")
    _add_world_args(record)
    record.add_argument("out", metavar="OUT.mcap", help="the MCAP file to write")
    record.add_argument("--duration", type=float, required=True, help="simulated seconds to record")
    record.add_argument("--realtime-factor", type=float, default=0.0,
                        help="simulated seconds per wall second (default 0 = as fast as possible)")
    _add_record_args(record)

    server = sub.add_parser("server", help="run a standalone ZMQ comms server until Ctrl-C")
    _add_server_args(server)

    node = sub.add_parser("node", help="nodes registered with the server")
    node_sub = node.add_subparsers(dest="action", required=True, metavar="ACTION")
    node_list = node_sub.add_parser("list", help="print the registered nodes, one per line")
    _add_client_args(node_list)

    topic = sub.add_parser("topic", help="topics of the server")
    topic_sub = topic.add_subparsers(dest="action", required=True, metavar="ACTION")
    t_list = topic_sub.add_parser("list", help="print the topics and their types")
    t_list.add_argument("--details", action="store_true", help="also the publishers (node and endpoint)")
    _add_client_args(t_list)
    t_echo = topic_sub.add_parser("echo", help="print the messages of a topic")
    t_echo.add_argument("topic")
    t_echo.add_argument("-n", "--count", type=int, default=0, help="stop after N messages (default: never)")
    t_echo.add_argument("--duration", type=float, default=None,
                        help="stop after S wall seconds (exit 1 when no message arrived)")
    t_echo.add_argument("--full", action="store_true", help="print every value of long arrays")
    _add_client_args(t_echo)
    t_hz = topic_sub.add_parser("hz", help="measure the rate of a topic (by message stamps and by arrival)")
    t_hz.add_argument("topic")
    t_hz.add_argument("--duration", type=float, default=None, help="stop after S wall seconds (default: Ctrl-C)")
    t_hz.add_argument("--window", type=int, default=1000, help="messages the rate is averaged over (default 1000)")
    _add_client_args(t_hz)
    t_pub = topic_sub.add_parser("pub", help="publish a message (protobuf text format) on a topic")
    t_pub.add_argument("topic")
    t_pub.add_argument("type", help="full message type, e.g. mvsim_msgs.TimeStampedPose")
    t_pub.add_argument("fields", nargs="?", default="", help="the message in protobuf text format")
    t_pub.add_argument("--rate", type=float, default=1.0, help="messages per second (default 1)")
    t_pub.add_argument("--count", type=int, default=0, help="stop after N messages (default: never)")
    t_pub.add_argument("--wait", type=float, default=10.0,
                       help="with --count: seconds to wait for a subscriber before giving up (default 10)")
    _add_client_args(t_pub)

    service = sub.add_parser("service", help="services of the server")
    service_sub = service.add_subparsers(dest="action", required=True, metavar="ACTION")
    s_call = service_sub.add_parser("call", help="call a service and print its answer")
    s_call.add_argument("service")
    s_call.add_argument("type", help="full input message type, e.g. mvsim_msgs.SrvGetPose")
    s_call.add_argument("fields", nargs="?", default="", help="the input in protobuf text format")
    _add_client_args(s_call)

    traj = sub.add_parser("trajectory", help="drive a vehicle through a twist schedule and write its trajectory as "
                                             "CSV, in the columns of the C++ MVSim reference recordings")
    _add_world_args(traj)
    traj.add_argument("--schedule", required=True, metavar="T,VX,WZ;...",
                      help="absolute end time (s), vx (m/s), wz (rad/s) per segment, e.g. '3,1.0,0;9,1.0,0.2'; the "
                           "twist is set before every physics step and the last one stays")
    traj.add_argument("--vehicle", default=None, help="which vehicle (default: the world's first)")
    traj.add_argument("--duration", type=float, default=None, help="simulated seconds (default: the schedule's end)")
    traj.add_argument("--period", type=float, default=0.1, help="seconds between samples (default 0.1)")
    traj.add_argument("-o", "--output", required=True, metavar="CSV", help="the CSV file to write")

    plot = sub.add_parser("plot-trajectory", help="overlay a trajectory CSV on a reference one in a PNG and print the "
                                                  "largest position and yaw errors")
    plot.add_argument("ours", metavar="OURS.csv", help="trajectory CSV (mvsim trajectory, or a vehicle pose log)")
    plot.add_argument("reference", metavar="REFERENCE.csv", help="reference trajectory CSV (e.g. a C++ recording)")
    plot.add_argument("-o", "--output", default=None, metavar="PNG",
                      help="the image to write, PNG unless its suffix names another format matplotlib writes (.svg, "
                           ".pdf); default: OURS with .png instead of .csv")
    plot.add_argument("--title", default="", help="a title line above the figure")

    imp = sub.add_parser("import-urdf", help="write the <vehicle:class> of a URDF (or xacro) robot; a one-line summary "
                                             "on stderr")
    imp.add_argument("urdf", metavar="ROBOT.urdf", help="the .urdf, or a .xacro expanded through xacro")
    imp.add_argument("-o", "--output", default=None, metavar="OUT.vehicle.xml", help="file to write (default: stdout)")
    imp.add_argument("--class-name", default="", metavar="NAME", help="class name (default: the <robot name>)")
    imp.add_argument("--xacro-arg", action="append", default=[], metavar="K:=V", help="a xacro argument (repeatable)")
    imp.add_argument("--package-path", action="append", default=[], metavar="DIR",
                     help="a folder holding packages (or a package) for package:// URIs (repeatable)")

    sweep = sub.add_parser("sweep", help="run a seeded parameter sweep (a YAML spec) on Ray, one Parquet row per run; "
                                         "a re-run skips the runs already done")
    sweep.add_argument("spec", metavar="SPEC.yaml", help="the sweep spec (see README, Sweeps)")
    sweep.add_argument("--workers", type=int, default=None, metavar="N",
                       help="runs at once: the CPUs of the local Ray instance (default: all CPUs; with --address: "
                            "the cluster's CPUs)")
    sweep.add_argument("--address", default=None, metavar="RAY_ADDRESS",
                       help="run on this existing Ray cluster (e.g. auto, or ray://host:10001) instead of a local one")
    sweep.add_argument("--out", default=None, metavar="RESULTS.parquet",
                       help="the results file (default: SPEC's name with .parquet, in the current folder)")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar or per-run lines")
    return parser


def _load(args: argparse.Namespace):
    from mvsim_core.loader import load_world

    if getattr(args, "asset_mirror", None):
        os.environ["MVSIM_ASSET_MIRROR"] = str(Path(args.asset_mirror).expanduser().absolute())

    return load_world(args.world, seed=args.seed, allow_shell=args.allow_shell)


def _err(text: str) -> None:
    print(f"mvsim: {one_line(text)}", file=sys.stderr, flush=True)


def cmd_check(args: argparse.Namespace) -> int:
    """Load the world and print its summary (warnings on stderr): 0. A bad world file: its one ``file:line:`` line, 2
    (by :func:`main`). Anything else that escapes the loader is a bug of ours: one line naming it and where it
    happened, never a traceback, and 1."""
    try:
        world = _load(args)
    except MvsimError:
        raise
    except Exception as e:  # noqa: BLE001 (the last guard: check never prints a traceback)
        print(f"mvsim: internal error while loading {args.world}: {_where_raised(e)}; this is a bug of the simulator, "
              f"please report it with the world file", file=sys.stderr)
        return 1
    print(world.summary(extents=args.extents))
    for w in world.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def _where_raised(e: BaseException) -> str:
    """``Type: message (at file.py:line)``: the exception and the innermost frame of the simulator it came from."""
    import traceback
    from pathlib import Path

    package = Path(__file__).resolve().parent
    frames = [(Path(f.filename), f.lineno) for f in traceback.extract_tb(e.__traceback__)]
    ours = [(p.relative_to(package.parent).as_posix(), line) for p, line in frames if p.is_relative_to(package)]
    at = f" (at {ours[-1][0]}:{ours[-1][1]})" if ours else ""
    text = one_line(str(e))
    text = text if len(text) <= 300 else text[:300] + "…"
    return f"{type(e).__name__}: {text}{at}"


# ---------------------------------------------------------------------- launch / server
def _check_port(port: int | None) -> None:
    if port is not None and not 0 <= port <= 65535:
        raise MvsimError(f"--port must be in 0..65535 (got {port})")


def parse_address(text: str, what: str) -> tuple[str, int]:
    """(host, port) of a server address written ``tcp://HOST:PORT``, ``HOST:PORT`` or ``PORT`` (host 127.0.0.1).

    Raises:
        MvsimError: anything else (the message names ``what``, the option or variable it came from).
    """
    rest = text.strip().removeprefix("tcp://")
    host, _, port = rest.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 < number <= 65535 or (":" in rest and not host):
        raise MvsimError(f"{what} {text!r} is not a server address: write tcp://HOST:PORT, e.g. "
                         f"tcp://127.0.0.1:{DEFAULT_PORT}")
    return host or LOOPBACK, number


def _announce_bind(bind: str, endpoint: str) -> None:
    if bind not in (LOOPBACK, "localhost", "::1"):
        _err(f"WARNING: the ZMQ server listens on {endpoint}, reachable from other machines: anyone who can reach "
             f"this port can read the sensors, move or teleport the vehicles and shut the simulation down")


def _listen(port: int | None, bind: str) -> tuple[Server, str]:
    """A started server on ``port``; with no port given, on :data:`DEFAULT_PORT`, or on a free port (said on stderr)
    when that one is taken — by another simulation, most often. A port given that is taken: one line, exit 2.
    Returns (the server, the line that says it moved to a free port, or "")."""
    from mvsim_core.comms import AddressInUse, Server

    try:
        return Server(DEFAULT_PORT if port is None else port, bind).start(), ""
    except AddressInUse as e:
        if port is not None:
            raise MvsimError(f"{e}; choose another --port, or leave --port out to serve on a free one") from None
    server = Server(0, bind).start()
    return server, (f"port {DEFAULT_PORT} is in use (another simulation?); this one serves on {server.endpoint} "
                    f"(reach it with --port {server.port})")


def _join(address: str) -> tuple[str, int]:
    """(host, port) of the server ``--join`` names, once it answers and serves no world yet."""
    from mvsim_core.comms import Client, CommsError
    from mvsim_core.comms.world_comms import NODE_NAME

    host, port = parse_address(address, "--join")
    probe = Client("mvsim-launch-probe", host, port, timeout=3.0)
    try:
        probe.connect(register=False)
        nodes = probe.list_nodes()
    except CommsError:
        raise MvsimError(f"--join {address}: no MVSim server answered at tcp://{host}:{port}; start one there "
                         f"(mvsim server --port {port}) or leave --join out to start this simulation's own") from None
    finally:
        probe.shutdown()
    if NODE_NAME in nodes:
        raise MvsimError(f"--join {address}: that server already serves a world (node '{NODE_NAME}'); leave --join "
                         f"out to start this simulation's own server")
    return host, port


class _Comms(NamedTuple):
    """Where ``mvsim launch`` serves its world: its own server (None when joining one), the server's host and port,
    and the line that says so (on stderr once the world has loaded)."""

    server: Server | None
    host: str
    port: int
    notice: str


def _open_comms(args: argparse.Namespace) -> _Comms:
    """Claim this simulation's server port (or, with ``--join``, find the server there) before the world loads, so
    that a port problem is said at once, and no other simulation takes the port meanwhile."""
    if args.join is not None:
        if args.port is not None:
            raise MvsimError("--join and --port exclude each other: --join serves the world on a server already "
                             "running, --port starts this simulation's own there")
        host, port = _join(args.join)
        return _Comms(None, host, port, f"joining the MVSim server already running on tcp://{host}:{port}")
    server, moved = _listen(args.port, args.bind)
    return _Comms(server, LOOPBACK if args.bind in ("0.0.0.0", "*") else args.bind, server.port,
                  moved or f"ZMQ server listening on {server.endpoint}")


def _serve_world(world: World, args: argparse.Namespace, where: _Comms) -> WorldComms:
    """Say where the world is served, and serve the started ``world`` there as node ``World``."""
    from mvsim_core.comms import WorldComms

    if where.server is not None:
        _announce_bind(args.bind, where.server.endpoint)
    _err(where.notice)
    exposed = args.bind not in (LOOPBACK, "localhost", "::1")
    node_bind = ("0.0.0.0" if args.bind == "*" else args.bind) if exposed else None  # where others can reach it
    comms = WorldComms(world, where.host, where.port, bind_host=node_bind, timeout=10.0, server=where.server)
    comms.attach()
    _err(f"world served as node 'World': services set_pose, get_pose, set_controller_twist, shutdown; "
         f"{len(comms.sensor_topics) + len(comms.pose_topics)} topics")
    return comms


def build_runner(world: World, args: argparse.Namespace, viewer: Any = None, out: Any = None) -> Runner:
    """The runner of ``mvsim launch``: the pacing options of ``args``, the status line (``--status-line``) on ``out``
    (stdout)."""
    return Runner(world, realtime_factor=args.realtime_factor, max_catchup=args.max_catchup, viewer=viewer,
                  status=StatusLine(out, mode=getattr(args, "status_line", "auto")))


def _run(runner: Runner, duration: float | None, stop: threading.Event | None) -> str:
    """Run until the duration, a stop request, a closed window or Ctrl-C; say how much lag was dropped."""
    try:
        reason = runner.run(duration, stop=stop)
    except KeyboardInterrupt:
        reason = "interrupted"
    if runner.dropped > 0:
        _err(f"dropped {runner.dropped:.3f} s of simulated time the machine could not keep up with "
             f"(--max-catchup {runner.max_catchup:g} s per tick)")
    return reason


def cmd_launch(args: argparse.Namespace) -> int:
    if args.realtime_factor < 0 or not math.isfinite(args.realtime_factor):
        raise MvsimError("--realtime-factor must be >= 0 (0 = as fast as possible)")
    if not (args.max_catchup > 0 and math.isfinite(args.max_catchup)):
        raise MvsimError("--max-catchup must be > 0 simulated seconds")
    if args.duration is not None and args.duration < 0:
        raise MvsimError("--duration must be >= 0 simulated seconds")
    _check_port(args.port)
    if args.join is not None and args.no_server:
        raise MvsimError("--join and --no-server exclude each other: --join serves the world on a running server")
    where = None if args.no_server else _open_comms(args)
    try:
        return _launch(args, where)
    finally:
        if where is not None and where.server is not None:
            where.server.stop()


def _launch(args: argparse.Namespace, where: _Comms | None) -> int:
    """``mvsim launch`` once its server runs (or is found): load, serve and run the world."""
    world = _load(args).start()
    world.strict = args.strict
    world.sensors_on_demand = True  # a sensor samples while somebody reads it: ZMQ, recorder, Foxglove, viewer
    for name in ("mvsim_core.faults", "mvsim_core.commands"):  # blow-ups and clamped commands: said on stderr
        logging.getLogger(name).setLevel(logging.WARNING)
    recorder = _start_recorder(world, args) if getattr(args, "record", None) else None
    tum = None
    if args.tum is not None:
        from mvsim_core.io import tum_trajectory

        folder = Path(args.tum)
        tum = tum_trajectory.attach(world, lambda name: folder / f"{name}.txt")
    fox = None
    if args.foxglove is not None:
        fox = _start_foxglove(world, args)
    viewer = None if args.headless else _open_viewer(world)
    comms = None
    try:
        if where is not None:
            comms = _serve_world(world, args, where)
        stop = comms.shutdown_requested if comms is not None else None
        runner = build_runner(world, args, viewer)
        if args.screenshot is not None:
            if args.duration:
                _run(runner, args.duration, stop)
            return _save_screenshot(world, viewer, args.screenshot)
        _run(runner, args.duration, stop)
        if stop is not None and stop.is_set():
            _err("shutdown requested by a client")
        return 0
    finally:
        if recorder is not None:
            recorder.close()
            _err(f"recorded {recorder.writer.message_count} messages to {args.record} "
                 f"(t = {world.time:.3f} s simulated)")
        if viewer is not None:
            viewer.close()
        if fox is not None:
            fox.close()
        if comms is not None:
            comms.close()
        for v in world.vehicles.values():  # flush and close the CSV loggers
            if getattr(v, "logger", None) is not None:
                v.logger.close()
        for writer in (tum, world.ground_truth_writer):  # and the TUM ground-truth files
            if writer is not None:
                writer.close()


def _start_foxglove(world, args: argparse.Namespace):
    """The Foxglove live view (:mod:`mvsim_core.comms.foxglove_view`) on ``--foxglove-host:--foxglove``; without a
    port given, on :data:`FOXGLOVE_PORT`, or a free port (said on stderr) when that one is taken."""
    named = args.foxglove != FOXGLOVE_DEFAULT
    port = args.foxglove if named else FOXGLOVE_PORT
    from mvsim_core.comms.errors import AddressInUse
    from mvsim_core.comms.foxglove_view import FoxgloveView

    host = args.foxglove_host
    try:
        fox = FoxgloveView(world, host=host, port=port)
        where = f"Foxglove view: ws://{host}:{fox.port}"
    except AddressInUse as e:
        if named:
            raise MvsimError(f"{e}; choose another --foxglove PORT, or give --foxglove without a port to serve on a "
                             f"free one") from None
        fox = FoxgloveView(world, host=host, port=0)
        where = (f"port {FOXGLOVE_PORT} is in use (another simulation?); this Foxglove view serves on "
                 f"ws://{host}:{fox.port}")
    if host not in (LOOPBACK, "localhost", "::1"):
        _err(f"WARNING: the Foxglove view is open to the network on {host}:{fox.port}; anyone who can "
             f"reach it can watch and drive the robots")
    _err(where)
    return fox


def _start_recorder(world: World, args: argparse.Namespace) -> Any:
    """The MCAP recorder of ``--record`` (:mod:`mvsim_core.record.mcap_recorder`) on the started ``world``."""
    from mvsim_core.record.mcap_recorder import Recorder

    rates: dict[str, float] = {}
    for item in args.record_rate:
        pattern, _, hz = item.rpartition("=")
        try:
            rates[pattern] = float(hz)
        except ValueError:
            pattern = ""
        if not pattern or not (rates.get(pattern, 0.0) > 0 and math.isfinite(rates[pattern])):
            raise MvsimError(f"--record-rate {item!r}: write GLOB=HZ with HZ > 0, e.g. '/*/odom=10'")
    try:
        rec = Recorder(world, args.record, include=args.record_topics, exclude=args.record_exclude, rates=rates)
    except OSError as e:
        raise MvsimError(f"cannot write {args.record}: {e.strerror or e}") from None
    _err(f"recording {len(rec.writer.channels)} topics to {args.record}")
    return rec


def cmd_record(args: argparse.Namespace) -> int:
    """``mvsim record``: ``mvsim launch --headless --no-server --record OUT`` for ``--duration`` seconds."""
    if args.duration is None or not (args.duration > 0 and math.isfinite(args.duration)):
        raise MvsimError("--duration must be > 0 simulated seconds")
    args.record = args.out
    args.headless, args.no_server, args.screenshot, args.strict = True, True, None, False
    args.max_catchup, args.port, args.bind, args.join = DEFAULT_MAX_CATCHUP, None, LOOPBACK, None
    args.status_line = "auto"
    return cmd_launch(args)


def _open_viewer(world):
    """The 3D viewer on ``world``, or None (no display: silently; a display but no window: said once)."""
    from mvsim_core.gui.window import display_available

    if not display_available():
        return None
    from mvsim_core.gui.window import Viewer

    try:
        return Viewer(world)
    except MvsimError as e:
        _err(f"cannot open the 3D viewer ({e}); running headless")
        return None


def _save_screenshot(world, viewer, path: str) -> int:
    if viewer is not None and not viewer.closed:
        out = viewer.screenshot(path)
    else:  # no window: the same picture, rendered offscreen
        from mvsim_core.gui.orbit_camera import OrbitCamera
        from mvsim_core.gui.status import status_lines
        from mvsim_core.gui.teleop import Teleop
        from mvsim_core.gui.world_view import screenshot

        camera = OrbitCamera.from_gui(world.gui)
        out = screenshot(world, path, status=status_lines(world, Teleop(world), None, None, camera.follow),
                         camera=camera)
    print(f"mvsim: screenshot saved to {out}", flush=True)
    return 0


def cmd_server(args: argparse.Namespace) -> int:
    _check_port(args.port)
    server, moved = _listen(args.port, args.bind)
    try:
        _announce_bind(args.bind, server.endpoint)
        if moved:
            _err(moved)
        print(f"mvsim server: listening on {server.endpoint}; Ctrl-C to stop", flush=True)
        while not server.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    print(f"mvsim server: stopped after {server.requests} requests", flush=True)
    return 0


# ---------------------------------------------------------------------- client tools
def _client(args: argparse.Namespace, what: str, register: bool = False):
    from mvsim_core.comms.client import Client, default_node_name

    _check_port(args.port)
    if args.timeout <= 0:
        raise MvsimError("--timeout must be > 0 seconds")
    host, port = server_address(args.host, args.port)
    return Client(default_node_name(f"mvsim-cli-{what}"), host, port,
                  timeout=args.timeout).connect(register=register)


def server_address(host: str | None, port: int | None, env: dict[str, str] | None = None) -> tuple[str, int]:
    """The server the client tools talk to: ``--host`` / ``--port`` where given, else the parts of ``$MVSIM_SERVER``
    (``tcp://HOST:PORT``, as ``mvsim launch`` prints it), else 127.0.0.1:23700."""
    text = (os.environ if env is None else env).get(SERVER_ENV, "")
    env_host, env_port = parse_address(text, SERVER_ENV) if text.strip() else (LOOPBACK, DEFAULT_PORT)
    return (env_host if host is None else host), (env_port if port is None else port)


def cmd_node(args: argparse.Namespace) -> int:
    c = _client(args, "node")
    try:
        for n in c.list_nodes():
            print(n)
    finally:
        c.shutdown()
    return 0


def cmd_topic_list(args: argparse.Namespace) -> int:
    c = _client(args, "topic")
    try:
        topics = c.list_topics()
    finally:
        c.shutdown()
    width = max((len(t.topicName) for t in topics), default=0)
    for t in topics:
        print(f"{t.topicName:<{width}}  {t.topicType or '(no publisher yet)'}")
        if args.details:
            for node, ep in zip(t.publisherName, t.publisherEndpoint, strict=False):
                print(f"    publisher: {node} at {ep}")
            if not t.publisherName:
                print("    publisher: none")
    return 0


def _subscribe_queue(c: Any, topic: str) -> queue.Queue:
    q: queue.Queue = queue.Queue(maxsize=10000)

    def on_message(type_name: str, payload: bytes) -> None:
        try:
            q.put_nowait((time.monotonic(), type_name, payload))
        except queue.Full:
            pass

    c.subscribe(topic, on_message)
    if not any(t.topicName == topic and t.publisherName for t in c.list_topics(topic)):
        _err(f"topic '{topic}' has no publisher yet; waiting for one")
    return q


def _deadline(duration: float | None) -> float:
    if duration is not None and duration <= 0:
        raise MvsimError("--duration must be > 0 seconds")
    return math.inf if duration is None else time.monotonic() + duration


def cmd_topic_echo(args: argparse.Namespace) -> int:
    from mvsim_core.comms.errors import CommsError
    from mvsim_core.comms.framing import decode_payload
    from mvsim_core.comms.tools import format_message

    end = _deadline(args.duration)
    c = _client(args, "echo")
    n = 0
    try:
        q = _subscribe_queue(c, args.topic)
        while time.monotonic() < end and not (args.count and n >= args.count):
            try:
                _, type_name, payload = q.get(timeout=min(0.2, max(0.0, end - time.monotonic())))
            except queue.Empty:
                continue
            n += 1
            print(f"--- #{n} {args.topic} [{type_name}] {len(payload)} bytes")
            try:
                print(format_message(decode_payload(type_name, payload), full=args.full))
            except CommsError as e:
                print(f"(cannot decode: {e})")
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    finally:
        c.shutdown()
    if n == 0 and args.duration is not None:
        _err(f"no message on '{args.topic}' within {args.duration:g} s")
        return 1
    return 0


def cmd_topic_hz(args: argparse.Namespace) -> int:
    from mvsim_core.comms.errors import CommsError
    from mvsim_core.comms.framing import decode_payload
    from mvsim_core.comms.tools import RateMeter, message_stamp

    if args.window < 2:
        raise MvsimError("--window must be >= 2 messages")
    end = _deadline(args.duration)
    meter = RateMeter(args.window)
    c = _client(args, "hz")
    next_print = time.monotonic() + 1.0
    try:
        q = _subscribe_queue(c, args.topic)
        while time.monotonic() < end:
            try:
                t, type_name, payload = q.get(timeout=0.1)
                try:
                    stamp = message_stamp(decode_payload(type_name, payload))
                except CommsError:
                    stamp = None
                meter.add(t, stamp)
            except queue.Empty:
                pass
            if time.monotonic() >= next_print:
                next_print += 1.0
                print(meter.line(args.topic) if meter.count else f"{args.topic}: no messages yet", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        c.shutdown()
    print(f"average: {meter.line(args.topic)}", flush=True)
    return 0 if meter.count else 1


def cmd_topic_pub(args: argparse.Namespace) -> int:
    from mvsim_core.comms.proto import message_class
    from mvsim_core.comms.tools import message_from_text

    if args.rate <= 0:
        raise MvsimError("--rate must be > 0 messages per second")
    if args.count < 0:
        raise MvsimError("--count must be >= 0")
    msg = message_from_text(args.type, args.fields)
    c = _client(args, "pub", register=True)
    sent = 0
    try:
        c.advertise_topic(args.topic, message_class(args.type))
        wait_end = time.monotonic() + args.wait
        period = 1.0 / args.rate
        next_t = time.monotonic()
        waiting_said = False
        while not (args.count and sent >= args.count):
            if not c.has_subscribers(args.topic):
                if args.count and time.monotonic() > wait_end:
                    _err(f"no subscriber on '{args.topic}' within {args.wait:g} s; published {sent} of "
                         f"{args.count}")
                    return 1
                if not waiting_said:
                    _err(f"waiting for a subscriber on '{args.topic}'")
                    waiting_said = True
                time.sleep(0.02)
                continue
            if c.publish(args.topic, msg):
                sent += 1
                print(f"published #{sent} on {args.topic} [{args.type}]", flush=True)
            next_t += period
            time.sleep(max(0.0, next_t - time.monotonic()))
        time.sleep(0.2)  # let the last message leave before the socket closes
    except KeyboardInterrupt:
        pass
    finally:
        c.shutdown()
    return 0


def cmd_service_call(args: argparse.Namespace) -> int:
    from mvsim_core.comms.tools import format_message, message_from_text

    req = message_from_text(args.type, args.fields)
    c = _client(args, "service")
    try:
        ans = c.call_service(args.service, req)
    finally:
        c.shutdown()
    print(f"[{ans.DESCRIPTOR.full_name}]")
    print(format_message(ans))
    return 0


# ---------------------------------------------------------------------- trajectories
def cmd_trajectory(args: argparse.Namespace) -> int:
    """Drive one vehicle through ``--schedule`` and write the samples (:mod:`mvsim_core.io.trajectory_csv`): 0; a bad
    schedule, world, vehicle name or output path: one line, 2."""
    from mvsim_core.io.trajectory_csv import TrajectoryFileError, parse_schedule, write_trajectory
    from mvsim_core.record.schedule_run import record_schedule

    try:
        schedule = parse_schedule(args.schedule)
    except TrajectoryFileError as e:
        _err(str(e))
        return 2
    for name, value in (("--period", args.period), ("--duration", args.duration)):
        if value is not None and not (math.isfinite(value) and 0.0 < value <= 1e6):
            _err(f"{name} must be a number of seconds above 0 (got {value:g})")
            return 2
    world = _load(args)
    if not world.vehicles:
        _err(f"{args.world} has no vehicle to drive")
        return 2
    name = args.vehicle if args.vehicle is not None else next(iter(world.vehicles))
    if name not in world.vehicles:
        _err(f"no vehicle '{name}' in {args.world}; it has {', '.join(world.vehicles)}")
        return 2
    if args.period < world.timestep:
        _err(f"--period {args.period:g} s is shorter than the world's timestep ({world.timestep:g} s): samples are "
             f"taken between physics steps")
        return 2
    try:  # find out now, not after the run, that the file cannot be written
        open(args.output, "w").close()
    except OSError as e:
        _err(f"cannot write {args.output}: {e.strerror or e}")
        return 2
    header, rows = record_schedule(world, name, schedule, duration=args.duration, period=args.period)
    try:
        write_trajectory(args.output, header, rows)
    except OSError as e:
        _err(f"cannot write {args.output}: {e.strerror or e}")
        return 2
    print(f"wrote {args.output}: vehicle '{name}', {len(rows)} samples every {args.period:g} s up to "
          f"t = {rows[-1][0]:.4g} s")
    return 0


def cmd_plot_trajectory(args: argparse.Namespace) -> int:
    """Overlay OURS on REFERENCE in a PNG (:mod:`mvsim_core.io.trajectory_plot`) and print the errors: 0; an
    unreadable file, no overlap in time or no matplotlib: one line, 2."""
    from pathlib import Path

    from mvsim_core.io.trajectory_csv import TrajectoryFileError, read_trajectory
    from mvsim_core.io.trajectory_plot import PlotUnavailable, plot

    out = args.output if args.output is not None else str(Path(args.ours).with_suffix(".png"))
    try:
        ours, ref = read_trajectory(args.ours), read_trajectory(args.reference)
        labels = (f"ours: {Path(args.ours).name}", f"reference: {Path(args.reference).name}")
        cmp = plot(ours, ref, out, labels=labels, title=args.title)
    except (TrajectoryFileError, PlotUnavailable, ValueError) as e:
        _err(str(e))
        return 2
    except OSError as e:
        _err(f"cannot write {out}: {e.strerror or e}")
        return 2
    print(f"wrote {out}: {cmp.summary()}")
    return 0


# ---------------------------------------------------------------------- sweeps
def cmd_sweep(args: argparse.Namespace) -> int:
    """``mvsim sweep``: the spec read and checked against its world (a mistake: ``file:line`` and 2) before Ray is
    imported; then the runs (:mod:`mvsim_core.sweep.ray_runner`). 0 when every run of the spec is recorded as ok,
    1 when some failed or timed out (their rows say why)."""
    from mvsim_core.sweep.spec import load_spec
    from mvsim_core.sweep.validate import check_against_world

    if args.workers is not None and args.workers < 1:
        raise MvsimError(f"--workers must be at least 1 (got {args.workers})")
    spec = load_spec(args.spec)
    out = Path(args.out) if args.out else Path(Path(args.spec).name.removesuffix(".yaml").removesuffix(".yml")
                                                + ".parquet")
    if out.suffix != ".parquet":
        raise MvsimError(f"--out {out}: the results file is Parquet; give it the suffix .parquet")
    check_against_world(spec)
    from mvsim_core.sweep.ray_runner import run_sweep

    summary = run_sweep(spec, out, workers=args.workers, address=args.address, progress=not args.no_progress)
    return 0 if summary.all_ok else 1


def cmd_import_urdf(args: argparse.Namespace) -> int:
    """Write the class of a URDF robot (stdout, or ``-o``) and print its summary line on stderr: 0; a bad file: its
    ``file:line:`` line, 2 (by :func:`main`)."""
    from mvsim_core.objects.vehicles.urdf_import import import_urdf, parse_xacro_args

    try:
        xargs = parse_xacro_args(" ".join(args.xacro_arg))
    except ValueError as e:
        raise MvsimError(f"--xacro-arg: {e}; write --xacro-arg name:=value") from None
    veh = import_urdf(args.urdf, class_name=args.class_name, xacro_args=xargs, package_dirs=args.package_path)
    name = args.class_name or _class_name(veh.class_xml)
    if args.output:
        try:
            Path(args.output).write_text(veh.class_xml, encoding="utf-8")
        except OSError as e:
            raise MvsimError(f"cannot write {args.output}: {e.strerror or e}") from None
    else:
        sys.stdout.write(veh.class_xml)
    print(veh.summary(name), file=sys.stderr)
    return 0


def _class_name(class_xml: str) -> str:
    """The name=\"...\" of a generated ``<vehicle:class>``."""
    import re

    m = re.search(r'<vehicle:class name="([^"]*)"', class_xml)
    return m.group(1) if m else ""


# ---------------------------------------------------------------------- entry point
def _on_sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


_COMMANDS = {
    ("check", None): cmd_check,
    ("launch", None): cmd_launch,
    ("record", None): cmd_record,
    ("server", None): cmd_server,
    ("node", "list"): cmd_node,
    ("topic", "list"): cmd_topic_list,
    ("topic", "echo"): cmd_topic_echo,
    ("topic", "hz"): cmd_topic_hz,
    ("topic", "pub"): cmd_topic_pub,
    ("service", "call"): cmd_service_call,
    ("trajectory", None): cmd_trajectory,
    ("plot-trajectory", None): cmd_plot_trajectory,
    ("sweep", None): cmd_sweep,
    ("import-urdf", None): cmd_import_urdf,
}


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s: %(message)s")
    args = build_parser().parse_args(argv)
    fn = _COMMANDS.get((args.command, getattr(args, "action", None)))
    if fn is None:  # pragma: no cover (argparse requires a known command)
        return 2
    old_handler = None
    if args.command != "check" and threading.current_thread() is threading.main_thread():
        old_handler = signal.signal(signal.SIGTERM, _on_sigterm)  # SIGTERM stops as cleanly as Ctrl-C
    try:
        return fn(args)
    except MvsimError as e:
        print(one_line(str(e)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    finally:
        if old_handler is not None:
            signal.signal(signal.SIGTERM, old_handler)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The node's parameters: one table (the fields of :class:`Options`, each with its default, meaning and whether it may
change while running), their conversion and checks, and where the world file is found.

No ROS import here: ``mvsim_node --help`` and the parameter checks work without ROS 2.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from mvsim_core.errors import MvsimError
from mvsim_core.runner import STATUS_MODES


class ConfigError(MvsimError):
    """A bad node parameter (the message names it and what is accepted)."""


def param(default: Any, description: str, *, dynamic: bool = False) -> Any:
    """A field of :class:`Options`: its default, one-line meaning, and whether ``ros2 param set`` may change it."""
    return field(default=default, metadata={"description": description, "dynamic": dynamic})


@dataclass
class Options:
    """Validated node parameters (units in the descriptions; see :mod:`mvsim_ros2.node` for the details).

    Each field is one ROS parameter, declared in this order with this default.
    """

    world_file: str = param("", "world file (.world.xml) to load")
    headless: bool = param(False, "no 3D viewer window (none without a display either)")
    gui_refresh_period: float = param(50.0, "ms between the viewer's frames while the simulation keeps up")
    realtime_factor: float = param(1.0, "simulated seconds per wall second (0 = as fast as possible)", dynamic=True)
    simul_rate: float = param(100.0, "run-loop ticks per wall second (Hz)")
    max_simul_catchup_time: float = param(0.1, "most simulated seconds advanced in one tick", dynamic=True)
    period_ms_publish_tf: float = param(20.0, "simulated ms between odom/tf/ground-truth messages")
    do_fake_localization: bool = param(True, "publish map->odom, amcl_pose and particlecloud from ground truth")
    publish_tf_odom2baselink: bool = param(True, "publish odom->base_link on tf")
    publish_wheel_tf: bool = param(True, "publish each vehicle's movable joints (wheels, steering) on tf at "
                                         "period_ms_publish_tf, from its robot description and joint state")
    publish_sensor_tf: bool = param(True, "publish each vehicle's sensor frames and the fixed joints of its robot "
                                          "description on tf_static")
    force_publish_vehicle_namespace: bool = param(False, "prefix topics with <vehicle>/ even for one vehicle")
    shared_tf_tree: bool = param(False, "one tf tree for all vehicles (tf_prefix style): frames <vehicle>/odom, "
                                        "<vehicle>/base_link, ... on the node's tf and tf_static")
    publisher_history_len: int = param(50, "QoS depth of odom / ground truth / collision publishers")
    publish_log_topics: bool = param(False, "publish CSV-logger columns as Float64 topics while recording")
    base_watchdog_timeout: float = param(1.0, "simulated s without commands before a vehicle is stopped (<=0: off)",
                                         dynamic=True)
    disable_sim_time_clock: bool = param(False, "stamp with wall-clock time and do not publish /clock")
    world_frame_id: str = param("map", "frame of ground truth, simul_map, amcl_pose, particlecloud")
    objects_ground_truth_rate: float = param(0.0, "Hz (simulated time) of objects_ground_truth, every vehicle's, "
                                                  "block's and actor's pose as a TFMessage (0 = not published)")
    diagnostics_rate: float = param(1.0, "Hz (wall clock) of /diagnostics (diagnostic_msgs/DiagnosticArray: real-time "
                                         "factor, step time, dropped lag, blow-ups; 0 = not published)")
    depth_image_encoding: str = param("32FC1", "depth image encoding: 32FC1 (m) or 16UC1 (mm)")
    lockstep: bool = param(False, "advance simulated time only through the ~/step service", dynamic=True)
    lockstep_step: float = param(0.1, "simulated seconds advanced by one ~/step call", dynamic=True)
    executor: str = param("events", "callback executor: events (C++ EventsExecutor) or single_threaded")
    seed: int = param(0, "seed of the world's random generator")
    allow_shell: bool = param(False, "let $(cmd) in the world file run shell commands")
    zmq_server: bool = param(True, "serve the world over ZMQ (upstream comms protocol) from this process")
    zmq_port: int = param(23700, "TCP port of the ZMQ server; unset: 23700, or a free port (logged) when 23700 is "
                                 "taken; set: it must be free (exit 2 otherwise); 0 = any free port")
    zmq_bind: str = param("127.0.0.1", "interface the ZMQ server listens on")
    cmd_vel_type: str = param("auto", "cmd_vel message type: auto (Twist, or TwistStamped when that is what is "
                                      "published), twist or twist_stamped")
    joint_commands_topic: str = param("joint_commands", "sensor_msgs/JointState input of wheel velocities and "
                                                        "steering positions (ros2_control's topic_based_ros2_control "
                                                        "joint_commands_topic), under each vehicle's namespace")
    joint_states_topic: str = param("joint_states", "sensor_msgs/JointState output of the vehicles' joints "
                                                    "(topic_based_ros2_control's joint_states_topic), under each "
                                                    "vehicle's namespace")
    max_linear_speed: float = param(0.0, "largest |linear.x|, |linear.y|, |drive.speed| commanded, m/s; beyond: "
                                         "clamped (0 = the vehicle's own limit)")
    max_angular_speed: float = param(0.0, "largest |angular.z| commanded, rad/s; beyond: clamped (0 = the vehicle's "
                                          "own limit)")
    record: str = param("", "MCAP file to record every topic into while the node runs (rosbag2-compatible, "
                            "written without ros2 bag; \"\" = none)")
    status_line: str = param("auto", "status line on stdout: live (rewritten in place), periodic (a full line every "
                                     "5 s), off; auto = live on the terminal you watch, periodic elsewhere (ros2 "
                                     "launch, a pipe, a file)")
    strict: bool = param(False, "stop the node (exit 2) at the first vehicle or block that blows up (NaN/inf, "
                                "runaway); by default it is reset to its last finite pose, logged as an error, and "
                                "the rest goes on")

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Options:
        """Options from parameter values, converted and checked (unknown names are skipped).

        Raises:
            ConfigError: a value of the wrong type or out of range (the message names the parameter).
        """
        opts = cls()
        for name, value in values.items():
            spec = SPECS.get(name)
            if spec is not None:
                if name == "status_line" and isinstance(value, bool):  # YAML (-p, ros2 launch) reads off/on as bools
                    value = "auto" if value else "off"
                setattr(opts, name, _convert(name, value, type(spec.default)))
        opts.check()
        return opts

    def check(self) -> None:
        """Raise :class:`ConfigError` for any value out of range."""
        _need(self.realtime_factor >= 0 and math.isfinite(self.realtime_factor), "realtime_factor",
              self.realtime_factor, "a number >= 0 (0 = as fast as possible)")
        _need(self.simul_rate > 0 and math.isfinite(self.simul_rate), "simul_rate", self.simul_rate, "> 0 Hz")
        _need(self.max_simul_catchup_time > 0, "max_simul_catchup_time", self.max_simul_catchup_time, "> 0 s")
        _need(self.period_ms_publish_tf > 0, "period_ms_publish_tf", self.period_ms_publish_tf, "> 0 ms")
        _need(self.objects_ground_truth_rate >= 0 and math.isfinite(self.objects_ground_truth_rate),
              "objects_ground_truth_rate", self.objects_ground_truth_rate, "a number >= 0 Hz (0 = not published)")
        _need(self.diagnostics_rate >= 0 and math.isfinite(self.diagnostics_rate), "diagnostics_rate",
              self.diagnostics_rate, "a number >= 0 Hz (0 = not published)")
        _need(self.publisher_history_len >= 1, "publisher_history_len", self.publisher_history_len, ">= 1")
        _need(math.isfinite(self.base_watchdog_timeout), "base_watchdog_timeout", self.base_watchdog_timeout,
              "a number of seconds (<= 0 disables the watchdog)")
        _need(self.lockstep_step > 0 and math.isfinite(self.lockstep_step), "lockstep_step", self.lockstep_step,
              "> 0 s")
        _need(self.depth_image_encoding in ("32FC1", "16UC1"), "depth_image_encoding", self.depth_image_encoding,
              "32FC1 or 16UC1")
        _need(0 <= self.zmq_port <= 65535, "zmq_port", self.zmq_port, "0..65535")
        _need(self.executor in ("events", "single_threaded"), "executor", self.executor, "events or single_threaded")
        _need(self.status_line in STATUS_MODES, "status_line", self.status_line, ", ".join(STATUS_MODES))
        _need(bool(self.world_frame_id), "world_frame_id", self.world_frame_id, "a frame name")
        _need(self.cmd_vel_type in ("auto", "twist", "twist_stamped"), "cmd_vel_type", self.cmd_vel_type,
              "auto, twist or twist_stamped")
        for name in ("joint_commands_topic", "joint_states_topic"):
            _need(bool(getattr(self, name)), name, getattr(self, name), "a topic name")
        for name in ("max_linear_speed", "max_angular_speed"):
            v = getattr(self, name)
            _need(v >= 0 and math.isfinite(v), name, v, "a number >= 0 (0 = the vehicle's own limit)")


@dataclass(frozen=True)
class ParamSpec:
    """One node parameter, as declared to ROS (derived from a field of :class:`Options`)."""

    name: str
    default: Any
    description: str
    dynamic: bool = False  # may change while running


PARAMS: tuple[ParamSpec, ...] = tuple(
    ParamSpec(f.name, f.default, f.metadata["description"], f.metadata["dynamic"]) for f in fields(Options)
    if f.default is not MISSING)
"""Every parameter, in declaration order (the fields of :class:`Options`)."""

SPECS: dict[str, ParamSpec] = {s.name: s for s in PARAMS}


def usage() -> str:
    """The ``mvsim_node --help`` text: the command line and every parameter with its default."""
    return ("usage: mvsim_node [WORLD_FILE] [--ros-args -p world_file:=PATH -p NAME:=VALUE ...]\n\n"
            "Runs an MVSim world as the ROS 2 node 'mvsim' (topics, tf, /clock). Parameters:\n"
            + "\n".join(f"  {s.name:34s} {s.default!r:12} {s.description}" for s in PARAMS))


def _need(ok: bool, name: str, value: Any, what: str) -> None:
    if not ok:
        raise ConfigError(f"parameter {name}={value!r} is invalid: expected {what}")


BOOL_WORDS: dict[str, bool] = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False,
                                "on": True, "off": False}
"""Spellings of a boolean parameter given as a string (compared in lower case)."""


_KIND_WORDS: dict[type, str] = {float: "float (a number such as 1.5)", int: "int (a whole number such as 10)",
                               str: "str (quote text that YAML would read as a number or bool: -p NAME:=\"'1'\")"}


def _convert(name: str, value: Any, kind: type) -> Any:
    """``value`` as a ``kind`` parameter value.

    Values arrive typed by how they were written: ``-p x:=1`` is an integer, and ``ros2 launch`` YAML-parses its
    arguments, so ``use_rviz:=0`` reaches the node as the integer 0 and ``lockstep:=False`` as a bool or a string.
    Accepted: ints for floats, integral floats for ints, and for bools a bool, the integers 0 and 1, or a string in
    :data:`BOOL_WORDS` in any case (``true``, ``False``, ``1``, ``no``...).

    Raises:
        ConfigError: the value cannot stand for a ``kind`` (the message names the parameter and what is accepted).
    """
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in BOOL_WORDS:
            return BOOL_WORDS[value.strip().lower()]
        raise ConfigError(f"parameter {name}={value!r} has the wrong type: expected bool (true/false, 1/0, yes/no "
                          f"or on/off, in any case), e.g. -p {name}:=true")
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif kind is str:
        if isinstance(value, str):
            return value
    raise ConfigError(f"parameter {name}={value!r} has the wrong type: expected {_KIND_WORDS.get(kind, kind.__name__)}")


def resolve_world_file(name: str) -> Path:
    """The world file: as given (relative to the working directory), else under this package's ``worlds/``.

    Raises:
        ConfigError: empty name, or no such file.
    """
    if not name:
        raise ConfigError("no world file: run `mvsim_node --ros-args -p world_file:=PATH` (or `mvsim_node PATH`)")
    p = Path(name).expanduser()
    if p.is_file():
        return p
    if not p.is_absolute():
        for root in _world_dirs():
            if (root / p).is_file():
                return root / p
    raise ConfigError(f"world file not found: {name}")


def _world_dirs() -> list[Path]:
    """Where a relative world file name is looked for: this source tree's worlds/, then the package's share folder
    in every ament prefix (AMENT_PREFIX_PATH, what a sourced colcon install sets, in its order), then the
    interpreter's own prefix (pip install, or the venv that ``make setup`` registered)."""
    here = Path(__file__).resolve().parent
    dirs = [here.parent / "worlds"]  # source checkout / editable install
    for root in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if root:
            dirs.append(Path(root) / "share" / "mvsim_ros2" / "worlds")
    dirs.append(Path(sys.prefix) / "share" / "mvsim_ros2" / "worlds")
    return dirs

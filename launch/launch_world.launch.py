"""Launch an MVSim world: the ``mvsim_node`` bridge (node name ``mvsim``) and, unless ``use_rviz:=false``, RViz.

    ros2 launch mvsim_ros2 launch_world.launch.py world_file:=/path/to/my.world.xml

Arguments (upstream's, plus ours): world_file (required), headless, do_fake_localization, publish_tf_odom2baselink,
force_publish_vehicle_namespace, publish_log_topics, use_rviz, rviz_config_file, rviz_vehicle, realtime_factor,
disable_sim_time_clock, lockstep, use_sim_time, params_file (a YAML of more node parameters, e.g.
config/mvsim_params.yaml).

Booleans may be spelled true/false, True/False, 1/0 or yes/no (any case): the node gets true or false, whatever the
spelling, and a launch that says ``use_rviz:=maybe`` stops before starting anything, naming the argument.

When mvsim_node fails (a world file not found or broken, a bad parameter: it prints one line and exits 2) the whole
launch stops (RViz too) and ``ros2 launch`` exits with status 1 — launch's only non-zero status, which it gives when
an exception reaches its event loop; a node that stops cleanly (exit 0) leaves the rest running.

Without launch (same node, same parameters)::

    mvsim_node --ros-args -p world_file:=/path/to/my.world.xml -p headless:=true
"""

from __future__ import annotations

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit
from launch.events.process import ProcessExited
from launch.launch_context import LaunchContext
from launch.substitution import Substitution
from launch.substitutions import (
    AndSubstitution,
    EqualsSubstitution,
    LaunchConfiguration,
    NotEqualsSubstitution,
    NotSubstitution,
)
from launch.substitutions.substitution_failure import SubstitutionFailure
from launch_ros.actions import Node

from launch import LaunchDescription

# (name, default, description): the node parameters this launch file exposes as arguments
NODE_ARGUMENTS = (
    ("headless", "False", "run without the 3D viewer"),
    ("do_fake_localization", "True", "publish map->odom, amcl_pose and particlecloud from the ground truth"),
    ("publish_tf_odom2baselink", "True", "publish odom->base_link on tf"),
    ("force_publish_vehicle_namespace", "False", "prefix topics with <vehicle>/ even for a single vehicle"),
    ("shared_tf_tree", "False", "all vehicles on one tf tree, frames <vehicle>/...: what rviz/mvsim.rviz needs"),
    ("publish_log_topics", "False", "publish the CSV-logger columns as Float64 topics"),
    ("realtime_factor", "1.0", "simulated seconds per wall second (0 = as fast as possible)"),
    ("disable_sim_time_clock", "False", "wall-clock stamps and no /clock"),
    ("lockstep", "False", "advance time only through the ~/step service"),
    ("use_sim_time", "False", "accepted by the node; RViz follows /clock when true"),
)
NOT_BOOLEAN = {"realtime_factor"}  # every other node argument is a boolean
FLAGS = (*(name for name, _, _ in NODE_ARGUMENTS if name not in NOT_BOOLEAN), "use_rviz")
TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")


class Flag(Substitution):
    """A boolean launch argument as ``true`` or ``false``, whatever its spelling (true/false, 1/0, yes/no, on/off,
    in any case); a :class:`SubstitutionFailure` naming the argument for anything else."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def describe(self) -> str:
        return f"Flag({self.name})"

    def perform(self, context: LaunchContext) -> str:
        raw = LaunchConfiguration(self.name).perform(context)
        word = raw.strip().lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return "true" if word in TRUE_WORDS else "false"
        raise SubstitutionFailure(f"launch argument {self.name}:={raw!r} is not a boolean: write {self.name}:=true "
                                  f"or {self.name}:=false (True/False, 1/0 and yes/no work too)")


def check_flags(context: LaunchContext) -> list[object]:
    """Evaluate every boolean argument before anything starts, so that a bad one stops the launch at once."""
    for name in FLAGS:
        Flag(name).perform(context)
    return []


class NodeFailed(RuntimeError):
    """mvsim_node exited with a failure (raised in launch's event loop: launch then shuts everything down and
    ``ros2 launch`` exits with 1)."""


def stop_on_failure(event: ProcessExited, context: LaunchContext) -> list[object]:
    """On mvsim_node's exit: a failure ends the launch with a non-zero status. A failure is an exit status other
    than 0, except a signal's (negative status) while launch itself is shutting down (it sent that signal).
    ``Shutdown`` alone would stop everything but ``ros2 launch`` would still exit 0."""
    code = event.returncode
    if code == 0 or (code < 0 and context.is_shutdown):
        return []
    raise NodeFailed(f"{event.process_name} failed with exit status {code} (its error is above); stopping the launch")


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory("mvsim_ros2")
    args = [
        DeclareLaunchArgument("world_file", description="world file (.world.xml) to simulate"),
        *(DeclareLaunchArgument(name, default_value=default, description=desc)
          for name, default, desc in NODE_ARGUMENTS),
        DeclareLaunchArgument("use_rviz", default_value="True", description="start RViz"),
        DeclareLaunchArgument("rviz_config_file", default_value=os.path.join(share, "rviz", "mvsim.rviz"),
                              description="RViz configuration"),
        DeclareLaunchArgument("rviz_vehicle", default_value="",
                              description="with several vehicles: whose <V>/tf and <V>/tf_static RViz shows"),
        DeclareLaunchArgument("params_file", default_value=os.path.join(share, "config", "mvsim_params.yaml"),
                              description="YAML file with more parameters of the mvsim node"),
    ]
    params: dict[str, Substitution] = {"world_file": LaunchConfiguration("world_file")}
    params.update({name: Flag(name) if name in FLAGS else LaunchConfiguration(name) for name, _, _ in NODE_ARGUMENTS})
    mvsim = Node(
        package="mvsim_ros2",
        executable="mvsim_node",
        name="mvsim",
        output="screen",
        emulate_tty=True,
        parameters=[LaunchConfiguration("params_file"), params],
    )
    vehicle = LaunchConfiguration("rviz_vehicle")
    rviz_common = {
        "package": "rviz2",
        "executable": "rviz2",
        "name": "rviz2",
        "arguments": ["-d", LaunchConfiguration("rviz_config_file")],
        "parameters": [{"use_sim_time": NotSubstitution(Flag("disable_sim_time_clock"))}],
    }
    use_rviz = Flag("use_rviz")
    rviz = Node(**rviz_common, condition=IfCondition(AndSubstitution(use_rviz, EqualsSubstitution(vehicle, ""))))
    rviz_vehicle = Node(  # RViz's tf listener reads /tf: point it at one vehicle's <V>/tf
        **rviz_common, condition=IfCondition(AndSubstitution(use_rviz, NotEqualsSubstitution(vehicle, ""))),
        remappings=[("/tf", ["/", vehicle, "/tf"]), ("/tf_static", ["/", vehicle, "/tf_static"])])
    failure = RegisterEventHandler(OnProcessExit(target_action=mvsim, on_exit=stop_on_failure))
    return LaunchDescription([*args, OpaqueFunction(function=check_flags), failure, mvsim, rviz, rviz_vehicle])

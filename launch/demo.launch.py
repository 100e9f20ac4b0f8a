"""The demo: our warehouse world (worlds/demo.world.xml: robot ``bot1`` with a 2D lidar, Ackermann car ``car1``),
the ``mvsim`` bridge node and RViz (``use_rviz:=false`` to skip it).

    ros2 launch mvsim_ros2 demo.launch.py
    ros2 run teleop_twist_keyboard teleop_twist_keyboard --ros-args -r cmd_vel:=/bot1/cmd_vel

Takes every argument of launch_world.launch.py (world_file defaults to the demo world). RViz follows ``bot1``: with
two vehicles each has its own ``<V>/tf``, so RViz's /tf and /tf_static are remapped to bot1's.

Without launch::

    mvsim_node --ros-args -p world_file:=$(ros2 pkg prefix mvsim_ros2)/share/mvsim_ros2/worlds/demo.world.xml
"""

from __future__ import annotations

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration

from launch import LaunchDescription

FORWARDED = ("headless", "do_fake_localization", "publish_tf_odom2baselink", "force_publish_vehicle_namespace",
             "publish_log_topics", "realtime_factor", "disable_sim_time_clock", "lockstep", "use_sim_time",
             "use_rviz", "rviz_config_file", "rviz_vehicle", "params_file")


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory("mvsim_ros2")
    defaults = {
        "headless": "False", "do_fake_localization": "True", "publish_tf_odom2baselink": "True",
        "force_publish_vehicle_namespace": "False", "publish_log_topics": "False", "realtime_factor": "1.0",
        "disable_sim_time_clock": "False", "lockstep": "False", "use_sim_time": "False", "use_rviz": "True",
        "rviz_config_file": os.path.join(share, "rviz", "demo.rviz"), "rviz_vehicle": "bot1",
        "params_file": os.path.join(share, "config", "mvsim_params.yaml"),
    }
    args = [DeclareLaunchArgument("world_file", default_value=os.path.join(share, "worlds", "demo.world.xml"),
                                  description="world file (.world.xml) to simulate")]
    args += [DeclareLaunchArgument(name, default_value=defaults[name]) for name in FORWARDED]
    world = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, "launch", "launch_world.launch.py")),
        launch_arguments={name: LaunchConfiguration(name) for name in ("world_file", *FORWARDED)}.items(),
    )
    return LaunchDescription([*args, world])

"""World-level option blocks: root parameters, ``<gui>``, ``<lights>``, ``<georeference>``.

Each is a parameter table with upstream MVSim's defaults (reference §1.2, §1.5–§1.7). Angles are written in degrees
and stored in radians.
"""

from __future__ import annotations

import math

from mvsim_core.xml.params import Kind, Param

MIN_TIMESTEP = 1e-4
"""Shortest physics step and shortest sensor period a world file may ask for (s). A shorter ``simul_timestep``, or a
sensor period that would make the automatic step shorter, is a :class:`~mvsim_core.errors.WorldFileError` at load:
Box2D and the wheel models gain nothing below it, and 10 000 steps per simulated second is already ~100x slower than
real time."""

MAX_TIMESTEP = 1.0
"""Longest physics step a world file may ask for (s): vehicles cross metres per step beyond it, and contacts and
controllers are meaningless."""

RAWLOG_NOTE = ("save_to_rawlog: MRPT rawlogs are not written (MRPT's serialization exists only in C++); record an "
               "MCAP file instead (mvsim launch WORLD --record OUT.mcap: Foxglove, rosbags, ros2 bag open it) and TUM "
               "ground truth (--tum DIR or <save_ground_truth_trajectory>)")
"""Said once where a world or a sensor asks for ``save_to_rawlog`` (README, "Recording")."""

WORLD_PARAMS: tuple[Param, ...] = (
    Param("simul_timestep", Kind.FLOAT, 0.0, "s", min=0.0, max=MAX_TIMESTEP,
          doc="fixed physics step; 0 = automatic: min(5 ms, shortest sensor period); otherwise >= MIN_TIMESTEP"),
    Param("gravity", Kind.FLOAT, 9.81, "m/s^2", positive=True, max=1000.0,
          doc="the wheels' load and friction depend on it (> 0)"),
    Param("b2d_vel_iters", Kind.INT, 8, min=1, max=1000, doc="Box2D velocity iterations"),
    Param("b2d_pos_iters", Kind.INT, 3, min=1, max=1000, doc="Box2D position iterations"),
    Param("collision_threshold", Kind.FLOAT, 0.03, "m", min=0.0),
    Param("server_address", Kind.STRING, "localhost"),
    Param("joystick_enabled", Kind.BOOL, False),
    Param("save_to_rawlog", Kind.STRING, ""),
    Param("rawlog_odometry_rate", Kind.FLOAT, 10.0, "Hz", positive=True),
    Param("save_ground_truth_trajectory", Kind.STRING, ""),
    Param("ground_truth_rate", Kind.FLOAT, 50.0, "Hz", positive=True),
    Param("max_slope_to_collide", Kind.FLOAT, 0.30),
    Param("min_slope_to_collide", Kind.FLOAT, -0.50),
)

GUI_PARAMS: tuple[Param, ...] = (
    Param("win_w", Kind.INT, 800, "px", min=1),
    Param("win_h", Kind.INT, 600, "px", min=1),
    Param("start_maximized", Kind.BOOL, True),
    Param("refresh_fps", Kind.INT, 20, "Hz", min=1),
    Param("ortho", Kind.BOOL, False),
    Param("show_forces", Kind.BOOL, False),
    Param("force_scale", Kind.FLOAT, 0.01, "m/N"),
    Param("show_sensor_points", Kind.BOOL, True),
    Param("fov_deg", Kind.FLOAT, 60.0, "deg", positive=True),
    Param("follow_vehicle", Kind.STRING, ""),
    Param("headless", Kind.BOOL, False),
    Param("clip_plane_min", Kind.FLOAT, 0.05, "m", positive=True),
    Param("clip_plane_max", Kind.FLOAT, 10000.0, "m", positive=True),
    Param("cam_distance", Kind.FLOAT, 80.0, "m", positive=True),
    Param("cam_azimuth", Kind.ANGLE, math.radians(45.0), "rad"),
    Param("cam_elevation", Kind.ANGLE, math.radians(40.0), "rad"),
    Param("cam_point_to", Kind.VEC3, (0.0, 0.0, 0.0), "m"),
)

LIGHTS_PARAMS: tuple[Param, ...] = (
    Param("enable_shadows", Kind.BOOL, True),
    Param("shadow_map_size", Kind.INT, 2048, "px", min=1),
    Param("light_azimuth_deg", Kind.ANGLE, math.radians(45.0), "rad", aliases=("light_azimuth",)),
    Param("light_elevation_deg", Kind.ANGLE, math.radians(70.0), "rad", aliases=("light_elevation",)),
    Param("light_clip_plane_min", Kind.FLOAT, 0.1, "m", positive=True),
    Param("light_clip_plane_max", Kind.FLOAT, 900.0, "m", positive=True),
    Param("light_color", Kind.COLOR, (255, 255, 255, 255)),
    Param("light_ambient", Kind.FLOAT, 0.5, min=0.0),
    Param("shadow_bias", Kind.FLOAT, 1e-5),
    Param("shadow_bias_cam2frag", Kind.FLOAT, 1e-5),
    Param("shadow_bias_normal", Kind.FLOAT, 1e-4),
    Param("eye_distance_to_shadow_map_extension", Kind.FLOAT, 2.0),
    Param("minimum_shadow_map_extension_ratio", Kind.FLOAT, 0.005),
)

GEOREFERENCE_PARAMS: tuple[Param, ...] = (
    Param("latitude", Kind.FLOAT, 0.0, "deg", min=-90.0),
    Param("longitude", Kind.FLOAT, 0.0, "deg", min=-180.0),
    Param("height", Kind.FLOAT, 0.0, "m"),
    Param("world_to_enu_rotation_deg", Kind.ANGLE, 0.0, "rad", aliases=("world_to_enu_rotation",),
          doc="rotation from the world frame to East-North-Up; 0 means +X = East"),
    Param("world_is_utm", Kind.BOOL, False, doc="world coordinates are UTM (easting, northing) minus the reference"),
)

"""Every number a sensor reads is refused at load when the model cannot run with it (issue 14, item 1): non-finite
or huge pose values (whichever tag or include attribute wrote them: a NaN yaw used to reach the ray-casting kernels),
counts below 1, apertures out of range, empty range windows, negative noise, non-positive focal lengths and steps,
clip planes in the wrong order, periods below the shortest timestep. Each is a WorldFileError at the line of the tag,
with the exact message."""

from __future__ import annotations

import pytest

from mvsim_core.errors import WorldFileError

_POSE3 = "'x y z yaw_deg pitch_deg roll_deg' such as '1 2 0.5 90 0 0'"
_NOT_FINITE = "(not a finite number); expected"

CASES = [
    ("laser", "<pose>1 2 nan</pose>",
     f"bad pose '1 2 nan' for <pose> {_NOT_FINITE} 'x y yaw_deg' such as '1.0 2.0 90'"),
    ("laser", "<pose_3d>0 0 0 0 inf 0</pose_3d>", f"bad pose '0 0 0 0 inf 0' for <pose_3d> {_NOT_FINITE} {_POSE3}"),
    ("laser", "<height>1e999</height>", f"bad number '1e999' for <height> {_NOT_FINITE} a number such as 1.5"),
    ("laser", "<pose_3d>0 0 2e9 0 0 0</pose_3d>",
     f"bad pose '0 0 2e9 0 0 0' for <pose_3d> (magnitude above 1e+09); expected {_POSE3}"),
    ("imu", "<pose>0 0 nan</pose>",
     f"bad pose '0 0 nan' for <pose> {_NOT_FINITE} 'x y yaw_deg' such as '1.0 2.0 90'"),
    ("rgbd_camera", "<relativePoseIntensityWRTDepth>0 0 0 nan 0 0</relativePoseIntensityWRTDepth>",
     f"bad pose '0 0 0 nan 0 0' for <relativePoseIntensityWRTDepth> {_NOT_FINITE} {_POSE3}"),
    ("laser", "<nrays>0</nrays>", "<nrays> must be a whole number ≥ 1 (got 0)"),
    ("laser", "<nrays>0.5</nrays>", "<nrays> must be a whole number ≥ 1 (got 0.5)"),
    ("camera", "<ncols>0</ncols>", "<ncols> must be a whole number ≥ 1 (got 0)"),
    ("laser", "<fov_degrees>0</fov_degrees>", "<fov_degrees> must be in (0, 360] degrees (got 0)"),
    ("laser", "<fov_degrees>361</fov_degrees>", "<fov_degrees> must be in (0, 360] degrees (got 361)"),
    ("lidar3d", "<vert_fov_degrees>181</vert_fov_degrees>", "<vert_fov_degrees> must be in (0, 180] degrees (got 181)"),
    ("lidar3d", "<vertical_ray_angles>-15 95</vertical_ray_angles>",
     "<vertical_ray_angles> must be within [-90, 90] degrees (got 95)"),
    ("laser", "<min_range>5</min_range><max_range>5</max_range>",
     "<min_range> (5 m) must be smaller than <max_range> (5 m)"),
    ("laser", "<max_range>0</max_range>",
     "<max_range> must be greater than 0 m (got 0); negative or zero max_range makes no physical sense"),
    ("lidar3d", "<min_range>0</min_range>",
     "<min_range> must be greater than 0 m (got 0); negative or zero min_range makes no physical sense"),
    ("laser", "<range_std_noise>-1</range_std_noise>", "<range_std_noise> must be at least 0 m (got -1)"),
    ("rgbd_camera", "<depth_noise_sigma>-1e-3</depth_noise_sigma>",
     "<depth_noise_sigma> must be at least 0 m (got -1e-3)"),
    ("imu", "<angular_velocity_std_noise>-1</angular_velocity_std_noise>",
     "<angular_velocity_std_noise> must be at least 0 rad/s (got -1)"),
    ("gnss", "<horizontal_std_noise>nan</horizontal_std_noise>",
     f"bad number 'nan' for <horizontal_std_noise> {_NOT_FINITE} a number such as 1.5"),
    ("camera", "<fx>0</fx>", "<fx> must be greater than 0 px (got 0); negative or zero fx makes no physical sense"),
    ("camera", "<clip_min>10</clip_min><clip_max>1</clip_max>",
     "<clip_min> (10 m) must be smaller than <clip_max> (1 m)"),
    ("rgbd_camera", "<depth_resolution>0</depth_resolution>",
     "<depth_resolution> must be greater than 0 m (got 0); negative or zero depth_resolution makes no physical sense"),
    ("laser", "<sensor_period>1e-5</sensor_period>", "<sensor_period> must be at least 0.0001 s (got 1e-5)"),
]


@pytest.mark.parametrize(("cls", "body", "message"), CASES, ids=[f"{c}:{b[:32]}" for c, b, _ in CASES])
def test_bad_value_is_refused_at_its_line(make_sensor, xml_file, cls, body, message):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="{cls}">\n{body}\n</sensor>')
    assert (e.value.file, e.value.line, e.value.message) == (xml_file, 2, message)


# (definition file, include attributes, line in the definition file, message)
INCLUDES = [
    ("lidar2d.sensor.xml", {"sensor_yaw": "nan"}, 2,
     f"bad pose '1.80  0.0  0.7  nan 0.0 0.0' for <pose_3d> {_NOT_FINITE} {_POSE3}"),
    ("rgbd_camera.sensor.xml", {"sensor_z": "inf"}, 7,
     f"bad pose '0.65  0.0  inf  0.0 0.0 0.0' for <pose_3d> {_NOT_FINITE} {_POSE3}"),
    ("imu.sensor.xml", {"sensor_roll": "-1e999"}, 2,
     f"bad pose '0  0.0  0  0.0 0.0 -1e999' for <pose_3d> {_NOT_FINITE} {_POSE3}"),
    ("camera.sensor.xml", {"sensor_period_sec": "1e-9"}, 8, "<sensor_period> must be at least 0.0001 s (got 1e-9)"),
    ("velodyne-vlp16.sensor.xml", {"sensor_rpm": "1e9"}, 16, "<sensor_period> must be at least 0.0001 s (got 6e-08)"),
    ("camera.sensor.xml", {"ncols": "1e9"}, 10,
     "<ncols> is 1000000000 px; an image is at most 16384 px wide and high (what every OpenGL 4 renderer can draw)"),
]


@pytest.mark.parametrize(("name", "attrs", "line", "message"), INCLUDES,
                         ids=[f"{n}:{next(iter(a))}" for n, a, _, _ in INCLUDES])
def test_bad_include_attribute_is_refused_in_the_definition(load_definition, defs_dir, name, attrs, line, message):
    with pytest.raises(WorldFileError) as e:
        load_definition(name, **attrs)
    assert (e.value.file, e.value.line, e.value.message) == (str(defs_dir / name), line, message)

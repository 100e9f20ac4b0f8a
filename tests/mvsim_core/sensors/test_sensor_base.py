"""What every sensor shares: class dispatch, names, NAME/PARENT_NAME substitution, publish, period, pose, warnings."""

from __future__ import annotations

import math

import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.sensors import Camera, Gnss, Imu, Lidar2D, Lidar3D, RgbdCamera, Sensor, sensor_from_xml
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.parser import parse_text

D = math.radians


# ---------------------------------------------------------------------- registry and dispatch
def test_registry_has_every_class_with_its_default_name_prefix():
    assert {k: (v, v.name_prefix) for k, v in Sensor.registry.items()} == {
        "laser": (Lidar2D, "laser"),
        "lidar3d": (Lidar3D, "laser"),
        "camera": (Camera, "camera"),
        "rgbd_camera": (RgbdCamera, "camera"),
        "imu": (Imu, "imu"),
        "gnss": (Gnss, "gnss"),  # upstream says "imu" here: a bug we do not copy
    }


@pytest.mark.parametrize("cls_name, cls", [("laser", Lidar2D), ("lidar3d", Lidar3D), ("camera", Camera),
                                           ("rgbd_camera", RgbdCamera), ("imu", Imu), ("gnss", Gnss)])
def test_class_attribute_selects_the_class(make_sensor, cls_name, cls):
    s, ctx = make_sensor(f'<sensor class="{cls_name}"/>')
    assert type(s) is cls
    assert s.xml_class == cls_name
    assert s.last is None
    assert ctx.warnings == []


def test_base_from_xml_dispatches(tmp_path):
    node = parse_text('<sensor class="imu" name="i"/>', file=str(tmp_path / "x.xml"))[0]
    assert isinstance(Sensor.from_xml(node, ParseContext(env={}), "r1"), Imu)


def test_unknown_class_is_an_error_naming_it_and_listing_known_classes(make_sensor, xml_file):
    with pytest.raises(WorldFileError) as e:
        make_sensor('<sensor name="s"\n        class="sonar"/>')
    assert e.value.file == xml_file
    assert e.value.line == 2  # the line of the class attribute
    msg = e.value.message
    assert '"sonar"' in msg
    for known in ("camera", "gnss", "imu", "laser", "lidar3d", "rgbd_camera"):
        assert known in msg


def test_missing_class_is_an_error(make_sensor, xml_file):
    with pytest.raises(WorldFileError) as e:
        make_sensor('\n<sensor name="s"/>')
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert 'class="..."' in e.value.message and "laser" in e.value.message


# ---------------------------------------------------------------------- names
def test_default_names_count_per_prefix():
    ctx = ParseContext(env={})
    made = [sensor_from_xml(parse_text(f'<sensor class="{c}"/>', file="<t>")[0], ctx, "r1")
            for c in ("laser", "laser", "camera", "lidar3d", "rgbd_camera", "imu", "gnss", "gnss")]
    assert [s.name for s in made] == ["laser1", "laser2", "camera1", "laser3", "camera2", "imu1", "gnss1", "gnss2"]


def test_empty_name_gets_the_default(make_sensor):
    s, _ = make_sensor('<sensor class="camera" name=""/>')
    assert s.name == "camera1"


def test_explicit_name_does_not_use_a_number(make_sensor):
    ctx = ParseContext(env={})
    s1, _ = make_sensor('<sensor class="laser" name="front"/>', ctx=ctx)
    s2, _ = make_sensor('<sensor class="laser"/>', ctx=ctx)
    assert (s1.name, s2.name) == ("front", "laser1")


def test_name_substitutes_parent_name_and_user_variables(make_sensor):
    ctx = ParseContext(env={}, variables={"side": "left"})
    s, _ = make_sensor('<sensor class="laser" name="${PARENT_NAME}_${side}"/>', parent="r7", ctx=ctx)
    assert s.name == "r7_left"
    assert s.parent == "r7"


# ---------------------------------------------------------------------- NAME / PARENT_NAME in values, publish
def test_publish_topic_resolves_parent_and_name(make_sensor):
    s, ctx = make_sensor('<sensor class="laser" name="scan">\n'
                         '  <publish enabled="true"><publish_topic>/${PARENT_NAME}/${NAME}</publish_topic></publish>\n'
                         '</sensor>', parent="r1")
    assert s.publish_topic == "/r1/scan"
    assert ctx.warnings == []


def test_publish_enabled_by_default_and_default_name_available_as_name(make_sensor):
    s, _ = make_sensor('<sensor class="laser"><publish><publish_topic>/${NAME}</publish_topic></publish></sensor>',
                       parent="")
    assert s.name == "laser1"
    assert s.parent == ""
    assert s.publish_topic == "/laser1"


@pytest.mark.parametrize("body", [
    "",
    '<publish enabled="false"><publish_topic>/x</publish_topic></publish>',
    '<publish enabled="0"><publish_topic>/x</publish_topic></publish>',
    "<publish><publish_topic></publish_topic></publish>",
])
def test_no_publish_topic(make_sensor, body):
    s, _ = make_sensor(f'<sensor class="imu">{body}</sensor>')
    assert s.publish_topic is None


def test_publish_enabled_substitutes_and_bad_bool_is_located(make_sensor, xml_file):
    ctx = ParseContext(env={}, variables={"pub": "true"})
    s, _ = make_sensor('<sensor class="imu"><publish enabled="${pub}"><publish_topic>t</publish_topic></publish>'
                       '</sensor>', ctx=ctx)
    assert s.publish_topic == "t"
    with pytest.raises(WorldFileError) as e:
        make_sensor('<sensor class="imu">\n  <publish\n     enabled="maybe"/>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 3)
    assert "maybe" in e.value.message


def test_every_value_sees_name_and_parent_name(make_sensor):
    s, _ = make_sensor('<sensor class="gnss" name="g">'
                       "<save_to_rawlog>${PARENT_NAME}-${NAME}.rawlog</save_to_rawlog></sensor>", parent="car")
    assert s.params["save_to_rawlog"] == "car-g.rawlog"


# ---------------------------------------------------------------------- period
def test_period_default_and_value(make_sensor):
    s, _ = make_sensor('<sensor class="imu"/>')
    assert s.period == 0.1
    assert s.rate == pytest.approx(10.0)
    s, _ = make_sensor('<sensor class="imu"><sensor_period>$f{1/200.0}</sensor_period></sensor>')
    assert s.period == pytest.approx(0.005)


@pytest.mark.parametrize("value", ["0", "-0.1", "abc"])
def test_bad_period_is_located(make_sensor, xml_file, value):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="camera">\n\n  <sensor_period>{value}</sensor_period>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 3)
    assert "sensor_period" in e.value.message


# ---------------------------------------------------------------------- pose
@pytest.mark.parametrize("cls_name, pose", [
    ("laser", (0, 0, 0.05, 0, 0, 0)),
    ("lidar3d", (0, 0, 0, 0, 0, 0)),
    ("camera", (0, 0, 0.5, D(90), 0, D(90))),
    ("rgbd_camera", (0, 0, 0.5, D(90), 0, D(90))),
    ("imu", (0, 0, 0, 0, 0, 0)),
    ("gnss", (0, 0, 0, 0, 0, 0)),
])
def test_default_pose_per_class(make_sensor, cls_name, pose):
    s, _ = make_sensor(f'<sensor class="{cls_name}"/>')
    assert s.pose == pytest.approx(pose)


def test_pose_3d_in_degrees_stored_in_radians(make_sensor):
    s, _ = make_sensor('<sensor class="camera"><pose_3d>1 2 3 -90 10 -90</pose_3d></sensor>')
    assert s.pose == pytest.approx((1, 2, 3, D(-90), D(10), D(-90)))


@pytest.mark.parametrize("body", ["<pose>1 2 30</pose><height>0.4</height>",
                                  "<height>0.4</height><pose>1 2 30</pose>"])
def test_pose_2d_plus_height_in_any_order(make_sensor, body):
    s, _ = make_sensor(f'<sensor class="laser">{body}</sensor>')
    assert s.pose == pytest.approx((1, 2, 0.4, D(30), 0, 0))


def test_pose_2d_keeps_default_height(make_sensor):
    s, _ = make_sensor('<sensor class="laser"><pose>1 2 30</pose></sensor>')
    assert s.pose == pytest.approx((1, 2, 0.05, D(30), 0, 0))


def test_later_pose_tag_wins(make_sensor):
    s, _ = make_sensor('<sensor class="imu"><pose>1 2 30</pose><pose_3d>4 5 6 7 8 9</pose_3d></sensor>')
    assert s.pose == pytest.approx((4, 5, 6, D(7), D(8), D(9)))


def test_pose_tag_not_read_by_the_class_is_warned(make_sensor, xml_file):
    s, ctx = make_sensor('<sensor class="lidar3d">\n  <pose>1 2 3</pose>\n</sensor>')
    assert s.pose == (0, 0, 0, 0, 0, 0)
    assert ctx.warnings == [f"{xml_file}:2: unknown tag <pose> in <sensor class=\"lidar3d\"> is ignored"]


def test_bad_pose_is_located(make_sensor, xml_file):
    with pytest.raises(WorldFileError) as e:
        make_sensor('<sensor class="camera">\n  <pose_3d>1 2 3</pose_3d>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert "pose_3d" in e.value.message


# ---------------------------------------------------------------------- unknown tags, visuals, summary
def test_unknown_tag_is_warned_once_with_location(make_sensor, xml_file):
    _, ctx = make_sensor('<sensor class="imu">\n  <colour>red</colour>\n</sensor>')
    assert ctx.warnings == [f'{xml_file}:2: unknown tag <colour> in <sensor class="imu"> is ignored']


def test_unknown_tag_in_publish_is_warned(make_sensor, xml_file):
    _, ctx = make_sensor('<sensor class="imu"><publish>\n<topic>/x</topic></publish></sensor>')
    assert ctx.warnings == [f"{xml_file}:2: unknown tag <topic> in <publish> of a sensor is ignored"]


def test_visuals_are_parsed_and_disabled_ones_dropped(make_sensor):
    s, ctx = make_sensor('<sensor class="imu"><visual><model_scale>2</model_scale></visual>'
                         '<visual enabled="false"><model_scale>3</model_scale></visual></sensor>')
    assert len(s.visuals) == 1
    assert s.visuals[0].params["model_scale"] == 2.0
    assert ctx.warnings == []


def test_visual_sees_sensor_name(make_sensor, no_model_loading):
    s, _ = make_sensor('<sensor class="imu" name="i9"><visual><model_uri>${NAME}.dae</model_uri></visual></sensor>')
    assert [v.uri for v in s.visuals] == ["i9.dae"]


def test_summary_and_repr(make_sensor):
    s, _ = make_sensor('<sensor class="laser" name="laser1"><sensor_period>0.05</sensor_period></sensor>')
    assert s.summary() == "laser1 (laser, 181 rays, 180°, 20 Hz)"
    assert "laser1" in repr(s) and "on r1" in repr(s)
    s, _ = make_sensor('<sensor class="imu" name="i"/>')
    assert s.summary() == "i (imu, 10 Hz)"

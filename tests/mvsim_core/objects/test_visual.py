"""<visual> (§1.14): parameters, the model-to-object transform, bounds of a local mesh, missing and disabled models."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.objects.visual import parse_visual, parse_visuals
from mvsim_core.xml.context import ParseContext

CAMERA_BOUNDS = [[-0.04, -0.04, -0.1163637], [0.04, 0.04, 0.0036363]]  # simple_camera.dae as read


def visual(nodes, text, ctx=None, **kw):
    ctx = ctx or ParseContext()
    return parse_visual(nodes(text)[0], ctx, **kw), ctx


def test_defaults(nodes):
    v, ctx = visual(nodes, "<visual/>")
    p = v.params
    assert (v.uri, v.path, v.bounds, v.enabled) == ("", None, None, True)
    assert (p["model_scale"], p["model_offset_x"], p["model_yaw"], p["name"]) == (1.0, 0.0, 0.0, "group")
    assert (p["show_bounding_box"], p["model_color"], p["model_cull_faces"]) == (False, (255, 255, 255, 255), "NONE")
    assert v.transform().tolist() == np.eye(4).tolist() and ctx.warnings == []


def test_transform_scale_offset_yaw(nodes):
    v, _ = visual(nodes, "<visual><model_scale>2</model_scale><model_offset_x>1</model_offset_x>"
                         "<model_offset_y>2</model_offset_y><model_offset_z>3</model_offset_z>"
                         "<model_yaw>90</model_yaw></visual>")
    assert v.params["model_yaw"] == pytest.approx(math.pi / 2)
    assert v.transform() == pytest.approx(np.array([[0, -2, 0, 1], [2, 0, 0, 2], [0, 0, 2, 3], [0, 0, 0, 1]]))


@pytest.mark.parametrize(("tag", "rot"), [
    ("model_pitch", [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
    ("model_roll", [[1, 0, 0], [0, 0, -1], [0, 1, 0]]),
])
def test_pitch_and_roll(nodes, tag, rot):
    v, _ = visual(nodes, f"<visual><{tag}>90</{tag}></visual>")
    assert v.transform()[:3, :3] == pytest.approx(np.array(rot, dtype=float))


def test_bounds_of_local_mesh(nodes, worlds_dir):
    dae = worlds_dir / "models" / "simple_camera.dae"
    v, ctx = visual(nodes, f"<visual><model_uri>{dae}</model_uri></visual>")
    assert v.path == dae and ctx.missing_assets == {}
    assert v.bounds == pytest.approx(np.array(CAMERA_BOUNDS), abs=1e-6)
    v2, _ = visual(nodes, f"<visual><model_uri>{dae}</model_uri><model_scale>2</model_scale>"
                          "<model_offset_z>1</model_offset_z><model_yaw>90</model_yaw></visual>")
    assert v2.bounds == pytest.approx(np.array([[-0.08, -0.08, 1 - 0.2327274], [0.08, 0.08, 1.0072727]]), abs=1e-6)
    assert len(v2.mesh().vertices) == len(v.mesh().vertices)


def test_relative_uri_and_scale_override(nodes, worlds_dir, tmp_path):
    (tmp_path / "models").mkdir()
    shutil.copy(worlds_dir / "models" / "simple_camera.dae", tmp_path / "models" / "cam.dae")
    v, _ = visual(nodes, "<visual><model_uri>models/cam.dae</model_uri><model_scale>5</model_scale></visual>",
                  scale_override=0.5)
    assert v.uri == "models/cam.dae" and v.path == tmp_path / "models" / "cam.dae"
    assert v.params["model_scale"] == 0.5 and v.bounds[1, 2] == pytest.approx(0.5 * 0.0036363, abs=1e-6)
    v, _ = visual(nodes, "<visual><model_scale>5</model_scale></visual>", scale_override=math.nan)
    assert v.params["model_scale"] == 5.0


def test_missing_model_is_reported_once(nodes, tmp_path):
    ctx = ParseContext()
    v, _ = visual(nodes, "<visual>\n<model_uri>ghost.obj</model_uri></visual>", ctx=ctx)
    visual(nodes, "<visual>\n<model_uri>ghost.obj</model_uri></visual>", ctx=ctx)
    assert (v.uri, v.path, v.bounds, v.mesh()) == ("ghost.obj", None, None, None)
    assert ctx.missing_assets == {"ghost.obj": f"file not found: {tmp_path / 'ghost.obj'}"}
    assert ctx.warnings == [f"{tmp_path / 'w.xml'}:1: asset not available: ghost.obj (file not found: "
                            f"{tmp_path / 'ghost.obj'}); using a bounding-box stand-in"]


def test_enabled_attribute_and_unknown_child(nodes):
    assert visual(nodes, '<visual enabled="false"><model_uri>x.dae</model_uri></visual>')[0] is None
    (obj,) = nodes('<obj><visual enabled="0"/><visual><name>a</name></visual><visual enabled="1"><name>b</name>'
                   "</visual>\n<visual>\n<model_size>2</model_size></visual></obj>")
    ctx = ParseContext()
    assert [v.params["name"] for v in parse_visuals(obj, ctx)] == ["a", "b", "group"]
    assert len(ctx.warnings) == 1 and ctx.warnings[0].endswith(":3: unknown tag <model_size> in <visual> is ignored")
    with pytest.raises(WorldFileError) as ei:
        visual(nodes, '<visual\n enabled="maybe"/>')
    assert ei.value.line == 2
    assert ei.value.message == "bad bool 'maybe' for enabled=\"...\" of <visual>; expected true, false, 1 or 0"

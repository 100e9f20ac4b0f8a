"""Blocks (§1.10): defaults, class/instance lookup, footprints from <shape>/<geometry>/<shape_from_visual/>, walls."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.polygons import signed_area
from mvsim_core.io.meshes import load_mesh
from mvsim_core.objects.block import WALL_MASS, build_block, wall_block
from mvsim_core.xml.context import ParseContext

SQUARE = [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]


def test_defaults_and_default_names(load):
    w = load('<block><init_pose>1 2 90</init_pose></block>\n<block name="crate"><init_pose>0 0 0</init_pose>'
             '</block>\n<block><init_pose>0 0 0</init_pose></block>')
    assert list(w.blocks) == ["block001", "crate", "block002"]
    b = w.blocks["block001"]
    p = b.params
    assert (p.mass, p.ground_friction, p.lateral_friction, p.restitution) == (30.0, 0.5, 0.5, 0.01)
    assert (p.linear_damping, p.angular_damping, p.color) == (0.1, 0.1, (0, 0, 255, 255))
    assert not b.is_static and not b.is_intangible and b.geometry is None and b.class_name == ""
    assert b.footprint.tolist() == SQUARE and (b.zmin, b.zmax) == (0.0, 1.0)
    assert b.pose == pytest.approx((1.0, 2.0, 0.0, math.pi / 2, 0.0, 0.0))
    assert b.summary() == "block001: dynamic 4-gon, z 0..1 m, at (1, 2, 90°)"


def test_instance_wins_over_class(load):
    w = load('<block:class name="pallet"><mass>12</mass><static>true</static><color>#ff8000</color>\n'
             '<geometry type="box" lx="1.2" ly="0.8" lz="0.15"/></block:class>\n'
             '<block name="p1" class="pallet"><mass>5</mass><intangible>1</intangible><init_pose>3 0 0</init_pose>'
             '</block>')
    b = w.blocks["p1"]
    assert b.class_name == "pallet" and b.params.mass == 5.0 and b.is_static and b.is_intangible
    assert b.params.color == (255, 128, 0, 255) and b.geometry.type == "box" and b.zmax == 0.15
    assert b.summary() == "p1 [pallet]: intangible box, z 0..0.15 m, at (3, 0, 0°)"


@pytest.mark.parametrize(("geo", "footprint", "zmax"), [
    ('type="box" lx="2" ly="1" lz="0.7"', [[0, 0], [2, 0], [2, 1], [0, 1]], 0.7),
    ('type="ramp" lx="3" ly="2" lz="0.4"', [[0, 0], [3, 0], [3, 2], [0, 2]], 0.4),
    ('type="semi_cylinder_bump" lx="1" ly="2" lz="0.1"', [[0, -1], [1, -1], [1, 1], [0, 1]], 0.1),
])
def test_box_like_geometry(load, geo, footprint, zmax):
    b = load(f'<block name="g"><init_pose>0 0 0</init_pose><geometry {geo}/></block>').blocks["g"]
    assert b.footprint.tolist() == footprint and (b.zmin, b.zmax) == (0.0, zmax)


def test_round_geometry(load):
    w = load('<block name="c"><init_pose>0 0 0</init_pose><geometry type="cylinder" radius="0.4" length="1.2"/>'
             '</block>\n<block name="s"><init_pose>0 0 0</init_pose><zmax>0.5</zmax>'
             '<geometry type="sphere" radius="0.3" vertex_count="6"/></block>')
    c, s = w.blocks["c"], w.blocks["s"]
    assert c.footprint.shape == (10, 2) and c.footprint[0] == pytest.approx((0.4, 0.0))
    assert np.hypot(*c.footprint.T) == pytest.approx(np.full(10, 0.4))
    assert signed_area(c.footprint) > 0 and (c.zmin, c.zmax) == (0.0, 1.2)
    assert s.footprint.shape == (6, 2) and s.footprint[1] == pytest.approx((0.15, 0.3 * math.sqrt(3) / 2))
    assert s.geometry.height() == pytest.approx(0.6) and s.zmax == 0.5  # an explicit <zmax> wins


@pytest.mark.parametrize(("geo", "message"), [
    ('type="box" lx="1" ly="1"', '<geometry type="box"> needs the attribute lz="..." (m)'),
    ('type="cone" radius="1"', "unknown geometry type 'cone'; known: cylinder, sphere, box, ramp, semi_cylinder_bump"),
    ('type="box" lx="1" ly="-2" lz="1"', 'ly="..." of <geometry> must be greater than 0 (got -2)'),
    ('type="cylinder" radius="1" length="1" vertex_count="2"',
     'vertex_count="..." of <geometry> must be at least 3 (got 2)'),
    ('type="cylinder" radius="1" length="1" vertex_count="1e9"',
     'vertex_count="..." of <geometry> must be at most 360 (got 1e9)'),
    ('type="box" lx="inf" ly="1" lz="1"',
     "bad number 'inf' for lx=\"...\" of <geometry> (not a finite number); expected a number such as 1.5"),
])
def test_geometry_errors(load, geo, message):
    with pytest.raises(mv.WorldFileError) as ei:
        load(f'<block name="g">\n<init_pose>0 0 0</init_pose>\n<geometry {geo}/>\n</block>')
    assert ei.value.line == 4 and message in ei.value.message


def test_clockwise_shape_becomes_ccw(load):
    w = load('<block name="cw"><init_pose>0 0 0</init_pose><shape><pt>0 0</pt><pt>0 1</pt><pt>2 1</pt><pt>2 0</pt>'
             '</shape></block>\n<block name="ccw"><init_pose>0 0 0</init_pose><shape><pt>0 0</pt><pt>2 0</pt>'
             '<pt>0 1</pt></shape></block>')
    assert w.blocks["cw"].footprint.tolist() == [[2, 0], [2, 1], [0, 1], [0, 0]]
    assert signed_area(w.blocks["cw"].footprint) == 2.0
    assert w.blocks["ccw"].footprint.tolist() == [[0, 0], [2, 0], [0, 1]]


@pytest.mark.parametrize(("shape", "line", "message"), [
    ("<pt>0 0</pt><pt>1 0</pt>", 4, "<shape> needs at least 3 <pt>x y</pt> points, got 2"),
    ("<pt>0 0</pt><pt>1 1</pt><pt>2 2</pt>", 4, "<shape> has zero area (its points are on one line)"),
])
def test_shape_errors(load, shape, line, message):
    with pytest.raises(mv.WorldFileError) as ei:
        load(f'<block name="b">\n<init_pose>0 0 0</init_pose>\n<shape>{shape}</shape>\n</block>')
    assert ei.value.line == line and message in ei.value.message


def test_zmax_below_zmin(load):
    with pytest.raises(mv.WorldFileError) as ei:
        load('<block name="b">\n<init_pose>0 0 0</init_pose>\n<zmin>1</zmin>\n<zmax>0.5</zmax>\n</block>')
    assert ei.value.line == 5 and ei.value.message == "block 'b': zmax (0.5 m) is below zmin (1 m)"


def test_missing_pose_and_unknown_tag(load):
    with pytest.raises(mv.WorldFileError, match="block 'block001' has no <init_pose>"):
        load("<block>\n<mass>3</mass>\n</block>")
    w = load('<block name="b"><init_pose>0 0 0</init_pose>\n<weight>3</weight></block>')
    assert w.warnings == [f"{w.path}:3: unknown tag <weight> in <block> is ignored"]


def test_walls_become_heavy_static_blocks(load):
    w = load("<walls><color>#404040</color><wallThickness>0.2</wallThickness><wallHeight>2</wallHeight>"
             "<shape><pt>0 0</pt><pt>4 0</pt></shape></walls>")
    b = w.blocks["wall_0001"]
    assert b.params.mass == WALL_MASS == 1e5 and b.params.ground_friction == 1e5 and b.is_static
    assert (b.zmin, b.zmax, b.params.color) == (0.0, 2.0, (0x40, 0x40, 0x40, 255))
    assert b.params.restitution == 0.01 and b.footprint.shape == (4, 2)


def test_wall_block_from_segment():
    seg = SimpleNamespace(name="wall_0007", color=(1, 2, 3, 255), zmin=0.0, zmax=2.5,
                          polygon=[(0, 0), (1, 0), (1, 0.1), (0, 0.1)])
    b = wall_block(seg, None)
    assert b.name == "wall_0007" and b.is_static and not b.is_intangible
    assert (b.params.mass, b.params.zmax, b.params.color, b.zmax) == (1e5, 2.5, (1, 2, 3, 255), 2.5)
    assert b.footprint.tolist() == [[0, 0], [1, 0], [1, 0.1], [0, 0.1]] and b.pose == (0.0,) * 6


def test_shape_from_visual_local_mesh(load, worlds_dir):
    dae = worlds_dir / "models" / "jackal_description" / "jackal.dae"
    w = load(f'<block name="j"><init_pose>0 0 0</init_pose><visual><model_uri>{dae}</model_uri>'
             f'<model_offset_z>0.215</model_offset_z></visual><shape_from_visual/></block>')
    b = w.blocks["j"]
    assert w.warnings == [] and (b.zmin, b.zmax) == pytest.approx((0.0, 0.43), abs=1e-6)
    fp = b.footprint
    assert fp.min(axis=0) == pytest.approx((-0.251549, 0.0655), abs=1e-5)
    assert fp.max(axis=0) == pytest.approx((0.251549, 0.2495), abs=1e-5)
    # the footprint is the convex hull of the mesh's XY points: CCW, convex, contains them all, made of them
    pts = load_mesh(dae).vertices[:, :2]
    edges = np.roll(fp, -1, axis=0) - fp
    for p0, e in zip(fp, edges, strict=True):
        assert np.all(e[0] * (pts[:, 1] - p0[1]) - e[1] * (pts[:, 0] - p0[0]) >= -1e-9)
    assert all(np.min(np.hypot(*(pts - v).T)) < 1e-9 for v in fp)
    assert signed_area(fp) > 0


def test_z_range_from_visual_without_shape(load, worlds_dir):
    dae = worlds_dir / "models" / "jackal_description" / "jackal.dae"
    w = load(f'<block name="j"><init_pose>0 0 0</init_pose><visual_scale>2</visual_scale>'
             f'<visual><model_uri>{dae}</model_uri></visual></block>')
    b = w.blocks["j"]
    assert b.footprint.tolist() == SQUARE and b.visuals[0].params["model_scale"] == 2.0
    assert (b.zmin, b.zmax) == pytest.approx((-0.43, 0.43), abs=1e-6)


STAND_IN = [[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]]
NOTHING_TO_MEASURE = ("<shape_from_visual/>: block 'b' has no visual model to measure; it stands in as a 0.1 m "
                      "intangible square (nothing collides with it); give it a <shape> or <geometry> to make it solid")


def test_shape_from_visual_missing_model(load, tmp_path):
    w = load('<block name="b"><init_pose>0 0 0</init_pose>\n<visual><model_uri>nothere.dae</model_uri></visual>\n'
             "<shape_from_visual/></block>")
    b = w.blocks["b"]
    assert b.footprint.tolist() == STAND_IN and (b.zmin, b.zmax) == (0.0, 1.0) and b.is_intangible
    assert w.missing_assets == {"nothere.dae": f"file not found: {tmp_path / 'nothere.dae'}"}
    assert w.warnings[-1] == (f"{w.path}:4: {NOTHING_TO_MEASURE}")


def test_build_block_directly_warns_in_context(nodes):
    (inst,) = nodes('<block name="b"><init_pose>0 0 0</init_pose><shape_from_visual/></block>')
    ctx = ParseContext()
    b = build_block([inst], ctx, name="b")
    assert b.footprint.tolist() == STAND_IN and b.node is inst and b.is_intangible
    assert len(ctx.warnings) == 1 and ctx.warnings[0].endswith(f":1: {NOTHING_TO_MEASURE}")

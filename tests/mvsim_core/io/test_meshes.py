"""Mesh loading (COLLADA axes/units, trimesh formats, cache) and derived 2D shapes (walls, footprints, z range)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from mvsim_core.errors import AssetError
from mvsim_core.geometry.polygons import signed_area
from mvsim_core.io.meshes import (
    Mesh,
    clear_mesh_cache,
    convex_footprint,
    convex_hull_2d,
    load_mesh,
    wireframe_segments,
    z_range,
)

# Box [0,2] x [0,1] x [0,3] (distinct extents so that axis swaps are visible).
BOX_V = [(0, 0, 0), (2, 0, 0), (2, 1, 0), (0, 1, 0), (0, 0, 3), (2, 0, 3), (2, 1, 3), (0, 1, 3)]
BOX_T = [
    (0, 2, 1), (0, 3, 2),  # bottom
    (4, 5, 6), (4, 6, 7),  # top
    (0, 1, 5), (0, 5, 4),  # y = 0
    (1, 2, 6), (1, 6, 5),  # x = 2
    (2, 3, 7), (2, 7, 6),  # y = 1
    (3, 0, 4), (3, 4, 7),  # x = 0
]  # fmt: skip


def write_dae(path: Path, up: str = "Z_UP", meter: float = 1.0, translate=(0.0, 0.0, 0.0), lines=None) -> Path:
    pos = " ".join(f"{c:g}" for v in BOX_V for c in v)
    tris = " ".join(str(i) for t in BOX_T for i in t)
    line_xml = ""
    if lines:
        line_xml = (
            f'<lines count="{len(lines)}"><input semantic="VERTEX" source="#v" offset="0"/>'
            f"<p>{' '.join(str(i) for ln in lines for i in ln)}</p></lines>"
        )
    tx, ty, tz = translate
    path.write_text(
        f"""<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="u" meter="{meter}"/><up_axis>{up}</up_axis></asset>
  <library_geometries><geometry id="g" name="g"><mesh>
    <source id="pos"><float_array id="pos-a" count="{3 * len(BOX_V)}">{pos}</float_array>
      <technique_common><accessor source="#pos-a" count="{len(BOX_V)}" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
      </accessor></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#pos"/></vertices>
    <triangles count="{len(BOX_T)}"><input semantic="VERTEX" source="#v" offset="0"/><p>{tris}</p></triangles>
    {line_xml}
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n">
    <matrix>1 0 0 {tx} 0 1 0 {ty} 0 0 1 {tz} 0 0 0 1</matrix><instance_geometry url="#g"/>
  </node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"""
    )
    return path


def test_box_topology_and_native_axes(tmp_path):
    m = load_mesh(write_dae(tmp_path / "box.dae"), collada_axes="native")
    assert m.vertices.shape == (8, 3) and m.faces.shape == (12, 3)
    assert m.edges.shape == (18, 2)  # 12 box edges + 6 face diagonals
    assert m.line_edges.shape == (0, 2)
    np.testing.assert_allclose(m.bounds, [[0, 0, 0], [2, 1, 3]])
    assert np.all(m.edges[:, 0] < m.edges[:, 1])


@pytest.mark.parametrize(
    "up, axes, expected",
    [
        ("Z_UP", "assimp", [[0, 0, -1], [2, 3, 0]]),  # (x, y, z) -> (x, z, -y)
        ("Y_UP", "assimp", [[0, 0, 0], [2, 1, 3]]),  # unchanged
        ("X_UP", "assimp", [[-1, 0, 0], [0, 2, 3]]),  # (x, y, z) -> (-y, x, z)
        ("Z_UP", "z_up", [[0, 0, 0], [2, 1, 3]]),
        ("Y_UP", "z_up", [[0, -3, 0], [2, 0, 1]]),  # (x, y, z) -> (x, -z, y)
        ("Y_UP", "native", [[0, 0, 0], [2, 1, 3]]),
    ],
)
def test_collada_up_axis_policies(tmp_path, up, axes, expected):
    m = load_mesh(write_dae(tmp_path / f"{up}.dae", up=up), collada_axes=axes)
    np.testing.assert_allclose(m.bounds, expected, atol=1e-12)


def test_unit_node_transform_and_scale(tmp_path):
    p = write_dae(tmp_path / "cm.dae", up="Y_UP", meter=0.01, translate=(100, 0, 0))
    m = load_mesh(p, scale=2.0)
    # node translation (file units) then unit 0.01 m, then scale 2
    np.testing.assert_allclose(m.bounds, [[2.0, 0.0, 0.0], [2.04, 0.02, 0.06]], atol=1e-9)


def test_mesh_cache_and_invalidation(tmp_path):
    clear_mesh_cache()
    p = write_dae(tmp_path / "c.dae", up="Y_UP")
    a = load_mesh(p)
    assert load_mesh(str(p)) is a  # same resolved path + mtime -> same object
    assert load_mesh(tmp_path / "." / "c.dae") is a
    assert load_mesh(p, scale=2.0) is not a
    with pytest.raises(ValueError):
        a.vertices[0, 0] = 5.0  # shared cached arrays are read-only
    write_dae(p, up="Y_UP", translate=(1, 0, 0))
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    b = load_mesh(p)
    assert b is not a and b.bounds[0, 0] == pytest.approx(1.0)


def test_transformed(tmp_path):
    m = load_mesh(write_dae(tmp_path / "t.dae", up="Y_UP"))
    rot_z90 = np.array([[0, -1, 0, 10], [1, 0, 0, 0], [0, 0, 1, 0.5], [0, 0, 0, 1]], dtype=float)
    t = m.transformed(rot_z90)
    np.testing.assert_allclose(t.bounds, [[9, 0, 0.5], [10, 2, 3.5]])
    np.testing.assert_allclose(m.bounds, [[0, 0, 0], [2, 1, 3]])  # original untouched
    assert t.faces is m.faces and t.edges is m.edges
    with pytest.raises(ValueError, match="4x4"):
        m.transformed(np.eye(3))


def test_footprint_and_z_range(tmp_path):
    m = load_mesh(write_dae(tmp_path / "f.dae", up="Y_UP"))
    fp = convex_footprint(m)
    assert fp.shape == (4, 2)
    assert signed_area(fp) == pytest.approx(2.0)  # positive = counter-clockwise, 2 x 1 m
    assert z_range(m) == (0.0, 3.0)


def test_footprint_degenerate_is_bounding_rectangle():
    m = Mesh.from_arrays(np.array([[0, 0, 0], [1, 1, 0], [2, 2, 1.0]]), lines=np.array([[0, 1], [1, 2]]))
    np.testing.assert_allclose(convex_footprint(m), [[0, 0], [2, 0], [2, 2], [0, 2]])


@pytest.mark.parametrize("kind", ["normal", "grid", "circle", "segment"])
def test_convex_hull_2d_with_octagon_filter(kind, monkeypatch):
    """The hull with Akl–Toussaint's pre-filter (the extreme points' octagon drops the inner points first) equals
    the plain monotone chain's, vertex for vertex, on sets with many ties and collinear runs; and the filter drops
    most points of a large set."""
    import mvsim_core.io.meshes as meshes
    rng = np.random.default_rng(3)
    for _ in range(20):
        if kind == "normal":
            pts = rng.normal(size=(400, 2))
        elif kind == "grid":
            pts = rng.integers(0, 6, size=(400, 2)).astype(float)
        elif kind == "circle":
            t = rng.integers(0, 36, 400) * np.pi / 18
            pts = np.round(np.c_[np.cos(t), np.sin(t)], 9)
        else:
            pts = np.c_[rng.integers(0, 50, 400), np.zeros(400)].astype(float) + [1.0, 2.0]
        hull = convex_hull_2d(pts)
        if kind == "segment":  # all collinear: the bounding rectangle
            x0, x1 = pts[:, 0].min(), pts[:, 0].max()
            np.testing.assert_allclose(hull, [[x0, 2], [x1, 2], [x1, 2], [x0, 2]])
            continue
        with monkeypatch.context() as m:
            m.setattr(meshes, "_outside_octagon", lambda p: p)
            plain = convex_hull_2d(pts)
        np.testing.assert_array_equal(hull, plain)
        assert signed_area(hull) > 0
    if kind == "normal":
        p = np.unique(rng.normal(size=(3000, 2)), axis=0)
        assert len(meshes._outside_octagon(p)) < 0.2 * len(p)


def test_wireframe_of_triangle_box_drops_vertical_and_duplicate_edges(tmp_path):
    m = load_mesh(write_dae(tmp_path / "w.dae", up="Y_UP"))
    seg = wireframe_segments(m)  # no line primitives -> all edges
    # 4 rectangle sides (top/bottom coincide, side-face diagonals fall on them) + the top/bottom diagonal
    assert seg.shape == (5, 2, 2)
    assert wireframe_segments(m, source="lines").shape == (0, 2, 2)
    lengths = sorted(np.round(np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1), 6))
    assert lengths == [1.0, 1.0, 2.0, 2.0, round(float(np.hypot(2, 1)), 6)]


def test_lines_take_precedence_in_auto_mode(tmp_path):
    m = load_mesh(write_dae(tmp_path / "l.dae", up="Y_UP", lines=[(0, 1), (1, 0), (4, 5), (0, 4)]))
    assert m.line_edges.shape == (3, 2)  # (0,1) and (1,0) are the same undirected edge
    seg = wireframe_segments(m)
    # (0,1) and (1,0) are one edge; (4,5) projects onto it; (0,4) is vertical -> degenerate
    assert seg.shape == (1, 2, 2)
    np.testing.assert_allclose(sorted(seg[0].tolist()), [[0, 0], [2, 0]])


def test_test_walls_dae(worlds_dir):
    m = load_mesh(worlds_dir / "mvsim_tutorial" / "testWalls.dae")
    assert m.faces.shape == (0, 3)
    assert m.line_edges.shape == (7, 2)
    seg = wireframe_segments(m)
    assert seg.shape == (7, 2, 2)
    np.testing.assert_allclose(seg.reshape(-1, 2).min(axis=0), [-4.0, 0.0])
    np.testing.assert_allclose(seg.reshape(-1, 2).max(axis=0), [16.0, 4.0])
    np.testing.assert_allclose(seg[0], [[-4, 0], [16, 0]])  # file order kept: the long wall first
    lengths = np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1)
    assert lengths.sum() == pytest.approx(20 + 2.6 + 5 * 4, abs=1e-5)
    # every wall is axis-aligned
    assert np.all((np.abs(seg[:, 0, 0] - seg[:, 1, 0]) < 1e-9) | (np.abs(seg[:, 0, 1] - seg[:, 1, 1]) < 1e-9))
    assert wireframe_segments(m, z_min=0.5).shape == (0, 2, 2)
    assert wireframe_segments(m, z_min=0.0).shape == (7, 2, 2)


def rot_x(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])


def test_shipped_models(worlds_dir):
    files = sorted((worlds_dir / "models").rglob("*.dae"))
    assert len(files) == 8
    for f in files:
        m = load_mesh(f)
        assert np.all(np.isfinite(m.bounds)), f
        size = m.bounds[1] - m.bounds[0]
        assert 0.005 < size.max() < 1.0, (f, size)
        assert m.faces.shape[0] > 0, f
    jackal = load_mesh(worlds_dir / "models" / "jackal_description" / "jackal.dae")
    assert jackal.bounds[1, 0] - jackal.bounds[0, 0] == pytest.approx(0.504, abs=0.01)  # ~0.5 m long
    # jackal.vehicle.xml uses <model_roll>90</model_roll>, which makes the Assimp-frame model upright again
    upright = jackal.transformed(rot_x(90))
    assert z_range(upright) == pytest.approx((0.065, 0.25), abs=0.002)
    assert upright.bounds[1, 1] - upright.bounds[0, 1] == pytest.approx(0.43, abs=0.01)
    # the Hokuyo is used without any rotation and is upright (0..8.7 cm) only in the Assimp frame
    hokuyo = load_mesh(worlds_dir / "models" / "hokuyo_utm30.dae")
    assert z_range(hokuyo) == pytest.approx((0.0, 0.087), abs=0.001)
    wheel = load_mesh(worlds_dir / "models" / "jackal_description" / "jackal-wheel.dae")
    assert wheel.bounds[1, 0] - wheel.bounds[0, 0] == pytest.approx(0.2, abs=0.005)  # 0.2 m diameter
    assert wheel.bounds[1, 1] - wheel.bounds[0, 1] == pytest.approx(0.05, abs=0.005)  # axle along y


def test_many_robots_load_fast(worlds_dir):
    clear_mesh_cache()
    t0 = time.perf_counter()
    for _ in range(25):
        load_mesh(worlds_dir / "models" / "jackal_description" / "jackal.dae")
        for _ in range(4):
            load_mesh(worlds_dir / "models" / "jackal_description" / "jackal-wheel.dae")
        load_mesh(worlds_dir / "models" / "hokuyo_utm30.dae")
    assert time.perf_counter() - t0 < 0.5


def test_other_formats_via_trimesh(tmp_path):
    obj = tmp_path / "tri.obj"
    obj.write_text("v 0 0 0\nv 1 0 0\nv 0 2 0\nv 0 0 3\nf 1 2 3\nf 1 2 4\n")
    m = load_mesh(obj)
    np.testing.assert_allclose(m.bounds, [[0, 0, 0], [1, 2, 3]])
    assert m.faces.shape == (2, 3) and m.edges.shape == (5, 2)
    ply = tmp_path / "tri.ply"
    ply.write_text(
        "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
        "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"
    )
    assert load_mesh(ply, scale=0.5).bounds[1].tolist() == [0.5, 0.5, 0.0]


def test_errors(tmp_path):
    with pytest.raises(AssetError, match="not found"):
        load_mesh(tmp_path / "none.dae")
    bad = tmp_path / "bad.dae"
    bad.write_text("<COLLADA><unclosed>")
    with pytest.raises(AssetError, match="cannot parse COLLADA"):
        load_mesh(bad)
    empty = tmp_path / "empty.dae"
    empty.write_text(
        '<?xml version="1.0"?><COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">'
        "<asset><up_axis>Z_UP</up_axis></asset></COLLADA>"
    )
    with pytest.raises(AssetError, match="no mesh geometry"):
        load_mesh(empty)
    fbx = tmp_path / "m.fbx"
    fbx.write_bytes(b"Kaydara FBX Binary")
    with pytest.raises(AssetError, match="cannot parse FBX file through Assimp"):
        load_mesh(fbx)
    odd = tmp_path / "m.xyz"
    odd.write_text("1 2 3")
    with pytest.raises(AssetError, match="unsupported mesh format"):
        load_mesh(odd)
    garbage_obj = tmp_path / "g.obj"
    garbage_obj.write_text("this is not an obj file\n")
    with pytest.raises(AssetError):
        load_mesh(garbage_obj)
    with pytest.raises(ValueError, match="scale"):
        load_mesh(write_dae(tmp_path / "s.dae"), scale=0.0)
    with pytest.raises(ValueError):
        Mesh.from_arrays(np.zeros((3, 3)), faces=np.array([[0, 1, 5]]))

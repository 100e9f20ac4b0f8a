"""FBX and glTF models through Assimp: the upstream tractor/trailer FBX models (from the mirror of the upstream model
files) with their node transforms and materials, as bare meshes and as the articulated-vehicle world's visuals."""

from __future__ import annotations

import hashlib
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.io.meshes import clear_mesh_cache, load_mesh

ZIP_URL = "https://mrpt.github.io/mvsim-models/tractor-trailer-kidbi.zip"

# Bounding boxes [m] of the FBX bodies with every node transform applied and <model_scale>1e-2 (the file is in cm),
# in the file's own (Y-up) axes. Measured independently of this loader: through Debian's libassimp 5.2.4 with the
# pyassimp ctypes binding, walking the node tree by hand (the README's meshes table).
TRACTOR_BOUNDS = [[-0.57815, 0.12445, -0.548566], [0.574855, 1.381743, 1.239182]]
TRAILER_BOUNDS = [[-0.622485, 0.194512, -2.160863], [0.620857, 1.155324, 0.021164]]


@pytest.fixture(scope="module")
def kidbi_zip(shared_dir: Path) -> Path:
    z = shared_dir / "assets" / "mvsim-models" / "tractor-trailer-kidbi.zip"
    if not z.is_file():
        pytest.skip(f"mirror of the upstream models not found: {z}")
    return z


@pytest.fixture(scope="module")
def kidbi(kidbi_zip: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kidbi")
    with zipfile.ZipFile(kidbi_zip) as zf:
        zf.extractall(out)
    return out / "tractor-trailer-kidbi"


@pytest.mark.parametrize("name, expected", [("tractor_body", TRACTOR_BOUNDS), ("trailer_body", TRAILER_BOUNDS)])
def test_fbx_bodies_have_their_node_transforms(kidbi, name, expected):
    clear_mesh_cache()
    m = load_mesh(kidbi / f"{name}.fbx", scale=1e-2)
    np.testing.assert_allclose(m.bounds, expected, atol=2e-6)
    assert m.faces.shape[0] > 800 and m.faces.max() < m.vertices.shape[0]


def test_fbx_node_transforms_matter(kidbi):
    """The raw vertices of the trailer body are not where the model is: its nodes scale/rotate them (Blender's
    export), so reading the meshes without the node chain would give another box."""
    import assimp_py

    scene = assimp_py.import_file(str(kidbi / "trailer_body.fbx"), assimp_py.Process_Triangulate)
    raw = np.concatenate([np.frombuffer(m.vertices, dtype=np.float32).reshape(-1, 3) for m in scene.meshes]) * 1e-2
    raw_bounds = np.stack([raw.min(axis=0), raw.max(axis=0)])
    assert not np.allclose(raw_bounds, TRAILER_BOUNDS, atol=1e-2)


def test_fbx_material_base_colour(kidbi):
    """tractor_body.fbx: all three materials are Blender's default grey diffuse 0.8 (the palette texture colours
    it), opaque."""
    m = load_mesh(kidbi / "tractor_body.fbx", scale=1e-2)
    assert m.face_colors is not None and m.face_colors.shape == (m.faces.shape[0], 4)
    np.testing.assert_allclose(m.face_colors, np.tile([0.8, 0.8, 0.8, 1.0], (m.faces.shape[0], 1)), atol=1e-6)


def test_gltf_node_transform_and_base_colour(tmp_path):
    """A glTF box 2 x 1 x 3 m whose node moves it +10 m in x and whose PBR base colour is (0.2, 0.4, 0.6, 1)."""
    trimesh = pytest.importorskip("trimesh")
    box = trimesh.creation.box(extents=(2.0, 1.0, 3.0))
    box.visual = trimesh.visual.TextureVisuals(
        material=trimesh.visual.material.PBRMaterial(baseColorFactor=[0.2, 0.4, 0.6, 1.0])
    )
    scene = trimesh.Scene()
    t = np.eye(4)
    t[:3, 3] = (10.0, 0.0, 0.0)
    scene.add_geometry(box, transform=t)
    path = tmp_path / "box.glb"
    scene.export(path)
    m = load_mesh(path, scale=0.5)
    np.testing.assert_allclose(m.bounds, [[4.5, -0.25, -0.75], [5.5, 0.25, 0.75]], atol=1e-6)
    assert m.faces.shape == (12, 3)
    assert m.face_colors is not None
    np.testing.assert_allclose(m.face_colors, np.tile([0.2, 0.4, 0.6, 1.0], (12, 1)), atol=1e-6)


def test_articulated_world_vehicle_visuals(worlds_dir, kidbi_zip, tmp_path, monkeypatch):
    """demo_articulated_vehicle.world.xml loads the FBX bodies as the vehicles' visuals (scale 1e-2, yaw 90, roll 90):
    upright in the vehicle frame, x forward. The expected boxes are the Y-up boxes above mapped by roll 90 about x
    then yaw 90 about z: a file point (x, y, z) lands at (z, x, y) in the vehicle frame."""
    cache = tmp_path / "cache"
    entry = cache / hashlib.sha256(ZIP_URL.encode("utf-8")).hexdigest()
    entry.mkdir(parents=True)
    shutil.copy(kidbi_zip, entry / "tractor-trailer-kidbi.zip")  # as if downloaded; unzipped by the asset cache
    monkeypatch.setenv("MVSIM_CACHE_DIR", str(cache))
    monkeypatch.setenv("MVSIM_OFFLINE", "1")
    clear_mesh_cache()
    w = mv.load_world(worlds_dir / "mvsim_tutorial" / "demo_articulated_vehicle.world.xml")
    for name, file_bounds in (("tractor", TRACTOR_BOUNDS), ("trailer", TRAILER_BOUNDS)):
        (vis,) = w.vehicles[name].visuals
        assert vis.path is not None and vis.path.name == f"{name}_body.fbx"
        (x0, y0, z0), (x1, y1, z1) = file_bounds
        np.testing.assert_allclose(vis.bounds, [[z0, x0, y0], [z1, x1, y1]], atol=1e-5)
    length, width, height = np.diff(w.vehicles["tractor"].visuals[0].bounds, axis=0)[0]
    assert (round(length, 3), round(width, 3), round(height, 3)) == (1.788, 1.153, 1.257)


def test_a_collada_file_pycollada_finds_empty_is_read_by_assimp(shared_dir, tmp_path):
    """Upstream's TropicPalmTree (used by demo_elevation_map and demo_friction_zones): its meshes hang where
    pycollada's scene walk finds none; Assimp reads them (Y up, as the "assimp" axes have it): a 5.17 m palm."""
    import zipfile

    from mvsim_core.io.meshes import load_mesh

    with zipfile.ZipFile(shared_dir / "assets" / "mvsim-models" / "TropicPalmTree.zip") as zf:
        zf.extractall(tmp_path)
    m = load_mesh(tmp_path / "TropicPalmTree" / "free_palm.dae")
    lo, hi = m.vertices.min(axis=0), m.vertices.max(axis=0)
    assert len(m.faces) > 1000
    assert hi[1] - lo[1] == pytest.approx(5.1733, abs=1e-3) and lo[1] == pytest.approx(0.0, abs=1e-6)


def test_collada_materials_colour_the_faces_and_the_drawing(shared_dir, tmp_path):
    """Upstream's tomato plant: 1787 faces of its green material and 1456 of its red one (their diffuse colours);
    drawn in them unless the world writes a <model_color>."""
    import zipfile

    from mvsim_core.io.meshes import load_mesh
    from mvsim_core.sensors.render.scene_geometry import mesh_part

    with zipfile.ZipFile(shared_dir / "assets" / "mvsim-models" / "greenhouse.zip") as zf:
        zf.extractall(tmp_path)
    m = load_mesh(tmp_path / "greenhouse" / "tomato_plant_240cm.dae")
    colours, counts = np.unique(np.round(m.face_colors, 3), axis=0, return_counts=True)
    assert colours.tolist() == [[0.024, 0.8, 0.0, 1.0], [0.8, 0.001, 0.002, 1.0]] and counts.tolist() == [1787, 1456]
    part = mesh_part(m, None)
    drawn = {tuple(c) for c in part.colors.tolist()}
    assert drawn == {(6, 204, 0, 255), (204, 0, 0, 255)}
    assert {tuple(c) for c in mesh_part(m, (10, 20, 30, 255)).colors.tolist()} == {(10, 20, 30, 255)}

"""3D mesh loading (COLLADA ``.dae`` via pycollada; FBX, glTF, OBJ, STL, PLY, OFF and 3DS through Assimp, the
library upstream MVSim loads every model with, via the ``assimp-py`` wheel) plus the 2D derived shapes the
simulator needs: wall segments (``<walls><model_uri>``), convex footprints and z ranges (``<shape_from_visual/>``).

Units and frames: vertices are in metres (COLLADA ``<unit meter>`` applied, then ``scale``), in the *model frame as
upstream MVSim sees it*. Upstream loads models with Assimp (MRPT ``CAssimpModel``) with default settings, and
Assimp's COLLADA importer rotates every file into Y-up:

* ``Z_UP`` files: ``(x, y, z) -> (x, z, -y)``;  ``X_UP``: ``(x, y, z) -> (-y, x, z)``;  ``Y_UP``: unchanged.

MVSim then uses those coordinates directly in its Z-up world, and world files compensate in ``<visual>``: e.g.
``jackal.dae`` and ``velodyne-vlp16.dae`` (``Z_UP``) are used with ``<model_roll>90</model_roll>``, which undoes the
rotation above, while ``hokuyo_utm30.dae`` (``Z_UP`` but authored lying along -y) is upright *because* of it; and
``testWalls.dae`` (``Y_UP``, all z = 0) is a floor plan whose lines lie in the XY plane. Reproducing Assimp is
therefore the default (``collada_axes="assimp"``); ``"native"`` keeps file coordinates and ``"z_up"`` converts any
up-axis to Z-up (neither matches the shipped world files). Formats other than COLLADA carry no up-axis and are used
as Assimp returns them: each mesh mapped by its node's transform chained up to the root (so FBX models keep the
axes and unit scale their exporter wrote into the node transforms, e.g. Blender's centimetres, which world files undo
with ``<model_scale>1e-2</model_scale>``), exactly what upstream draws.

Materials: every triangle carries the RGBA base (diffuse) colour of its mesh's material, in [0, 1]
(:attr:`Mesh.face_colors`; COLLADA and material-less meshes give none).
"""

from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from mvsim_core.errors import AssetError
from mvsim_core.io.file_check import file_problem

ColladaAxes = Literal["assimp", "native", "z_up"]

_MERGE_DECIMALS = 9  # vertices closer than ~1 nm are merged
_ASSIMP_EXTS = {".fbx", ".obj", ".stl", ".ply", ".off", ".glb", ".gltf", ".3ds"}
_EMPTY_EDGES = np.zeros((0, 2), dtype=np.int64)
_EMPTY_EDGES.setflags(write=False)

# Rotation matrices (applied as v' = R @ v) per (policy, COLLADA up-axis).
_R_ZUP_TO_YUP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
_R_XUP_TO_YUP = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
_R_YUP_TO_ZUP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
_R_XUP_TO_ZUP = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
_AXES: dict[tuple[str, str], np.ndarray | None] = {
    ("assimp", "Z_UP"): _R_ZUP_TO_YUP,
    ("assimp", "X_UP"): _R_XUP_TO_YUP,
    ("z_up", "Y_UP"): _R_YUP_TO_ZUP,
    ("z_up", "X_UP"): _R_XUP_TO_ZUP,
}


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Mesh:
    """An immutable triangle/line mesh (arrays are read-only so cached instances can be shared safely).

    Equality and hashing are by identity (numpy arrays have no single truth value).

    Attributes:
        vertices: ``(N, 3)`` float64 positions [m] in the model frame (see module docstring); coincident vertices
            are merged.
        faces: ``(M, 3)`` int64 triangle vertex indices (degenerate triangles removed).
        bounds: ``(2, 3)`` float64 ``[[xmin, ymin, zmin], [xmax, ymax, zmax]]`` [m].
        edges: ``(K, 2)`` int64 unique undirected edges (``i < j``) of the triangles and of the line primitives.
        line_edges: ``(L, 2)`` int64 unique undirected edges that come from *line* primitives (COLLADA ``<lines>``),
            in file order. Upstream MVSim builds ``<walls>`` from these only.
        face_colors: ``(M, 4)`` float64 RGBA in [0, 1] per triangle (its material's base colour), or ``None`` when
            the file gives no materials (COLLADA is read without them).
    """

    vertices: np.ndarray
    faces: np.ndarray
    bounds: np.ndarray
    edges: np.ndarray
    line_edges: np.ndarray = field(default_factory=lambda: _EMPTY_EDGES)
    face_colors: np.ndarray | None = None

    @classmethod
    def from_arrays(
        cls,
        vertices: np.ndarray,
        faces: np.ndarray | None = None,
        lines: np.ndarray | None = None,
        face_colors: np.ndarray | None = None,
    ) -> Mesh:
        """Build a mesh from raw arrays: ``vertices (N,3)`` [m], ``faces (M,3)`` and/or ``lines (L,2)`` indices,
        optionally ``face_colors (M,4)`` RGBA in [0, 1], one per face.

        Coincident vertices are merged, degenerate faces (and their colours) dropped, edges computed.

        Raises:
            ValueError: bad shapes, out-of-range indices, non-finite coordinates or no vertices.
        """
        v = np.asarray(vertices, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != 3:
            raise ValueError(f"vertices must be an (N, 3) array; got shape {v.shape}")
        if v.shape[0] == 0:
            raise ValueError("mesh has no vertices")
        if not np.all(np.isfinite(v)):
            raise ValueError("mesh vertices contain non-finite coordinates")
        f = _index_array(faces, 3, v.shape[0], "faces")
        ln = _index_array(lines, 2, v.shape[0], "lines")

        _, first, inverse = np.unique(np.round(v, _MERGE_DECIMALS), axis=0, return_index=True, return_inverse=True)
        inverse = np.asarray(inverse).reshape(-1)
        used = np.zeros(first.shape[0], dtype=bool)
        colors = None
        if face_colors is not None:
            colors = np.asarray(face_colors, dtype=np.float64)
            if colors.shape != (f.shape[0], 4):
                raise ValueError(f"face_colors must be an ({f.shape[0]}, 4) array; got shape {colors.shape}")
        f = inverse[f]
        good = (f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])
        f = f[good]
        if colors is not None:
            colors = np.ascontiguousarray(colors[good])
        ln = inverse[ln]
        ln = ln[ln[:, 0] != ln[:, 1]]
        used[f.reshape(-1)] = True
        used[ln.reshape(-1)] = True
        if not used.any():
            raise ValueError("mesh has no non-degenerate triangles or lines")
        # Drop vertices not referenced by any face/line (e.g. stray points), re-indexing compactly.
        remap = np.cumsum(used) - 1
        verts = v[first[used]]
        f = remap[f]
        ln = remap[ln]

        line_sorted = np.sort(ln, axis=1)
        if line_sorted.shape[0]:
            _, idx = np.unique(line_sorted, axis=0, return_index=True)
            line_edges = line_sorted[np.sort(idx)]
        else:
            line_edges = _EMPTY_EDGES.copy()
        tri_edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]) if f.shape[0] else _EMPTY_EDGES
        all_edges = np.concatenate([np.sort(tri_edges, axis=1), line_edges])
        edges = np.unique(all_edges, axis=0) if all_edges.shape[0] else _EMPTY_EDGES.copy()
        bounds = np.stack([verts.min(axis=0), verts.max(axis=0)])
        return cls(
            vertices=_readonly(np.ascontiguousarray(verts)),
            faces=_readonly(np.ascontiguousarray(f, dtype=np.int64)),
            bounds=_readonly(bounds),
            edges=_readonly(np.ascontiguousarray(edges, dtype=np.int64)),
            line_edges=_readonly(np.ascontiguousarray(line_edges, dtype=np.int64)),
            face_colors=None if colors is None else _readonly(colors),
        )

    def transformed(self, matrix: np.ndarray) -> Mesh:
        """A copy with every vertex mapped by the affine 4x4 homogeneous ``matrix`` (``p' = R p + t``) [m].

        Topology (faces, edges) is kept; bounds are recomputed.
        """
        m = np.asarray(matrix, dtype=np.float64)
        if m.shape != (4, 4):
            raise ValueError(f"transformation must be a 4x4 matrix; got shape {m.shape}")
        if not np.all(np.isfinite(m)):
            raise ValueError("transformation matrix contains non-finite values")
        verts = self.vertices @ m[:3, :3].T + m[:3, 3]
        bounds = np.stack([verts.min(axis=0), verts.max(axis=0)])
        return Mesh(
            vertices=_readonly(np.ascontiguousarray(verts)),
            faces=self.faces,
            bounds=_readonly(bounds),
            edges=self.edges,
            line_edges=self.line_edges,
            face_colors=self.face_colors,
        )


def _index_array(a: np.ndarray | None, width: int, n_vertices: int, what: str) -> np.ndarray:
    if a is None:
        return np.zeros((0, width), dtype=np.int64)
    arr = np.asarray(a)
    if arr.size == 0:
        return np.zeros((0, width), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != width:
        raise ValueError(f"{what} must be an (M, {width}) index array; got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{what} must hold integer vertex indices")
    arr = arr.astype(np.int64)
    if arr.min() < 0 or arr.max() >= n_vertices:
        raise ValueError(f"{what} reference vertex indices outside [0, {n_vertices})")
    return arr


# ------------------------------------------------------------------------------------------------ loading


def load_mesh(path: str | Path, scale: float = 1.0, *, collada_axes: ColladaAxes = "assimp") -> Mesh:
    """Load a mesh file; results are cached on (resolved path, mtime, size, scale, axes policy).

    Args:
        path: ``.dae`` (COLLADA), ``.fbx``, ``.glb``, ``.gltf``, ``.obj``, ``.stl``, ``.ply``, ``.off`` or ``.3ds``
            file.
        scale: uniform scale factor applied after unit conversion (``<model_scale>``), > 0.
        collada_axes: up-axis policy for COLLADA files (see module docstring); default reproduces upstream.

    Returns:
        A read-only :class:`Mesh` (the same instance for repeated loads of an unchanged file).

    Raises:
        AssetError: missing file, unsupported format, unparseable file or no geometry.
        ValueError: non-positive / non-finite scale or unknown ``collada_axes``.
    """
    s = float(scale)
    if not (np.isfinite(s) and s > 0.0):
        raise ValueError(f"mesh scale must be a finite number > 0; got {scale!r}")
    if collada_axes not in ("assimp", "native", "z_up"):
        raise ValueError(f"collada_axes must be 'assimp', 'native' or 'z_up'; got {collada_axes!r}")
    p = Path(path).expanduser()
    try:
        resolved = p.resolve()
        st = resolved.stat()
    except (OSError, RuntimeError) as e:
        raise AssetError(
            str(path),
            "mesh file not found (check <model_uri>; relative paths are resolved against "
            f"the directory of the XML file that references it): {e}",
        ) from e
    problem = file_problem(resolved)
    if problem is not None:
        raise AssetError(str(path), f"{problem} (expected a .dae/.fbx/.glb/.obj/.stl/.ply mesh)")
    return _load_mesh_cached(str(resolved), st.st_mtime_ns, st.st_size, s, collada_axes)


@functools.lru_cache(maxsize=128)
def _load_mesh_cached(resolved: str, mtime_ns: int, size: int, scale: float, collada_axes: str) -> Mesh:
    del mtime_ns, size  # only part of the cache key
    ext = os.path.splitext(resolved)[1].lower()
    colors: np.ndarray | None = None
    if ext == ".dae":
        verts, faces, lines, colors = _read_collada(resolved, collada_axes)
        if verts.shape[0] == 0 and collada_axes == "assimp":
            # geometry pycollada does not reach (upstream's TropicPalmTree: its meshes hang off nodes pycollada's
            # scene walk skips): Assimp itself, whose output the "assimp" axes reproduce
            try:
                verts, faces, lines, colors = _read_assimp(resolved)
            except AssetError:
                pass  # Assimp finds nothing either: "no mesh geometry" below
    elif ext in _ASSIMP_EXTS:
        verts, faces, lines, colors = _read_assimp(resolved)
    else:
        raise AssetError(
            resolved,
            f"unsupported mesh format '{ext or '(none)'}'; supported: .dae, " + ", ".join(sorted(_ASSIMP_EXTS)),
        )
    if verts.shape[0] == 0:
        raise AssetError(resolved, "the file contains no mesh geometry (no triangles or lines)")
    try:
        return Mesh.from_arrays(verts * scale, faces, lines, colors)
    except ValueError as e:
        raise AssetError(resolved, f"invalid mesh geometry: {e}") from e


def clear_mesh_cache() -> None:
    """Forget every cached mesh (mainly for tests)."""
    _load_mesh_cached.cache_clear()


def _collada_rgba(prim: object) -> tuple[float, float, float, float] | None:
    """The diffuse RGBA (0..1) of a bound primitive's material, or None (a texture map, or no material)."""
    effect = getattr(getattr(prim, "material", None), "effect", None)
    diffuse = getattr(effect, "diffuse", None)
    if isinstance(diffuse, tuple) and len(diffuse) >= 3 and all(isinstance(c, (int, float)) for c in diffuse):
        alpha = float(diffuse[3]) if len(diffuse) > 3 else 1.0
        return (float(diffuse[0]), float(diffuse[1]), float(diffuse[2]), alpha)
    return None


def _read_collada(path: str, collada_axes: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    import collada  # pycollada; imported lazily (it pulls in lxml/xml parsing machinery)
    from collada.common import DaeBrokenRefError, DaeUnsupportedError
    from collada.lineset import BoundLineSet
    from collada.polygons import BoundPolygons
    from collada.polylist import BoundPolylist
    from collada.triangleset import BoundTriangleSet

    vert_chunks: list[np.ndarray] = []
    face_chunks: list[np.ndarray] = []
    line_chunks: list[np.ndarray] = []
    color_chunks: list[np.ndarray] = []  # per triangle, RGBA 0..1 (NaN: no colour of its own)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)  # pycollada still uses numpy.matrix
            doc = collada.Collada(path, ignore=[DaeUnsupportedError, DaeBrokenRefError])
            if doc.scene is not None:
                bound = list(doc.scene.objects("geometry"))
            else:
                bound = [g.bind(np.identity(4), {}) for g in doc.geometries]
            offset = 0
            for bgeom in bound:
                for prim in bgeom.primitives():
                    if isinstance(prim, (BoundPolylist, BoundPolygons)):
                        prim = prim.triangleset()
                    if not isinstance(prim, (BoundTriangleSet, BoundLineSet)):
                        continue
                    if prim.vertex is None or prim.vertex_index is None or len(prim.vertex_index) == 0:
                        continue
                    v = np.asarray(prim.vertex, dtype=np.float64).reshape(-1, 3)
                    idx = np.asarray(prim.vertex_index, dtype=np.int64)
                    if isinstance(prim, BoundLineSet):
                        line_chunks.append(idx.reshape(-1, 2) + offset)
                    else:
                        face_chunks.append(idx.reshape(-1, 3) + offset)
                        rgba = _collada_rgba(prim)
                        color_chunks.append(np.tile(rgba if rgba is not None else (np.nan,) * 4,
                                                    (len(face_chunks[-1]), 1)))
                    vert_chunks.append(v)
                    offset += v.shape[0]
            unit = doc.assetInfo.unitmeter if doc.assetInfo is not None else None
            up = doc.assetInfo.upaxis if doc.assetInfo is not None else None
    except Exception as e:  # pycollada/lxml raise many unrelated types for malformed files
        raise AssetError(
            path, f"cannot parse COLLADA file ({type(e).__name__}: {e}); re-export it from your 3D tool"
        ) from e
    if not vert_chunks:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros((0, 2), np.int64), None
    verts = np.concatenate(vert_chunks)
    if unit is not None and float(unit) > 0 and float(unit) != 1.0:
        verts = verts * float(unit)
    rot = _AXES.get((collada_axes, str(up or "Y_UP")))
    if rot is not None:
        verts = verts @ rot.T
    faces = np.concatenate(face_chunks) if face_chunks else np.zeros((0, 3), np.int64)
    lines = np.concatenate(line_chunks) if line_chunks else np.zeros((0, 2), np.int64)
    colors = np.concatenate(color_chunks) if color_chunks else None
    if colors is not None:
        if np.isnan(colors).all():
            colors = None
        else:
            colors[np.isnan(colors[:, 0])] = (0.8, 0.8, 0.8, 1.0)  # Assimp's default diffuse
    return verts, faces, lines, colors


def _material_rgba(material: dict[str, object]) -> np.ndarray:
    """A material's base colour as RGBA in [0, 1]: glTF's base colour (Assimp ``COLOR_DIFFUSE``), else white."""
    rgba = np.ones(4)
    c = material.get("COLOR_DIFFUSE")
    if isinstance(c, (list, tuple)) and len(c) >= 3:
        rgba[: min(len(c), 4)] = np.asarray(c[:4], dtype=np.float64)
    opacity = material.get("OPACITY")
    if len(c or ()) < 4 and isinstance(opacity, float):  # type: ignore[arg-type]
        rgba[3] = opacity
    return np.clip(rgba, 0.0, 1.0)


def _read_assimp(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Vertices [file units, node transforms applied], triangles, line segments and per-triangle RGBA through Assimp.

    Meshes are triangulated and split by primitive type (points dropped); each mesh instance is mapped by the product
    of the node transforms from the root down to the node that references it (Assimp's row-major 4x4 matrices).
    """
    import assimp_py

    flags = assimp_py.Process_Triangulate | assimp_py.Process_SortByPType
    try:
        scene = assimp_py.import_file(path, flags)
    except Exception as e:  # the binding raises RuntimeError/ValueError with Assimp's own message
        fmt = os.path.splitext(path)[1].lstrip(".").upper()
        raise AssetError(path, f"cannot parse {fmt} file through Assimp ({type(e).__name__}: {e})") from e
    rgba = [_material_rgba(m) for m in scene.materials]
    vert_chunks: list[np.ndarray] = []
    face_chunks: list[np.ndarray] = []
    line_chunks: list[np.ndarray] = []
    color_chunks: list[np.ndarray] = []
    offset = 0
    stack = [(scene.root_node, np.identity(4))]
    while stack:
        node, parent = stack.pop()
        world = parent @ np.asarray(node.transformation, dtype=np.float64).reshape(4, 4)
        for mi in node.mesh_indices:
            mesh = scene.meshes[mi]
            v = np.frombuffer(mesh.vertices, dtype=np.float32).astype(np.float64).reshape(-1, 3)
            idx = np.frombuffer(mesh.indices, dtype=np.uint32).astype(np.int64)
            n_faces = int(mesh.num_faces)
            if v.shape[0] == 0 or n_faces == 0 or idx.shape[0] % n_faces:
                continue
            corners = idx.shape[0] // n_faces
            if corners not in (2, 3):  # points, or a polygon that Triangulate left (none expected)
                continue
            vert_chunks.append(v @ world[:3, :3].T + world[:3, 3])
            if corners == 3:
                face_chunks.append(idx.reshape(-1, 3) + offset)
                mat = rgba[mesh.material_index] if 0 <= mesh.material_index < len(rgba) else np.ones(4)
                color_chunks.append(np.tile(mat, (n_faces, 1)))
            else:
                line_chunks.append(idx.reshape(-1, 2) + offset)
            offset += v.shape[0]
        stack.extend((child, world) for child in reversed(node.children))
    if not vert_chunks:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros((0, 2), np.int64), None
    faces = np.concatenate(face_chunks) if face_chunks else np.zeros((0, 3), np.int64)
    lines = np.concatenate(line_chunks) if line_chunks else np.zeros((0, 2), np.int64)
    colors = np.concatenate(color_chunks) if color_chunks else None
    return np.concatenate(vert_chunks), faces, lines, colors


# ------------------------------------------------------------------------------------------------ 2D derived shapes


def wireframe_segments(
    mesh: Mesh, z_min: float | None = None, *, source: Literal["auto", "lines", "all"] = "auto"
) -> np.ndarray:
    """XY projection of the mesh's unique edges, as wall segments for ``<walls><model_uri>``.

    Args:
        mesh: the (already transformed) mesh.
        z_min: if given, keep only edges reaching at least this height (``max(z0, z1) >= z_min``) [m].
        source: ``"lines"`` = edges of line primitives only (what upstream uses: Assimp line faces = MRPT's
            wireframe buffer; a triangles-only model yields no walls upstream); ``"all"`` = every unique edge
            (triangle edges included); ``"auto"`` (default) = lines if the mesh has any, else all edges.

    Returns:
        float64 ``(S, 2, 2)``: ``[[x0, y0], [x1, y1]]`` per segment [m], in file order of first occurrence, with
        zero-length (in XY) segments and duplicates (either direction, after projection) removed.
    """
    if source == "auto":
        e = mesh.line_edges if mesh.line_edges.shape[0] else mesh.edges
    elif source == "lines":
        e = mesh.line_edges
    elif source == "all":
        e = mesh.edges
    else:
        raise ValueError(f"source must be 'auto', 'lines' or 'all'; got {source!r}")
    if e.shape[0] == 0:
        return np.zeros((0, 2, 2), dtype=np.float64)
    p0 = mesh.vertices[e[:, 0]]
    p1 = mesh.vertices[e[:, 1]]
    keep = np.ones(e.shape[0], dtype=bool)
    if z_min is not None:
        keep &= np.maximum(p0[:, 2], p1[:, 2]) >= float(z_min)
    seg = np.stack([p0[:, :2], p1[:, :2]], axis=1)[keep]
    if seg.shape[0] == 0:
        return np.zeros((0, 2, 2), dtype=np.float64)
    d = seg[:, 1] - seg[:, 0]
    seg = seg[np.hypot(d[:, 0], d[:, 1]) > 1e-9]
    if seg.shape[0] == 0:
        return np.zeros((0, 2, 2), dtype=np.float64)
    a = np.round(seg[:, 0], _MERGE_DECIMALS)
    b = np.round(seg[:, 1], _MERGE_DECIMALS)
    swap = (a[:, 0] > b[:, 0]) | ((a[:, 0] == b[:, 0]) & (a[:, 1] > b[:, 1]))
    key = np.where(swap[:, None], np.hstack([b, a]), np.hstack([a, b]))
    _, idx = np.unique(key, axis=0, return_index=True)
    return np.ascontiguousarray(seg[np.sort(idx)])


def _outside_octagon(p: np.ndarray) -> np.ndarray:
    """The rows of 2D points ``p`` that can be on their convex hull: all but those strictly inside
    the convex polygon of the extreme points in eight directions (Akl–Toussaint), order kept. Spares the chain walk
    most of a mesh's vertices."""
    if p.shape[0] < 16:
        return p
    x, y = p[:, 0], p[:, 1]
    # the extreme points in the directions -90°, -45°, 0°, …, 180°, 225°: counter-clockwise along the hull
    idx = [int(np.argmin(y)), int(np.argmax(x - y)), int(np.argmax(x)), int(np.argmax(x + y)), int(np.argmax(y)),
           int(np.argmax(y - x)), int(np.argmin(x)), int(np.argmin(x + y))]
    ring = [i for k, i in enumerate(idx) if i != idx[k - 1]]
    if len(ring) < 3:
        return p
    poly = p[ring]
    inside = np.ones(p.shape[0], dtype=bool)
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        inside &= (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]) > 1e-12
    return p[~inside]


def convex_hull_2d(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull of 2D points (Andrew's monotone chain), ``(P, 2)`` float64.

    Collinear points on the hull are dropped. Fewer than 3 distinct points, or all collinear, give the axis-aligned
    bounding rectangle (4 points, possibly of zero area).
    """
    p = _outside_octagon(np.round(np.asarray(points, dtype=np.float64)[:, :2], 12))
    p = np.unique(p, axis=0)  # sorted by x, then y

    def half(seq: np.ndarray) -> list[np.ndarray]:
        chain: list[np.ndarray] = []
        for q in seq:
            while len(chain) >= 2:
                o, a = chain[-2], chain[-1]
                if (a[0] - o[0]) * (q[1] - o[1]) - (a[1] - o[1]) * (q[0] - o[0]) > 0:
                    break
                chain.pop()
            chain.append(q)
        return chain

    if p.shape[0] >= 3:
        hull = half(p)[:-1] + half(p[::-1])[:-1]
        if len(hull) >= 3:
            return np.ascontiguousarray(hull, dtype=np.float64)
    (x0, y0), (x1, y1) = p.min(axis=0), p.max(axis=0)
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


def convex_footprint(mesh: Mesh) -> np.ndarray:
    """2D convex hull of the XY projection of all vertices, counter-clockwise, ``(P, 2)`` float64 [m].

    Degenerate inputs (fewer than 3 distinct points, or all collinear) return their axis-aligned bounding rectangle
    (4 points, possibly of zero area).
    """
    return convex_hull_2d(mesh.vertices)


def z_range(mesh: Mesh) -> tuple[float, float]:
    """``(zmin, zmax)`` [m] of the mesh in its current frame (for ``<shape_from_visual/>``)."""
    return float(mesh.bounds[0, 2]), float(mesh.bounds[1, 2])

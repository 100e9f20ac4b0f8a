"""3D mesh loading (COLLADA ``.dae`` via pycollada; ``.obj``/``.stl``/``.ply``/``.off``/``.glb``/``.gltf`` via trimesh)
plus the 2D derived shapes the simulator needs: wall segments (``<walls><model_uri>``), convex footprints and
z ranges (``<shape_from_visual/>``).

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
as stored (as Assimp does).
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

ColladaAxes = Literal["assimp", "native", "z_up"]

_MERGE_DECIMALS = 9  # vertices closer than ~1 nm are merged
_TRIMESH_EXTS = {".obj", ".stl", ".ply", ".off", ".glb", ".gltf"}
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
    """

    vertices: np.ndarray
    faces: np.ndarray
    bounds: np.ndarray
    edges: np.ndarray
    line_edges: np.ndarray = field(default_factory=lambda: _EMPTY_EDGES)

    @classmethod
    def from_arrays(
        cls, vertices: np.ndarray, faces: np.ndarray | None = None, lines: np.ndarray | None = None
    ) -> Mesh:
        """Build a mesh from raw arrays: ``vertices (N,3)`` [m], ``faces (M,3)`` and/or ``lines (L,2)`` indices.

        Coincident vertices are merged, degenerate faces/lines dropped, edges computed.

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
        f = inverse[f]
        f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
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
        path: ``.dae`` (COLLADA), ``.obj``, ``.stl``, ``.ply``, ``.off``, ``.glb`` or ``.gltf`` file.
        scale: uniform scale factor applied after unit conversion (``<model_scale>``), > 0.
        collada_axes: up-axis policy for COLLADA files (see module docstring); default reproduces upstream.

    Returns:
        A read-only :class:`Mesh` (the same instance for repeated loads of an unchanged file).

    Raises:
        AssetError: missing file, unsupported format (e.g. FBX), unparseable file or no geometry.
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
    if not resolved.is_file():
        raise AssetError(str(path), "is not a regular file (expected a .dae/.obj/.stl/.ply mesh)")
    return _load_mesh_cached(str(resolved), st.st_mtime_ns, st.st_size, s, collada_axes)


@functools.lru_cache(maxsize=128)
def _load_mesh_cached(resolved: str, mtime_ns: int, size: int, scale: float, collada_axes: str) -> Mesh:
    del mtime_ns, size  # only part of the cache key
    ext = os.path.splitext(resolved)[1].lower()
    if ext == ".dae":
        verts, faces, lines = _read_collada(resolved, collada_axes)
    elif ext in _TRIMESH_EXTS:
        verts, faces, lines = _read_trimesh(resolved)
    elif ext == ".fbx":
        raise AssetError(resolved, "FBX models are not supported; convert the model to .dae, .glb or .obj")
    else:
        raise AssetError(
            resolved,
            f"unsupported mesh format '{ext or '(none)'}'; supported: .dae, " + ", ".join(sorted(_TRIMESH_EXTS)),
        )
    if verts.shape[0] == 0:
        raise AssetError(resolved, "the file contains no mesh geometry (no triangles or lines)")
    try:
        return Mesh.from_arrays(verts * scale, faces, lines)
    except ValueError as e:
        raise AssetError(resolved, f"invalid mesh geometry: {e}") from e


def clear_mesh_cache() -> None:
    """Forget every cached mesh (mainly for tests)."""
    _load_mesh_cached.cache_clear()


def _read_collada(path: str, collada_axes: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import collada  # pycollada; imported lazily (it pulls in lxml/xml parsing machinery)
    from collada.common import DaeBrokenRefError, DaeUnsupportedError
    from collada.lineset import BoundLineSet
    from collada.polygons import BoundPolygons
    from collada.polylist import BoundPolylist
    from collada.triangleset import BoundTriangleSet

    vert_chunks: list[np.ndarray] = []
    face_chunks: list[np.ndarray] = []
    line_chunks: list[np.ndarray] = []
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
                    vert_chunks.append(v)
                    offset += v.shape[0]
            unit = doc.assetInfo.unitmeter if doc.assetInfo is not None else None
            up = doc.assetInfo.upaxis if doc.assetInfo is not None else None
    except Exception as e:  # pycollada/lxml raise many unrelated types for malformed files
        raise AssetError(
            path, f"cannot parse COLLADA file ({type(e).__name__}: {e}); re-export it from your 3D tool"
        ) from e
    if not vert_chunks:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros((0, 2), np.int64)
    verts = np.concatenate(vert_chunks)
    if unit is not None and float(unit) > 0 and float(unit) != 1.0:
        verts = verts * float(unit)
    rot = _AXES.get((collada_axes, str(up or "Y_UP")))
    if rot is not None:
        verts = verts @ rot.T
    faces = np.concatenate(face_chunks) if face_chunks else np.zeros((0, 3), np.int64)
    lines = np.concatenate(line_chunks) if line_chunks else np.zeros((0, 2), np.int64)
    return verts, faces, lines


def _read_trimesh(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import trimesh

    try:
        loaded = trimesh.load(path, force="mesh", process=False)
    except Exception as e:  # trimesh raises assorted exception types for malformed files
        raise AssetError(path, f"cannot parse mesh file ({type(e).__name__}: {e})") from e
    if not isinstance(loaded, trimesh.Trimesh):
        raise AssetError(path, f"the file holds no triangle mesh (got {type(loaded).__name__})")
    verts = np.asarray(loaded.vertices, dtype=np.float64).reshape(-1, 3)
    faces = np.asarray(loaded.faces, dtype=np.int64).reshape(-1, 3)
    return verts, faces, np.zeros((0, 2), np.int64)


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


def convex_hull_2d(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull of 2D points (Andrew's monotone chain), ``(P, 2)`` float64.

    Collinear points on the hull are dropped. Fewer than 3 distinct points, or all collinear, give the axis-aligned
    bounding rectangle (4 points, possibly of zero area).
    """
    p = np.unique(np.round(np.asarray(points, dtype=np.float64)[:, :2], 12), axis=0)  # sorted by x, then y

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

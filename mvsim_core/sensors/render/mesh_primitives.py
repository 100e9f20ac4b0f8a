"""Mesh primitives: the drawable parts a scene is made of, as numpy arrays (no OpenGL, no world).

:class:`MeshPart` is indexed geometry in one node's frame; the builders make one from triangle corners
(:func:`flat_part`), prisms, wheel cylinders, spheres, ramps, bumps, loaded mesh models, horizontal rectangles,
height fields, line segments and points; :func:`occupied_rectangles` and :func:`box_triangles` turn an occupancy grid
into boxes; :func:`load_texture` reads a texture image. :mod:`.scene_geometry` puts them on the world's nodes.

Frames and units: the frame of the node a part belongs to, metres, radians. Closed solids are wound counter-clockwise
seen from outside; normals point outwards (flat per face, smooth on height fields). Colours are RGBA 0..255.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mvsim_core.geometry.polygons import make_ccw, triangulate_polygon
from mvsim_core.io.png_chunks import png_chunk_problem

Color = tuple[int, int, int, int]

WHEEL_SIDES = 16
"""Sides of the cylinder drawn for a wheel without a visual model."""

# ---------------------------------------------------------------------------------------------------- data types
@dataclass(eq=False)
class TextureImage:
    """An RGBA image for texturing (equality by identity).

    Attributes:
        path: the file it was read from.
        pixels: (H, W, 4) uint8, row 0 = the *bottom* row of the picture (texture coordinate v = 0).
    """

    path: Path
    pixels: np.ndarray


@dataclass(eq=False)
class MeshPart:
    """Indexed geometry in one node's frame.

    Attributes:
        positions: (N, 3) float64 vertex positions (m).
        normals: (N, 3) float32 unit normals (zeros for lines and points).
        colors: (N, 4) uint8 RGBA per vertex.
        indices: (M,) uint32 vertex indices: triangles (M = 3k), lines (M = 2k) or points.
        primitive: "triangles", "lines" or "points".
        cull: which faces to skip: "none" (double-sided), "back" (closed solids, CCW outside) or "front".
        uv: (N, 2) float32 texture coordinates (texture tiles repeat), or None.
        texture: the texture (multiplied by the vertex colour), or None.
        size: line width / point size (px).
        lit: shade with the world's light (False: flat colour, e.g. lines and points).
    """

    positions: np.ndarray
    normals: np.ndarray
    colors: np.ndarray
    indices: np.ndarray
    primitive: str = "triangles"
    cull: str = "none"
    uv: np.ndarray | None = None
    texture: TextureImage | None = None
    size: float = 1.0
    lit: bool = True

    @property
    def n_vertices(self) -> int:
        return int(self.positions.shape[0])


def rgba(color: Any) -> np.ndarray:
    """A colour tuple (r, g, b[, a]) 0..255 as a (4,) uint8 array."""
    c = list(color)[:4]
    if len(c) == 3:
        c.append(255)
    return np.clip(np.asarray(c, dtype=np.float64), 0, 255).round().astype(np.uint8)


# ---------------------------------------------------------------------------------------------------- builders
def flat_part(tris: np.ndarray, color: Any, *, cull: str = "back", center: np.ndarray | None = None,
              uv_of: Any = None, texture: TextureImage | None = None) -> MeshPart:
    """A flat-shaded part from (T, 3, 3) triangle corners (m): three vertices of its own per triangle.

    Args:
        tris: triangle corners; wound counter-clockwise seen from outside, unless ``center`` is given.
        color: RGBA (0..255) of every vertex, or a (T, 4) uint8 array of one per triangle.
        cull: face culling of the part.
        center: for convex solids: a point inside; every triangle is turned to face away from it.
        uv_of: optional function (N, 3) positions -> (N, 2) texture coordinates.
        texture: optional texture.
    """
    t = np.asarray(tris, dtype=np.float64).reshape(-1, 3, 3)
    n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    if center is not None and len(t):
        flip = np.einsum("ij,ij->i", n, t.mean(axis=1) - np.asarray(center, dtype=np.float64)) < 0
        t[flip] = t[flip][:, ::-1]
        n[flip] = -n[flip]
    length = np.linalg.norm(n, axis=1)
    keep = length > 1e-14
    t, n, length = t[keep], n[keep], length[keep]
    n = n / length[:, None]
    pos = t.reshape(-1, 3)
    normals = np.repeat(n, 3, axis=0).astype(np.float32)
    if isinstance(color, np.ndarray) and color.ndim == 2:  # one RGBA (0..255) per triangle
        colors = np.repeat(np.asarray(color, dtype=np.uint8)[keep], 3, axis=0)
    else:
        colors = np.tile(rgba(color), (len(pos), 1))
    uv = np.asarray(uv_of(pos), dtype=np.float32) if uv_of is not None else None
    return MeshPart(pos, normals, colors, np.arange(len(pos), dtype=np.uint32), "triangles", cull, uv, texture)


def prism_triangles(footprint: np.ndarray, z0: float, z1: float, *, bottom: bool = True) -> np.ndarray:
    """(T, 3, 3) triangles of the prism footprint × [z0, z1] (m; footprint in either order), wound CCW seen from
    outside."""
    p = make_ccw(footprint)
    q = np.roll(p, -1, axis=0)
    lo = lambda a: np.column_stack([a, np.full(len(a), z0)])  # noqa: E731
    hi = lambda a: np.column_stack([a, np.full(len(a), z1)])  # noqa: E731
    tris = [np.stack([lo(p), lo(q), hi(q)], axis=1), np.stack([lo(p), hi(q), hi(p)], axis=1)]
    cap = triangulate_polygon(p)
    if len(cap):
        top = np.column_stack([p, np.full(len(p), z1)])[cap]
        tris.append(top)
        if bottom:
            tris.append(np.column_stack([p, np.full(len(p), z0)])[cap[:, ::-1]])
    return np.concatenate(tris).reshape(-1, 3, 3)


def prism(footprint: np.ndarray, z0: float, z1: float, color: Any, *, uv_of: Any = None,
          texture: TextureImage | None = None) -> MeshPart:
    """A closed prism footprint (polygon, m, either order) × [z0, z1] (m), flat-shaded, back faces culled."""
    if z1 - z0 <= 1e-9:  # a flat block: draw its top, double-sided
        p = make_ccw(footprint)
        cap = triangulate_polygon(p)
        top = np.column_stack([p, np.full(len(p), z1)])[cap]
        return flat_part(top, color, cull="none", uv_of=uv_of, texture=texture)
    return flat_part(prism_triangles(footprint, z0, z1), color, cull="back", uv_of=uv_of, texture=texture)


def circle(radius: float, n: int) -> np.ndarray:
    """(n, 2) counter-clockwise regular polygon of circumradius ``radius`` (m)."""
    a = np.arange(n) * (2.0 * math.pi / n)
    return np.column_stack([radius * np.cos(a), radius * np.sin(a)])


def wheel_cylinder(diameter: float, width: float, color: Any, sides: int = WHEEL_SIDES) -> MeshPart:
    """A closed cylinder centred on the origin with its axis along y (a wheel in its own frame)."""
    tris = prism_triangles(circle(0.5 * diameter, sides), -0.5 * width, 0.5 * width)
    # rotate the z axis onto y: (x, y, z) -> (x, -z, y), a proper rotation (about x by +90°)
    rotated = np.stack([tris[..., 0], -tris[..., 2], tris[..., 1]], axis=-1)
    return flat_part(rotated, color, cull="back")


def sphere(radius: float, center: tuple[float, float, float], color: Any, n_lon: int = 16,
           n_lat: int = 8) -> MeshPart:
    """A closed UV sphere (flat-shaded)."""
    c = np.asarray(center, dtype=np.float64)
    lat = np.linspace(-0.5 * math.pi, 0.5 * math.pi, n_lat + 1)
    lon = np.linspace(0.0, 2.0 * math.pi, n_lon + 1)
    la, lo = np.meshgrid(lat, lon, indexing="ij")
    v = c + radius * np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=-1)
    a, b, cc, d = v[:-1, :-1], v[:-1, 1:], v[1:, 1:], v[1:, :-1]
    tris = np.concatenate([np.stack([a, b, cc], axis=-2).reshape(-1, 3, 3),
                           np.stack([a, cc, d], axis=-2).reshape(-1, 3, 3)])
    return flat_part(tris, color, cull="back", center=c)


def ramp(lx: float, ly: float, lz: float, z0: float, color: Any) -> MeshPart:
    """A wedge on [0, lx] × [0, ly] rising from z0 at x = 0 to z0 + lz at x = lx (the ``ramp`` geometry)."""
    b = [(0, 0, z0), (lx, 0, z0), (lx, ly, z0), (0, ly, z0)]
    t = [(lx, 0, z0 + lz), (lx, ly, z0 + lz)]
    quads = [(b[0], b[1], b[2], b[3]), (b[0], t[0], t[1], b[3]), (b[1], b[2], t[1], t[0])]
    tris = [(q[0], q[1], q[2]) for q in quads] + [(q[0], q[2], q[3]) for q in quads]
    tris += [(b[0], b[1], t[0]), (b[3], b[2], t[1])]
    center = (0.66 * lx, 0.5 * ly, z0 + 0.33 * lz)
    return flat_part(np.array(tris, dtype=np.float64), color, cull="back", center=np.array(center))


def bump(lx: float, ly: float, lz: float, z0: float, color: Any, n: int = 10) -> MeshPart:
    """The ``semi_cylinder_bump`` geometry: a half-ellipse of width ly and height lz across y, along x in [0, lx]."""
    y = np.linspace(-0.5 * ly, 0.5 * ly, max(int(n), 3) + 1)
    z = z0 + lz * np.sqrt(np.clip(1.0 - (2.0 * y / ly) ** 2, 0.0, None))
    prof = np.column_stack([y, z])
    tris: list[tuple[tuple[float, float, float], ...]] = []
    for (y0, za), (y1, zb) in zip(prof[:-1], prof[1:], strict=True):
        tris += [((0, y0, za), (lx, y0, za), (lx, y1, zb)), ((0, y0, za), (lx, y1, zb), (0, y1, zb))]
    tris += [((0, -0.5 * ly, z0), (lx, -0.5 * ly, z0), (lx, 0.5 * ly, z0)),
             ((0, -0.5 * ly, z0), (lx, 0.5 * ly, z0), (0, 0.5 * ly, z0))]
    for x in (0.0, lx):
        for (y0, za), (y1, zb) in zip(prof[:-1], prof[1:], strict=True):
            tris.append(((x, 0.0, z0), (x, y0, za), (x, y1, zb)))
    center = np.array([0.5 * lx, 0.0, z0 + 0.3 * lz])
    return flat_part(np.array(tris, dtype=np.float64), color, cull="back", center=center)


def mesh_part(mesh: Any, color: Any, cull: str = "none") -> MeshPart | None:
    """A flat-shaded part of a loaded :class:`mvsim_core.io.meshes.Mesh` (already in the node frame), or None when
    it has no triangles; ``color`` None: the model's material colours (``face_colors``), white without them."""
    faces = np.asarray(mesh.faces)
    if faces.size == 0:
        return None
    fc = getattr(mesh, "face_colors", None)
    if fc is not None and color is None:  # the model's own materials
        color = np.clip(np.rint(np.asarray(fc, dtype=np.float64) * 255.0), 0, 255).astype(np.uint8)
    return flat_part(np.asarray(mesh.vertices)[faces], WHITE if color is None else color, cull=cull)


def horizontal_rect(x0: float, x1: float, y0: float, y1: float, z: float, color: Any, *, cull: str = "none",
                    uv_of: Any = None, texture: TextureImage | None = None) -> MeshPart:
    """A horizontal rectangle at height z (normal +z)."""
    a, b, c, d = (x0, y0, z), (x1, y0, z), (x1, y1, z), (x0, y1, z)
    return flat_part(np.array([(a, b, c), (a, c, d)], dtype=np.float64), color, cull=cull, uv_of=uv_of,
                     texture=texture)


def height_field(heights: np.ndarray, x0: float, y0: float, res: float, color: Any, *,
                 uv_of: Any = None, texture: TextureImage | None = None) -> MeshPart:
    """A smooth-shaded terrain mesh: vertex (i, j) at (x0 + i·res, y0 + j·res, heights[i, j]); each cell split
    along its (i, j)–(i+1, j+1) diagonal, as the terrain queries do."""
    h = np.asarray(heights, dtype=np.float64)
    rows, cols = h.shape
    xs = x0 + res * np.arange(rows)
    ys = y0 + res * np.arange(cols)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    pos = np.stack([gx, gy, h], axis=-1).reshape(-1, 3)
    dhdx, dhdy = np.gradient(h, res, res)
    nrm = np.stack([-dhdx, -dhdy, np.ones_like(h)], axis=-1).reshape(-1, 3)
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    i, j = np.meshgrid(np.arange(rows - 1), np.arange(cols - 1), indexing="ij")
    v00 = (i * cols + j).reshape(-1)
    v10, v01, v11 = v00 + cols, v00 + 1, v00 + cols + 1
    idx = np.concatenate([np.stack([v00, v10, v11], axis=1), np.stack([v00, v11, v01], axis=1)]).reshape(-1)
    uv = np.asarray(uv_of(pos), dtype=np.float32) if uv_of is not None else None
    return MeshPart(pos, nrm.astype(np.float32), np.tile(rgba(color), (len(pos), 1)), idx.astype(np.uint32),
                    "triangles", "none", uv, texture)


def line_part(segments: np.ndarray, color: Any, width: float = 1.0) -> MeshPart:
    """Unlit lines from (S, 2, 3) segment ends (m)."""
    pos = np.asarray(segments, dtype=np.float64).reshape(-1, 3)
    return MeshPart(pos, np.zeros((len(pos), 3), np.float32), np.tile(rgba(color), (len(pos), 1)),
                    np.arange(len(pos), dtype=np.uint32), "lines", "none", size=float(width), lit=False)


def point_part(points: np.ndarray, color: Any, size: float = 1.0) -> MeshPart:
    """Unlit points from (N, 3) positions (m)."""
    pos = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return MeshPart(pos, np.zeros((len(pos), 3), np.float32), np.tile(rgba(color), (len(pos), 1)),
                    np.arange(len(pos), dtype=np.uint32), "points", "none", size=float(size), lit=False)


def occupied_rectangles(occupied: np.ndarray) -> np.ndarray:
    """Cover the True cells of a (ny, nx) boolean grid with disjoint rectangles: runs along x in each row, merged
    with identical runs of the rows above. Returns (R, 4) int64 ``ix0, ix1, iy0, iy1`` (half-open cell ranges)."""
    occ = np.asarray(occupied, dtype=bool)
    ny, nx = occ.shape
    pad = np.zeros((ny, nx + 2), dtype=np.int8)
    pad[:, 1:-1] = occ
    d = np.diff(pad, axis=1)
    r_start, c_start = np.nonzero(d == 1)
    _, c_end = np.nonzero(d == -1)  # same row order as the starts (row-major nonzero)
    out: list[tuple[int, int, int, int]] = []
    open_: dict[tuple[int, int], int] = {}  # (ix0, ix1) -> first row of the rectangle still growing
    k = 0
    n_runs = len(r_start)
    for row in range(ny + 1):
        runs: set[tuple[int, int]] = set()
        while k < n_runs and r_start[k] == row:
            runs.add((int(c_start[k]), int(c_end[k])))
            k += 1
        for key in [key for key in open_ if key not in runs]:
            out.append((key[0], key[1], open_.pop(key), row))
        for key in runs:
            open_.setdefault(key, row)
        if k >= n_runs and not open_:
            break
    return np.array(out, dtype=np.int64).reshape(-1, 4)


def box_triangles(rects: np.ndarray, z0: float, z1: float) -> np.ndarray:
    """(12·R, 3, 3) triangles of axis-aligned boxes [x0, x1] × [y0, y1] × [z0, z1] from (R, 4) float rectangles
    ``x0, x1, y0, y1`` (m), CCW seen from outside (bottoms included)."""
    r = np.asarray(rects, dtype=np.float64).reshape(-1, 4)
    if len(r) == 0:
        return np.zeros((0, 3, 3))
    x0, x1, y0, y1 = r.T
    n = len(r)

    def v(x: np.ndarray, y: np.ndarray, z: float) -> np.ndarray:
        return np.stack([x, y, np.full(n, z)], axis=-1)

    c = [v(x0, y0, z0), v(x1, y0, z0), v(x1, y1, z0), v(x0, y1, z0),
         v(x0, y0, z1), v(x1, y0, z1), v(x1, y1, z1), v(x0, y1, z1)]
    faces = [(0, 1, 5), (0, 5, 4), (1, 2, 6), (1, 6, 5), (2, 3, 7), (2, 7, 6), (3, 0, 4), (3, 4, 7),
             (4, 5, 6), (4, 6, 7), (0, 3, 2), (0, 2, 1)]
    return np.stack([np.stack([c[a], c[b], c[cc]], axis=1) for a, b, cc in faces], axis=1).reshape(-1, 3, 3)


# ---------------------------------------------------------------------------------------------------- textures
_TEXTURES: dict[tuple[str, int, int], TextureImage | None] = {}


def load_texture(path: Path | None) -> TextureImage | None:
    """The image at ``path`` as a :class:`TextureImage` (cached on path, mtime and size), or None when ``path`` is
    None or unreadable (the part is then drawn in its plain colour)."""
    if path is None:
        return None
    try:
        st = Path(path).stat()
    except OSError:
        return None
    key = (str(Path(path).resolve()), st.st_mtime_ns, st.st_size)
    if key not in _TEXTURES:
        try:
            from PIL import Image

            if png_chunk_problem(path) is not None:
                raise ValueError("damaged PNG")
            with Image.open(path) as im:
                px = np.asarray(im.convert("RGBA"), dtype=np.uint8)
            _TEXTURES[key] = TextureImage(Path(path), np.ascontiguousarray(px[::-1]))
        except Exception:  # PIL raises many kinds of errors for unreadable images
            _TEXTURES[key] = None
    return _TEXTURES[key]


WHITE: Color = (255, 255, 255, 255)

"""``<element class="elevation_map">``: terrain heights on a regular grid (a 2.5D mesh).

The heights come from exactly one of ``<elevation_image>`` (grayscale image normalised to
``[elevation_image_min_z, elevation_image_max_z]``), ``<elevation_data_matrix>`` (Matlab text ``[a b; c d]`` times
``elevation_data_matrix_scale``) or ``<dem_xyzrgb_file>`` (``x y z r g b`` points, shifted by ``dem_offset_*`` and
resampled at ``resolution``). An optional ``<apply_kernel>`` (square matrix text summing to 1) smooths them.

Frames: ``heights[i, j]`` is the terrain height [m] at the world point
``(corner_min_x + i * resolution, corner_min_y + j * resolution)`` — matrix **rows run along +X, columns along +Y**.
The corner defaults to centring the grid on the origin (``-LX/2, -LY/2`` with ``LX = (rows - 1) * resolution``); for
a DEM it defaults to the DEM's own minimum x/y. :meth:`ElevationMap.elevation_at` interpolates linearly on the two
triangles of each cell, split along the diagonal from vertex (i, j) to vertex (i+1, j+1), as upstream.
"""

from __future__ import annotations

import math
import weakref
from pathlib import Path
from typing import ClassVar

import numpy as np

from mvsim_core.elements.base import WorldElement, child_node, resolve_asset
from mvsim_core.errors import AssetError
from mvsim_core.geometry.extent import Extent
from mvsim_core.io.file_check import file_problem, shown_path
from mvsim_core.memory_budget import ELEVATION_CELL_BYTES, ELEVATION_PLACEMENT_CELL_BYTES
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.limits import Charge
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import MAX_MAGNITUDE, Kind, Param

SOURCES = ("elevation_image", "elevation_data_matrix", "dem_xyzrgb_file")
"""The child tags that can provide the heights (exactly one is required)."""

TEXTURE_ROTATIONS = (0.0, 90.0, -90.0, 180.0, -180.0, 270.0)
"""Accepted ``texture_image_rotate`` values [deg]."""

KERNEL_SUM_TOLERANCE = 5e-3
"""How far from 1 the sum of an ``apply_kernel`` matrix may be."""
MAX_KERNEL_SIZE = 15
"""Largest ``apply_kernel`` (15x15)."""
MAX_KERNEL_WORK = 5e8
"""Most multiply-adds of the smoothing (kernel cells x heights): about a second."""


class DecodedHeights:
    """A decoded, read-only height grid shared by every element that loads the same source the same way.

    Attributes:
        heights: float64 (rows, cols) heights [m], not writeable; rows <-> +X, cols <-> +Y.
        dem_corner: the DEM's own minimum (x, y) [m] (the default corner of a DEM map), None for other sources.
    """

    __slots__ = ("heights", "dem_corner", "__weakref__")

    def __init__(self, heights: np.ndarray, dem_corner: tuple[float, float] | None) -> None:
        self.heights = heights
        self.dem_corner = dem_corner


_SHARED: weakref.WeakValueDictionary[tuple[object, ...], DecodedHeights] = weakref.WeakValueDictionary()
"""Decoded heights by :meth:`ElevationMap._key`, while some element holds them."""


def smooth(heights: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Filter ``heights`` with a square, odd-sized ``kernel`` (correlation, kernel centred on each cell).

    Near the borders only the kernel taps that fall inside the grid are used, re-normalised by their weight sum,
    so that a flat terrain stays flat up to its edges.

    Args:
        heights: (rows, cols) heights [m].
        kernel: (k, k) weights, k odd, summing to ~1.

    Returns:
        (rows, cols) float64 smoothed heights [m].
    """
    k = kernel.shape[0]
    r = k // 2
    rows, cols = heights.shape
    padded = np.pad(heights.astype(np.float64), r)
    inside = np.pad(np.ones_like(heights, dtype=np.float64), r)
    acc = np.zeros((rows, cols))
    wsum = np.zeros((rows, cols))
    for di in range(k):
        for dj in range(k):
            w = kernel[di, dj]
            acc += w * padded[di:di + rows, dj:dj + cols]
            wsum += w * inside[di:di + rows, dj:dj + cols]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(np.abs(wsum) > 1e-12, acc / wsum, heights)
    return out


def triangle_height(z00: float, z10: float, z01: float, z11: float, fx: float, fy: float) -> float:
    """Height inside one cell from its 4 corner heights, piecewise linear on 2 triangles.

    Args:
        z00, z10, z01, z11: heights [m] at the cell corners (i, j), (i+1, j), (i, j+1), (i+1, j+1).
        fx, fy: position inside the cell along +X and +Y as fractions in [0, 1].

    The cell is split by the diagonal (0, 0)-(1, 1): above it (``fy >= fx``) the plane through z00, z01, z11;
    below it the plane through z00, z10, z11.
    """
    if fy >= fx:
        return z00 + fy * (z01 - z00) + fx * (z11 - z01)
    return z00 + fx * (z10 - z00) + fy * (z11 - z10)


class ElevationMap(WorldElement):
    """Terrain heights on a grid.

    Attributes:
        heights: float64 (rows, cols) heights [m]; rows <-> +X, cols <-> +Y. Read-only, and the same array for
            every element (of every world alive) that loads the same unchanged source with the same decoding
            parameters (:meth:`_key`); charged to the load budget once (:data:`ELEVATION_CELL_BYTES` per height),
            and once more per distinct corner (:data:`ELEVATION_PLACEMENT_CELL_BYTES`).
        resolution: vertex spacing [m].
        corner_min_x, corner_min_y: world position [m] of vertex (0, 0).
        source: which tag gave the heights (one of :data:`SOURCES`).
        source_path: the file read (image or DEM), None for a matrix.
        texture_path: local texture image, None when none or unavailable.
    """

    xml_class: ClassVar[str] = "elevation_map"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("elevation_image", Kind.STRING, "", doc="grayscale image of heights"),
        Param("elevation_image_min_z", Kind.FLOAT, 0.0, "m", doc="height of the darkest pixel"),
        Param("elevation_image_max_z", Kind.FLOAT, 5.0, "m", doc="height of the brightest pixel"),
        Param("elevation_data_matrix", Kind.STRING, "", doc="Matlab-style matrix of heights"),
        Param("elevation_data_matrix_scale", Kind.FLOAT, 1.0, doc="factor applied to the matrix"),
        Param("dem_xyzrgb_file", Kind.STRING, "", doc="text file of 'x y z r g b' points"),
        Param("dem_offset_x", Kind.FLOAT, 0.0, "m", doc="added to the DEM x"),
        Param("dem_offset_y", Kind.FLOAT, 0.0, "m", doc="added to the DEM y"),
        Param("dem_offset_z", Kind.FLOAT, 0.0, "m", doc="added to the DEM z"),
        Param("resolution", Kind.FLOAT, 1.0, "m", positive=True, doc="vertex spacing"),
        Param("corner_min_x", Kind.FLOAT, None, "m", doc="world x of vertex (0, 0); default -LX/2"),
        Param("corner_min_y", Kind.FLOAT, None, "m", doc="world y of vertex (0, 0); default -LY/2"),
        Param("texture_image", Kind.STRING, "", doc="image draped on the mesh"),
        Param("texture_image_rotate", Kind.FLOAT, 0.0, "deg", doc="0, 90, -90 or 180"),
        Param("texture_extension_x", Kind.FLOAT, 0.0, "m", min=0.0, doc="texture tile size along X; 0 = whole map"),
        Param("texture_extension_y", Kind.FLOAT, 0.0, "m", min=0.0, doc="texture tile size along Y; 0 = whole map"),
        Param("mesh_color", Kind.COLOR, (0xA0, 0xE0, 0xA0, 0xFF), doc="used when there is no texture"),
        Param("model_split_size", Kind.FLOAT, 0.0, "m", min=0.0, doc="render in chunks of this size; 0 = one"),
        Param("apply_kernel", Kind.STRING, "", doc="square smoothing kernel, Matlab text, sum 1"),
        Param("debug_show_contact_points", Kind.BOOL, False),
    )

    heights: np.ndarray
    resolution: float
    corner_min_x: float
    corner_min_y: float
    source: str
    source_path: Path | None
    texture_path: Path | None

    def _load(self, ctx: ParseContext) -> None:
        p = self.params
        self.resolution = float(p.resolution)
        given = sorted((p.where[tag] for tag in SOURCES if p[tag]), key=lambda n: n.line)
        if not given:
            raise ctx.error(self.node, "elevation_map needs one height source: <elevation_image>, "
                                       "<elevation_data_matrix> or <dem_xyzrgb_file>")
        if len(given) > 1:
            raise ctx.error(given[1], f"elevation_map takes exactly one height source, but has both "
                                      f"<{given[0].tag}> and <{given[1].tag}>")
        src = given[0]
        self.source = src.tag
        self.source_path = None
        if src.tag == "elevation_image":
            self.source_path = self._checked_path(p.elevation_image, "elevation image", src, ctx)
        elif src.tag == "dem_xyzrgb_file":
            self.source_path = self._checked_path(p.dem_xyzrgb_file, "DEM file", src, ctx)
        key = self._key()
        here = (src.file, src.line)
        what = f"elevation map {self.source_path.name if self.source_path is not None else 'matrix'}"

        def charge(cells: int) -> None:
            ctx.budget.charge_once(key, what, [Charge("elevation map", cells * ELEVATION_CELL_BYTES, *here,
                                                      objects=0)], *here)

        decoded = _SHARED.get(key)
        cells: int | None = decoded.heights.size if decoded is not None else self._cells_from_header()
        if cells is not None:
            charge(cells)  # before decoding: an image's header gives its size
        if decoded is None:
            decoded = self._decode(src, ctx)
            _SHARED[key] = decoded
        if cells is None:
            charge(decoded.heights.size)
        self._decoded = decoded  # keeps the shared entry alive as long as this element
        self.heights = decoded.heights

        lx = (self.heights.shape[0] - 1) * self.resolution
        ly = (self.heights.shape[1] - 1) * self.resolution
        default_x, default_y = decoded.dem_corner if decoded.dem_corner is not None else (-0.5 * lx, -0.5 * ly)
        self.corner_min_x = float(p.corner_min_x) if p.corner_min_x is not None else default_x
        self.corner_min_y = float(p.corner_min_y) if p.corner_min_y is not None else default_y
        # every distinct place a grid is drawn at costs the renderer its own packed vertices
        ctx.budget.charge_once((key, self.corner_min_x, self.corner_min_y), f"{what} placement",
                               [Charge("elevation map placement", decoded.heights.size
                                       * ELEVATION_PLACEMENT_CELL_BYTES, *here, objects=0)], *here)

        if float(p.texture_image_rotate) not in TEXTURE_ROTATIONS:
            raise ctx.error(child_node(self, "texture_image_rotate"),
                            f"<texture_image_rotate> must be 0, 90, -90 or 180 degrees "
                            f"(got {p.texture_image_rotate:g})")
        self.texture_path = None
        if p.texture_image:
            self.texture_path = resolve_asset(p.texture_image, child_node(self, "texture_image"), ctx)

    # ------------------------------------------------------------------ loading
    def _checked_path(self, value: str, what: str, node: XmlNode, ctx: ParseContext) -> Path:
        """The resolved file of ``<tag>value</tag>``, refused at ``node`` when it is missing or not a file."""
        path = ctx.resolve_path(value, node)
        problem = file_problem(path)
        if problem is not None:
            raise ctx.error(node, f"{what} {problem}: {shown_path(path)}")
        return path

    def _key(self) -> tuple[object, ...]:
        """What identifies the decoded heights: the source (a file by resolved path, size and modification time; a
        matrix by its text) and every parameter that changes the decoding (z range, scale, DEM offsets and
        resolution, smoothing kernel). Placement (corner) is not part of it."""
        p = self.params
        if self.source_path is not None:
            st = self.source_path.stat()
            src: tuple[object, ...] = (str(self.source_path.resolve()), st.st_size, st.st_mtime_ns)
        else:
            src = (p.elevation_data_matrix,)
        if self.source == "elevation_image":
            extra: tuple[object, ...] = (p.elevation_image_min_z, p.elevation_image_max_z)
        elif self.source == "dem_xyzrgb_file":
            extra = (p.dem_offset_x, p.dem_offset_y, p.dem_offset_z, self.resolution)
        else:
            extra = (p.elevation_data_matrix_scale,)
        return (self.source, *src, *extra, p.apply_kernel)

    def _cells_from_header(self) -> int | None:
        """Heights of an image map from its file's header, before decoding (None: known once decoded)."""
        if self.source != "elevation_image" or self.source_path is None:
            return None
        from mvsim_core.io.image_map import image_size

        size = image_size(self.source_path)
        return None if size is None else size[0] * size[1]

    def _decode(self, src: XmlNode, ctx: ParseContext) -> DecodedHeights:
        """Decode, smooth and check the heights of the source at ``src``; the result is read-only."""
        p = self.params
        dem_corner: tuple[float, float] | None = None
        if src.tag == "elevation_image":
            heights = self._load_image(src, ctx)
        elif src.tag == "elevation_data_matrix":
            matrix = _parse_matrix(p.elevation_data_matrix, src, ctx, "height matrix")
            with np.errstate(over="ignore"):  # an overflow is refused below
                heights = matrix * p.elevation_data_matrix_scale
        else:
            heights, dem_corner = self._load_dem(src, ctx)
        if heights.shape[0] < 2 or heights.shape[1] < 2:
            raise ctx.error(src, f"elevation_map needs at least 2x2 heights (one cell); got "
                                 f"{heights.shape[0]}x{heights.shape[1]}")
        if p.apply_kernel:
            heights = smooth(heights, self._kernel(ctx, heights.size))
        bad = np.flatnonzero(~(np.abs(heights) <= MAX_MAGNITUDE))
        if bad.size:
            i, j = np.unravel_index(int(bad[0]), heights.shape)
            raise ctx.error(src, f"elevation_map height [{i}, {j}] is {heights[i, j]:g} m; heights must be finite and "
                                 f"at most {MAX_MAGNITUDE:g} m in magnitude (check the source and its scale or offset)")
        out = np.ascontiguousarray(heights, dtype=np.float64)
        out.setflags(write=False)
        return DecodedHeights(out, dem_corner)

    def _load_image(self, node: XmlNode, ctx: ParseContext) -> np.ndarray:
        from mvsim_core.io.elevation_data import load_elevation_image

        p = self.params
        assert self.source_path is not None
        try:
            return load_elevation_image(self.source_path, p.elevation_image_min_z, p.elevation_image_max_z)
        except AssetError as e:
            raise ctx.error(node, str(e)) from None
        except ValueError as e:
            raise ctx.error(child_node(self, "elevation_image_max_z"), str(e)) from None

    def _load_dem(self, node: XmlNode, ctx: ParseContext) -> tuple[np.ndarray, tuple[float, float]]:
        from mvsim_core.io.elevation_data import load_dem_xyzrgb, resample_dem

        p = self.params
        path = self.source_path
        assert path is not None
        try:
            points = load_dem_xyzrgb(path)
            points[:, :3] += (p.dem_offset_x, p.dem_offset_y, p.dem_offset_z)
            heights, x_min, y_min = resample_dem(points, self.resolution)
        except AssetError as e:
            raise ctx.error(node, str(e)) from None
        except ValueError as e:
            raise ctx.error(node, f"{path}: {e}") from None
        return heights, (x_min, y_min)

    def _kernel(self, ctx: ParseContext, cells: int) -> np.ndarray:
        """The ``<apply_kernel>`` matrix, for a grid of ``cells`` heights (its cost is k² passes over them)."""
        node = child_node(self, "apply_kernel")
        kernel = _parse_matrix(self.params.apply_kernel, node, ctx, "<apply_kernel>")
        k_rows, k_cols = kernel.shape
        if k_rows != k_cols or k_rows % 2 == 0:
            raise ctx.error(node, f"<apply_kernel> must be a square matrix of odd size (3x3, 5x5, ...); got "
                                  f"{k_rows}x{k_cols}")
        if k_rows > MAX_KERNEL_SIZE or k_rows * k_rows * cells > MAX_KERNEL_WORK:
            raise ctx.error(node, f"<apply_kernel> of {k_rows}x{k_cols} on {cells} heights takes "
                                  f"{k_rows * k_rows * cells:.3g} multiply-adds; the limits are {MAX_KERNEL_SIZE}x"
                                  f"{MAX_KERNEL_SIZE} and {MAX_KERNEL_WORK:.0e}: use a smaller kernel")
        if abs(kernel.sum() - 1.0) > KERNEL_SUM_TOLERANCE:
            raise ctx.error(node, f"<apply_kernel> weights must sum to 1 (got {kernel.sum():g})")
        return kernel

    # ------------------------------------------------------------------ queries
    @property
    def corner_max_x(self) -> float:
        """World x [m] of the last row of vertices."""
        return self.corner_min_x + (self.heights.shape[0] - 1) * self.resolution

    @property
    def corner_max_y(self) -> float:
        """World y [m] of the last column of vertices."""
        return self.corner_min_y + (self.heights.shape[1] - 1) * self.resolution

    def elevation_at(self, x: float, y: float) -> float | None:
        """Terrain height [m] at world ``(x, y)`` [m], or None outside the grid (edges included)."""
        u = (x - self.corner_min_x) / self.resolution
        v = (y - self.corner_min_y) / self.resolution
        rows, cols = self.heights.shape
        if not (0.0 <= u <= rows - 1 and 0.0 <= v <= cols - 1):
            return None
        i = min(int(math.floor(u)), rows - 2)
        j = min(int(math.floor(v)), cols - 2)
        h = self.heights
        return float(triangle_height(h[i, j], h[i + 1, j], h[i, j + 1], h[i + 1, j + 1], u - i, v - j))

    def elevations_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`elevation_at`: heights [m] at world points, NaN outside the grid."""
        u = (np.asarray(x, dtype=np.float64) - self.corner_min_x) / self.resolution
        v = (np.asarray(y, dtype=np.float64) - self.corner_min_y) / self.resolution
        u, v = np.broadcast_arrays(u, v)
        rows, cols = self.heights.shape
        inside = (u >= 0.0) & (u <= rows - 1) & (v >= 0.0) & (v <= cols - 1)
        i = np.clip(np.floor(np.where(inside, u, 0.0)).astype(np.int64), 0, rows - 2)
        j = np.clip(np.floor(np.where(inside, v, 0.0)).astype(np.int64), 0, cols - 2)
        fx, fy = u - i, v - j
        h = self.heights
        z00, z10, z01, z11 = h[i, j], h[i + 1, j], h[i, j + 1], h[i + 1, j + 1]
        upper = z00 + fy * (z01 - z00) + fx * (z11 - z01)
        lower = z00 + fx * (z10 - z00) + fy * (z11 - z10)
        return np.where(inside, np.where(fy >= fx, upper, lower), np.nan)

    def extent(self) -> Extent:
        """The grid's rectangle and the range of its heights."""
        return Extent(self.corner_min_x, self.corner_max_x, self.corner_min_y, self.corner_max_y,
                      float(self.heights.min()), float(self.heights.max()))

    def summary(self) -> str:
        rows, cols = self.heights.shape
        what = self.source_path.name if self.source_path is not None else "matrix"
        return (f"elevation_map {what} {rows}x{cols} vertices @ {self.resolution:g} m, "
                f"x [{self.corner_min_x:g}, {self.corner_max_x:g}] y [{self.corner_min_y:g}, {self.corner_max_y:g}], "
                f"z [{self.heights.min():g}, {self.heights.max():g}] m")


def _parse_matrix(text: str, node: XmlNode, ctx: ParseContext, what: str) -> np.ndarray:
    from mvsim_core.io.elevation_data import parse_matrix_text

    try:
        return parse_matrix_text(text)
    except ValueError as e:
        raise ctx.error(node, f"bad {what}: {e}") from None

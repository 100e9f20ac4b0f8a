"""Elevation (terrain height) data sources for ``<element class="elevation_map">``.

Orientation convention (upstream ``ElevationMap.cpp`` and §1.9 of the reference): a height matrix ``Z`` is indexed
``Z[i, j]`` with **rows i <-> world +X** and **columns j <-> world +Y**; ``Z[i, j]`` is the terrain height [m] at
``(corner_min_x + i * resolution, corner_min_y + j * resolution)`` (grid *vertices*, so the map spans
``(rows - 1) * resolution`` along X).

For an elevation *image*, upstream takes MRPT ``CImage::getAsMatrix`` which returns ``M(row, col)`` = pixel at image
row ``row`` (row 0 = top) and column ``col``. Hence **image rows (top -> bottom) run along +X and image columns
(left -> right) run along +Y**: the top-left pixel is the vertex at ``(corner_min_x, corner_min_y)``, the
bottom-left pixel is at ``(corner_min_x + (H - 1) * res, corner_min_y)``. (This is a transpose of the usual
"image x = right, image y = down" picture; no flip is applied.)
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from mvsim_core.errors import AssetError
from mvsim_core.io.file_check import FileProblem, read_bytes_limited
from mvsim_core.io.image_map import luminance, read_image_array
from mvsim_core.memory_budget import budget_message, over_budget

_NUM_SPLIT = re.compile(r"[,\s]+")
DEM_CELL_BYTES = 48
"""Bytes :func:`resample_dem` works with per grid cell (sums, counts, heights, hole centres)."""


def load_elevation_image(path: str | Path, z_min: float = 0.0, z_max: float = 5.0) -> np.ndarray:
    """Heights [m] from a grayscale image, as upstream's ``<elevation_image>``.

    Upstream loads the image as 8-bit grayscale, converts it to ``v`` in ``[0, 1]``, then normalises with the
    image's own extremes: ``z = z_min + (v - v_min) * (z_max - z_min) / (v_max - v_min)`` — so the darkest pixel is
    always ``z_min`` and the brightest ``z_max``, whatever their absolute gray levels. Colour images use luminance
    ``0.299 R + 0.587 G + 0.114 B``; 16-bit images keep their precision; alpha is ignored.

    Args:
        path: image file.
        z_min: height [m] of the darkest pixel (``elevation_image_min_z``, default 0).
        z_max: height [m] of the brightest pixel (``elevation_image_max_z``, default 5).

    Returns:
        float64 array ``(H, W)``: ``heights[i, j]`` = image pixel (row ``i``, column ``j``); rows <-> +X,
        columns <-> +Y (see module docstring). A uniform image (v_max == v_min, a division by zero upstream) gives
        ``z_min`` everywhere.

    Raises:
        AssetError: missing / undecodable image.
        ValueError: ``z_min == z_max`` (upstream asserts this) or non-finite bounds.
    """
    z0, z1 = float(z_min), float(z_max)
    if not (math.isfinite(z0) and math.isfinite(z1)):
        raise ValueError(f"elevation image z range must be finite; got [{z_min!r}, {z_max!r}]")
    if z0 == z1:
        raise ValueError(f"elevation_image_min_z and elevation_image_max_z must differ (both are {z0})")
    v = luminance(read_image_array(path))
    vmin = float(v.min())
    vmax = float(v.max())
    if vmax == vmin:
        return np.full(v.shape, z0, dtype=np.float64)
    return z0 + (v - vmin) * ((z1 - z0) / (vmax - vmin))


def parse_matrix_text(text: str) -> np.ndarray:
    """Parse a Matlab-style matrix string: ``"[1 2 3; 4 5 6]"``.

    Rows are separated by ``;`` and/or newlines, values by spaces, tabs and/or commas. The surrounding brackets are
    optional (but must be balanced); empty rows (e.g. a trailing ``;``) are ignored.

    Returns:
        float64 array of shape ``(rows, cols)``.

    Raises:
        ValueError: empty matrix, unbalanced brackets, a non-numeric or non-finite value, or ragged rows (the message
            says which row and how many values it has vs. the first row). The caller wraps it in a WorldFileError.
    """
    s = text.strip()
    opens, closes = s.startswith("["), s.endswith("]")
    if opens != closes:
        raise ValueError(f"unbalanced brackets in matrix text {text.strip()!r}")
    if opens:
        s = s[1:-1]
    if "[" in s or "]" in s:
        raise ValueError(f"unexpected bracket inside matrix text {text.strip()!r} (nested matrices are not allowed)")
    rows: list[list[float]] = []
    for chunk in re.split(r"[;\n\r]", s):
        tokens = [t for t in _NUM_SPLIT.split(chunk.strip()) if t]
        if not tokens:
            continue
        row = []
        for tok in tokens:
            try:
                val = float(tok)
            except ValueError:
                raise ValueError(f"matrix row {len(rows) + 1}: '{tok}' is not a number") from None
            if not math.isfinite(val):
                raise ValueError(f"matrix row {len(rows) + 1}: '{tok}' is not a finite number")
            row.append(val)
        if rows and len(row) != len(rows[0]):
            raise ValueError(
                f"matrix rows have different lengths: row {len(rows) + 1} has {len(row)} values but "
                f"row 1 has {len(rows[0])}"
            )
        rows.append(row)
    if not rows:
        raise ValueError(f"empty matrix text {text.strip()!r}")
    return np.array(rows, dtype=np.float64)


def load_dem_xyzrgb(path: str | Path) -> np.ndarray:
    """Load a DEM point file with 6 columns ``x y z r g b`` per line (``<dem_xyzrgb_file>``).

    Values are separated by whitespace and/or commas; blank lines and lines starting with ``#`` or ``%`` are
    skipped. Units: x, y, z in metres (world frame before ``dem_offset_*``); r, g, b as in the file (0..255).

    Returns:
        float64 array ``(N, 6)``.

    Raises:
        AssetError: missing/unreadable file, no data, a line without exactly 6 columns or with a non-numeric value
            (the message gives the 1-based line number).
    """
    p = Path(path)
    try:
        text = read_bytes_limited(p).decode("utf-8", errors="strict")
    except FileProblem as e:
        if e.problem == "not found":
            raise AssetError(str(path), "DEM file not found (check <dem_xyzrgb_file>)") from None
        raise AssetError(str(path), f"DEM file {e.problem}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise AssetError(str(path), f"cannot read DEM text file: {e}") from e
    values: list[float] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s[0] in "#%":
            continue
        tokens = [t for t in _NUM_SPLIT.split(s) if t]
        if len(tokens) != 6:
            raise AssetError(str(path), f"line {lineno}: expected 6 columns (x y z r g b), found {len(tokens)}")
        try:
            row = [float(t) for t in tokens]
        except ValueError:
            raise AssetError(str(path), f"line {lineno}: non-numeric value in {s!r}") from None
        if not all(math.isfinite(v) for v in row[:3]):
            raise AssetError(str(path), f"line {lineno}: x, y, z must be finite numbers")
        values.extend(row)
    if not values:
        raise AssetError(str(path), "DEM file contains no data lines (expected 'x y z r g b' per line)")
    return np.asarray(values, dtype=np.float64).reshape(-1, 6)


def resample_dem(points: np.ndarray, resolution: float) -> tuple[np.ndarray, float, float]:
    """Resample scattered DEM points onto a regular height grid.

    The grid starts at the points' minimum x/y; it has ``max(1, ceil((max - min) / resolution))`` cells per axis
    (as upstream). ``heights[i, j]`` is the mean z of the points falling in cell
    ``[x_min + i*res, x_min + (i+1)*res) x [y_min + j*res, y_min + (j+1)*res)`` (points on the far border go to the
    last cell); empty cells take the z of the input point nearest (in XY) to the cell centre. Rows <-> +X,
    columns <-> +Y. Upstream instead stores, per cell, the z of the single point nearest to the cell centre, and
    then uses the matrix as mesh *vertices* at ``corner_min + i * res`` (a half-cell shift it does not correct);
    pass the returned ``x_min, y_min`` as ``corner_min_x/y`` to reproduce its placement.

    Args:
        points: ``(N, >=3)`` array whose first three columns are x, y, z [m].
        resolution: cell size [m], > 0.

    Returns:
        ``(heights, x_min, y_min)``: float64 ``(nx, ny)`` heights [m] and the grid corner [m].

    Raises:
        ValueError: bad shape, no points, non-finite coordinates, non-positive resolution, or a grid over the memory
            budget (:mod:`mvsim_core.memory_budget`).
    """
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] < 3:
        raise ValueError(f"DEM points must be an (N, 3+) array of x, y, z; got shape {pts.shape}")
    if pts.shape[0] == 0:
        raise ValueError("DEM has no points")
    res = float(resolution)
    if not (math.isfinite(res) and res > 0.0):
        raise ValueError(f"DEM resampling resolution must be a finite number > 0 [m]; got {resolution!r}")
    xyz = pts[:, :3]
    if not np.all(np.isfinite(xyz)):
        raise ValueError("DEM points contain non-finite x, y or z values")

    x_min, y_min = float(xyz[:, 0].min()), float(xyz[:, 1].min())
    x_max, y_max = float(xyz[:, 0].max()), float(xyz[:, 1].max())
    fx, fy = (x_max - x_min) / res, (y_max - y_min) / res
    fx, fy = (max(1.0, float(math.ceil(f))) if f < 1e15 else math.inf for f in (fx, fy))
    if over_budget(fx * fy, DEM_CELL_BYTES):
        raise ValueError(budget_message(f"a height grid of {fx:.0f} x {fy:.0f} cells ({x_max - x_min:g} x "
                                        f"{y_max - y_min:g} m at {res:g} m)", fx * fy, DEM_CELL_BYTES,
                                        "use a coarser <resolution>"))
    nx, ny = int(fx), int(fy)
    ix = np.clip(np.floor((xyz[:, 0] - x_min) / res).astype(np.int64), 0, nx - 1)
    iy = np.clip(np.floor((xyz[:, 1] - y_min) / res).astype(np.int64), 0, ny - 1)
    flat = ix * ny + iy
    sums = np.bincount(flat, weights=xyz[:, 2], minlength=nx * ny)
    counts = np.bincount(flat, minlength=nx * ny)
    heights = np.empty(nx * ny, dtype=np.float64)
    filled = counts > 0
    heights[filled] = sums[filled] / counts[filled]
    holes = np.flatnonzero(~filled)
    if holes.size:
        tree = _kdtree()(xyz[:, :2])
        cx = x_min + (holes // ny + 0.5) * res
        cy = y_min + (holes % ny + 0.5) * res
        _, nearest = tree.query(np.column_stack([cx, cy]), k=1)
        heights[holes] = xyz[nearest, 2]
    return heights.reshape(nx, ny), x_min, y_min


def _kdtree():
    """scipy's cKDTree, imported on first use (scipy.spatial costs ~0.2 s to import)."""
    from scipy.spatial import cKDTree

    return cKDTree

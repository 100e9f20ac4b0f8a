"""Occupancy grid from a bitmap image (PNG, JPG, BMP, ...), as ``<element class="occupancy_grid"><file>x.png``.

Reproduces how upstream MVSim places such an image: MVSim calls MRPT's
``COccupancyGridMap2D::loadFromBitmapFile(file, resolution, {centerpixel_x, centerpixel_y})`` (MRPT >= 2.0),
whose behaviour, read from MRPT's source, is:

* Pixel *values*: grayscale luminance ``L`` in ``[0, 1]`` (colour: ``0.299 R + 0.587 G + 0.114 B``) is the
  probability that the cell is FREE (white = free, black = occupied); MRPT clamps it to ``[0.01, 0.99]`` and stores
  it as 8-bit log-odds. Here we keep ``occupancy = 1 - L`` exactly (no clamping/quantisation: the simulator only
  compares against 0.5, so this makes no difference). Alpha is ignored.
* Vertical flip: grid row ``iy`` is image row ``H - 1 - iy`` (image row 0, the top one, is the largest y).
* Placement: with origin pixel ``(cx, cy)`` the grid limits are ``x_min = -cx * res``, ``x_max = (W - cx) * res``,
  ``y_min = -cy * res``, ``y_max = (H - cy) * res``, and MRPT's ``setSize`` snaps every limit to a multiple of the
  resolution with C ``round()`` (half away from zero). So world ``(0, 0)`` is the *corner* of the pixel grid at
  column ``cx`` and at grid row ``cy`` **counted from the bottom of the image** (not from the top, as image
  coordinates usually are; both agree only when ``cy = H / 2``).
  In formulas, the centre of image pixel (column ``u``, row ``v``, row 0 at the top) lies at
  ``x = x_min + (u + 0.5) * res``, ``y = y_min + (H - 1 - v + 0.5) * res``.
* The origin defaults to the image centre ``(W/2, H/2)`` **only when no origin is given at all** (MRPT 2.x uses
  ``DBL_MAX`` as "unset"). MVSim's XML defaults ``centerpixel_x/centerpixel_y`` to ``-1`` and passes them through,
  so with MRPT 2.x an image without ``<centerpixel_*>`` is placed with its origin at pixel ``(-1, -1)``, i.e.
  ``x_min = y_min = +resolution`` (the map lies in the positive quadrant). The shipped world ``mvsim_slam``
  (``demo_world1.png``, res 0.25, no centre pixel, robot at (22, 22)) relies on this: with a centred map the robot
  would start outside the walls, with MRPT 2.x placement it starts in free space. This module reproduces MRPT 2.x
  (``None`` = image centre). MRPT 1.x used ``(xCentralPixel < -1 || yCentralPixel <= -1)`` => image centre; pass
  ``mrpt1_centering=True`` to get that rule instead (then ``-1, -1`` means the image centre, as MVSim's docs say).
* MRPT's snapping can add one extra, unknown column/row for fractional origins (e.g. odd width with a centred
  origin); here the grid always has exactly the image size and only ``x_min``/``y_min`` follow MRPT's snapping.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from mvsim_core.errors import AssetError
from mvsim_core.io.file_check import file_problem
from mvsim_core.io.grid_map import GridMap
from mvsim_core.io.png_chunks import png_chunk_problem
from mvsim_core.memory_budget import budget_message, over_budget

# ITU-R BT.601 luma weights (as MRPT >= 2.x CImage::getAsFloat and OpenCV's grayscale conversion).
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float64)


def image_size(path: str | Path) -> tuple[int, int] | None:
    """``(width, height)`` pixels of an image from its header (nothing decoded), or None when it cannot be read as
    an image (:func:`read_image_array` then says why)."""
    if png_chunk_problem(path) is not None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(Path(path)) as img:
                w, h = img.size
                return int(w), int(h)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return None


def read_image_array(path: str | Path) -> np.ndarray:
    """Load an image file as a float64 array ``(H, W, C)`` with values in ``[0, 1]``.

    ``C`` is 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA); row 0 is the top image row. 16-bit grayscale images
    keep their full precision (divided by 65535); palette / CMYK / other modes are converted to RGB(A).

    Raises:
        AssetError: the file is missing, is not a file, is a PNG with a chunk longer than the file
            (:mod:`mvsim_core.io.png_chunks`), cannot be decoded as an image, or has more pixels than the
            memory budget allows (:mod:`mvsim_core.memory_budget`, one float64 per pixel).
    """
    p = Path(path)
    problem = file_problem(p)
    if problem == "not found":
        raise AssetError(
            str(path),
            "image file not found (check the path; relative paths are resolved against the "
            "directory of the file that references it)",
        )
    if problem is not None:
        raise AssetError(str(path), f"{problem} (expected an image such as .png/.jpg/.bmp)")
    damage = png_chunk_problem(p)
    if damage is not None:
        raise AssetError(str(path), f"{damage}; re-save it as an 8-bit grayscale or RGB PNG")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(p) as img:
                w, h = img.size
                if over_budget(w * h, 8):  # before decoding: the header may claim anything
                    raise AssetError(str(path), budget_message(f"an image of {w} x {h} pixels", w * h, 8,
                                                               "use a smaller image"))
                img.load()
                return _to_float_array(img)
    except AssetError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, MemoryError, Image.DecompressionBombError) as e:
        raise AssetError(
            str(path), f"cannot decode image ({type(e).__name__}: {e}); re-save it as an 8-bit grayscale or RGB PNG"
        ) from e


def _to_float_array(img: Image.Image) -> np.ndarray:
    mode = img.mode
    if mode == "1":
        return np.asarray(img, dtype=np.float64)[:, :, None]
    if mode == "L":
        return (np.asarray(img, dtype=np.float64) / 255.0)[:, :, None]
    if mode == "LA":
        return np.asarray(img, dtype=np.float64) / 255.0
    if mode in ("I;16", "I;16L", "I;16B", "I;16N", "I"):
        a = np.asarray(img, dtype=np.float64)
        return np.clip(a / 65535.0, 0.0, 1.0)[:, :, None]
    if mode == "F":
        return np.clip(np.asarray(img, dtype=np.float64), 0.0, 1.0)[:, :, None]
    if mode in ("RGB", "RGBA"):
        return np.asarray(img, dtype=np.float64) / 255.0
    has_alpha = mode in ("PA", "RGBa", "La") or (mode == "P" and "transparency" in img.info)
    conv = img.convert("RGBA" if has_alpha else "RGB")
    return np.asarray(conv, dtype=np.float64) / 255.0


def luminance(arr: np.ndarray) -> np.ndarray:
    """Grayscale luminance ``(H, W)`` in ``[0, 1]`` of an array from :func:`read_image_array` (alpha ignored)."""
    if arr.shape[2] >= 3:
        # rounding removes float noise so that white is exactly 1.0 (and black exactly 0.0)
        return np.clip(np.round(arr[:, :, :3] @ _LUMA, 12), 0.0, 1.0)
    return arr[:, :, 0].copy()


def _round_half_away(v: float) -> float:
    """C/C++ ``round()``: halves go away from zero."""
    return math.copysign(math.floor(abs(v) + 0.5), v)


def load_image_grid(
    path: str | Path,
    resolution: float = 0.10,
    centerpixel_x: float | None = -1.0,
    centerpixel_y: float | None = -1.0,
    *,
    mrpt1_centering: bool = False,
) -> GridMap:
    """Load a bitmap as an occupancy grid, placed exactly like upstream MVSim/MRPT (see the module docstring).

    Args:
        path: image file (anything pillow decodes: PNG, JPG, BMP, PGM, TIFF, ...).
        resolution: cell size [m/pixel], > 0.
        centerpixel_x: image column (pixels from the left edge) at which world x = 0. ``None`` = ``W / 2``.
        centerpixel_y: grid row (pixels from the **bottom** edge, see module docstring) at which world y = 0.
            ``None`` = ``H / 2``.
        mrpt1_centering: apply MRPT 1.x's rule "``centerpixel_x < -1`` or ``centerpixel_y <= -1`` => image centre"
            (so the XML default ``-1, -1`` centres the map). Default False = MRPT 2.x behaviour, as upstream MVSim
            v1.2 actually runs.

    Returns:
        GridMap with ``occupancy = 1 - luminance`` (float32, ``[iy, ix]``, ``iy = 0`` = bottom image row).

    Raises:
        AssetError: missing / undecodable image.
        ValueError: non-positive or non-finite resolution / centre pixel.
    """
    res = float(resolution)
    if not (math.isfinite(res) and res > 0.0):
        raise ValueError(f"occupancy grid resolution must be a finite number > 0 [m/pixel]; got {resolution!r}")
    arr = read_image_array(path)
    lum = luminance(arr)
    h, w = lum.shape
    if h == 0 or w == 0:
        raise AssetError(str(path), "image has zero width or height")

    cx = None if centerpixel_x is None else float(centerpixel_x)
    cy = None if centerpixel_y is None else float(centerpixel_y)
    for name, v in (("centerpixel_x", cx), ("centerpixel_y", cy)):
        if v is not None and not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number of pixels; got {v!r}")
    if mrpt1_centering and ((cx is not None and cx < -1.0) or (cy is not None and cy <= -1.0)):
        cx, cy = None, None
    if cx is None:
        cx = w / 2.0
    if cy is None:
        cy = h / 2.0

    x_min = res * _round_half_away(-cx)
    y_min = res * _round_half_away(-cy)
    occupancy = np.flipud(1.0 - lum).astype(np.float32)
    return GridMap(occupancy=occupancy, resolution=res, x_min=x_min, y_min=y_min)

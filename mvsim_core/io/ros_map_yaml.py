"""Occupancy grid from a ROS ``map_server`` YAML file (``<occupancy_grid><file>map.yaml``).

Format (ROS 1 ``map_server`` / ROS 2 ``nav2_map_server``)::

    image: map.pgm            # relative to the YAML file's directory, or absolute
    resolution: 0.05          # [m/pixel]
    origin: [x, y, yaw]       # world pose [m, m, rad] of the LOWER-LEFT corner of the image
    negate: 0                 # 1: white = occupied, black = free
    occupied_thresh: 0.65
    free_thresh: 0.196
    mode: trinary             # optional: trinary (default) | scale | raw

Pixel semantics (as map_server): ``c`` = mean of the colour channels in ``[0, 1]`` (alpha excluded), with
``c -> 1 - c`` when ``negate``; occupancy ``p = 1 - c``.

* ``trinary``: ``p > occupied_thresh`` -> 1.0 (occupied), ``p < free_thresh`` -> 0.0 (free), otherwise 0.5 (unknown).
* ``scale``: like trinary at the extremes; pixels with alpha < 1 are unknown (0.5); in between the thresholds the
  value is linear: ``(p - free_thresh) / (occupied_thresh - free_thresh)`` (map_server writes 0..99 percent).
* ``raw``: the 8-bit value ``round(255 c)`` is the occupancy in percent; 0..100 -> value/100, anything else
  (e.g. 255 = ROS "-1") -> 0.5 (unknown).

Image row 0 (top) is the largest y; the returned grid has ``x_min, y_min = origin[0], origin[1]``.
A non-zero ``origin`` yaw would rotate the map; this is not supported (MRPT/MVSim ignore it silently; we refuse it).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from mvsim_core.errors import AssetError, quoted
from mvsim_core.io.file_check import FileProblem, file_problem, read_bytes_limited
from mvsim_core.io.grid_map import GridMap
from mvsim_core.io.image_map import read_image_array

_REQUIRED_KEYS = ("image", "resolution", "origin", "negate", "occupied_thresh", "free_thresh")
_MODES = ("trinary", "scale", "raw")


def _number(path: Path, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AssetError(str(path), f"key '{key}' must be a number; got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise AssetError(str(path), f"key '{key}' must be finite; got {value!r}")
    return v


def _boolean(path: Path, key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("0", "1", "true", "false"):
        return value.strip().lower() in ("1", "true")
    raise AssetError(str(path), f"key '{key}' must be 0, 1, true or false; got {value!r}")


def load_ros_map_yaml(path: str | Path) -> GridMap:
    """Load a ROS map_server YAML map (and its image) as a :class:`GridMap` (see module docstring).

    Raises:
        AssetError: missing/unreadable YAML or image, missing key (the message names it), bad value, unsupported
            mode or non-zero origin yaw.
    """
    p = Path(path)
    try:
        data = yaml.safe_load(read_bytes_limited(p).decode("utf-8"))
    except FileProblem as e:
        if e.problem == "not found":
            raise AssetError(str(path), "ROS map YAML file not found (check the <file> path of the "
                                        "occupancy_grid)") from None
        raise AssetError(str(path), f"ROS map YAML file {e.problem}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise AssetError(str(path), f"cannot read file: {e}") from e
    except yaml.YAMLError as e:
        raise AssetError(str(path), f"invalid YAML: {e}") from e
    if not isinstance(data, dict):
        raise AssetError(str(path), "expected a YAML mapping with keys " + ", ".join(_REQUIRED_KEYS))
    for key in _REQUIRED_KEYS:
        if key not in data:
            raise AssetError(
                str(path), f"missing required key '{key}' (a ROS map YAML needs: " + ", ".join(_REQUIRED_KEYS) + ")"
            )

    image = data["image"]
    if not isinstance(image, str) or not image.strip():
        raise AssetError(str(path), f"key 'image' must be a file name; got {image!r}")
    resolution = _number(p, "resolution", data["resolution"])
    if resolution <= 0.0:
        raise AssetError(str(path), f"key 'resolution' must be > 0 [m/pixel]; got {resolution}")
    origin = data["origin"]
    if not isinstance(origin, (list, tuple)) or len(origin) not in (2, 3):
        raise AssetError(str(path), f"key 'origin' must be a list [x, y, yaw]; got {origin!r}")
    ox = _number(p, "origin", origin[0])
    oy = _number(p, "origin", origin[1])
    if len(origin) == 3:
        yaw = _number(p, "origin", origin[2])
        if abs(yaw) > 1e-12:
            raise AssetError(
                str(path),
                f"origin yaw = {yaw} rad is not supported (rotated maps cannot be "
                "represented); rotate the image instead and set yaw to 0",
            )
    negate = _boolean(p, "negate", data["negate"])
    occ_th = _number(p, "occupied_thresh", data["occupied_thresh"])
    free_th = _number(p, "free_thresh", data["free_thresh"])
    if not (0.0 <= free_th <= occ_th <= 1.0):
        raise AssetError(
            str(path),
            f"thresholds must satisfy 0 <= free_thresh <= occupied_thresh <= 1; got "
            f"free_thresh={free_th}, occupied_thresh={occ_th}",
        )
    mode = data.get("mode", "trinary")
    if not isinstance(mode, str) or mode.strip().lower() not in _MODES:
        raise AssetError(str(path), f"key 'mode' must be one of {', '.join(_MODES)}; got {mode!r}")
    mode = mode.strip().lower()

    img_path = Path(image.strip()).expanduser()
    if not img_path.is_absolute():
        img_path = p.parent / img_path
    problem = file_problem(img_path)
    if problem is not None:
        raise AssetError(
            str(path),
            f"image file {quoted(str(img_path))} (key 'image') {problem}; paths are relative to the YAML file's "
            f"directory",
        )
    arr = read_image_array(img_path)

    nchan = arr.shape[2]
    colour = arr[:, :, :3].mean(axis=2) if nchan >= 3 else arr[:, :, 0]
    alpha = arr[:, :, nchan - 1] if nchan in (2, 4) else None
    if negate:
        colour = 1.0 - colour

    if mode == "raw":
        value = np.rint(colour * 255.0)
        occ = np.where(value <= 100.0, value / 100.0, 0.5)
    else:
        p_occ = 1.0 - colour
        if mode == "trinary":
            occ = np.full(p_occ.shape, 0.5)
        else:
            span = occ_th - free_th
            occ = (p_occ - free_th) / span if span > 0 else np.full(p_occ.shape, 0.5)
        occ = np.where(p_occ > occ_th, 1.0, occ)
        occ = np.where(p_occ < free_th, 0.0, occ)
        if mode == "scale" and alpha is not None:
            occ = np.where(alpha < 1.0, 0.5, occ)

    return GridMap(occupancy=np.flipud(occ).astype(np.float32), resolution=resolution, x_min=ox, y_min=oy)

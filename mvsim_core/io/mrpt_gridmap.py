"""Reader for MRPT's binary serialization of ``mrpt::maps::COccupancyGridMap2D`` (``*.gridmap`` / ``*.gridmap.gz``).

Stream format (all little-endian), learnt from MRPT's ``CArchive`` and ``COccupancyGridMap2D_io.cpp``:

1. Optional gzip wrapper (MVSim reads with ``CFileGZInputStream``, which accepts both): detected by the gzip magic
   bytes ``1f 8b``, not by the file extension.
2. Object header (``CArchive::WriteObject``):
   * current format (MRPT >= 0.5.5): ``uint8 (0x80 | len)``, ``len`` ASCII bytes of the class name
     (``"COccupancyGridMap2D"``), ``uint8`` serialization version;
   * old format (< 0.5.5): ``uint32 len`` (< 128), class name, ``uint32`` version (and no end flag).
3. Object body (versions 0..7):
   * ``uint8 bits_per_cell`` (8 or 16; only for version >= 2, older streams are 8-bit),
   * ``uint32 size_x, size_y``; ``float32 x_min, x_max, y_min, y_max, resolution`` [m],
   * ``size_x * size_y`` cells, row-major with ``index = ix + iy * size_x`` and ``iy = 0`` at ``y_min``:
     ``int8`` log-odds (8 bits) or ``int16`` (16 bits, which MRPT 2.x down-converts with ``>> 8``).
     Versions < 3 stored plain probabilities-of-free instead: ``uint8 u`` -> ``p_free = u / 255``.
   * version >= 1: insertion options (``float, bool, float, float, bool, uint16, float``), likelihood options
     (``int32, 4 x float, uint32, float, bool, float, uint32, float, bool, int32, float, int32, float``,
     ``vector<float>`` = ``uint32 n`` + ``n`` floats, ``bool``), then ``bool disableSaveAs3DObject`` (version < 6)
     or a nested serialized ``TMapGenericParams`` object (version >= 6); version >= 4: ``2 x float``;
     version >= 5: ``bool``.
4. ``uint8 0x88`` end-of-object flag (current format only).

Cell value -> probability (MRPT ``CLogOddsGridMapLUT``): with integer log-odds ``l`` (int8 clamped to
``[-127, 127]``), ``p_free = 1 / (1 + exp(-l / 16))`` (``LOGODD_K = 16``), i.e. ``l > 0`` means free. MRPT's
``getCell()`` returns ``p_free``; this reader returns ``occupancy = 1 - p_free = 1 / (1 + exp(l / 16))``.
``l = 0`` (unexplored) gives 0.5.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

import numpy as np

from mvsim_core.errors import AssetError
from mvsim_core.io.file_check import FileProblem, read_bytes_limited
from mvsim_core.io.grid_map import GridMap

CLASS_NAME = "COccupancyGridMap2D"
LOGODD_K = 16.0
CELLTYPE_MIN_8 = -127
CELLTYPE_MAX_8 = 127
END_FLAG = 0x88
_GZIP_MAGIC = b"\x1f\x8b"
_MAX_VERSION = 7


class _Truncated(Exception):
    """The byte stream ended before the expected field."""


class _Reader:
    """Little-endian cursor over a bytes buffer; raises :class:`_Truncated` instead of struct.error."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise _Truncated(f"{what}: need {n} bytes at offset {self.pos}, only {self.remaining()} left")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str, what: str) -> tuple:
        size = struct.calcsize("<" + fmt)
        return struct.unpack("<" + fmt, self.take(size, what))


def _f32(v: float) -> float:
    """A float32 value as the shortest decimal that round-trips (0.08f -> 0.08, not 0.07999999821)."""
    return float(str(np.float32(v)))


def _build_lut() -> np.ndarray:
    """Occupancy for every int8 log-odds value, indexed by the cell's raw byte (uint8 view)."""
    lo = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.float64)
    lo = np.clip(lo, CELLTYPE_MIN_8, CELLTYPE_MAX_8)
    lut = (1.0 / (1.0 + np.exp(lo / LOGODD_K))).astype(np.float32)
    lut.setflags(write=False)
    return lut


_OCC_LUT = _build_lut()


def logodds_to_occupancy(cells: np.ndarray) -> np.ndarray:
    """Convert MRPT int8 log-odds cells to occupancy probability (float32), see module docstring."""
    return _OCC_LUT[np.ascontiguousarray(cells, dtype=np.int8).view(np.uint8)]


def _read_header(r: _Reader) -> tuple[str, int, bool]:
    """Return (class name, version, is_old_format)."""
    (first,) = r.unpack("B", "object header")
    if first & 0x80:
        name_len = first & 0x7F
        old = False
    else:
        rest = r.take(3, "object header")
        if rest != b"\x00\x00\x00":
            raise ValueError("not an MRPT serialized object (bad header; is it really a .gridmap file?)")
        name_len = first
        old = True
    if name_len == 0 or name_len > 120:
        raise ValueError(f"not an MRPT serialized object (class-name length {name_len} is not sensible)")
    raw = r.take(name_len, "class name")
    try:
        name = raw.decode("ascii")
    except UnicodeDecodeError as e:
        raise ValueError("not an MRPT serialized object (class name is not ASCII)") from e
    if not name.isprintable():
        raise ValueError("not an MRPT serialized object (class name has control characters)")
    if old:
        (version,) = r.unpack("I", "object version")
    else:
        (version,) = r.unpack("B", "object version")
    return name, int(version), old


def _skip_trailer(r: _Reader, version: int) -> None:
    """Consume (and sanity-check) the options stored after the cells."""
    if version >= 1:
        r.unpack("f?ff?Hf", "insertion options")
        r.unpack("i4fIf?fIf?ifif", "likelihood options")
        (n_owa,) = r.unpack("I", "likelihood OWA weights")
        if n_owa > r.remaining() // 4:
            raise ValueError(f"likelihood OWA weight count {n_owa} exceeds the remaining data")
        r.take(4 * n_owa, "likelihood OWA weights")
        r.unpack("?", "likelihood cache flag")
        if version >= 6:
            name, _, old = _read_header(r)
            if name != "TMapGenericParams":
                raise ValueError(f"expected a nested TMapGenericParams object, found '{name}'")
            # Its body layout varies across MRPT versions; what follows it is fixed, so skip to the end:
            tail = (8 if version >= 4 else 0) + (1 if version >= 5 else 0)
            end = len(r.data) - tail - 1  # last byte: our own end flag
            if end < r.pos + (0 if old else 1) or r.data[end - 1] != END_FLAG:
                raise ValueError("nested TMapGenericParams object is truncated or corrupt")
            r.pos = end
        else:
            r.unpack("?", "disableSaveAs3DObject")
    if version >= 4:
        r.unpack("ff", "CFD feature options")
    if version >= 5:
        r.unpack("?", "wideningBeamsWithDistance")


def parse_mrpt_gridmap_bytes(data: bytes) -> tuple[GridMap, int]:
    """Parse an (already decompressed) serialized COccupancyGridMap2D. Returns (grid, serialization version).

    Raises:
        ValueError: not such a stream, or inconsistent / corrupt content.
        _Truncated: the data ends before the object does (kept separate from ValueError so that the message can
            say "truncated").
    """
    r = _Reader(data)
    name, version, old = _read_header(r)
    if name != CLASS_NAME:
        raise ValueError(f"the stream holds an object of class '{name}', expected '{CLASS_NAME}'")
    if version > _MAX_VERSION:
        raise ValueError(f"unknown {CLASS_NAME} serialization version {version} (supported: 0..{_MAX_VERSION})")

    bits = 8
    if version >= 2:
        (bits,) = r.unpack("B", "bits per cell")
    if bits not in (8, 16):
        raise ValueError(f"bits per cell must be 8 or 16; got {bits}")
    size_x, size_y = r.unpack("II", "grid size")
    x_min, x_max, y_min, y_max, res = r.unpack("5f", "grid limits")
    if not all(math.isfinite(v) for v in (x_min, x_max, y_min, y_max, res)) or res <= 0.0:
        raise ValueError(f"invalid grid limits/resolution: x=[{x_min}, {x_max}] y=[{y_min}, {y_max}] res={res}")
    if size_x == 0 or size_y == 0:
        raise ValueError(f"empty grid (size {size_x} x {size_y})")
    for label, lo, hi, n in (("x", x_min, x_max, size_x), ("y", y_min, y_max, size_y)):
        if abs((hi - lo) / res - n) > 1.0:
            raise ValueError(f"{label} limits [{lo}, {hi}] at resolution {res} do not match size {n}")

    n_cells = size_x * size_y
    nbytes = n_cells * (bits // 8)
    if nbytes > r.remaining():
        raise _Truncated(f"cells: need {nbytes} bytes ({size_x} x {size_y} x {bits // 8}), only {r.remaining()} left")
    raw = r.take(nbytes, "cells")
    if version < 3:
        # Old dumps stored probability-of-free as unsigned bytes (16-bit: the high byte after >> 8).
        u = np.frombuffer(raw, dtype="<u2").astype(np.uint16) >> 8 if bits == 16 else np.frombuffer(raw, np.uint8)
        occupancy = (1.0 - u.astype(np.float64) / 255.0).astype(np.float32)
    else:
        if bits == 8:
            cells = np.frombuffer(raw, dtype=np.int8)
        else:
            cells = (np.frombuffer(raw, dtype="<i2") >> 8).astype(np.int8)
        occupancy = logodds_to_occupancy(cells)

    _skip_trailer(r, version)
    if not old:
        (flag,) = r.unpack("B", "end-of-object flag")
        if flag != END_FLAG:
            raise ValueError(f"end-of-object flag is 0x{flag:02x}, expected 0x{END_FLAG:02x} (corrupt stream)")

    grid = GridMap(
        occupancy=occupancy.reshape(size_y, size_x),
        resolution=_f32(res),
        x_min=_f32(x_min),
        y_min=_f32(y_min),
    )
    return grid, version


TRAILER_BYTES = 2**20
"""Most bytes a stream may hold besides its header and cells (the options after the cells take under 1 KiB): a gzip
file that inflates past header + cells + this is refused without being inflated further (a gzip bomb)."""
_PEEK_BYTES = 256


class GridmapTooLarge(ValueError):
    """The (inflated) stream is longer than what its header announces."""


def _inflate(raw: bytes, cap: int, *, partial: bool = False) -> bytes:
    """Gunzip ``raw`` (every member), producing at most ``cap`` bytes.

    Args:
        partial: return the first ``cap`` bytes (a header peek) instead of refusing a longer stream.

    Raises:
        GridmapTooLarge: the data inflates past ``cap`` bytes (not ``partial``).
        EOFError: the data ends inside a member.
        zlib.error: corrupt data.
    """
    out: list[bytes] = []
    total = 0
    data = raw
    while data[:2] == _GZIP_MAGIC:
        d = zlib.decompressobj(wbits=31)
        chunk = d.decompress(data, cap + 1 - total)
        total += len(chunk)
        out.append(chunk)
        if total > cap:
            if partial:
                return b"".join(out)[:cap]
            raise GridmapTooLarge(f"the gzip data inflates past {cap} bytes, more than its header announces")
        if not d.eof:
            if partial:
                break
            raise EOFError("compressed stream ended before the end-of-stream marker")
        data = d.unused_data
    return b"".join(out)


def _stream_bytes(path: Path, cap: int, *, partial: bool = False) -> bytes:
    """The serialized stream of ``path``: its bytes, gunzipped when they start with the gzip magic (see
    :func:`_inflate` for ``cap`` and ``partial``).

    Raises:
        AssetError: not a usable file, bad gzip data, or more data than ``cap``.
    """
    try:
        blob = read_bytes_limited(path)
    except FileProblem as e:
        if e.problem == "not found":
            raise AssetError(str(path), "MRPT gridmap file not found (check the <file> path of the "
                                        "occupancy_grid)") from None
        raise AssetError(str(path), f"MRPT gridmap file {e.problem}") from None
    if blob[:2] != _GZIP_MAGIC:
        return blob[:cap] if partial else blob
    try:
        return _inflate(blob, cap, partial=partial)
    except GridmapTooLarge as e:
        raise AssetError(str(path), f"{e}; the file is corrupt or not a gridmap, re-export the map") from None
    except (EOFError, OSError, zlib.error) as e:
        raise AssetError(
            str(path), f"gzip data is truncated or corrupt ({e}); re-download or re-export the map"
        ) from e


def mrpt_gridmap_size(path: str | Path) -> tuple[int, int]:
    """``(size_x, size_y)`` cells of an MRPT ``.gridmap[.gz]``, read from its header: only its first bytes are
    inflated, so that the grid can be charged to the load budget before it is decoded.

    Raises:
        AssetError: as :func:`load_mrpt_gridmap`, for what the header shows.
    """
    head = _stream_bytes(Path(path), _PEEK_BYTES, partial=True)
    if not head:
        raise AssetError(str(path), "file is empty (expected an MRPT serialized COccupancyGridMap2D)")
    r = _Reader(head)
    try:
        name, version, _ = _read_header(r)
        if name != CLASS_NAME:
            raise ValueError(f"the stream holds an object of class '{name}', expected '{CLASS_NAME}'")
        if version >= 2:
            r.unpack("B", "bits per cell")
        size_x, size_y = r.unpack("II", "grid size")
    except _Truncated as e:
        raise AssetError(str(path), f"truncated MRPT gridmap ({e}); the file is incomplete, re-export it") from e
    except ValueError as e:
        raise AssetError(str(path), f"not a valid MRPT COccupancyGridMap2D stream: {e}") from e
    return int(size_x), int(size_y)


def load_mrpt_gridmap(path: str | Path) -> GridMap:
    """Load an MRPT ``.gridmap`` (optionally gzip-compressed) occupancy grid.

    A gzip file is inflated no further than its header announces (header, cells at 2 bytes each at most, and
    :data:`TRAILER_BYTES`).

    Returns:
        GridMap: ``occupancy[iy, ix]`` = P(occupied), ``iy = 0`` at ``y_min``; ``x_min``, ``y_min``, ``resolution``
        taken from the stream (float32 values written as their shortest decimal, e.g. 0.08).

    Raises:
        AssetError: missing file, bad gzip data, not an MRPT COccupancyGridMap2D stream, truncated or corrupt data.
    """
    p = Path(path)
    size_x, size_y = mrpt_gridmap_size(p)
    blob = _stream_bytes(p, _PEEK_BYTES + 2 * size_x * size_y + TRAILER_BYTES)
    try:
        grid, _ = parse_mrpt_gridmap_bytes(blob)
    except _Truncated as e:
        raise AssetError(str(path), f"truncated MRPT gridmap ({e}); the file is incomplete, re-export it") from e
    except ValueError as e:
        raise AssetError(
            str(path),
            f"not a valid MRPT COccupancyGridMap2D stream: {e}. Use an image (.png), a ROS "
            "map .yaml or a .gridmap[.gz] saved by MRPT",
        ) from e
    return grid

"""MRPT COccupancyGridMap2D binary streams: synthetic streams of every layout, the shipped campus map, and
corrupt / truncated / foreign files."""

from __future__ import annotations

import gzip
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from mvsim_core.errors import AssetError
from mvsim_core.io.mrpt_gridmap import load_mrpt_gridmap, logodds_to_occupancy

CLASS = b"COccupancyGridMap2D"


def header(name: bytes, version: int, old: bool = False) -> bytes:
    if old:
        return struct.pack("<I", len(name)) + name + struct.pack("<I", version)
    return bytes([0x80 | len(name)]) + name + bytes([version])


def trailer(version: int) -> bytes:
    out = b""
    if version >= 1:
        out += struct.pack("<f?ff?Hf", 0.0, False, 15.0, 0.8, False, 1, 0.02)
        likelihood = (0, 0.35, 0.95, 0.05, 80.0, 5, 0.3, False, 2.5, 1, 0.99, True, 10, 1.0, 1, 5.0)
        out += struct.pack("<i4fIf?fIf?ifif", *likelihood)
        owa = [0.01] * 3
        out += struct.pack("<I", len(owa)) + struct.pack(f"<{len(owa)}f", *owa) + struct.pack("<?", False)
        if version >= 6:
            out += header(b"TMapGenericParams", 2) + b"\x01\x01\x01\x00" + b"\x88"
        else:
            out += b"\x00"
    if version >= 4:
        out += struct.pack("<ff", 0.5, 0.5)
    if version >= 5:
        out += b"\x01"
    return out


def stream(
    cells: np.ndarray,
    *,
    res: float = 0.5,
    x_min: float = -1.0,
    y_min: float = 2.0,
    version: int = 3,
    bits: int = 8,
    old: bool = False,
) -> bytes:
    ny, nx = cells.shape
    body = b""
    if version >= 2:
        body += bytes([bits])
    body += struct.pack("<II5f", nx, ny, x_min, x_min + nx * res, y_min, y_min + ny * res, res)
    if bits == 8:
        body += cells.astype("<i1" if version >= 3 else "u1").tobytes()
    else:
        body += cells.astype("<i2" if version >= 3 else "<u2").tobytes()
    body += trailer(version)
    return header(CLASS, version, old) + body + (b"" if old else b"\x88")


# ny=2 rows x nx=3 columns of int8 log-odds; row 0 = y_min
CELLS = np.array([[0, 127, -127], [16, -16, -128]], dtype=np.int8)


def expected_occ(cells: np.ndarray) -> np.ndarray:
    lo = np.clip(cells.astype(float), -127, 127)
    return 1.0 / (1.0 + np.exp(lo / 16.0))


def test_logodds_conversion_values():
    occ = logodds_to_occupancy(np.array([0, 16, -16, 127, -127, -128], dtype=np.int8))
    np.testing.assert_allclose(
        occ, [0.5, 1 / (1 + math.e), 1 / (1 + math.exp(-1)), 3.5697e-4, 0.999643, 0.999643], rtol=1e-4
    )


@pytest.mark.parametrize("version", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("compress", [False, True])
def test_current_format_versions(tmp_path, version, compress):
    data = stream(CELLS, version=version)
    p = tmp_path / "m.gridmap"  # extension says nothing about compression: detected by magic bytes
    p.write_bytes(gzip.compress(data) if compress else data)
    g = load_mrpt_gridmap(p)
    assert (g.nx, g.ny, g.resolution, g.x_min, g.y_min) == (3, 2, 0.5, -1.0, 2.0)
    np.testing.assert_allclose(g.occupancy, expected_occ(CELLS), rtol=1e-6)
    # cell index = ix + iy * size_x with iy = 0 at y_min; log-odds 127 (MRPT: positive = free) at ix=1, iy=0
    ix, iy = g.world_to_cell(-0.25, 2.25)
    assert (ix, iy) == (1, 0) and g.occupancy[iy, ix] < 0.001


def test_old_format_and_16_bit_and_probability_versions(tmp_path):
    p = tmp_path / "old.gridmap"
    p.write_bytes(stream(CELLS, version=3, old=True))
    np.testing.assert_allclose(load_mrpt_gridmap(p).occupancy, expected_occ(CELLS), rtol=1e-6)

    c16 = CELLS.astype(np.int16) * 256 + 17  # MRPT 2.x keeps the high byte (>> 8)
    p.write_bytes(stream(c16, version=3, bits=16))
    np.testing.assert_allclose(load_mrpt_gridmap(p).occupancy, expected_occ(CELLS), rtol=1e-6)

    probs = np.array([[0, 255, 51]], dtype=np.uint8)  # version < 3: bytes are P(free) * 255
    for version in (1, 2):
        p.write_bytes(stream(probs, version=version))
        np.testing.assert_allclose(load_mrpt_gridmap(p).occupancy[0], [1.0, 0.0, 0.8], rtol=1e-6)


def test_uma_campus_map(worlds_dir):
    g = load_mrpt_gridmap(worlds_dir / "mvsim_tutorial" / "uma_campus.gridmap.gz")
    assert (g.nx, g.ny) == (1888, 2738)
    assert g.resolution == 0.08
    assert (g.x_min, g.y_min) == (-10.0, -127.04)
    assert g.x_max == pytest.approx(141.04)
    assert g.y_max == pytest.approx(92.0)
    occ = g.occupancy
    assert occ.dtype == np.float32 and occ.shape == (2738, 1888)
    # mostly unexplored (0.5), a large explored free area, thin occupied walls
    assert 0.55 < np.mean(occ == 0.5) < 0.7
    assert 0.3 < np.mean(occ < 0.5) < 0.45
    assert 0.002 < np.mean(occ > 0.5) < 0.02
    # demo_1robot starts its car at (0, 0): that cell is explored free space
    ix, iy = g.world_to_cell(0.0, 0.0)
    assert (ix, iy) == (125, 1588)
    assert occ[iy, ix] < 0.01


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda d: d[: len(d) // 2], "truncated"),  # cells cut short
        (lambda d: d[:-1], "truncated"),  # end flag missing
        (lambda d: d[:30], "truncated"),
        (lambda d: d[:-1] + b"\x77", "end-of-object flag"),
        (lambda d: header(b"CSimplePointsMap", 3) + d[len(header(CLASS, 3)) :], "CSimplePointsMap"),
        (lambda d: header(CLASS, 9) + d[len(header(CLASS, 3)) :], "version 9"),
        (lambda d: b"hello world, not a map at all", "not a valid MRPT"),
        (lambda d: b"", "empty"),
    ],
)
def test_corrupt_streams(tmp_path, mutate, match):
    p = tmp_path / "bad.gridmap"
    p.write_bytes(mutate(stream(CELLS)))
    with pytest.raises(AssetError, match=match) as ei:
        load_mrpt_gridmap(p)
    assert ei.value.path == str(p)


def test_inconsistent_header_and_bad_gzip(tmp_path):
    data = bytearray(stream(CELLS))
    # bits-per-cell byte right after the header
    data[len(header(CLASS, 3))] = 12
    p = tmp_path / "bits.gridmap"
    p.write_bytes(bytes(data))
    with pytest.raises(AssetError, match="bits per cell"):
        load_mrpt_gridmap(p)

    p = tmp_path / "limits.gridmap"
    raw = stream(CELLS, res=0.5)
    off = len(header(CLASS, 3)) + 1 + 8
    raw = raw[:off] + struct.pack("<f", -50.0) + raw[off + 4 :]  # x_min far from x_max - nx*res
    p.write_bytes(raw)
    with pytest.raises(AssetError, match="do not match size"):
        load_mrpt_gridmap(p)

    gz = gzip.compress(stream(CELLS))
    p = tmp_path / "trunc.gridmap.gz"
    p.write_bytes(gz[: len(gz) // 2])
    with pytest.raises(AssetError, match="gzip data is truncated or corrupt"):
        load_mrpt_gridmap(p)
    p.write_bytes(gz[:10] + b"\xff" * 20 + gz[30:])
    with pytest.raises(AssetError, match="gzip"):
        load_mrpt_gridmap(p)


def test_missing_file(tmp_path: Path):
    with pytest.raises(AssetError, match="not found"):
        load_mrpt_gridmap(tmp_path / "none.gridmap.gz")


def test_size_from_the_header_and_a_gzip_bomb_inflates_only_to_its_cap(tmp_path):
    from mvsim_core.io.mrpt_gridmap import TRAILER_BYTES, mrpt_gridmap_size

    p = tmp_path / "m.gridmap.gz"
    p.write_bytes(gzip.compress(stream(CELLS)))
    assert mrpt_gridmap_size(p) == (3, 2)
    # the header claims 3 x 2 cells; 64 MiB of zeros follow (64 KiB compressed): refused, not inflated
    bomb = tmp_path / "bomb.gridmap.gz"
    bomb.write_bytes(gzip.compress(stream(CELLS) + bytes(64 << 20), compresslevel=9))
    assert bomb.stat().st_size < 200_000
    assert mrpt_gridmap_size(bomb) == (3, 2)
    with pytest.raises(AssetError) as ei:
        load_mrpt_gridmap(bomb)
    cap = 256 + 2 * 6 + TRAILER_BYTES
    assert f"the gzip data inflates past {cap} bytes, more than its header announces" in str(ei.value)
    d = tmp_path / "dir.gridmap"
    d.mkdir()
    with pytest.raises(AssetError, match="MRPT gridmap file is a directory"):
        load_mrpt_gridmap(d)

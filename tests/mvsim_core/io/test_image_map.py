"""Bitmap occupancy grids: pixel values, vertical flip and MRPT placement of the centre pixel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mvsim_core.errors import AssetError
from mvsim_core.io.image_map import load_image_grid, luminance, read_image_array


def write_gray(tmp_path: Path, pixels: list[list[int]], name: str = "map.png") -> Path:
    p = tmp_path / name
    Image.fromarray(np.array(pixels, dtype=np.uint8)).save(p)
    return p


# 4 wide x 3 high; row 0 is the TOP image row.
PIXELS = [
    [255, 0, 255, 255],
    [255, 255, 128, 255],
    [0, 255, 255, 51],
]


def test_values_and_vertical_flip(tmp_path):
    g = load_image_grid(write_gray(tmp_path, PIXELS), resolution=0.5, centerpixel_x=None, centerpixel_y=None)
    assert g.occupancy.shape == (3, 4)
    assert g.occupancy.dtype == np.float32
    # grid row iy = 0 is the bottom image row (row 2)
    assert g.occupancy[0, 0] == pytest.approx(1.0)  # black pixel (col 0, row 2)
    assert g.occupancy[0, 3] == pytest.approx(1.0 - 51 / 255)  # dark gray, col 3, row 2
    assert g.occupancy[1, 2] == pytest.approx(1.0 - 128 / 255)  # mid gray, col 2, row 1
    assert g.occupancy[2, 1] == pytest.approx(1.0)  # black top-row pixel -> top grid row
    assert g.occupancy[2, 0] == pytest.approx(0.0)  # white = free


def test_explicit_centre_pixel_places_origin(tmp_path):
    g = load_image_grid(write_gray(tmp_path, PIXELS), resolution=0.5, centerpixel_x=2, centerpixel_y=1)
    assert (g.x_min, g.y_min) == pytest.approx((-1.0, -0.5))
    assert (g.x_max, g.y_max) == pytest.approx((1.0, 1.0))
    # centre of top-left image pixel (col 0, row 0) -> grid (ix=0, iy=2)
    assert g.cell_center(0, 2) == pytest.approx((-0.75, 0.75))
    # the black top-row pixel (col 1, row 0) is at world (-0.25, 0.75)
    ix, iy = g.world_to_cell(-0.25, 0.75)
    assert g.occupancy[iy, ix] == pytest.approx(1.0)
    # world (0, 0) is the corner of column cx=2 and grid row cy=1 (counted from the BOTTOM of the image)
    assert g.world_to_cell(0.01, 0.01) == (2, 1)


def test_default_minus_one_is_literal_pixel_like_mrpt2(tmp_path):
    # MVSim passes -1,-1 when <centerpixel_*> is absent; MRPT 2.x then puts the origin at pixel (-1,-1).
    g = load_image_grid(write_gray(tmp_path, PIXELS), resolution=0.25)
    assert (g.x_min, g.y_min) == pytest.approx((0.25, 0.25))


def test_none_and_mrpt1_rule_centre_the_image(tmp_path):
    p = write_gray(tmp_path, PIXELS)
    g = load_image_grid(p, resolution=0.5, centerpixel_x=None, centerpixel_y=None)
    assert (g.x_min, g.y_min) == pytest.approx((-1.0, -1.0))  # round(-2) = -2 cols, round(-1.5) = -2 rows
    g1 = load_image_grid(p, resolution=0.5, mrpt1_centering=True)  # -1,-1 -> centre
    assert (g1.x_min, g1.y_min) == (g.x_min, g.y_min)
    g2 = load_image_grid(p, resolution=0.5, centerpixel_x=3, centerpixel_y=0, mrpt1_centering=True)
    assert (g2.x_min, g2.y_min) == pytest.approx((-1.5, 0.0))


def test_fractional_centre_rounds_half_away_from_zero(tmp_path):
    p = write_gray(tmp_path, [[255] * 5] * 3)
    g = load_image_grid(p, resolution=1.0, centerpixel_x=2.5, centerpixel_y=1.4)
    assert (g.x_min, g.y_min) == (-3.0, -1.0)
    assert g.occupancy.shape == (3, 5)


def test_colour_luminance_and_alpha_ignored(tmp_path):
    rgba = np.zeros((1, 3, 4), dtype=np.uint8)
    rgba[0, 0] = (255, 0, 0, 255)
    rgba[0, 1] = (0, 255, 0, 0)  # fully transparent: alpha is ignored
    rgba[0, 2] = (255, 255, 255, 10)
    p = tmp_path / "c.png"
    Image.fromarray(rgba).save(p)
    g = load_image_grid(p, resolution=1.0)
    np.testing.assert_allclose(g.occupancy[0], [1 - 0.299, 1 - 0.587, 0.0], atol=1e-6)


def test_sixteen_bit_and_palette_images(tmp_path):
    a16 = np.array([[0, 65535, 32768]], dtype=np.uint16)
    p16 = tmp_path / "m16.png"
    Image.fromarray(a16).save(p16)
    arr = read_image_array(p16)
    np.testing.assert_allclose(luminance(arr)[0], [0.0, 1.0, 32768 / 65535])
    pal = Image.new("P", (2, 1))
    pal.putpalette([0, 0, 0, 255, 255, 255] + [0] * 762)
    pal.putpixel((0, 0), 1)
    pal.putpixel((1, 0), 0)
    pp = tmp_path / "pal.png"
    pal.save(pp)
    g = load_image_grid(pp, resolution=1.0)
    np.testing.assert_allclose(g.occupancy[0], [0.0, 1.0])


def test_shared_demo_worlds_place_robots_in_free_space(worlds_dir):
    # mvsim_slam: demo_world1.png, resolution 0.25, no centre pixel, robot at (22, 22)
    g = load_image_grid(worlds_dir / "mvsim_tutorial" / "demo_world1.png", resolution=0.25)
    assert (g.nx, g.ny) == (320, 200)
    ix, iy = g.world_to_cell(22.0, 22.0)
    assert g.occupancy[iy, ix] < 0.1
    # demo_jackal: same image, 0.1 m, centre pixel (100, 100); robot at (0,0) and block at (5,1)
    g = load_image_grid(worlds_dir / "mvsim_tutorial" / "demo_world1.png", 0.1, 100, 100)
    assert (g.x_min, g.x_max, g.y_min, g.y_max) == pytest.approx((-10.0, 22.0, -10.0, 10.0))
    for x, y in ((0.0, 0.0), (5.0, 1.0)):
        ix, iy = g.world_to_cell(x, y)
        assert g.occupancy[iy, ix] < 0.1


def test_errors(tmp_path):
    with pytest.raises(AssetError, match="not found"):
        load_image_grid(tmp_path / "nope.png")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"this is not an image")
    with pytest.raises(AssetError, match="cannot decode image"):
        load_image_grid(bad)
    with pytest.raises(AssetError, match="is a directory"):
        load_image_grid(tmp_path)
    with pytest.raises(ValueError, match="resolution"):
        load_image_grid(write_gray(tmp_path, PIXELS), resolution=-1)


def test_image_over_the_memory_budget_is_refused_before_decoding(tmp_path):
    """A PNG whose header claims 12000 x 12000 pixels (and holds none; below PIL's own bomb limit): refused from the
    header, nothing allocated."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    p = tmp_path / "huge.png"
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 12000, 12000, 8, 0, 0, 0, 0))
                  + chunk(b"IEND", b""))
    with pytest.raises(AssetError) as ei:
        read_image_array(p)
    assert ei.value.message == ("an image of 12000 x 12000 pixels needs 1.07 GiB, more than the 256 MiB budget for "
                                "one array sized by a world file; use a smaller image")

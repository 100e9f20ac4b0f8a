"""Elevation sources: images (normalisation + orientation), Matlab matrix text, DEM xyzrgb files and resampling."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from mvsim_core.errors import AssetError
from mvsim_core.io.elevation_data import load_dem_xyzrgb, load_elevation_image, parse_matrix_text, resample_dem


def test_image_is_normalised_between_its_own_extremes(tmp_path):
    # 2 rows x 3 cols; darkest pixel 50 -> z_min, brightest 250 -> z_max
    pix = np.array([[50, 150, 250], [100, 50, 200]], dtype=np.uint8)
    p = tmp_path / "e.png"
    Image.fromarray(pix).save(p)
    z = load_elevation_image(p, z_min=-1.0, z_max=3.0)
    assert z.dtype == np.float64 and z.shape == (2, 3)
    np.testing.assert_allclose(z, -1.0 + (pix - 50.0) * 4.0 / 200.0, atol=1e-12)
    # orientation: heights[i, j] = image row i (top = 0) <-> +X, column j <-> +Y, no flip / transpose
    assert z[0, 2] == pytest.approx(3.0)  # top-right pixel
    assert z[1, 0] == pytest.approx(0.0, abs=1e-12)  # bottom-left pixel (gray 100)


def test_image_defaults_uniform_and_errors(tmp_path):
    p = tmp_path / "flat.png"
    Image.fromarray(np.full((2, 2), 77, dtype=np.uint8)).save(p)
    np.testing.assert_array_equal(load_elevation_image(p, 1.5, 4.0), np.full((2, 2), 1.5))
    with pytest.raises(ValueError, match="must differ"):
        load_elevation_image(p, 2.0, 2.0)
    with pytest.raises(AssetError, match="not found"):
        load_elevation_image(tmp_path / "none.png")


def test_shared_elevation_images(worlds_dir):
    for name in ("elevation_mesh1.png", "sensor_fusion_terrain.png"):
        z = load_elevation_image(worlds_dir / "mvsim_tutorial" / name)
        assert z.ndim == 2 and min(z.shape) > 10
        assert z.min() == pytest.approx(0.0) and z.max() == pytest.approx(5.0)
        assert np.all(np.isfinite(z))


@pytest.mark.parametrize(
    "text",
    ["[1 2 3; 4 5 6]", "1,2,3;4,5,6", "[1, 2, 3\n 4, 5, 6]", "  [ 1\t2 3 ;\n 4 5 6 ; ]  ", "1 2 3\n\n4 5 6\n"],
)
def test_parse_matrix_text_forms(text):
    m = parse_matrix_text(text)
    np.testing.assert_array_equal(m, [[1, 2, 3], [4, 5, 6]])
    assert m.dtype == np.float64


def test_parse_matrix_text_numbers_and_single_row():
    np.testing.assert_array_equal(parse_matrix_text("[-1.5e-1 +2 .5]"), [[-0.15, 2.0, 0.5]])


@pytest.mark.parametrize(
    "text, match",
    [
        ("[1 2 3; 4 5]", "row 2 has 2 values but row 1 has 3"),
        ("[1 2; 3 x]", "row 2: 'x' is not a number"),
        ("[1 2; 3 4", "unbalanced"),
        ("[]", "empty"),
        ("[1 [2]]", "nested"),
        ("[1 nan]", "not a finite number"),
    ],
)
def test_parse_matrix_text_errors(text, match):
    with pytest.raises(ValueError, match=match):
        parse_matrix_text(text)


def test_load_dem(tmp_path):
    p = tmp_path / "dem.txt"
    p.write_text("# x y z r g b\n0 0 1.5 10 20 30\n\n% comment\n1.0, 2.0, 3.0, 0, 0, 255\n")
    d = load_dem_xyzrgb(p)
    np.testing.assert_array_equal(d, [[0, 0, 1.5, 10, 20, 30], [1, 2, 3, 0, 0, 255]])


@pytest.mark.parametrize(
    "content, match",
    [
        ("0 0 1 2 3 4\n1 2 3 4 5\n", "line 2: expected 6 columns"),
        ("0 0 1 2 3 4\n\n1 2 3 4 5 6 7\n", "line 3: expected 6 columns"),
        ("0 0 a 2 3 4\n", "line 1: non-numeric"),
        ("# only comments\n\n", "no data"),
    ],
)
def test_load_dem_errors(tmp_path, content, match):
    p = tmp_path / "dem.txt"
    p.write_text(content)
    with pytest.raises(AssetError, match=match):
        load_dem_xyzrgb(p)


def test_load_dem_missing(tmp_path):
    with pytest.raises(AssetError, match="not found"):
        load_dem_xyzrgb(tmp_path / "none.txt")


def test_resample_mean_and_nearest_fill():
    pts = np.array(
        [
            [10.0, 20.0, 1.0, 0, 0, 0],  # cell (0, 0)
            [10.4, 20.2, 3.0, 0, 0, 0],  # cell (0, 0) -> mean 2.0
            [12.9, 20.1, 7.0, 0, 0, 0],  # cell (2, 0) (x = 12.9 -> floor(2.9) = 2)
            [13.0, 21.0, 9.0, 0, 0, 0],  # far corner: clipped into the last cell (2, 1)
        ]
    )
    h, x_min, y_min = resample_dem(pts, 1.0)
    assert (x_min, y_min) == (10.0, 20.0)
    assert h.shape == (3, 1)  # nx = ceil(3/1) = 3, ny = ceil(1/1) = 1
    np.testing.assert_allclose(h[:, 0], [2.0, 3.0, 8.0])  # (1, 0) empty -> nearest point to (11.5, 20.5)


def test_resample_hole_takes_nearest_point():
    pts = np.array([[0.0, 0.0, 1.0], [2.9, 0.1, 5.0], [2.9, 2.9, 9.0]])
    h, _, _ = resample_dem(pts, 1.0)
    assert h.shape == (3, 3)
    assert (h[0, 0], h[2, 0], h[2, 2]) == (1.0, 5.0, 9.0)  # cells holding a point
    assert h[0, 2] == 9.0  # centre (0.5, 2.5): nearest is (2.9, 2.9) at 2.43 m
    assert h[1, 0] == 5.0  # centre (1.5, 0.5): nearest is (2.9, 0.1) at 1.46 m
    assert h[0, 1] == 1.0  # centre (0.5, 1.5): nearest is (0, 0) at 1.58 m


def test_resample_errors():
    with pytest.raises(ValueError, match="resolution"):
        resample_dem(np.zeros((2, 3)), 0.0)
    with pytest.raises(ValueError, match="no points"):
        resample_dem(np.zeros((0, 3)), 1.0)
    with pytest.raises(ValueError, match="shape"):
        resample_dem(np.zeros((4, 2)), 1.0)

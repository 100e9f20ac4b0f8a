"""ROS map_server YAML maps: thresholds, modes, origin and error messages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from mvsim_core.errors import AssetError
from mvsim_core.io.ros_map_yaml import load_ros_map_yaml

# gray levels of a 1-row image, left to right; occupancy p = 1 - v/255
GRAYS = [0, 50, 100, 150, 200, 254, 255]


def write_map(tmp_path: Path, yaml_fields: dict, pixels=None, subdir: str = "") -> Path:
    folder = tmp_path / subdir if subdir else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    arr = np.array([GRAYS] if pixels is None else pixels, dtype=np.uint8)
    Image.fromarray(arr).save(folder / "map.png")
    fields = {
        "image": "map.png",
        "resolution": 0.05,
        "origin": [-1.5, 2.0, 0.0],
        "negate": 0,
        "occupied_thresh": 0.65,
        "free_thresh": 0.196,
    }
    fields.update(yaml_fields)
    fields = {k: v for k, v in fields.items() if v is not None}
    y = tmp_path / "map.yaml"
    y.write_text(yaml.safe_dump(fields))
    return y


def test_trinary_default(tmp_path):
    g = load_ros_map_yaml(write_map(tmp_path, {}))
    # p = 1, .804, .608, .412, .216, .004, 0  -> occupied / occupied / unknown / unknown / unknown / free / free
    np.testing.assert_allclose(g.occupancy[0], [1.0, 1.0, 0.5, 0.5, 0.5, 0.0, 0.0])
    assert (g.resolution, g.x_min, g.y_min) == (0.05, -1.5, 2.0)
    assert g.x_max == pytest.approx(-1.5 + 7 * 0.05)


def test_negate_swaps_black_and_white(tmp_path):
    g = load_ros_map_yaml(write_map(tmp_path, {"negate": 1}))
    np.testing.assert_allclose(g.occupancy[0], [0.0, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0])


def test_scale_mode_is_linear_between_thresholds(tmp_path):
    g = load_ros_map_yaml(write_map(tmp_path, {"mode": "scale"}))
    p = 1.0 - np.array(GRAYS) / 255.0
    mid = (p - 0.196) / (0.65 - 0.196)
    expected = np.where(p > 0.65, 1.0, np.where(p < 0.196, 0.0, mid))
    np.testing.assert_allclose(g.occupancy[0], expected, rtol=1e-6)
    assert 0.0 < g.occupancy[0, 2] < 1.0


def test_scale_mode_transparent_pixels_are_unknown(tmp_path):
    la = np.zeros((1, 2, 2), dtype=np.uint8)
    la[0, 0] = (0, 255)  # opaque black -> occupied
    la[0, 1] = (0, 0)  # transparent black -> unknown
    g = load_ros_map_yaml(write_map(tmp_path, {"mode": "scale"}, pixels=la))
    np.testing.assert_allclose(g.occupancy[0], [1.0, 0.5])


def test_raw_mode(tmp_path):
    g = load_ros_map_yaml(write_map(tmp_path, {"mode": "raw"}, pixels=[[0, 40, 100, 101, 255]]))
    np.testing.assert_allclose(g.occupancy[0], [0.0, 0.4, 1.0, 0.5, 0.5], rtol=1e-6)


def test_rows_flipped_and_image_relative_to_yaml_dir(tmp_path):
    y = write_map(tmp_path, {"image": "maps/map.png"}, pixels=[[0, 0], [255, 255]], subdir="maps")
    g = load_ros_map_yaml(y)
    assert g.occupancy[0].tolist() == [0.0, 0.0]  # bottom image row = white = free
    assert g.occupancy[1].tolist() == [1.0, 1.0]  # top image row = black = occupied


def test_origin_without_yaw_and_rgb_mean(tmp_path):
    rgb = np.zeros((1, 1, 3), dtype=np.uint8)
    rgb[0, 0] = (255, 255, 0)  # ROS uses the plain channel mean: 170/255 -> p = 1/3 -> unknown
    g = load_ros_map_yaml(write_map(tmp_path, {"origin": [1, 2]}, pixels=rgb))
    assert g.occupancy[0, 0] == 0.5
    assert (g.x_min, g.y_min) == (1.0, 2.0)


@pytest.mark.parametrize("key", ["image", "resolution", "origin", "negate", "occupied_thresh", "free_thresh"])
def test_missing_key_is_named(tmp_path, key):
    with pytest.raises(AssetError, match=f"missing required key '{key}'"):
        load_ros_map_yaml(write_map(tmp_path, {key: None}))


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"origin": [0, 0, 0.3]}, "yaw = 0.3 rad is not supported"),
        ({"mode": "fancy"}, "'mode' must be one of"),
        ({"resolution": 0}, "'resolution' must be > 0"),
        ({"resolution": "abc"}, "'resolution' must be a number"),
        ({"negate": 3}, "'negate' must be"),
        ({"origin": "0 0 0"}, "'origin' must be a list"),
        ({"free_thresh": 0.9}, "free_thresh <= occupied_thresh"),
        ({"image": "missing.png"}, "missing.png.*not found"),
    ],
)
def test_bad_values(tmp_path, fields, match):
    with pytest.raises(AssetError, match=match):
        load_ros_map_yaml(write_map(tmp_path, fields))


def test_unreadable_yaml(tmp_path):
    with pytest.raises(AssetError, match="not found"):
        load_ros_map_yaml(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("image: [unclosed\n")
    with pytest.raises(AssetError, match="invalid YAML"):
        load_ros_map_yaml(bad)
    lst = tmp_path / "list.yaml"
    lst.write_text("- 1\n- 2\n")
    with pytest.raises(AssetError, match="mapping"):
        load_ros_map_yaml(lst)

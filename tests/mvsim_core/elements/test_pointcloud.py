"""<element class="pointcloud">: 2D/3D text files, pose, errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mvsim_core.errors import WorldFileError


def test_2d_file(build, tmp_path: Path):
    (tmp_path / "p.txt").write_text("# x y\n0 0\n1.5, 2 7\n\n% comment\n-3 4\n")
    e, ctx = build('<element class="pointcloud"><file_txt_2d>p.txt</file_txt_2d></element>')
    assert np.array_equal(e.points, [[0, 0, 0], [1.5, 2, 0], [-3, 4, 0]])
    assert e.params.points_size == 3.0 and e.params.pose_3d == (0.0,) * 6
    assert e.summary() == "pointcloud p.txt 3 points" and ctx.warnings == []


def test_3d_file_and_pose(build, tmp_path: Path):
    (tmp_path / "p.txt").write_text("1 2 3\n4 5 6\n")
    e, _ = build('<element class="pointcloud"><file_txt_3d>p.txt</file_txt_3d><points_size>5</points_size>'
                 '<pose_3d>1 2 0 90 0 0</pose_3d></element>')
    assert e.points.shape == (2, 3) and e.points[1, 2] == 6.0
    assert e.params.points_size == 5.0
    assert e.params.pose_3d[:3] == (1.0, 2.0, 0.0) and e.params.pose_3d[3] == pytest.approx(math.pi / 2)


def test_no_file(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="pointcloud">\n</element>')
    assert ei.value.line == 1 and "<file_txt_2d> or <file_txt_3d>" in ei.value.message


def test_missing_file(build, tmp_path: Path):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="pointcloud">\n <file_txt_3d>none.txt</file_txt_3d>\n</element>')
    assert ei.value.line == 2 and ei.value.message == f"point cloud file not found: {tmp_path / 'none.txt'}"


def test_malformed_line(build, tmp_path: Path):
    (tmp_path / "p.txt").write_text("1 2 3\n4 5\n")
    with pytest.raises(WorldFileError) as ei:
        build('<element class="pointcloud">\n <file_txt_3d>p.txt</file_txt_3d>\n</element>')
    assert ei.value.line == 2 and "line 2: expected 3 numbers, found 2" in ei.value.message

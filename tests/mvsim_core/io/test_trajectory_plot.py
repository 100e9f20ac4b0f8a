"""Trajectory against reference (:mod:`mvsim_core.io.trajectory_plot`) and ``mvsim plot-trajectory``."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mvsim_core.io.trajectory_csv import Trajectory
from mvsim_core.io.trajectory_plot import PlotUnavailable, compare, plot

REPO = Path(__file__).resolve().parents[3]


def mvsim(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MVSIM_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "mvsim_core.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=120)


def circle(t: np.ndarray, r: float = 2.0, w: float = 0.5, dx: float = 0.0) -> Trajectory:
    """On a circle of radius r (m) at w rad/s, shifted by dx (m) along x; yaw along the tangent (wraps past π)."""
    a = w * t
    return Trajectory(t, r * np.sin(a) + dx, r * (1.0 - np.cos(a)), (a + math.pi) % (2 * math.pi) - math.pi)


def test_compare_measures_what_the_reference_tests_check():
    t = np.arange(0, 91) * 0.1
    ref = circle(t)
    same = compare(ref, ref)
    assert same.position_error.max() == 0.0 and same.yaw_error.max() == 0.0
    assert same.path_length == pytest.approx(2.0 * 0.5 * 9.0, rel=1e-3)  # r·w·T along the arc
    # ours sampled twice as often, 3 mm off in x, 0.01 rad ahead: wrapped yaws do not count as 2π errors
    t2 = np.arange(0, 181) * 0.05
    ours = circle(t2, dx=0.003)
    ours = Trajectory(ours.t, ours.x, ours.y, (ours.yaw + 0.01 + math.pi) % (2 * math.pi) - math.pi)
    c = compare(ours, ref)
    assert c.position_error.max() == pytest.approx(0.003, abs=1e-9)
    assert c.yaw_error.max() == pytest.approx(0.01, abs=1e-6)
    assert c.t.tolist() == t.tolist()
    assert c.summary().startswith("largest position error 0.0030 m = 0.03 % of the 9.00 m path (t = ")
    assert c.summary().endswith(" s); largest yaw error 0.0100 rad; 91 samples")
    with pytest.raises(ValueError, match="do not overlap in time"):
        compare(circle(t + 100.0), ref)


def test_plot_without_matplotlib_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    t = np.arange(0, 11) * 0.1
    with pytest.raises(PlotUnavailable, match=r"plotting needs matplotlib: pip install 'matplotlib>=3.8'"):
        plot(circle(t), circle(t), tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_mvsim_plot_trajectory_writes_the_overlay_of_the_jackal_on_its_cpp_run(shared_dir, tmp_path):
    pytest.importorskip("matplotlib")
    ref_dir = shared_dir / "reference-trajectories" / "cpp-1.2.0"
    ours = tmp_path / "jackal_ideal_B.csv"
    r = mvsim("trajectory", str(ref_dir / "worlds" / "jackal_ideal.world.xml"), "--schedule",
              "2,0.8,0;6,0.3,-0.6;9,0.6,0.3", "-o", str(ours))
    assert r.returncode == 0, r.stderr
    r = mvsim("plot-trajectory", str(ours), str(ref_dir / "jackal_ideal_B.csv"))
    assert r.returncode == 0, r.stderr
    png = tmp_path / "jackal_ideal_B.png"
    assert r.stdout.startswith(f"wrote {png}: largest position error 0.00")
    assert "% of the 4.56 m path" in r.stdout and "; 91 samples" in r.stdout
    with Image.open(png) as im:
        assert im.format == "PNG" and im.size == (1100, 750)
        # the two paths are drawn: blue (ours) and grey (the reference) pixels in the left panel
        rgb = np.asarray(im.convert("RGB"))[:, :600].reshape(-1, 3).astype(int)
    blue = (np.abs(rgb - (31, 119, 180)).sum(axis=1) < 40).sum()
    assert blue > 500


def test_mvsim_plot_trajectory_errors_are_one_line(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("t,x,y,yaw\n0,0,0,0\n1,1,0,0\n")
    b = tmp_path / "b.csv"
    b.write_text("t,x,y,yaw\n5,0,0,0\n6,1,0,0\n")
    r = mvsim("plot-trajectory", str(a), str(tmp_path / "nope.csv"))
    assert (r.returncode, r.stdout) == (2, "") and r.stderr.startswith(f"mvsim: {tmp_path / 'nope.csv'}: cannot read")
    r = mvsim("plot-trajectory", str(a), str(b), "-o", str(tmp_path / "o.png"))
    assert r.returncode == 2 and r.stderr == ("mvsim: the trajectories do not overlap in time (ours 0..1 s, reference "
                                              "5..6 s)\n")
    assert not (tmp_path / "o.png").exists()


def test_the_output_format_follows_its_suffix(tmp_path):
    pytest.importorskip("matplotlib")
    a = tmp_path / "a.csv"
    a.write_text("t,x,y,yaw\n0,0,0,0\n1,1,0,0\n2,2,0.1,0.1\n")
    r = mvsim("plot-trajectory", str(a), str(a), "-o", str(tmp_path / "o.svg"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o.svg").read_text().lstrip().startswith("<?xml")
    r = mvsim("plot-trajectory", str(a), str(a), "-o", str(tmp_path / "o.nope"))
    assert r.returncode == 2 and r.stderr.startswith("mvsim: Format 'nope' is not supported")
    assert r.stderr.count("\n") == 1

"""A trajectory against a reference: the errors the reference tests use, and a PNG overlay (matplotlib).

:func:`compare` samples ours at the reference's times (linear interpolation; yaw unwrapped first) and measures what
``tests/mvsim_core/dynamics/test_reference_cpp.py`` checks: the largest position error, also as a share of the
reference's path length, and the largest yaw error. :func:`plot` draws the two paths in the plane and, over time, the
position error, both speeds and both yaws, in one figure written as a PNG. matplotlib is optional (the ``plot`` extra):
it is imported only when a figure is drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mvsim_core.io.trajectory_csv import Trajectory


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed; the message says how to install it."""


@dataclass(frozen=True)
class Comparison:
    """Errors of a trajectory against a reference, at the reference's sample times within both.

    Attributes:
        t: the sample times compared (s). position_error (m), yaw_error (rad, wrapped into [0, π]): at each.
        path_length: of the reference (m).
    """

    t: np.ndarray
    position_error: np.ndarray
    yaw_error: np.ndarray
    path_length: float

    @property
    def worst(self) -> int:
        """Index of the largest position error."""
        return int(np.argmax(self.position_error))

    def summary(self) -> str:
        """One line: the largest position error (m, % of the path, when), the largest yaw error."""
        e = float(self.position_error.max())
        share = f"{100.0 * e / self.path_length:.2f} % of the {self.path_length:.2f} m path" \
            if self.path_length > 0 else "no path"
        return (f"largest position error {e:.4f} m = {share} (t = {self.t[self.worst]:.2f} s); largest yaw error "
                f"{float(self.yaw_error.max()):.4f} rad; {len(self.t)} samples")


def compare(ours: Trajectory, reference: Trajectory) -> Comparison:
    """Errors of ``ours`` at the reference's times that both cover.

    Raises:
        ValueError: the two do not overlap in time.
    """
    lo, hi = max(ours.t[0], reference.t[0]), min(ours.t[-1], reference.t[-1])
    keep = (reference.t >= lo - 1e-9) & (reference.t <= hi + 1e-9)
    if not keep.any():
        raise ValueError(f"the trajectories do not overlap in time (ours {ours.t[0]:g}..{ours.t[-1]:g} s, "
                         f"reference {reference.t[0]:g}..{reference.t[-1]:g} s)")
    t = reference.t[keep]
    x = np.interp(t, ours.t, ours.x)
    y = np.interp(t, ours.t, ours.y)
    yaw = np.interp(t, ours.t, np.unwrap(ours.yaw))
    pos = np.hypot(x - reference.x[keep], y - reference.y[keep])
    dyaw = np.abs((yaw - reference.yaw[keep] + math.pi) % (2.0 * math.pi) - math.pi)
    return Comparison(t, pos, dyaw, reference.path_length)


def _speed(traj: Trajectory) -> np.ndarray:
    """Speed along the path between samples (m/s), the first sample's taken as 0."""
    dt = np.diff(traj.t)
    step = np.hypot(np.diff(traj.x), np.diff(traj.y))
    return np.concatenate([[0.0], np.divide(step, dt, out=np.zeros_like(step), where=dt > 0)])


def plot(ours: Trajectory, reference: Trajectory, out: str | Path, *, labels: tuple[str, str] = ("ours", "reference"),
         title: str = "") -> Comparison:
    """Write the overlay of ``ours`` and ``reference`` to the image ``out`` (PNG, or the format its suffix names):
    the paths in the plane (m, equal axes, markers every second), and over time the position error, both speeds
    along the path and both yaws. Returns the comparison.

    Raises:
        PlotUnavailable: matplotlib is not installed.
        ValueError: the trajectories do not overlap in time, or matplotlib writes no format of that suffix.
    """
    cmp = compare(ours, reference)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable("plotting needs matplotlib: pip install 'matplotlib>=3.8' (or the [plot] extra of "
                              "mvsim_ros2; apt install python3-matplotlib)") from None
    fig = plt.figure(figsize=(11, 7.5), dpi=100)
    grid = fig.add_gridspec(3, 2, width_ratios=(1.25, 1))
    ax = fig.add_subplot(grid[:, 0])
    styles: tuple[tuple[Trajectory, str, dict[str, Any]], ...] = (
        (reference, labels[1], {"color": "tab:gray", "lw": 3.0, "alpha": 0.6}),
        (ours, labels[0], {"color": "tab:blue", "lw": 1.4}))
    for traj, label, style in styles:
        ax.plot(traj.x, traj.y, "-", label=label, **style)
        marks = np.flatnonzero(np.isclose(np.mod(traj.t + 1e-6, 1.0), 0.0, atol=1e-4))
        ax.plot(traj.x[marks], traj.y[marks], "o", ms=3.5, color=style["color"])
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    ax.set_title("path (dots every second)")
    ax_e = fig.add_subplot(grid[0, 1])
    ax_e.plot(cmp.t, cmp.position_error * 1000.0, color="tab:red")
    ax_e.set_ylabel("position error (mm)")
    ax_v = fig.add_subplot(grid[1, 1], sharex=ax_e)
    ax_y = fig.add_subplot(grid[2, 1], sharex=ax_e)
    for traj, label, style in styles:
        ax_v.plot(traj.t, _speed(traj), label=label, **style)
        ax_y.plot(traj.t, np.unwrap(traj.yaw), label=label, **style)
    ax_v.set_ylabel("speed (m/s)")
    ax_y.set_ylabel("yaw (rad)")
    ax_y.set_xlabel("t (s)")
    for a in (ax_e, ax_v, ax_y):
        a.grid(True, alpha=0.3)
    fig.suptitle((title + "\n" if title else "") + cmp.summary(), fontsize=10)
    fig.tight_layout()
    try:
        fig.savefig(out)  # PNG, or the format its suffix names
    finally:
        plt.close(fig)
    return cmp

"""Trajectory CSV files in the columns of the C++ MVSim reference recordings, and the twist schedules that drive them.

The recordings of ``../shared/reference-trajectories/cpp-1.2.0`` (C++ MVSim 1.2.0, stepped headless) have one row per
sample with :data:`COLUMNS` followed by ``wheel_w0 … wheel_w<n−1>``:

* ``t`` (s); ``x y z yaw pitch roll``: ground-truth pose of the vehicle's reference point (world frame, m / rad);
* ``vx_local vy_local w_local``: its velocity in the vehicle frame (m/s, rad/s); ``vx_global vy_global w_global``
  the same in the world frame;
* ``odo_vx odo_vy odo_w``: the vehicle's wheel-odometry velocity estimate (vehicle frame);
* ``cmd_v cmd_w``: the twist commanded (m/s, rad/s); ``wheel_w<i>``: each wheel's spin (rad/s) in the wheel order of
  its dynamics class.

:func:`mvsim_core.record.schedule_run.record_schedule` drives a vehicle of a loaded world through a schedule and
returns such rows, so that our runs and the C++ recordings can be compared file to file (``mvsim trajectory`` writes
them, ``mvsim plot-trajectory`` overlays two). :func:`read_trajectory` also reads the pose logs of
:mod:`.csv_logger` (``Timestamp q0x q1y … q3yaw``).

A schedule is ``t_end,vx,wz;t_end,vx,wz;…`` with absolute end times in s, vx in m/s and wz in rad/s, as in the
recordings' ``cases.txt``: ``3,1.0,0;9,1.0,0.2`` drives 1 m/s straight until t = 3 s, then 1 m/s at 0.2 rad/s until
t = 9 s; the last twist stays in force after its end.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

COLUMNS = ("t", "x", "y", "z", "yaw", "pitch", "roll", "vx_local", "vy_local", "w_local", "vx_global", "vy_global",
           "w_global", "odo_vx", "odo_vy", "odo_w", "cmd_v", "cmd_w")

# the pose log of csv_logger: time and the planar pose under their names there
_POSE_LOG = {"t": "Timestamp", "x": "q0x", "y": "q1y", "yaw": "q3yaw"}

Schedule = list[tuple[float, float, float]]


class TrajectoryFileError(ValueError):
    """A trajectory CSV or a schedule that cannot be read; the message says which file or text and what is wrong."""


@dataclass(frozen=True)
class Trajectory:
    """A planar trajectory: sample times (s) and the pose (m, m, rad) at each, world frame."""

    t: np.ndarray
    x: np.ndarray
    y: np.ndarray
    yaw: np.ndarray

    @property
    def path_length(self) -> float:
        """Length of the polyline through the samples (m)."""
        return float(np.sum(np.hypot(np.diff(self.x), np.diff(self.y))))


def parse_schedule(text: str) -> Schedule:
    """The (t_end s, vx m/s, wz rad/s) segments of ``text`` (see the module docstring).

    Raises:
        TrajectoryFileError: not three finite numbers per segment, or end times that are not positive and
            increasing.
    """
    out: Schedule = []
    for k, seg in enumerate(s for s in text.split(";") if s.strip()):
        parts = seg.split(",")
        try:
            vals = [float(p) for p in parts]
        except ValueError:
            vals = []
        if len(vals) != 3 or not all(math.isfinite(v) for v in vals):
            raise TrajectoryFileError(f"schedule segment {k + 1} is {seg.strip()!r}: write it as t_end,vx,wz "
                                      f"(three finite numbers: s, m/s, rad/s), e.g. 3,1.0,0;9,1.0,0.2")
        if not out and vals[0] <= 0.0:
            raise TrajectoryFileError(f"schedule segment 1 ends at t = {vals[0]:g} s: end times are absolute and the "
                                      f"first must be after 0")
        if out and vals[0] <= out[-1][0]:
            raise TrajectoryFileError(f"schedule segment {k + 1} ends at t = {vals[0]:g} s, not after the previous "
                                      f"one ({out[-1][0]:g} s): end times are absolute and must increase")
        out.append((vals[0], vals[1], vals[2]))
    if not out:
        raise TrajectoryFileError("the schedule is empty: write t_end,vx,wz;... e.g. 3,1.0,0;9,1.0,0.2")
    return out


def schedule_command(schedule: Schedule, t: float) -> tuple[float, float]:
    """(vx, wz) the schedule asks for at time ``t`` (s); the last twist stays after its end."""
    for t_end, vx, wz in schedule:
        if t < t_end - 1e-9:
            return vx, wz
    return schedule[-1][1], schedule[-1][2]


def write_trajectory(path: str | Path, header: Sequence[str], rows: Sequence[Sequence[float]]) -> None:
    """Write ``rows`` (laid out as :func:`mvsim_core.record.schedule_run.record_schedule` returns them) under
    ``header`` as CSV, with the C++ recordings' decimals: 4 for times and commands, 9 for poses and velocities, 6 for
    wheel spins."""
    with open(path, "w", newline="", encoding="ascii") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join([f"{r[0]:.4f}", *(f"{v:.9f}" for v in r[1:16]), f"{r[16]:.4f}", f"{r[17]:.4f}",
                              *(f"{v:.6f}" for v in r[18:])]) + "\n")


def read_trajectory(path: str | Path) -> Trajectory:
    """The (t, x, y, yaw) samples of a trajectory CSV: the C++ recordings' columns (``t x y yaw``) or a pose log of
    :mod:`.csv_logger` (``Timestamp q0x q1y q3yaw``).

    Raises:
        TrajectoryFileError: the file cannot be read, lacks those columns, holds a value that is not a finite
            number, or its times do not increase.
    """
    p = Path(path)
    try:
        with open(p, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames or []
            names = {k: k for k in ("t", "x", "y", "yaw")}
            if not set(names.values()) <= set(fields):
                names = _POSE_LOG
            if not set(names.values()) <= set(fields):
                raise TrajectoryFileError(f"{p}: no trajectory columns: the header needs t,x,y,yaw (as the C++ "
                                          f"recordings) or Timestamp,q0x,q1y,q3yaw (a pose log); it is "
                                          f"{','.join(fields)[:200]!r}")
            cols: dict[str, list[float]] = {k: [] for k in names}
            for line, row in enumerate(reader, start=2):
                for k, name in names.items():
                    try:
                        v = float(row[name])
                    except (TypeError, ValueError):
                        v = math.nan
                    if not math.isfinite(v):
                        raise TrajectoryFileError(f"{p}:{line}: {name} = {str(row[name])[:40]!r} is not a finite "
                                                  f"number")
                    if k == "t" and cols["t"] and v <= cols["t"][-1]:
                        raise TrajectoryFileError(f"{p}:{line}: {name} = {v:g} s does not come after the previous "
                                                  f"sample ({cols['t'][-1]:g} s); samples must be in time order")
                    cols[k].append(v)
    except OSError as e:
        raise TrajectoryFileError(f"{p}: cannot read it ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise TrajectoryFileError(f"{p}: not a text CSV file") from None
    except csv.Error as e:
        raise TrajectoryFileError(f"{p}: not a CSV file the reader accepts ({e})") from None
    if not cols["t"]:
        raise TrajectoryFileError(f"{p}: no samples below the header")
    return Trajectory(*(np.array(cols[k]) for k in ("t", "x", "y", "yaw")))

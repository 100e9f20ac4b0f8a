"""A vehicle driven through a twist schedule and sampled as the C++ MVSim reference trajectories were recorded.

:func:`record_schedule` steps a loaded world, sets the vehicle's twist from the schedule
(:func:`mvsim_core.io.trajectory_csv.schedule_command`) before every physics step and returns rows in the columns of
:mod:`mvsim_core.io.trajectory_csv` (which writes and reads the files); ``mvsim trajectory`` uses it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from mvsim_core.io.trajectory_csv import COLUMNS, Schedule, schedule_command

if TYPE_CHECKING:
    from mvsim_core.world import World


def record_schedule(world: World, vehicle: str, schedule: Schedule, *, duration: float | None = None,
                    period: float = 0.1) -> tuple[list[str], list[list[float]]]:
    """Drive ``vehicle`` of ``world`` (a loaded :class:`mvsim_core.world.World`) through ``schedule``, its twist set
    before every physics step, and sample it every ``period`` s from t = 0 until ``duration`` (default: the
    schedule's last end time), as the C++ recordings were made.

    Returns:
        (header, rows): :data:`COLUMNS` plus ``wheel_w<i>``, and one row of floats per sample (``cmd_v cmd_w``: the
        twist of the last step taken, 0 at t = 0).
    """
    if not (period > 0.0 and math.isfinite(period)):
        raise ValueError(f"the sampling period must be a positive number of seconds (got {period!r})")
    v = world.vehicles[vehicle]
    world.start()
    end = schedule[-1][0] if duration is None else duration
    header = [*COLUMNS, *(f"wheel_w{i}" for i in range(len(v.wheels)))]
    rows = []
    cmd = (0.0, 0.0)  # no command yet at t = 0, as in the recordings
    n = int(math.floor(end / period + 1e-9))
    for k in range(n + 1):
        t_sample = k * period
        while world.time < t_sample - 1e-9:
            cmd = schedule_command(schedule, world.time)
            v.set_twist(cmd[0], 0.0, cmd[1])
            world.step()
        x, y, z, yaw, pitch, roll = v.pose
        vx, vy, w = v.twist
        c, s = math.cos(yaw), math.sin(yaw)
        ovx, ovy, ow = v.odometry_velocity()
        rows.append([world.time, x, y, z, yaw, pitch, roll, vx, vy, w, c * vx - s * vy, s * vx + c * vy, w,
                     ovx, ovy, ow, cmd[0], cmd[1], *(float(o) for o in v.omega)])
    return header, rows

"""Ground-truth trajectories in the TUM format, one file per vehicle, written while the simulation runs.

A line per sample, ``t x y z qx qy qz qw``: the simulated time (s), the vehicle's reference point (``base_link``) in
the world frame (m) and its orientation as a unit quaternion (yaw, pitch, roll composed as everywhere in the
simulator). Lines starting with ``#`` are comments (one header line); evo, the TUM RGB-D tools and most SLAM
evaluation scripts read the files as they are.

Two ways to ask for them:

* the world option ``<save_ground_truth_trajectory>NAME</save_ground_truth_trajectory>`` (upstream MVSim's): files
  ``NAME.<vehicle>.txt``, relative to the working directory as upstream writes them (a ``.txt`` or ``.tum`` ending of
  NAME is dropped first), at ``<ground_truth_rate>`` Hz (default 50);
* ``mvsim launch WORLD --tum DIR``: files ``DIR/<vehicle>.txt`` at the same rate.

Samples are taken after the first step at or beyond each multiple of the period from the start (the first one when
the writer starts), so a rate above the physics rate gives one line per step. After a reset of the world the same
grid goes on from its new time (the file then holds both runs). Files are flushed every simulated second, so an
interrupted run keeps all but its last second; :meth:`TumWriter.close` flushes the rest.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mvsim_core.errors import MvsimError
from mvsim_core.geometry.rotations import quaternion_from_ypr

if TYPE_CHECKING:
    from mvsim_core.world_model import WorldModel

FLUSH_PERIOD = 1.0
"""Simulated seconds between flushes of the files."""

HEADER = "# t x y z qx qy qz qw  (s; m, world frame; unit quaternion) — vehicle {name}, mvsim ground truth\n"


def tum_line(t: float, pose: Any) -> str:
    """One TUM line for the pose (x, y, z, yaw, pitch, roll; m, rad) at time ``t`` (s)."""
    x, y, z, yaw, pitch, roll = (float(v) for v in pose)
    qx, qy, qz, qw = quaternion_from_ypr(yaw, pitch, roll)
    return f"{t:.6f} {x:.9f} {y:.9f} {z:.9f} {qx:.9f} {qy:.9f} {qz:.9f} {qw:.9f}\n"


def option_paths(name: str, vehicles: list[str]) -> dict[str, Path]:
    """The files of ``<save_ground_truth_trajectory>NAME``: ``NAME.<vehicle>.txt`` for each vehicle."""
    base = name[:-4] if name.lower().endswith((".txt", ".tum")) else name
    return {v: Path(f"{base}.{v}.txt") for v in vehicles}


class TumWriter:
    """Writes every vehicle's ground-truth pose to its TUM file at ``rate`` Hz; attach with
    ``world.add_step_listener(writer)``.

    Args:
        path_of: the file of a vehicle from its name (called once per vehicle, when it is first sampled: vehicles
            spawned later get files too).
        rate: samples per simulated second (> 0).
        start: simulated time of the first sample (s; normally the world's time when the writer is attached).

    Raises:
        MvsimError: a rate that is not a positive number, or a file that cannot be created (the message names it).
    """

    def __init__(self, path_of: Any, rate: float, start: float = 0.0) -> None:
        if not (rate > 0 and math.isfinite(rate)):
            raise MvsimError(f"ground-truth rate must be a positive number of Hz (got {rate!r})")
        self.path_of = path_of
        self.period = 1.0 / float(rate)
        self._k = 0  # samples taken
        self._start = float(start)
        self._files: dict[str, IO[str]] = {}
        self._next_flush = self._start + FLUSH_PERIOD
        self._last = -math.inf
        self.paths: dict[str, Path] = {}
        """The file of each vehicle sampled so far."""

    def _file(self, name: str) -> IO[str]:
        f = self._files.get(name)
        if f is None:
            path = Path(self.path_of(name))
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                f = path.open("w", encoding="utf-8")
            except OSError as e:
                raise MvsimError(f"cannot write the ground-truth file {path}: {e.strerror or e}") from None
            f.write(HEADER.format(name=name))
            self._files[name] = f
            self.paths[name] = path
        return f

    def sample(self, world: WorldModel) -> None:
        """Write one line per vehicle for the world's current time and poses."""
        t = float(world.time)
        self._last = t
        for name, v in world.vehicles.items():
            self._file(name).write(tum_line(t, v.pose))

    def __call__(self, world: WorldModel) -> None:
        """Step listener: sample when the next multiple of the period is reached; flush every simulated second."""
        t = float(world.time)
        if t < self._last - 1e-9:  # the world was reset: the same grid of sample times, from the reset on
            self._start = min(self._start, 0.0)
            self._k = math.ceil((t - self._start) / self.period - 1e-9)
            self._next_flush = t + FLUSH_PERIOD
            self._last = -math.inf
        due = self._start + self._k * self.period
        if t >= due - 1e-9:
            self.sample(world)
            self._k = int(math.floor((t - self._start) / self.period + 1e-9)) + 1
        if t >= self._next_flush:
            self.flush()
            self._next_flush = t + FLUSH_PERIOD

    def flush(self) -> None:
        for f in self._files.values():
            f.flush()

    def close(self) -> None:
        """Flush and close every file (the writer may not be used afterwards)."""
        for f in self._files.values():
            f.close()
        self._files.clear()

    def __enter__(self) -> TumWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def attach(world: WorldModel, path_of: Any, rate: float | None = None) -> TumWriter:
    """A :class:`TumWriter` for ``world`` (rate: its ``ground_truth_rate`` unless given), its first sample written
    now and attached as a step listener."""
    r = float(world.params["ground_truth_rate"]) if rate is None else rate
    writer = TumWriter(path_of, r, start=float(world.time))
    writer(world)
    world.add_step_listener(writer)
    return writer

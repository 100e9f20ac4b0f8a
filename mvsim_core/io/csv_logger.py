"""CSV loggers of a vehicle's pose and wheels, with upstream MVSim's file names and columns (reference §1.16).

Per vehicle ``V`` with ``<log_path>P</log_path>``:

* ``P/mvsim_V_pose.csv``: ``Timestamp q0x q1y q2z q3yaw q4pitch q5roll dqx dqy dqw odo_x odo_y odo_yaw``
  (pose in the world frame, m / rad; dq = body-frame twist; odo = noisy odometry);
* ``P/mvsim_V_wheel_<i>.csv`` (i = 1 … n, wheel order of the dynamics class): ``Timestamp wheel_pos_x
  wheel_pos_y torque force_z velocity_x velocity_y friction_x friction_y`` (vehicle frame; torque in upstream's
  sign, negative drives forward).

Recording starts with ``<auto_start_recording>`` or :meth:`VehicleLogger.start`; :meth:`stop` pauses,
:meth:`new_session` continues in new files suffixed ``_session<k>``, :meth:`clear` truncates the current files.
Values are written with ``repr``-exact precision (``%.17g``) so logs can be compared bit for bit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TextIO

POSE_COLUMNS = ("Timestamp", "q0x", "q1y", "q2z", "q3yaw", "q4pitch", "q5roll", "dqx", "dqy", "dqw",
                "odo_x", "odo_y", "odo_yaw")
WHEEL_COLUMNS = ("Timestamp", "wheel_pos_x", "wheel_pos_y", "torque", "force_z", "velocity_x", "velocity_y",
                 "friction_x", "friction_y")


class RecordingCount:
    """How many loggers of a set (a world's) are recording: the world's step looks at its loggers only when some
    are (one comparison instead of a look at every vehicle)."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


class VehicleLogger:
    """The CSV files of one vehicle.

    Args:
        vehicle_name: used in the file names.
        n_wheels: number of wheel files.
        log_path: directory (or prefix directory) of the files; "" = the current directory.
        count: the set's :class:`RecordingCount`, kept up to date by :attr:`recording` (None: none).
    """

    def __init__(self, vehicle_name: str, n_wheels: int, log_path: str = "",
                 count: RecordingCount | None = None) -> None:
        self.name = vehicle_name
        self.n_wheels = n_wheels
        self.dir = Path(log_path) if log_path else Path(".")
        self._count = count
        self._recording = False
        self.session = 1
        self._files: list[TextIO] = []

    @property
    def recording(self) -> bool:
        """Whether rows are being written."""
        return self._recording

    @recording.setter
    def recording(self, on: bool) -> None:
        on = bool(on)
        if on != self._recording and self._count is not None:
            self._count.n += 1 if on else -1
        self._recording = on

    def paths(self) -> list[Path]:
        """The pose file then the wheel files of the current session."""
        suffix = "" if self.session == 1 else f"_session{self.session}"
        return [self.dir / f"mvsim_{self.name}_pose{suffix}.csv"] + [
            self.dir / f"mvsim_{self.name}_wheel_{i + 1}{suffix}.csv" for i in range(self.n_wheels)]

    def _open(self, mode: Literal["a", "w"]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._files = []
        for k, p in enumerate(self.paths()):
            new = mode == "w" or not p.exists() or p.stat().st_size == 0
            f = open(p, mode, encoding="ascii")  # noqa: SIM115 - kept open while recording
            if new:
                f.write(",".join(POSE_COLUMNS if k == 0 else WHEEL_COLUMNS) + "\n")
            self._files.append(f)

    def start(self) -> None:
        """Start (or resume) writing rows."""
        if not self.recording:
            self._open("a")
            self.recording = True

    def stop(self) -> None:
        """Stop writing rows and flush the files."""
        if self.recording:
            self.close()
            self.recording = False

    def new_session(self) -> None:
        """Continue in new files (``..._session<k>.csv``)."""
        was = self.recording
        self.stop()
        self.session += 1
        if was:
            self.start()

    def clear(self) -> None:
        """Truncate the current session's files (header kept)."""
        was = self.recording
        self.stop()
        self._open("w")
        self.close()
        if was:
            self.start()

    def close(self) -> None:
        for f in self._files:
            f.close()
        self._files = []

    def write(self, t: float, pose: tuple, twist: tuple, odometry: tuple, wheel_rows: list[tuple]) -> None:
        """One row per file at simulated time ``t`` (s); ``wheel_rows`` holds the 8 wheel values per wheel."""
        if not self.recording:
            return
        fmt = "%.17g"
        self._files[0].write(",".join(fmt % v for v in (t, *pose, *twist, *odometry)) + "\n")
        for f, row in zip(self._files[1:], wheel_rows, strict=True):
            f.write(",".join(fmt % v for v in (t, *row)) + "\n")
        for f in self._files:  # readable while the simulation runs
            f.flush()

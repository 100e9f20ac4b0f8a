"""Every vehicle class against the C++ MVSim 1.2.0 engine: the cases of ``../shared/reference-trajectories/cpp-1.2.0``.

Each case (``cases.txt``: ``S name world schedule``) loads its world, commands the twist of its schedule at every step
(``t_end,vx,wz;...``, absolute end times, the last command held) and compares the pose of ``r1`` with the recording
every 0.1 s. Acceptance (issue 15): the largest position error at most 2 % of the path length and the yaw error at
most 0.05 rad at every sample. Each case also has a tighter ceiling near what main gives today, so that a
regression in any vehicle class shows up at once.

``jackal_pid_ice`` is not a target: there the C++ engine freezes the Jackal (1.9 cm in 7 s, wheels spinning backwards
at about -49 rad/s), an upstream defect in the slip regime that issue 15 fixes rather than matches.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv

# largest position error today (m), with room for rounding: a regression beyond it fails. jackal_pid_B starts with
# a 0.8 m/s step on mu = 0.8 that saturates the wheels' friction for its first 0.1 s: there the C++ engine's wheels
# chatter between 0.4 and 13 rad/s while ours spin up once and the Jackal accelerates at mu·g (mvsim_core/dynamics/
# friction/slip.py), 7.7 mm ahead at t = 0.1 s and 11.7 mm at 9 s
CEILING_M = {"pickup_F": 0.08, "jackal_pid_B": 0.013}
DEFAULT_CEILING_M = 0.01
NOT_TARGETS = {"jackal_pid_ice"}


def read_cases(ref_dir: Path) -> list[tuple[str, str, list[tuple[float, float, float]]]]:
    """(name, world, schedule) of every case; a schedule is a list of (t_end s, vx m/s, wz rad/s)."""
    cases = []
    for line in (ref_dir / "cases.txt").read_text().splitlines():
        if line.startswith("S "):
            _, name, world, schedule = line.split()
            cases.append((name, world, [tuple(float(v) for v in seg.split(",")) for seg in schedule.split(";")]))
    return cases


def command(schedule: list[tuple[float, float, float]], t: float) -> tuple[float, float]:
    """(vx, wz) the schedule asks for at simulated time ``t`` (s); the last one stays after its end."""
    for t_end, vx, wz in schedule:
        if t < t_end - 1e-9:
            return vx, wz
    return schedule[-1][1], schedule[-1][2]


def run_case(ref_dir: Path, world: str, schedule: list[tuple[float, float, float]],
             times: np.ndarray) -> np.ndarray:
    """Our (t, x, y, yaw) of ``r1`` at ``times`` (multiples of 0.1 s from 0), the schedule set before every step."""
    w = mv.load_world(ref_dir / "worlds" / f"{world}.world.xml")
    v = w.vehicles["r1"]
    out = []
    for t in times:
        while w.time < t - 1e-9:
            vx, wz = command(schedule, w.time)
            v.set_twist(vx, 0.0, wz)
            w.step()
        x, y, _, yaw, _, _ = v.pose
        out.append((w.time, x, y, yaw))
    return np.array(out)


def read_reference(path: Path) -> np.ndarray:
    """(t, x, y, yaw) rows of a recording."""
    with open(path, newline="") as f:
        return np.array([[float(r[k]) for k in ("t", "x", "y", "yaw")] for r in csv.DictReader(f)])


@pytest.fixture(scope="module")
def ref_dir(shared_dir: Path) -> Path:
    return shared_dir / "reference-trajectories" / "cpp-1.2.0"


def _case_names() -> list[str]:
    """The cases, read at collection (one test each); none when ``../shared`` is missing (``ref_dir`` skips)."""
    shared = Path(os.environ.get("MVSIM_SHARED_DIR", Path(__file__).resolve().parents[3].parent / "shared"))
    path = shared / "reference-trajectories" / "cpp-1.2.0"
    return [name for name, _, _ in read_cases(path)] if (path / "cases.txt").is_file() else []


@pytest.mark.parametrize("name", [n for n in _case_names() if n not in NOT_TARGETS])
def test_case_matches_the_cpp_engine(ref_dir: Path, name: str) -> None:
    _, world, schedule = next(c for c in read_cases(ref_dir) if c[0] == name)
    ref = read_reference(ref_dir / f"{name}.csv")
    ours = run_case(ref_dir, world, schedule, ref[:, 0])
    assert ours[:, 0] == pytest.approx(ref[:, 0], abs=1e-9)
    path = float(np.sum(np.hypot(np.diff(ref[:, 1]), np.diff(ref[:, 2]))))
    err = np.hypot(ours[:, 1] - ref[:, 1], ours[:, 2] - ref[:, 2])
    yaw_err = np.abs((ours[:, 3] - ref[:, 3] + math.pi) % (2 * math.pi) - math.pi)
    worst = int(np.argmax(err))
    print(f"{name}: largest position error {err.max():.4f} m = {100 * err.max() / path:.2f} % of {path:.2f} m "
          f"(t = {ref[worst, 0]:.1f} s); largest yaw error {yaw_err.max():.4f} rad")
    assert err.max() <= 0.02 * path, f"t = {ref[worst, 0]:.1f} s: ours {ours[worst, 1:]}, C++ {ref[worst, 1:]}"
    assert yaw_err.max() <= 0.05
    assert err.max() <= CEILING_M.get(name, DEFAULT_CEILING_M)


# other schedules on the same worlds (no C++ recording): reversing, turning both ways, turning in place (differential
# vehicles), checked against what holds whatever the schedule
OTHER_DIFFERENTIAL = [(3.0, -0.5, 0.0), (6.0, 0.2, 0.6), (9.0, 0.0, -1.0)]
OTHER_CAR = [(3.0, -1.0, 0.0), (6.0, 1.5, 0.3), (9.0, 0.5, -0.2)]


def _worlds() -> list[str]:
    shared = Path(os.environ.get("MVSIM_SHARED_DIR", Path(__file__).resolve().parents[3].parent / "shared"))
    path = shared / "reference-trajectories" / "cpp-1.2.0"
    return sorted({world for _, world, _ in read_cases(path)}) if (path / "cases.txt").is_file() else []


@pytest.mark.parametrize("world", _worlds())
def test_other_schedules_mirror_exactly_and_stay_within_friction(ref_dir: Path, world: str) -> None:
    """The schedule mirrored (ω → −ω) gives the trajectory mirrored (y → −y, yaw → −yaw) to float32 rounding; nothing
    blows up; and a vehicle driven by torques (not twist_ideal) is never pushed along its heading by more than
    1.05·μ·g on the straight segments (Box2D's linear damping taken out).

    Not mirrored: ``jackal_ellipse``. Upstream's ellipse model clamps the lateral force to [−L, L] with a limit L
    signed like the slip angle, and with L < 0 the force is L whatever force the wheel needs; the mirror image of a
    wheel that gets −L gets −L too, not L. We keep that law (``jackal_ellipse_B`` matches the C++ engine with it),
    so turning in place it mirrors only until the first such step (t = 6.0 s here, 8 cm apart at 9 s)."""
    car = world.startswith(("car", "pickup"))
    schedule = OTHER_CAR if car else OTHER_DIFFERENTIAL
    times = np.round(np.arange(0, 91) * 0.1, 10)
    a = run_case(ref_dir, world, schedule, times)
    b = run_case(ref_dir, world, [(t, vx, -wz) for t, vx, wz in schedule], times)
    mirrored = times <= (6.0 if world == "jackal_ellipse" else 9.0)
    assert np.abs(a[mirrored, 1] - b[mirrored, 1]).max() < 1e-5
    assert np.abs(a[mirrored, 2] + b[mirrored, 2]).max() < 1e-5
    assert np.abs(a[mirrored, 3] + b[mirrored, 3]).max() < 1e-5
    assert np.abs(a[:, 1:3]).max() > 0.5  # it went somewhere

    w = mv.load_world(ref_dir / "worlds" / f"{world}.world.xml")
    w.start()
    v = w.vehicles["r1"]
    ideal = v.controller.xml_class == "twist_ideal"
    mu = 0.15 if world.endswith("_ice") else float(v.friction.params.get("mu", math.nan))
    c = v.chassis.linear_damping
    prev, worst = 0.0, 0.0
    while w.time < 9.0 - 1e-9:
        vx, wz = command(schedule, w.time)
        v.set_twist(vx, 0.0, wz)
        w.step()
        now = v.twist[0]
        if wz == 0.0 and command(schedule, w.time - 0.005)[1] == 0.0:
            worst = max(worst, abs(now * (1.0 + 0.005 * c) - prev) / 0.005)
        prev = now
    assert len(w.faults) == 0
    if not ideal:
        assert worst <= 1.05 * mu * 9.81

"""Fingerprint of simulation results: one SHA-256 line per world, over every vehicle's pose, twist, odometry and
wheel spins and every sensor observation after a fixed run. Two checkouts that print the same lines simulate
bit-identically; refactors compare before and after with it.

    .venv/bin/python scripts/fingerprint.py [--seconds S] > fp.txt

Worlds: the C++ reference-trajectory worlds with their command schedules (``../shared/reference-trajectories``),
upstream's example and test worlds (``../shared/worlds``) and ours (``worlds/``), each run with every twist
controller commanded (0.6 m/s, 0.3 rad/s), and a differential robot with twist_pid on each friction model.
Cameras are left out (their pictures come from Mesa, not from us).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
os.environ.setdefault("MVSIM_OFFLINE", "1")
sys.path.insert(0, str(REPO))

import mvsim_core as mv  # noqa: E402

NO_PICTURES = ("camera", "rgbd_camera")

FRICTION_WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <element class="horizontal_plane"><x_min>-40</x_min><y_min>-40</y_min><x_max>40</x_max><y_max>40</y_max></element>
  <vehicle name="r1">
    <dynamics class="differential_4_wheels">
      <controller class="twist_pid"><KP>10</KP><KI>2</KI><max_torque>20</max_torque></controller>
    </dynamics>
    <friction class="{model}">{params}</friction>
    <init_pose>0 0 0</init_pose>
  </vehicle>
</mvsim_world>
"""
FRICTION_PARAMS = {
    "default": "<mu>0.5</mu><C_damping>0.05</C_damping><C_rr>0.02</C_rr>",
    "wardiagnemma": "<mu>0.5</mu><C_damping>0.05</C_damping><A_roll>50</A_roll><R1>0.0075</R1><R2>0.02</R2>",
    "ellipse": "<C_damping>0.05</C_damping><C_alpha>8.5</C_alpha><C_s>7.5</C_s>",
}


def worlds() -> list[tuple[str, Path, list[tuple[float, float, float]] | None]]:
    """(label, path, schedule or None)."""
    out: list[tuple[str, Path, list[tuple[float, float, float]] | None]] = []
    cpp = SHARED / "reference-trajectories" / "cpp-1.2.0"
    for line in (cpp / "cases.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[0] != "S":
            continue
        sched = [tuple(float(v) for v in seg.split(",")) for seg in parts[3].split(";")]
        out.append((f"cpp/{parts[1]}", cpp / "worlds" / f"{parts[2]}.world.xml", sched))  # type: ignore[misc]
    out.append(("ref_diff_small_robot", SHARED / "reference-trajectories" / "ref_diff_small_robot.world.xml",
                [(3.0, 1.0, 0.0), (99.0, 0.5, 0.5)]))
    tmp = Path(tempfile.mkdtemp(prefix="mvsim-fingerprint-"))
    for model, params in FRICTION_PARAMS.items():
        p = tmp / f"friction_{model}.world.xml"
        p.write_text(FRICTION_WORLD.format(model=model, params=params))
        out.append((f"friction/{model}+twist_pid", p, [(2.0, 1.5, 0.0), (99.0, 1.0, 1.5)]))
    for d in (SHARED / "worlds" / "mvsim_tutorial", SHARED / "worlds" / "tests", REPO / "worlds"):
        for p in sorted(d.glob("*.world.xml")):
            out.append((f"{d.name}/{p.name}", p, None))
    return out


def fingerprint(path: Path, schedule, seconds: float) -> str:
    w = mv.load_world(path, seed=0)
    for s in [s for v in w.vehicles.values() for s in v.sensors.values()] + list(w.sensors.values()):
        if s.xml_class in NO_PICTURES:
            s.period = 1e9  # never due
    h = hashlib.sha256()
    steps = int(round(seconds / w.timestep))
    for _ in range(steps):
        if schedule is not None:
            t = w.time
            vx, wz = next(((v, om) for end, v, om in schedule if t < end - 1e-9), schedule[-1][1:])
            for v in w.vehicles.values():
                v.set_twist(vx, 0.0, wz)
        elif w.time == 0.0:
            for v in w.vehicles.values():
                if getattr(v.controller, "accepts_twist", False):
                    v.set_twist(0.6, 0.0, 0.3)
        w.step()
        for v in w.vehicles.values():
            h.update(np.array([*v.pose, *v.twist, *v.odometry], dtype=np.float64).tobytes())
            h.update(np.asarray(v.omega, dtype=np.float64).tobytes())
            for s in v.sensors.values():
                _obs(h, s)
        for s in w.sensors.values():
            _obs(h, s)
        for b in w.blocks.values():
            h.update(np.array(b.pose, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


def _obs(h, sensor) -> None:
    obs = sensor.last
    if obs is None:
        return
    for name in ("stamp", "ranges", "points", "intensity", "angular_velocity", "linear_acceleration", "orientation",
                 "latitude", "longitude", "altitude"):
        v = getattr(obs, name, None)
        if v is not None and not callable(v):
            h.update(np.asarray(v, dtype=np.float64).tobytes())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="simulated seconds per world (default 3)")
    args = ap.parse_args()
    for label, path, sched in worlds():
        secs = max(args.seconds, sched[-1][0]) if sched is not None and "cpp/" in label else args.seconds
        secs = 6.0 if label.startswith("friction/") else secs
        try:
            fp = fingerprint(path, sched, secs)
        except Exception as e:  # noqa: BLE001 - a world that fails is part of the fingerprint
            fp = f"error {type(e).__name__}: {e}"
        print(f"{label:60s} {fp}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

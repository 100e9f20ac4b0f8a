"""Import time of each shared robot's URDF (../shared/robots): read + analyse into a vehicle class and description.

Run: PYTHONPATH=. python benchmarks/bench_import_urdf.py [REPEATS]. One warm-up run per robot is outside the timing;
the table gives the median and the fastest of REPEATS runs, in ms.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from mvsim_core.objects.vehicles.urdf_import import import_urdf

ROBOTS = Path(__file__).resolve().parents[2] / "shared" / "robots"
NAMES = ("turtlebot3_burger", "turtlebot3_waffle", "husky", "diffbot", "carlikebot")


def main(repeats: int = 20) -> None:
    print(f"{'robot':<20} {'median ms':>10} {'min ms':>8}  class")
    for name in NAMES:
        path = ROBOTS / name / f"{name}.urdf"
        veh = import_urdf(path)  # warm-up: imports, first-call costs
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            import_urdf(path)
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"{name:<20} {statistics.median(times):>10.2f} {min(times):>8.2f}  {veh.dynamics}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)

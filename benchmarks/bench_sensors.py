"""Benchmark: sensor simulation throughput on one core.

Each part builds its scene, measures, and returns Markdown table rows; ``main`` prints one table per part. Parts:

* ``lidar2d`` — 2D lidar rays per second: a 4000 × 4000-cell occupancy grid (0.05 m cells, 200 m × 200 m, random
  rectangles as obstacles) plus 100 static blocks and 20 differential robots, each carrying a 360°, 1440-ray lidar
  (30 m) at a random free position. Rows: the kernels alone through :meth:`RaycastScene.cast` (all 28 800 rays in
  one call; also the grid alone and the segments alone), and the whole sensor path (``Lidar2D.sample_batch``: poses,
  noise, observations). Goal: ≥ 5 M rays/s for the full scene.

    .venv/bin/python benchmarks/bench_sensors.py [--part lidar2d] [--repeat N] [--seed S]

Numba runs single-threaded here (``NUMBA_NUM_THREADS=1``); the first run also compiles or loads the cached kernels,
which is not timed. Rows give the median and the best of the timed calls: the grid kernel waits on memory, so its
speed follows the load other processes put on the shared CPU caches (on a shared 2-vCPU VM the median moved by up to
1.7× between runs).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ["MVSIM_OFFLINE"] = "1"
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

import mvsim_core as mv  # noqa: E402

GOAL_RAYS_PER_S = 5e6


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median and best wall time (s) of ``repeat`` calls of ``fn`` (after one untimed warm-up call)."""
    fn()
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples), min(samples)


# ---------------------------------------------------------------------------------------------------- lidar2d
GRID_CELLS = 4000
GRID_RES = 0.05  # m
N_RECTANGLES = 1500  # obstacles on the grid, 5–60 cells a side
N_BLOCKS = 100
N_ROBOTS = 20
N_RAYS = 1440
MAX_RANGE = 30.0  # m


def _lidar2d_world(folder: Path, seed: int) -> mv.World:
    """Write the benchmark world (PNG map + XML) into ``folder`` and load it."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    n, res = GRID_CELLS, GRID_RES
    occupied = np.zeros((n, n), dtype=bool)
    for _ in range(N_RECTANGLES):
        x0, y0 = rng.integers(0, n, 2)
        w, h = rng.integers(5, 61, 2)
        occupied[y0:y0 + h, x0:x0 + w] = True
    half = 0.5 * n * res  # the map is centred on the origin: x, y in [−100, 100) m
    Image.fromarray(np.where(occupied, 0, 255).astype(np.uint8), mode="L").save(folder / "map.png")

    def free(x: float, y: float, r: float) -> bool:
        """No occupied cell within r (m) of (x, y) (image row 0 is the top, largest y)."""
        c0, c1 = int((x - r + half) / res), int(math.ceil((x + r + half) / res))
        r0, r1 = int((half - (y + r)) / res), int(math.ceil((half - (y - r)) / res))
        if min(c0, r0) < 0 or max(c1, r1) > n:
            return False
        return not occupied[r0:r1, c0:c1].any()

    taken: list[tuple[float, float, float]] = []

    def place(r: float) -> tuple[float, float]:
        while True:
            x, y = rng.uniform(-0.9 * half, 0.9 * half, 2)
            if free(x, y, r) and all(math.hypot(x - a, y - b) > r + c for a, b, c in taken):
                taken.append((x, y, r))
                return float(x), float(y)

    parts = [f'<element class="occupancy_grid"><file>map.png</file><resolution>{res}</resolution>'
             f'<centerpixel_x>{n // 2}</centerpixel_x><centerpixel_y>{n // 2}</centerpixel_y></element>']
    for k in range(N_ROBOTS):
        x, y = place(1.0)
        parts.append(f'<vehicle name="r{k}"><dynamics class="differential"/>'
                     f'<init_pose>{x:.3f} {y:.3f} {rng.uniform(-180, 180):.1f}</init_pose>'
                     f'<sensor class="laser" name="laser"><pose>0.1 0 0</pose><height>0.3</height>'
                     f'<fov_degrees>360</fov_degrees><nrays>{N_RAYS}</nrays><max_range>{MAX_RANGE}</max_range>'
                     f'<sensor_period>0.1</sensor_period></sensor></vehicle>')
    for k in range(N_BLOCKS):
        sx, sy = rng.uniform(0.3, 2.0, 2)
        x, y = place(math.hypot(sx, sy) / 2 + 0.1)
        pts = "".join(f"<pt>{px * sx / 2:.3f} {py * sy / 2:.3f}</pt>" for px, py in ((-1, -1), (1, -1), (1, 1),
                                                                                       (-1, 1)))
        parts.append(f'<block name="b{k}"><static>true</static><init_pose>{x:.3f} {y:.3f} '
                     f'{rng.uniform(-180, 180):.1f}</init_pose><zmin>0</zmin><zmax>1</zmax>'
                     f'<shape>{pts}</shape></block>')
    path = folder / "bench_lidar2d.world.xml"
    path.write_text('<mvsim_world version="1.0">\n' + "\n".join(parts) + "\n</mvsim_world>\n")
    return mv.load_world(path, seed=seed)


def part_lidar2d(repeat: int, seed: int) -> list[str]:
    """Rows of the 2D lidar part (see the module docstring)."""
    from mvsim_core.sensors.lidar2d import Lidar2D
    from mvsim_core.sensors.raycast.scene import RaycastScene

    with tempfile.TemporaryDirectory() as tmp:
        world = _lidar2d_world(Path(tmp), seed)
    physics = world.physics
    t = time.perf_counter()
    scene = RaycastScene.from_world(world, physics)
    t_build = time.perf_counter() - t
    ctx = physics.sensors.ctx
    ctx._raycast_scene = scene
    lidars = [v.sensors["laser"] for v in world.vehicles.values()]

    # the rays of every lidar, as sample_batch builds them
    origins, angles, heights, exclude = [], [], [], []
    for s in lidars:
        rot, pos = ctx.sensor_pose(s)
        yaw = math.atan2(rot[1, 0], rot[0, 0])
        origins.append(np.tile(pos[:2], (s.nrays, 1)))
        angles.append(yaw + s.angles())
        heights.append(np.full(s.nrays, pos[2]))
        exclude.append(np.full(s.nrays, ctx.vehicle_index(s)))
    o, a, h, ex = np.vstack(origins), np.concatenate(angles), np.concatenate(heights), np.concatenate(exclude)
    n = len(a)
    reach = np.full(n, MAX_RANGE)
    vis = np.ones(n, dtype=bool)
    d = scene.cast(o, a, h, reach, ex, vis)
    hit = np.isfinite(d)

    grids_only = RaycastScene.from_world(world, physics)
    segs_only = RaycastScene.from_world(world, physics)
    segs_only.grids = []
    rows = []
    cases = [
        ("grid + segments (scene.cast)", lambda: scene.cast(o, a, h, reach, ex, vis)),
        ("grid only (bodies_visible=false)", lambda: grids_only.cast(o, a, h, reach, ex, ~vis)),
        ("segments only (no grid)", lambda: segs_only.cast(o, a, h, reach, ex, vis)),
        ("full sensor path (Lidar2D.sample_batch)", lambda: Lidar2D.sample_batch(lidars, ctx, 0.1)),
    ]
    for label, fn in cases:
        dt, best = timed(fn, repeat)
        rate = n / dt
        goal = "" if "only" in label else (" ✔" if rate >= GOAL_RAYS_PER_S else " ✘ (goal 5 M)")
        rows.append(f"| {label} | {len(lidars)} × {N_RAYS} | {dt * 1e3:.2f} | {rate / 1e6:.2f}{goal} | "
                    f"{n / best / 1e6:.2f} |")
    mean_range = float(d[hit].mean()) if hit.any() else float("nan")
    rows.append(f"| scene: {GRID_CELLS}² cells @ {GRID_RES} m, {N_RECTANGLES} rectangles, {N_BLOCKS} blocks, "
                f"{N_ROBOTS} robots; prep (EDT + buckets) {t_build:.2f} s; {hit.mean() * 100:.0f} % rays hit, mean "
                f"range {mean_range:.1f} m of {MAX_RANGE:g} | | | | |")
    return rows


PARTS: dict[str, tuple[str, Callable[[int, int], list[str]]]] = {
    "lidar2d": ("| 2D lidar, one core | rays per call | ms per call (median) | M rays/s (median) | M rays/s (best) |"
                "\n|---|---:|---:|---:|---:|",
                part_lidar2d),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=sorted(PARTS), action="append", help="part(s) to run (default: all)")
    ap.add_argument("--repeat", type=int, default=20, help="timed calls per row (median; default 20)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random scene (default 0)")
    args = ap.parse_args()
    for name in args.part or sorted(PARTS):
        header, fn = PARTS[name]
        print(header)
        for row in fn(args.repeat, args.seed):
            print(row)
        print()


if __name__ == "__main__":
    main()

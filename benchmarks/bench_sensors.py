"""Benchmark: sensor simulation throughput on one core.

Each part builds its scene, measures, and returns Markdown table rows; ``main`` prints one table per part. Parts:

* ``lidar2d`` — 2D lidar rays per second: a 4000 × 4000-cell occupancy grid (0.05 m cells, 200 m × 200 m, random
  rectangles as obstacles) plus 100 static blocks and 20 differential robots, each carrying a 360°, 1440-ray lidar
  (30 m) at a random free position. Rows: the kernels alone through :meth:`RaycastScene.cast` (all 28 800 rays in
  one call; also the grid alone and the segments alone), and the whole sensor path (``Lidar2D.sample_batch``: poses,
  noise, observations). Goal: ≥ 5 M rays/s for the full scene.
* ``lidar3d`` — 3D lidar sweeps per second: a VLP-16 (16 beams over 30°, 1800 azimuths = 28 800 rays, 80 m) on a
  robot in the middle of a rolling elevation map (201 × 201 vertices at 0.5 m, 100 m × 100 m, heights within ±1.5 m)
  with 200 static blocks (boxes and cylinders, 0.3–2 m wide, 0.3–3 m tall) and 10 other robots standing on it. Rows:
  the kernel alone through :meth:`RaycastScene3D.cast` (terrain + blocks + robots; terrain only; blocks and robots on
  a flat floor only) and the whole sensor path (``Lidar3D.sample_batch``: poses, cast, noise, point clouds), on one
  thread; with ``NUMBA_NUM_THREADS=2`` (or more) in the environment, also the threaded kernel
  (:func:`~mvsim_core.sensors.raycast.rays3d.trace_sensors_parallel`). Goal: ≥ 100 sweeps/s (2.88 M rays/s) for the
  full sensor path.
* ``lidar3d_meshes`` — the VLP-16 robot of ``lidar3d`` on a flat floor amid 80 static chairs (``chair_x3.dae`` of
  the model mirror in ``../shared/assets/mvsim-models``, 2748 triangles each, each scaled by its own factor so that
  none shares a tree: 219 840 triangles) in a 9 × 9 grid at 2 m; the lidar sees their triangles
  (:mod:`~mvsim_core.sensors.raycast.bvh`). Rows: the kernel alone and the whole sensor path (goal: ≥ 100 sweeps/s);
  a 640 × 480 RGB-D camera on the same robot rendering that scene headless, shadows on (``RgbdCamera.sample_batch``),
  with the robot still and driving a circle (0.3 m/s, 0.3 rad/s; 1/30 s of simulation between frames, not timed)
  (goal: ≥ 30 frames/s); and the cold load — a fresh process that imports the simulator, loads the world file,
  steps once and takes one lidar sweep and one RGB-D frame, on warm kernel, bytecode and asset caches (median of 3
  processes after an untimed one; goal: under 2 s from import to that first sweep and frame).
* ``camera`` — 640 × 480 camera frames per second, rendered headless (OpenGL offscreen: EGL surfaceless or OSMesa on
  Mesa's llvmpipe; no display, no GPU): ``worlds/demo.world.xml`` (warehouse occupancy grid drawn as merged boxes,
  floor plane, pallets, crate, two vehicles) with an RGB-D camera on ``bot1`` looking down the corridor. Rows: the
  RGB-D sensor path (``RgbdCamera.sample_batch``: node poses, one shared render of colour + depth, 1 mm noise,
  quantization, clip), the same with the RGB camera 2.5 cm beside the depth camera (two renders), a plain RGB
  camera (``Camera.sample_batch``) and the renderer alone (colour + depth, no noise). Goal: ≥ 30 RGB-D frames/s.
* ``many_robots`` — ``demo_many_robots.world.xml`` from ``../shared/worlds`` (25 robots, each with a 100-ray 2D lidar
  at 20 Hz, on an occupancy grid) run as fast as possible: simulated seconds per wall second with the sensors on, and
  with the scheduler disabled (physics only) for comparison. Goal: ≥ 20 with the lidars (the C++ MVSim ran this world
  at 0.17 with publishing on, on this kind of machine).

    .venv/bin/python benchmarks/bench_sensors.py [--part lidar2d|lidar3d|lidar3d_meshes|camera|many_robots]
        [--repeat N] [--seed S]

Numba runs single-threaded here (``NUMBA_NUM_THREADS=1`` unless the environment sets it); the first run also compiles
or loads the cached kernels, which is not timed. Rows give the median and the best of the timed calls: the grid kernel
waits on memory, so its speed follows the load other processes put on the shared CPU caches (on a shared 2-vCPU VM the
median moved by up to 1.7× between runs).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
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
from mvsim_core.geometry.rotations import ypr_from_rotation  # noqa: E402

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
    physics = world.start().physics
    t = time.perf_counter()
    scene = RaycastScene.from_world(world, physics)
    t_build = time.perf_counter() - t
    ctx = world.sensor_scheduler.ctx
    ctx._raycast_scene = scene
    lidars = [v.sensors["laser"] for v in world.vehicles.values()]

    # the rays of every lidar, as sample_batch builds them
    origins, angles, heights, exclude = [], [], [], []
    for s in lidars:
        rot, pos = ctx.sensor_pose(s)
        yaw = ypr_from_rotation(rot)[0]
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


# ---------------------------------------------------------------------------------------------------- lidar3d
MAP_VERTICES = 201
MAP_RES = 0.5  # m
MAP_AMPLITUDE = 1.5  # m
N_BLOCKS_3D = 200
N_ROBOTS_3D = 10
VLP16_AZIMUTHS = 1800
VLP16_RANGE = 80.0  # m
GOAL_SWEEPS_PER_S = 100.0


def _terrain_heights(rng: np.random.Generator) -> np.ndarray:
    """Rolling terrain: a sum of 6 random plane waves (wavelengths 8–40 m), scaled to ±MAP_AMPLITUDE (m)."""
    n = MAP_VERTICES
    x = (np.arange(n) - n // 2) * MAP_RES
    gx, gy = np.meshgrid(x, x, indexing="ij")
    h = np.zeros((n, n))
    for _ in range(6):
        ang, phase = rng.uniform(0, 2 * math.pi, 2)
        k = 2 * math.pi / rng.uniform(8.0, 40.0)
        h += np.sin(k * (gx * math.cos(ang) + gy * math.sin(ang)) + phase)
    return h * (MAP_AMPLITUDE / np.abs(h).max())


def _lidar3d_world(folder: Path, seed: int, *, terrain: bool = True, obstacles: bool = True) -> mv.World:
    """Write the 3D benchmark world (XML with the height matrix inline) into ``folder`` and load it; without
    ``terrain`` the ground is the implicit floor, without ``obstacles`` only the lidar robot stands there."""
    rng = np.random.default_rng(seed)
    heights = _terrain_heights(rng)
    parts = []
    if terrain:
        matrix = ";".join(" ".join(f"{v:.3f}" for v in row) for row in heights)
        parts.append(f'<element class="elevation_map"><resolution>{MAP_RES}</resolution>'
                     f'<elevation_data_matrix>[{matrix}]</elevation_data_matrix></element>')
    half = 0.5 * (MAP_VERTICES - 1) * MAP_RES
    taken: list[tuple[float, float, float]] = [(0.0, 0.0, 1.5)]  # the lidar robot at the origin

    def place(r: float) -> tuple[float, float]:
        while True:
            x, y = rng.uniform(-0.9 * half, 0.9 * half, 2)
            if all(math.hypot(x - a, y - b) > r + c for a, b, c in taken):
                taken.append((x, y, r))
                return float(x), float(y)

    parts.append('<vehicle name="lidar_robot"><dynamics class="differential"/><init_pose>0 0 30</init_pose>'
                 '<sensor class="lidar3d" name="vlp16"><pose_3d>0.1 0 0.7 0 0 0</pose_3d>'
                 f'<vert_fov_degrees>30</vert_fov_degrees><vert_nrays>16</vert_nrays>'
                 f'<horz_nrays>{VLP16_AZIMUTHS}</horz_nrays><max_range>{VLP16_RANGE}</max_range>'
                 '<range_std_noise>0.005</range_std_noise><generate_intensity>true</generate_intensity>'
                 '<sensor_period>0.1</sensor_period></sensor></vehicle>')
    for k in range(N_ROBOTS_3D if obstacles else 0):
        x, y = place(1.0)
        parts.append(f'<vehicle name="r{k}"><dynamics class="differential"/>'
                     f'<init_pose>{x:.3f} {y:.3f} {rng.uniform(-180, 180):.1f}</init_pose></vehicle>')
    for k in range(N_BLOCKS_3D if obstacles else 0):
        sx, sy = rng.uniform(0.3, 2.0, 2)
        lz = rng.uniform(0.3, 3.0)
        x, y = place(math.hypot(sx, sy) / 2 + 0.1)
        if k % 2:
            geom = f'<geometry type="cylinder" radius="{sx / 2:.3f}" length="{lz:.3f}"/>'
        else:
            pts = "".join(f"<pt>{px * sx / 2:.3f} {py * sy / 2:.3f}</pt>"
                          for px, py in ((-1, -1), (1, -1), (1, 1), (-1, 1)))
            geom = f"<zmin>0</zmin><zmax>{lz:.3f}</zmax><shape>{pts}</shape>"
        parts.append(f'<block name="b{k}"><static>true</static><init_pose>{x:.3f} {y:.3f} '
                     f'{rng.uniform(-180, 180):.1f}</init_pose>{geom}</block>')
    path = folder / f"bench_lidar3d_{int(terrain)}{int(obstacles)}.world.xml"
    path.write_text('<mvsim_world version="1.0">\n' + "\n".join(parts) + "\n</mvsim_world>\n")
    return mv.load_world(path, seed=seed)


def part_lidar3d(repeat: int, seed: int) -> list[str]:
    """Rows of the 3D lidar part (see the module docstring)."""
    import numba

    from mvsim_core.sensors.lidar3d import Lidar3D, _ray_table, scene_3d
    from mvsim_core.sensors.raycast.rays3d import RaycastScene3D

    with tempfile.TemporaryDirectory() as tmp:
        world = _lidar3d_world(Path(tmp), seed)
        flat = _lidar3d_world(Path(tmp), seed, terrain=False)
        bare = _lidar3d_world(Path(tmp), seed, obstacles=False)
    rows = []
    for w in (world, flat, bare):
        w.step()  # starts the world and puts the robots on the terrain
    physics = world.physics
    ctx = world.sensor_scheduler.ctx
    t = time.perf_counter()
    scene = RaycastScene3D.from_world(world, physics)
    t_build = time.perf_counter() - t
    ctx.__dict__["_raycast_scene_3d"] = scene
    lidar = world.vehicles["lidar_robot"].sensors["vlp16"]
    rot, pos = ctx.sensor_poses([lidar])
    dirs, bounds = _ray_table(scene, [lidar])
    reach = np.array([lidar.max_range])
    owner = np.array([ctx.vehicle_index(lidar)])
    n = len(dirs)
    d, _ = scene.cast(pos, rot, dirs, bounds, reach, owner)
    hit = np.isfinite(d)
    terrain_only = scene_3d(bare.sensor_scheduler.ctx)
    fctx = flat.sensor_scheduler.ctx
    flat_lidar = flat.vehicles["lidar_robot"].sensors["vlp16"]
    frot, fpos = fctx.sensor_poses([flat_lidar])
    flat_scene = scene_3d(fctx)
    threads = numba.get_num_threads()

    def serial(sc: RaycastScene3D, fn: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            sc.parallel = False
            return fn()
        return run

    def threaded(sc: RaycastScene3D, fn: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            sc.parallel = True
            return fn()
        return run

    full_cast = lambda: scene.cast(pos, rot, dirs, bounds, reach, owner)  # noqa: E731
    full_path = lambda: Lidar3D.sample_batch([lidar], ctx, 0.1)  # noqa: E731
    cases = [
        ("terrain + blocks + robots (scene.cast)", serial(scene, full_cast)),
        ("terrain only", serial(terrain_only, lambda: terrain_only.cast(pos, rot, dirs, bounds, reach, owner))),
        ("blocks + robots on a flat floor", serial(flat_scene, lambda: flat_scene.cast(fpos, frot, dirs, bounds,
                                                                                       reach, owner))),
        ("full sensor path (Lidar3D.sample_batch)", serial(scene, full_path)),
    ]
    if threads > 1:
        cases += [(f"terrain + blocks + robots (scene.cast), {threads} threads", threaded(scene, full_cast)),
                  (f"full sensor path, {threads} threads", threaded(scene, full_path))]
    for label, fn in cases:
        dt, best = timed(fn, repeat)
        sweeps = 1.0 / dt
        goal = ""
        if "full" in label or "scene.cast" in label:
            goal = " ✔" if sweeps >= GOAL_SWEEPS_PER_S else " ✘ (goal 100)"
        rows.append(f"| {label} | {n} | {dt * 1e3:.2f} | {sweeps:.0f}{goal} | {n / dt / 1e6:.2f} | "
                    f"{n / best / 1e6:.2f} |")
    mean_range = float(d[hit].mean()) if hit.any() else float("nan")
    rows.append(f"| scene: {MAP_VERTICES}² vertices @ {MAP_RES} m, {N_BLOCKS_3D} blocks, {N_ROBOTS_3D + 1} robots; "
                f"numba threads {threads}; prep (pyramid + solids) {t_build * 1e3:.0f} ms; {hit.mean() * 100:.0f} % "
                f"rays hit, mean range {mean_range:.1f} m of {VLP16_RANGE:g} | | | | | |")
    return rows


# ---------------------------------------------------------------------------------------------------- lidar3d_meshes
MESH_MODEL = REPO.parent / "shared" / "assets" / "mvsim-models" / "chair_x3.dae"
MESH_GRID = 9  # chairs per side (the middle cell is the lidar robot's)
MESH_SPACING = 2.0  # m


def _mesh_world(folder: Path, seed: int) -> mv.World:
    """The lidar robot of the 3D part on a flat floor amid MESH_GRID² − 1 static chairs (``chair_x3.dae``, 2748
    triangles), each scaled by its own factor in 0.9–1.1 so that every chair has its own tree (no sharing)."""
    rng = np.random.default_rng(seed)
    parts = ['<vehicle name="lidar_robot"><dynamics class="differential"><controller class="twist_ideal"/>'
             '</dynamics><init_pose>0 0 30</init_pose>'
             '<sensor class="rgbd_camera" name="rgbd"><pose_3d>0.3 0 0.8 0 0 0</pose_3d><sensor_period>0.1'
             '</sensor_period></sensor>'
             '<sensor class="lidar3d" name="vlp16"><pose_3d>0.1 0 0.7 0 0 0</pose_3d>'
             f'<vert_fov_degrees>30</vert_fov_degrees><vert_nrays>16</vert_nrays>'
             f'<horz_nrays>{VLP16_AZIMUTHS}</horz_nrays><max_range>{VLP16_RANGE}</max_range>'
             '<range_std_noise>0.005</range_std_noise><generate_intensity>true</generate_intensity>'
             '<sensor_period>0.1</sensor_period></sensor></vehicle>']
    half = MESH_GRID // 2
    for i in range(-half, half + 1):
        for j in range(-half, half + 1):
            if i == 0 and j == 0:
                continue
            parts.append(f'<block name="c{i}_{j}"><static>true</static><init_pose>{i * MESH_SPACING:.2f} '
                         f'{j * MESH_SPACING:.2f} {rng.uniform(-180, 180):.1f}</init_pose><shape_from_visual/>'
                         f'<visual><model_uri>{MESH_MODEL}</model_uri><model_roll>90</model_roll>'
                         f'<model_scale>{rng.uniform(0.9, 1.1):.6f}</model_scale></visual></block>')
    path = folder / "bench_lidar3d_meshes.world.xml"
    path.write_text('<mvsim_world version="1.0">\n' + "\n".join(parts) + "\n</mvsim_world>\n")
    return mv.load_world(path, seed=seed)


_COLD_LOAD = """
import sys, time
t0 = time.perf_counter()
import mvsim_core as mv
from mvsim_core.sensors.lidar3d import Lidar3D
from mvsim_core.sensors.rgbd_camera import RgbdCamera
world = mv.load_world(sys.argv[1], seed=0)
t1 = time.perf_counter()
world.start().sensor_scheduler.enabled = False
world.step()
sensors = world.vehicles["lidar_robot"].sensors
ctx = world.sensor_scheduler.ctx
Lidar3D.sample_batch([sensors["vlp16"]], ctx, 0.1)
RgbdCamera.sample_batch([sensors["rgbd"]], ctx, 0.1)
print(t1 - t0, time.perf_counter() - t0)
"""


def _cold_load(path: Path, runs: int = 3) -> tuple[float, float, float]:
    """Median (s) over ``runs`` fresh processes (after an untimed one that fills the caches) of: the whole process
    (interpreter start to exit, the interpreter's own teardown of numba and OpenGL included), import + world load,
    and import to the first lidar sweep and RGB-D frame (the cold load)."""
    whole, load, first = [], [], []
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed package has it
    for i in range(runs + 1):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _COLD_LOAD, str(path)], capture_output=True, text=True,
                             check=True, env=env)
        if i:
            whole.append(time.perf_counter() - t)
            a, b = (float(v) for v in out.stdout.split())
            load.append(a)
            first.append(b)
    return statistics.median(whole), statistics.median(load), statistics.median(first)


def part_lidar3d_meshes(repeat: int, seed: int) -> list[str]:
    """Rows of the mesh part (see the module docstring)."""
    from mvsim_core.sensors.lidar3d import Lidar3D, _ray_table
    from mvsim_core.sensors.raycast.rays3d import RaycastScene3D
    from mvsim_core.sensors.raycast.solids import C_KIND, KIND_MESH
    from mvsim_core.sensors.rgbd_camera import RgbdCamera

    if not MESH_MODEL.is_file():
        return [f"| skipped: {MESH_MODEL} not found | | | | | |"]
    with tempfile.TemporaryDirectory() as tmp:
        world = _mesh_world(Path(tmp), seed)
        cold = _cold_load(Path(tmp) / "bench_lidar3d_meshes.world.xml")
    world.step()
    ctx = world.sensor_scheduler.ctx
    t = time.perf_counter()
    scene = RaycastScene3D.from_world(world, world.physics)
    t_build = time.perf_counter() - t
    ctx.__dict__["_raycast_scene_3d"] = scene
    lidar = world.vehicles["lidar_robot"].sensors["vlp16"]
    assert isinstance(lidar, Lidar3D)
    rot, pos = ctx.sensor_poses([lidar])
    dirs, bounds = _ray_table(scene, [lidar])
    reach = np.array([lidar.max_range])
    owner = np.array([ctx.vehicle_index(lidar)])
    n = len(dirs)
    d, _ = scene.cast(pos, rot, dirs, bounds, reach, owner)
    n_mesh = int((scene.tab[:, C_KIND] == KIND_MESH).sum())
    static_meshes = getattr(scene, "static_meshes", [])  # (absent before Embree: for before/after runs)
    n_embree = sum(em.n_triangles for em in static_meshes)
    engine = (f"static models in Embree ({n_embree} triangles)" if static_meshes
              else f"{n_mesh} chairs in their own trees ({scene.meshes.n_triangles} triangles)")
    rows = []
    for label, fn in (("chairs on a flat floor (scene.cast)",
                       lambda: scene.cast(pos, rot, dirs, bounds, reach, owner)),
                      ("full sensor path (Lidar3D.sample_batch)", lambda: Lidar3D.sample_batch([lidar], ctx, 0.1))):
        dt, best = timed(fn, repeat)
        sweeps = 1.0 / dt
        goal = " ✔" if sweeps >= GOAL_SWEEPS_PER_S else " ✘ (goal 100)"
        rows.append(f"| {label} | {n} | {dt * 1e3:.2f} | {sweeps:.0f}{goal} | {n / dt / 1e6:.2f} | "
                    f"{n / best / 1e6:.2f} |")
    hit = np.isfinite(d)
    rows.append(f"| scene: 80 chairs, {engine}; scene build {t_build * 1e3:.0f} ms; {hit.mean() * 100:.0f} % rays "
                "hit | | | | | |")
    cam = world.vehicles["lidar_robot"].sensors["rgbd"]
    assert isinstance(cam, RgbdCamera)
    world.sensor_scheduler.enabled = False
    robot = world.vehicles["lidar_robot"]
    for label, twist in (("robot still", (0.0, 0.0, 0.0)), ("robot driving", (0.3, 0.0, 0.3))):
        robot.controller.set_twist(*twist)
        samples: list[float] = []
        for i in range(max(repeat, 20) + 1):
            world.run(1.0 / 30.0)
            t = time.perf_counter()
            RgbdCamera.sample_batch([cam], ctx, 0.1)
            if i:  # the first frame after a change of motion is a warm-up
                samples.append(time.perf_counter() - t)
        dt, best = statistics.median(samples), min(samples)
        goal = " ✔" if 1.0 / dt >= CAM_GOAL_FPS else " ✘ (goal 30)"
        k = cam.depth_intrinsics
        rows.append(f"| 640 × 480 RGB-D frames (RgbdCamera.sample_batch), shadows on, {label} | "
                    f"{k.ncols} × {k.nrows} px | {dt * 1e3:.2f} | {1.0 / dt:.0f} fps{goal} | | |")
    whole, load, first = cold
    goal = " ✔" if first < 2.0 else " ✘ (goal 2 s)"
    rows.append(f"| cold load, fresh process, import to the first sweep and frame (import + load {load:.2f} s; "
                f"whole process to exit {whole:.2f} s) | | {first * 1e3:.0f}{goal} | | | |")
    return rows


# ---------------------------------------------------------------------------------------------------- camera
CAM_GOAL_FPS = 30.0


def _camera_world(folder: Path, seed: int) -> mv.World:
    """``worlds/demo.world.xml`` with an RGB-D camera (two, one with an offset RGB camera) and an RGB camera on
    ``bot1``, written into ``folder`` (paths made absolute) and loaded."""
    text = (REPO / "worlds" / "demo.world.xml").read_text()
    text = text.replace("definitions/", f"{REPO}/worlds/definitions/").replace("maps/", f"{REPO}/worlds/maps/")
    cams = ('<sensor class="rgbd_camera" name="rgbd"><pose_3d>0.3 0 0.8 0 0 0</pose_3d></sensor>'
            '<sensor class="rgbd_camera" name="rgbd_offset"><pose_3d>0.3 0 0.8 0 0 0</pose_3d>'
            "<relativePoseIntensityWRTDepth>0 0.025 0 -90 0 -90</relativePoseIntensityWRTDepth></sensor>"
            '<sensor class="camera" name="rgb"><pose_3d>0.3 0 0.8 -90 0 -90</pose_3d></sensor>')
    anchor = "<init_pose>-13.0 0.0 0</init_pose>"
    assert text.count(anchor) == 1, "demo.world.xml changed: place the benchmark cameras by hand"
    text = text.replace(anchor, anchor + cams)
    path = folder / "bench_camera.world.xml"
    path.write_text(text)
    return mv.load_world(path, seed=seed)


def part_camera(repeat: int, seed: int) -> list[str]:
    """Rows of the camera part (see the module docstring)."""
    from mvsim_core.sensors.camera import Camera
    from mvsim_core.sensors.render.renderer import renderer_for
    from mvsim_core.sensors.rgbd_camera import OPTICAL_WRT_SENSOR, RgbdCamera

    with tempfile.TemporaryDirectory() as tmp:
        world = _camera_world(Path(tmp), seed)
        world.step()
    ctx = world.start().sensor_scheduler.ctx
    t = time.perf_counter()
    renderer = renderer_for(ctx)
    t_build = time.perf_counter() - t
    sensors = world.vehicles["bot1"].sensors
    rgbd, offset, rgb = sensors["rgbd"], sensors["rgbd_offset"], sensors["rgb"]
    rot, pos = ctx.sensor_poses([rgbd])
    k = rgbd.depth_intrinsics

    def render_only() -> object:
        renderer.update_nodes()
        return renderer.render(rot[0] @ OPTICAL_WRT_SENSOR, pos[0], k, 0.01, 1e4)

    cases = [
        ("RGB-D, RGB and depth share the optical frame (RgbdCamera.sample_batch)",
         lambda: RgbdCamera.sample_batch([rgbd], ctx, 0.1)),
        ("RGB-D, RGB camera 2.5 cm beside the depth camera (two renders)",
         lambda: RgbdCamera.sample_batch([offset], ctx, 0.1)),
        ("RGB camera (Camera.sample_batch)", lambda: Camera.sample_batch([rgb], ctx, 0.1)),
        ("renderer alone: colour + depth, no noise", render_only),
    ]
    rows = []
    for label, fn in cases:
        dt, best = timed(fn, repeat)
        goal = ""
        if label.startswith("RGB-D, RGB and depth share"):
            goal = " ✔" if 1.0 / dt >= CAM_GOAL_FPS else " ✘ (goal 30)"
        rows.append(f"| {label} | {k.ncols} × {k.nrows} | {dt * 1e3:.2f} | {1.0 / dt:.0f}{goal} | {1.0 / best:.0f} |")
    obs = rgbd.sample(ctx, 0.1)
    seen = float((obs.depth > 0).mean()) * 100
    rows.append(f"| scene: {renderer.scene.summary()}; {renderer.ctx!r}; scene build + upload {t_build * 1e3:.0f} ms; "
                f"{seen:.0f} % pixels with depth | | | | |")
    return rows


# ---------------------------------------------------------------------------------------------------- many_robots
MANY_GOAL = 20.0  # simulated s per wall s with the 25 lidars
MANY_SECONDS = 10.0  # simulated seconds per timed run


def part_many_robots(repeat: int, seed: int) -> list[str]:
    """Rows of the demo_many_robots part (see the module docstring)."""
    shared = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
    path = shared / "worlds" / "mvsim_tutorial" / "demo_many_robots.world.xml"
    rows = []
    for label, sensors_on in (("25 robots, 25 lidars (100 rays, 20 Hz)", True), ("25 robots, sensors disabled", False)):
        rates = []
        for _ in range(max(1, min(repeat, 3))):
            world = mv.load_world(path, seed=seed)
            world.run(0.1)  # warm-up: bodies built, kernels compiled or loaded
            world.start().sensor_scheduler.enabled = sensors_on
            n = round(MANY_SECONDS / world.timestep)
            t = time.perf_counter()
            for _ in range(n):
                world.step()
            rates.append(n * world.timestep / (time.perf_counter() - t))
        scans = sum(len(v.sensors) for v in world.vehicles.values())
        rate = statistics.median(rates)
        goal = (" ✔" if rate >= MANY_GOAL else f" ✘ (goal {MANY_GOAL:g})") if sensors_on else ""
        rows.append(f"| {label} | {len(world.vehicles)} | {scans if sensors_on else 0} | "
                    f"{world.timestep * 1e3:g} | {rate:.1f}{goal} | {max(rates):.1f} |")
    return rows


PARTS: dict[str, tuple[str, Callable[[int, int], list[str]]]] = {
    "lidar2d": ("| 2D lidar, one core | rays per call | ms per call (median) | M rays/s (median) | M rays/s (best) |"
                "\n|---|---:|---:|---:|---:|",
                part_lidar2d),
    "lidar3d": ("| 3D lidar (VLP-16) | rays per sweep | ms per sweep (median) | sweeps/s (median) | M rays/s (median) "
                "| M rays/s (best) |\n|---|---:|---:|---:|---:|---:|",
                part_lidar3d),
    "lidar3d_meshes": ("| 3D lidar (VLP-16) at meshes | rays per sweep | ms per sweep (median) | sweeps/s (median) "
                       "| M rays/s (median) | M rays/s (best) |\n|---|---:|---:|---:|---:|---:|",
                       part_lidar3d_meshes),
    "camera": ("| camera, headless OpenGL (Mesa llvmpipe) | image | ms per frame (median) | frames/s (median) | "
               "frames/s (best) |\n|---|---:|---:|---:|---:|",
               part_camera),
    "many_robots": ("| demo_many_robots, as fast as possible | vehicles | sensors | timestep (ms) | "
                    "sim-s / wall-s (median) | sim-s / wall-s (best) |\n|---|---:|---:|---:|---:|---:|",
                    part_many_robots),
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

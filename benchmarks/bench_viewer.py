"""Benchmark: the desktop viewer at 1280 × 720 on Mesa's software OpenGL (llvmpipe), and what it costs the physics.

Parts:

* ``fps`` — frames per second of :meth:`Viewer.frame` (window events, scene + lidar points + status panel drawn,
  shown, buffers swapped) drawn back to back, the world advancing 50 ms between frames: ``worlds/demo.world.xml``
  and ``demo_many_robots`` (25 robots with lidars). Goal: ≥ 30 frames/s.
* ``rtf`` — the simulation run by ``mvsim launch``'s loop (the shared :class:`mvsim_core.runner.Runner`, built by
  :func:`mvsim_core.cli.build_runner`) for about 10 wall seconds (the same simulated stretch with and without the
  window; the window's one-time set-up not timed): as fast as possible (real-time factor 0: frames only take their
  budget, ~10 % of wall time) and at a requested factor the world can keep (1 for the demo, 10 for
  demo_many_robots): the achieved factor must equal the requested one, window or not, while the window draws at
  ``refresh_fps``.

Needs a display: uses ``$DISPLAY`` when set, else starts a private Xvfb (``apt-get install xvfb``).

    .venv/bin/python benchmarks/bench_viewer.py [--part fps|rtf] [--frames N] [--wall S]
"""

from __future__ import annotations

import argparse
import io
import os
import select
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("MVSIM_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
sys.path.insert(0, str(REPO))

import mvsim_core as mv  # noqa: E402
from mvsim_core.cli import build_parser, build_runner  # noqa: E402

WORLDS = {"demo.world.xml (ours)": REPO / "worlds" / "demo.world.xml",
          "demo_many_robots (25 robots, 25 lidars)":
              SHARED / "worlds" / "mvsim_tutorial" / "demo_many_robots.world.xml"}
SIZE = (1280, 720)
FPS_GOAL = 30.0


def ensure_display() -> subprocess.Popen | None:
    """Use $DISPLAY, or start Xvfb and point $DISPLAY at it (returned, to be terminated)."""
    if os.environ.get("DISPLAY"):
        return None
    exe = shutil.which("Xvfb")
    if exe is None:
        raise SystemExit("bench_viewer: no DISPLAY and no Xvfb (apt-get install xvfb)")
    r, w = os.pipe()
    proc = subprocess.Popen([exe, "-displayfd", str(w), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    data = b""
    while not data.endswith(b"\n"):
        if not select.select([r], [], [], 30)[0]:
            raise SystemExit("bench_viewer: Xvfb did not start")
        data += os.read(r, 64)
    os.close(r)
    os.environ["DISPLAY"] = ":" + data.decode().strip()
    return proc


def _viewer(world):
    from mvsim_core.gui.window import Viewer

    return Viewer(world, width=SIZE[0], height=SIZE[1])


def part_fps(frames: int) -> list[str]:
    rows = []
    for label, path in WORLDS.items():
        world = mv.load_world(path, seed=0)
        world.run(0.5)
        v = _viewer(world)
        try:
            for _ in range(5):  # warm-up: first uploads, shader compilation
                v.frame(1.0)
            times, costs = [], []
            n = round(0.05 / world.timestep)
            for _ in range(frames):
                for _ in range(n):
                    world.step()
                t = time.perf_counter()
                v.frame(1.0)
                times.append(t)
                costs.append(v.frame_cost)
            med = statistics.median(costs)
            ok = " ✔" if 1.0 / med >= FPS_GOAL else f" ✘ (goal {FPS_GOAL:g})"
            rows.append(f"| {label} | {SIZE[0]} × {SIZE[1]} | {v.view.scene.summary()} | {med * 1e3:.1f} | "
                        f"{1.0 / med:.0f}{ok} | {min(costs) * 1e3:.1f} |")
        finally:
            v.close()
    rows.append(f"| renderer: {_renderer_name()} | | | | | |")
    return rows


def _renderer_name() -> str:
    from OpenGL import GL

    from mvsim_core.sensors.render.gl_context import get_context

    with get_context().bound():
        r = GL.glGetString(GL.GL_RENDERER)
    return r.decode() if isinstance(r, bytes) else str(r)


def _run(path: Path, factor: float, seconds: float, window: bool) -> tuple[float, float | None, int]:
    """(achieved real-time factor, frames per wall second or None, frames) of ``mvsim launch``'s runner over
    ``seconds``."""
    world = mv.load_world(path, seed=0)
    world.run(0.2)  # warm-up: bodies, sensors, kernels
    v = _viewer(world) if window else None
    try:
        if v is not None:
            v.frame(None)  # one-time set-up (uploads, shader compilation) is not part of the run
        t = time.perf_counter()
        args = build_parser().parse_args(["launch", str(path), "--realtime-factor", str(factor)])
        build_runner(world, args, v, out=io.StringIO()).run(seconds)
        wall = time.perf_counter() - t
        return seconds / wall, (v.frames / wall if v else None), (v.frames if v else 0)
    finally:
        if v is not None:
            v.close()


def part_rtf(wall: float) -> list[str]:
    rows = []
    for (label, path), keepable in zip(WORLDS.items(), (1.0, 10.0), strict=True):
        for factor in (0.0, keepable):
            bare, _, _ = _run(path, factor, wall * (factor or 10.0), False)
            seconds = wall * (factor or bare)  # about ``wall`` wall seconds either way
            bare, _, _ = _run(path, factor, seconds, False)
            win, fps, n = _run(path, factor, seconds, True)
            asked = "as fast as possible" if factor == 0 else f"{factor:g}"
            loss = (f"{(1 - win / bare) * 100:.1f} %" if factor == 0
                    else ("none ✔" if win >= 0.99 * factor else f"{(1 - win / factor) * 100:.1f} % ✘"))
            rows.append(f"| {label} | {asked} | {seconds:.0f} | {bare:.2f} | {win:.2f} | {loss} | {fps:.1f} |")
    return rows


PARTS = {
    "fps": ("| world | window | scene | ms per frame (median) | frames/s (median) | ms per frame (best) |\n"
            "|---|---|---|---:|---:|---:|", part_fps),
    "rtf": ("| world | requested real-time factor | simulated s | achieved, headless | achieved, with the window | "
            "loss | window frames/s |\n|---|---:|---:|---:|---:|---:|---:|", part_rtf),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=sorted(PARTS), action="append", help="part(s) to run (default: all)")
    ap.add_argument("--frames", type=int, default=200, help="timed frames per world for fps (default 200)")
    ap.add_argument("--wall", type=float, default=10.0, help="wall seconds per rtf run, about (default 10)")
    args = ap.parse_args()
    xvfb = ensure_display()
    try:
        for name in args.part or ["fps", "rtf"]:
            header, fn = PARTS[name]
            print(header)
            for row in fn(args.frames if name == "fps" else args.wall):
                print(row, flush=True)
            print()
    finally:
        if xvfb is not None:
            xvfb.terminate()


if __name__ == "__main__":
    main()

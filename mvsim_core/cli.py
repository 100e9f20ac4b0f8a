"""The ``mvsim`` command.

::

    mvsim check WORLD [--seed N] [--allow-shell]
    mvsim launch WORLD [--headless] [--realtime-factor F] [--duration S] [--seed N] [--allow-shell]

User errors (a bad world file, a bad option) print ``file:line: message`` without a traceback and exit with 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence

from mvsim_core.errors import MvsimError


def _add_world_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("world", help="world file (.world.xml)")
    p.add_argument("--seed", type=int, default=0, help="seed of the world's random generator (default 0)")
    p.add_argument("--allow-shell", action="store_true",
                   help="let $(cmd) in the world file run shell commands (off by default)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mvsim", description="MVSim multi-vehicle simulator (Python).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = sub.add_parser("check", help="load a world, print a summary (warnings on stderr), exit 0; "
                                         "a bad file prints file:line: message and exits 2")
    _add_world_args(check)

    launch = sub.add_parser("launch", help="load a world and run it")
    _add_world_args(launch)
    launch.add_argument("--headless", action="store_true", help="no window")
    launch.add_argument("--realtime-factor", type=float, default=1.0,
                        help="simulated seconds per wall second (0 = as fast as possible; default 1)")
    launch.add_argument("--duration", type=float, default=None, help="stop after this many simulated seconds")
    return parser


def _load(args: argparse.Namespace):
    from mvsim_core.loader import load_world

    return load_world(args.world, seed=args.seed, allow_shell=args.allow_shell)


def cmd_check(args: argparse.Namespace) -> int:
    world = _load(args)
    print(world.summary())
    for w in world.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def cmd_launch(args: argparse.Namespace) -> int:
    if args.realtime_factor < 0:
        raise MvsimError("--realtime-factor must be >= 0 (0 = as fast as possible)")
    if args.duration is not None and args.duration < 0:
        raise MvsimError("--duration must be >= 0 simulated seconds")
    world = _load(args)
    headless = args.headless or not os.environ.get("DISPLAY")
    if not headless:
        print("mvsim: the 3D viewer is not part of this build yet; running headless", file=sys.stderr)
    return run_paced(world, args.realtime_factor, args.duration)


def run_paced(world, realtime_factor: float, duration: float | None, out=None) -> int:
    """Step ``world`` keeping simulated time at ``realtime_factor`` × wall time, with a one-line live status."""
    out = out or sys.stdout
    tty = out.isatty()
    dt = world.timestep
    t0_wall = time.perf_counter()
    t0_sim = world.time
    last_status = 0.0
    try:
        while duration is None or world.time < t0_sim + duration - 1e-12:
            if realtime_factor > 0:
                target = t0_sim + (time.perf_counter() - t0_wall) * realtime_factor
                if world.time + dt > target:
                    time.sleep(min(0.01, (world.time + dt - target) / realtime_factor))
                    continue
            world.step()
            now = time.perf_counter()
            if now - last_status >= 0.5:
                last_status = now
                _status(world, now - t0_wall, world.time - t0_sim, tty, out)
    except KeyboardInterrupt:
        pass
    _status(world, time.perf_counter() - t0_wall, world.time - t0_sim, tty, out)
    if tty:
        out.write("\n")
    return 0


def _status(world, wall: float, sim: float, tty: bool, out) -> None:
    rtf = sim / wall if wall > 0 else 0.0
    line = f"sim time {world.time:9.3f} s | real-time factor {rtf:7.2f} | vehicles {len(world.vehicles)}"
    if tty:
        out.write("\r" + line)
    else:
        out.write(line + "\n")
    out.flush()


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        if args.command == "check":
            return cmd_check(args)
        if args.command == "launch":
            return cmd_launch(args)
    except MvsimError as e:
        print(str(e), file=sys.stderr)
        return 2
    return 2  # pragma: no cover (argparse requires a command)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

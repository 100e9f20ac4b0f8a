"""Run the goal-reaching environment with the scripted goal seeker (or random actions) and print each episode::

    python -m mvsim_core.gym.demo                       # 5 episodes of mvsim/GoalReaching-v0, scripted policy
    python -m mvsim_core.gym.demo --policy random       # the same seeds, random actions
    python -m mvsim_core.gym.demo --gif run.gif         # also an animation of the episodes, drawn offscreen
    python -m mvsim_core.gym.demo --window              # watch them in the viewer's window (needs a display)

Exit status 0; the last line sums up the episodes (goals reached, collisions, time limits).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mvsim_core.gym.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--env", default="mvsim/GoalReaching-v0", help="a registered id (default: %(default)s)")
    parser.add_argument("--episodes", type=int, default=5, help="episodes to run (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode; episode k uses seed + k")
    parser.add_argument("--policy", choices=("seeker", "random"), default="seeker",
                        help="the scripted goal seeker, or uniform random actions (default: %(default)s)")
    parser.add_argument("--gif", type=Path, help="save the episodes as an animated GIF (offscreen rendering)")
    parser.add_argument("--window", action="store_true", help="show the episodes in the viewer's window")
    args = parser.parse_args(argv)

    import gymnasium as gym

    import mvsim_core  # noqa: F401  (registers the ids)
    from mvsim_core.gym.goal_seeker import GoalSeeker

    mode = "human" if args.window else "rgb_array" if args.gif else None
    env = gym.make(args.env, render_mode=mode)
    policy = GoalSeeker(env) if args.policy == "seeker" else None
    frames: list[np.ndarray] = []
    results = []
    t0 = time.perf_counter()
    steps = 0
    for k in range(args.episodes):
        obs, info = env.reset(seed=args.seed + k)
        env.action_space.seed(args.seed + k)
        total, done = 0.0, False
        while not done:
            if args.gif:
                frames.append(np.asarray(env.render()))
            action = policy(obs) if policy is not None else env.action_space.sample()
            obs, reward, terminated, truncated, info = env.step(action)
            total += float(reward)
            steps += 1
            done = terminated or truncated
        end = "goal" if info["is_success"] else "collision" if info["collision"] else "time limit"
        results.append(end)
        print(f"episode {k} (seed {args.seed + k}): {end} after {info['time']:.1f} s, return {total:.2f}")
    wall = time.perf_counter() - t0
    env.close()
    print(f"{args.policy}: {results.count('goal')}/{len(results)} goals, {results.count('collision')} collisions, "
          f"{results.count('time limit')} time limits; {steps} steps in {wall:.2f} s")
    if args.gif and frames:
        from PIL import Image

        images = [Image.fromarray(f) for f in frames]
        images[0].save(args.gif, save_all=True, append_images=images[1:], duration=100, loop=0, optimize=True)
        print(f"saved {len(frames)} frames to {args.gif}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

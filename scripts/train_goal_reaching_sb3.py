"""Train a policy for mvsim/GoalReaching-v0 with Stable-Baselines3's PPO on the CPU, then compare it with random
actions and the scripted goal seeker on the same seeded episodes. Not part of the tests or of the package's
dependencies; it needs Stable-Baselines3 and PyTorch besides the ``gym`` extra::

    .venv/bin/pip install stable-baselines3 torch   # PyPI's torch brings CUDA libraries (~3 GB); CPU-only is enough
    .venv/bin/python scripts/train_goal_reaching_sb3.py --steps 300000 --envs 2 --out goal_ppo.zip
    .venv/bin/python scripts/train_goal_reaching_sb3.py --evaluate goal_ppo.zip      # evaluation only

The environments run in ``--envs`` subprocesses (SB3's SubprocVecEnv). Observations are the dict of
mvsim/GoalReaching-v0 (181 lidar ranges, encoder velocities, the goal in the robot frame), hence PPO's
``MultiInputPolicy``; actions are already normalized to [-1, 1].
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

import mvsim_core  # noqa: F401  (registers mvsim/GoalReaching-v0)
from mvsim_core.gym.goal_seeker import GoalSeeker

ENV_ID = "mvsim/GoalReaching-v0"


def success_rate(policy, episodes: int, first_seed: int = 10_000) -> float:
    """Share of ``episodes`` (seeds first_seed, first_seed + 1, ...) that reach the goal with ``policy(obs, env)``."""
    env = gym.make(ENV_ID)
    reached = 0
    for k in range(episodes):
        obs, _ = env.reset(seed=first_seed + k)
        env.action_space.seed(k)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy(obs, env))
            done = terminated or truncated
        reached += bool(info["is_success"])
    env.close()
    return reached / episodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300_000, help="training env steps (default: %(default)s)")
    ap.add_argument("--envs", type=int, default=2, help="environments in subprocesses (default: %(default)s)")
    ap.add_argument("--out", default="goal_ppo.zip", help="where the trained model goes (default: %(default)s)")
    ap.add_argument("--evaluate", metavar="MODEL", help="only evaluate this saved model")
    ap.add_argument("--episodes", type=int, default=50, help="evaluation episodes (default: %(default)s)")
    args = ap.parse_args()

    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    if args.evaluate:
        model = PPO.load(args.evaluate, device="cpu")
    else:
        venv = make_vec_env(ENV_ID, n_envs=args.envs, seed=0, vec_env_cls=SubprocVecEnv)
        model = PPO("MultiInputPolicy", venv, n_steps=1024, batch_size=256, gamma=0.99, ent_coef=0.005, seed=0,
                    device="cpu", verbose=1)
        t0 = time.perf_counter()
        model.learn(total_timesteps=args.steps)
        print(f"trained {args.steps} steps in {time.perf_counter() - t0:.0f} s")
        model.save(args.out)
        venv.close()

    def trained(obs, env):
        return model.predict(obs, deterministic=True)[0]

    seeker = GoalSeeker(gym.make(ENV_ID))
    for name, policy in (("random", lambda obs, env: env.action_space.sample()), ("PPO", trained),
                         ("scripted seeker", lambda obs, env: seeker(obs))):
        print(f"{name:16s} reaches the goal in {100 * success_rate(policy, args.episodes):.0f} % of "
              f"{args.episodes} episodes")


if __name__ == "__main__":
    main()

"""Benchmark of the Gymnasium environments (mvsim_core.gym): env steps per second of mvsim/GoalReaching-v0 (one
differential robot, one 181-ray 2D lidar at 10 Hz, control at 10 Hz, physics steps of 5 ms: 20 physics steps and one
scan per env step), alone and as vector environments of 2, the cost of reset(), and what registering the ids costs
``import mvsim_core``.

Cases, each in a fresh process (load, numba kernels and 200 steps of warm-up outside the timing):

* engine: the world of the environment without it: the robot driving a circle in free space, 20 ``world.step()`` per
  control period with its lidar: the ceiling for one robot;
* single (seeker): ``gymnasium.make("mvsim/GoalReaching-v0")`` driven by the scripted goal seeker from reset(seed=k)
  episode after episode (resets counted in); time inside ``step()`` and ``reset()`` only (the policy's excluded);
* single (random): the same with random actions (collisions: more contacts, more resets);
* reset: ``env.reset()``, which puts the world back by ``World.restore`` of a snapshot taken at the start or,
  where the world cannot take one, by ``World.reset()`` (the table says which), then draws a start and a goal;
* sync x2, async x2, mvsim x2: ``gymnasium.vector.SyncVectorEnv`` / ``AsyncVectorEnv`` of 2 copies, and
  ``gymnasium.make_vec(ENV_ID, num_envs=2)``, which makes an ``MvsimVectorEnv`` (this process steps one copy, a worker
  the other); seeker-driven; env steps of both copies per second of ``step()`` time;
* mvsim x2 / single, interleaved: one process holding a single environment and an ``MvsimVectorEnv`` of 2, stepping
  them in alternate blocks of 200 steps (10 blocks each): the ratio of their rates, with the machine's changing load
  met alike by both (the table gives the median over the fresh processes);
* twin processes: the machine's own ceiling for two processes: one process steps a single environment in blocks of 200
  steps, alone and with a forked twin stepping another at the same time (10 blocks each, alternating): the two
  processes' rates together over the rate alone;
* vec64 batched, vec64 processes x2 (+ batched), vec64 sync: 64 copies as an ``MvsimBatchedVectorEnv``
  (``make_vec(ENV_ID, 64, vector="batched")``: all in this process, one pass), as an ``MvsimVectorEnv`` of 2 processes
  stepping their 32 copies one by one, and in one pass each (``batched=True``), and as Gymnasium's ``SyncVectorEnv``;
  seeded random actions (collisions: resets counted in, by next-step autoreset); 20 steps of warm-up, then env steps
  of all copies per second of ``step()`` time; for the batched one, the share of that time inside the copies' worlds
  (``MvsimEnv.advance``: the 20 physics steps with the lidar), the rest being commands, observations, task and infos;
* vec64 batched / sync, interleaved: one process holding both, stepping them in alternate blocks of 20 steps (5
  blocks each, the same actions): the ratio of their rates, with the machine's changing load met alike by both (the
  table gives the median over the fresh processes);
* batched potential: N robots in N copies of the room side by side, one world (one process): robot steps per second,
  what a native batched environment could reach;
* import: ``python -X importtime -c "import mvsim_core"`` (bytecode cached): the total, and the share of
  ``mvsim_core.gym.registration`` (the registration finder); ``import gymnasium`` for comparison.

Cases run round after round (``--repeat`` rounds), so that each meets the machine's changing load alike; the table
shows the best of each.

    .venv/bin/python benchmarks/bench_gym.py [--steps N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV_ID = "mvsim/GoalReaching-v0"
WARMUP = 200


def case_engine(steps: int) -> dict:
    import mvsim_core as mv
    from mvsim_core.gym.goal_reaching_env import WORLDS

    world = mv.load_world(WORLDS / "goal_room.world.xml").start()
    robot = world.vehicles["robot"]
    world.set_pose("robot", 0.0, -0.5, 0.0)  # a 0.5 m circle around the room's centre, 0.48 m from the boxes
    robot.set_twist(0.3, 0.0, 0.6)
    for _ in range(WARMUP * 20):
        world.step()
    t0 = time.perf_counter()
    for _ in range(steps):
        robot.set_twist(0.3, 0.0, 0.6)
        for _ in range(20):
            world.step()
    wall = time.perf_counter() - t0
    assert not robot.had_collision
    return {"rate": steps / wall}


def case_single(steps: int, policy_name: str) -> dict:
    import gymnasium as gym

    import mvsim_core  # noqa: F401
    from mvsim_core.gym.goal_seeker import GoalSeeker

    env = gym.make(ENV_ID)
    if policy_name == "seeker":
        policy = GoalSeeker(env)
    else:
        env.action_space.seed(0)

        def policy(obs):
            return env.action_space.sample()
    _SingleLoop(env, policy).run(WARMUP)
    loop = _SingleLoop(env, policy)  # episodes from seed 1000 again
    inside = loop.run(steps)
    return {"rate": steps / inside, "resets": loop.resets, **_breakdown(env, policy, steps)}


def _breakdown(env, policy, steps: int) -> dict:
    """Where a step's time goes: the step's own parts, timed one by one as MvsimEnv.step does them (us per env
    step): the command, the 20 physics steps (sensors included), the observation, the task."""
    u = env.unwrapped
    world, agent, task = u.world, u.agent, u.task
    parts = dict.fromkeys(("act", "world", "observe", "task"), 0.0)
    obs, _ = env.reset(seed=5000)
    seed = 5000
    for _ in range(steps):
        action = policy(obs)
        t0 = time.perf_counter()
        agent.act(action)
        agent.vehicle.had_collision = False
        t1 = time.perf_counter()
        for _ in range(u.substeps):
            world.step()
        t2 = time.perf_counter()
        obs = u._observe()
        t3 = time.perf_counter()
        out = task.evaluate(world, agent.name)
        t4 = time.perf_counter()
        u.episode_steps += 1
        parts["act"] += t1 - t0
        parts["world"] += t2 - t1
        parts["observe"] += t3 - t2
        parts["task"] += t4 - t3
        if out.terminated or u.episode_steps >= u.max_episode_steps:
            seed += 1
            obs, _ = env.reset(seed=seed)
    return {f"us_{k}": 1e6 * v / steps for k, v in parts.items()}


def case_reset(steps: int) -> dict:
    import gymnasium as gym

    import mvsim_core  # noqa: F401

    env = gym.make(ENV_ID)
    env.reset(seed=0)
    for _ in range(WARMUP):
        env.step(env.action_space.sample())
        env.reset()
    n = max(100, steps // 5)
    t0 = time.perf_counter()
    for _ in range(n):
        env.reset()
    per = (time.perf_counter() - t0) / n
    world = env.unwrapped.world
    t0 = time.perf_counter()
    for _ in range(n):
        world.reset()
    bare = (time.perf_counter() - t0) / n  # World.reset() alone, whichever the environment uses
    return {"ms": 1000 * per, "world_ms": 1000 * bare, "how": env.unwrapped.reset_method}


def case_vector(steps: int, mode: str) -> dict:
    import functools

    import gymnasium as gym

    import mvsim_core  # noqa: F401
    from mvsim_core.gym.goal_seeker import GoalSeeker

    if mode == "mvsim":
        venv = gym.make_vec(ENV_ID, num_envs=2)
        assert type(venv).__name__ == "MvsimVectorEnv"
    else:
        fns = [functools.partial(gym.make, ENV_ID) for _ in range(2)]
        venv = gym.vector.SyncVectorEnv(fns) if mode == "sync" else gym.vector.AsyncVectorEnv(fns)
    seeker = GoalSeeker(gym.make(ENV_ID))  # the same robot and lidar: one seeker serves both copies
    vector = _VectorLoop(venv, seeker)
    vector.run(WARMUP)
    inside = vector.run(steps)
    venv.close()
    return {"rate": 2 * steps / inside}


class _VectorLoop:
    """A 2-copy vector environment driven by the seeker, resumable block after block."""

    def __init__(self, venv, seeker) -> None:
        self.venv, self.seeker = venv, seeker
        self.obs, _ = venv.reset(seed=[1000, 2000])

    def run(self, steps: int) -> float:
        """Seconds inside step() over ``steps`` steps."""
        import numpy as np

        inside = 0.0
        for _ in range(steps):
            a = np.stack([self.seeker({k: v[i] for k, v in self.obs.items()}) for i in range(2)])
            t0 = time.perf_counter()
            self.obs, *_ = self.venv.step(a)
            inside += time.perf_counter() - t0
        return inside


class _SingleLoop:
    """A single environment driven by ``policy(obs)``, resumable block after block; episodes restart with seeds 1000,
    1001, ..."""

    def __init__(self, env, policy, seed: int = 1000) -> None:
        self.env, self.policy, self.seed, self.resets = env, policy, seed, 0
        self.obs, _ = env.reset(seed=self.seed)

    def run(self, steps: int) -> float:
        """Seconds inside step()/reset() over ``steps`` steps (the policy's time excluded)."""
        inside = 0.0
        for _ in range(steps):
            a = self.policy(self.obs)
            t0 = time.perf_counter()
            self.obs, _, terminated, truncated, _ = self.env.step(a)
            if terminated or truncated:
                self.seed += 1
                self.resets += 1
                self.obs, _ = self.env.reset(seed=self.seed)
            inside += time.perf_counter() - t0
        return inside


def case_interleaved(steps: int) -> dict:
    """MvsimVectorEnv x2 against a single environment, in alternate blocks within one process."""
    import gymnasium as gym

    import mvsim_core  # noqa: F401
    from mvsim_core.gym.goal_seeker import GoalSeeker

    env = gym.make(ENV_ID)
    seeker = GoalSeeker(env)
    single = _SingleLoop(env, seeker)
    venv = gym.make_vec(ENV_ID, num_envs=2)
    vector = _VectorLoop(venv, seeker)
    single.run(WARMUP)
    vector.run(WARMUP)
    block = 200
    t_single = t_vector = 0.0
    for _ in range(max(1, steps // block)):
        t_single += single.run(block)
        t_vector += vector.run(block)
    venv.close()
    return {"ratio": 2 * t_single / t_vector, "single": max(1, steps // block) * block / t_single}


def _twin(conn) -> None:
    """The twin of case_twins: steps its own environment for each block asked, answers the seconds spent."""
    import gymnasium as gym

    from mvsim_core.gym.goal_seeker import GoalSeeker

    env = gym.make(ENV_ID)
    loop = _SingleLoop(env, GoalSeeker(env), seed=5000)
    while (n := conn.recv()) is not None:
        conn.send(loop.run(n))


def case_twins(steps: int) -> dict:
    """Two processes each stepping their own single environment, against one alone (alternate blocks)."""
    import multiprocessing as mp

    import gymnasium as gym

    import mvsim_core  # noqa: F401
    from mvsim_core.gym.goal_seeker import GoalSeeker

    env = gym.make(ENV_ID)
    loop = _SingleLoop(env, GoalSeeker(env))
    ours, theirs = mp.get_context("fork").Pipe()
    twin = mp.get_context("fork").Process(target=_twin, args=(theirs,), daemon=True)
    twin.start()
    loop.run(WARMUP)
    ours.send(WARMUP)
    ours.recv()
    block, blocks = 200, max(1, steps // 200)
    alone = together = other = 0.0
    for _ in range(blocks):
        alone += loop.run(block)
        ours.send(block)
        together += loop.run(block)
        other += ours.recv()
    ours.send(None)
    twin.join()
    n = blocks * block
    return {"ratio": (n / together + n / other) / (n / alone)}


def case_batched(steps: int, copies: int) -> dict:
    """``copies`` rooms side by side in one grid, a robot in each, stepping together."""
    import numpy as np
    from PIL import Image

    import mvsim_core as mv
    from mvsim_core.gym.goal_reaching_env import WORLDS

    room = np.asarray(Image.open(WORLDS / "room.png"))
    tmp = Path(tempfile.mkdtemp())
    Image.fromarray(np.hstack([room] * copies)).save(tmp / "rooms.png")
    robots = "\n".join(f'<vehicle name="r{k}" class="room_bot"><init_pose>{6.4 * k} -0.5 0</init_pose></vehicle>'
                       for k in range(copies))
    (tmp / "rooms.world.xml").write_text(
        f'<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>'
        f'<element class="occupancy_grid"><file>rooms.png</file><resolution>0.05</resolution>'
        f'<centerpixel_x>64</centerpixel_x><centerpixel_y>64</centerpixel_y></element>'
        f'<include file="{WORLDS / "room_bot.vehicle.xml"}"/>{robots}</mvsim_world>')
    world = mv.load_world(tmp / "rooms.world.xml").start()
    vehicles = list(world.vehicles.values())
    for v in vehicles:
        v.set_twist(0.3, 0.0, 0.6)
    for _ in range(WARMUP * 20):
        world.step()
    t0 = time.perf_counter()
    for _ in range(steps):
        for v in vehicles:
            v.set_twist(0.3, 0.0, 0.6)
        for _ in range(20):
            world.step()
    wall = time.perf_counter() - t0
    assert not any(v.had_collision for v in vehicles)
    return {"rate": copies * steps / wall}


def case_vec64(steps: int, kind: str) -> dict:
    """64 copies in one of the vector environments (see the module docstring)."""
    import functools

    import gymnasium as gym
    import numpy as np

    import mvsim_core  # noqa: F401
    from mvsim_core.gym.env import MvsimEnv

    n = 64
    if kind == "batched":
        venv = gym.make_vec(ENV_ID, num_envs=n, vector="batched")
    elif kind == "sync":
        venv = gym.vector.SyncVectorEnv([functools.partial(gym.make, ENV_ID)] * n)
    else:
        venv = gym.make_vec(ENV_ID, num_envs=n, processes=2, batched=kind == "processes2_batched")
    acts = np.random.default_rng(0).uniform(-1, 1, (64, n, 2)).astype(np.float32)
    venv.reset(seed=1000)
    for k in range(20):
        venv.step(acts[k % 64])
    timed = max(40, steps // 20)

    def run(count: int) -> float:
        t0 = time.perf_counter()
        for k in range(count):
            venv.step(acts[k % 64])
        return time.perf_counter() - t0

    wall = run(timed)
    out = {"rate": n * timed / wall}
    if kind == "batched":  # where the time goes: the copies' worlds against the rest
        inside = [0.0]
        plain = MvsimEnv.advance

        def advance(self: MvsimEnv) -> None:
            t0 = time.perf_counter()
            plain(self)
            inside[0] += time.perf_counter() - t0

        MvsimEnv.advance = advance  # type: ignore[method-assign]
        total = run(timed)
        MvsimEnv.advance = plain  # type: ignore[method-assign]
        out["world_share"] = inside[0] / total
        out["us_other"] = 1e6 * (total - inside[0]) / (n * timed)
    venv.close()
    return out


def case_vec64_interleaved(steps: int) -> dict:
    """MvsimBatchedVectorEnv against SyncVectorEnv, 64 copies each, in alternate blocks within one process."""
    import functools

    import gymnasium as gym
    import numpy as np

    import mvsim_core  # noqa: F401

    n = 64
    batched = gym.make_vec(ENV_ID, num_envs=n, vector="batched")
    sync = gym.vector.SyncVectorEnv([functools.partial(gym.make, ENV_ID)] * n)
    acts = np.random.default_rng(0).uniform(-1, 1, (64, n, 2)).astype(np.float32)
    spent = {}
    for venv in (batched, sync):
        venv.reset(seed=1000)
        for k in range(20):
            venv.step(acts[k])
        spent[id(venv)] = 0.0
    for block in range(5):
        for venv in (batched, sync):
            t0 = time.perf_counter()
            for k in range(20):
                venv.step(acts[(20 * block + k) % 64])
            spent[id(venv)] += time.perf_counter() - t0
    batched.close()
    sync.close()
    return {"ratio": spent[id(sync)] / spent[id(batched)]}


def case_import() -> dict:
    """Import times (ms, best of 5 fresh interpreters)."""

    def importtime(code: str) -> dict[str, int]:
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                             check=True, cwd=REPO, env=_env()).stderr
        out = {}
        for line in err.splitlines():  # "import time: self [us] | cumulative [us] | <indent>module"
            m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s*(\S+)", line)
            if m:
                out.setdefault(m.group(2), int(m.group(1)))
        return out

    importtime("import mvsim_core, gymnasium")  # bytecode written, as for an installed package
    runs = [importtime("import mvsim_core") for _ in range(5)]
    gym_runs = [importtime("import gymnasium") for _ in range(5)]
    return {"mvsim_core_ms": min(r["mvsim_core"] for r in runs) / 1000,
            "gym_part_ms": min(r["mvsim_core.gym.registration"] for r in runs) / 1000,  # the package inside it
            "gymnasium_ms": min(r["gymnasium"] for r in gym_runs) / 1000}


def _env() -> dict[str, str]:
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # imports from cached bytecode, as an installed package does
    return env


CASES = {
    "engine": lambda n: case_engine(n),
    "single_seeker": lambda n: case_single(n, "seeker"),
    "single_random": lambda n: case_single(n, "random"),
    "reset": lambda n: case_reset(n),
    "sync2": lambda n: case_vector(n, "sync"),
    "async2": lambda n: case_vector(n, "async"),
    "mvsim2": lambda n: case_vector(n, "mvsim"),
    "interleaved": lambda n: case_interleaved(n),
    "twins": lambda n: case_twins(n),
    "vec64_batched": lambda n: case_vec64(n, "batched"),
    "vec64_processes2": lambda n: case_vec64(n, "processes2"),
    "vec64_processes2_batched": lambda n: case_vec64(n, "processes2_batched"),
    "vec64_sync": lambda n: case_vec64(n, "sync"),
    "vec64_interleaved": lambda n: case_vec64_interleaved(n),
    "batched4": lambda n: case_batched(n, 4),
    "batched16": lambda n: case_batched(n, 16),
}


def child(case: str, steps: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", case, "--steps", str(steps)], env=_env(),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000, help="timed env steps per case (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=3, help="fresh processes per case; the best is shown")
    ap.add_argument("--child", choices=list(CASES), default=None)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(CASES[a.child](a.steps)))
        return
    res: dict[str, list[dict]] = {case: [] for case in CASES}
    for _ in range(a.repeat):  # round after round: each case meets the machine's changing load alike
        for case in CASES:
            res[case].append(child(case, a.steps))
    best = {c: max(r.get("rate", 0.0) for r in runs) for c, runs in res.items()}
    reset = min(res["reset"], key=lambda r: r["ms"])
    imp = case_import()
    single = best["single_seeker"]
    print(f"{ENV_ID}: one differential robot, 181-ray lidar at 10 Hz, control 10 Hz, physics 5 ms "
          f"(20 physics steps per env step); best of {a.repeat} fresh processes, {a.steps} timed steps each, "
          f"{os.cpu_count()} CPUs")
    print("| case | env steps/s | note |\n|---|---:|---|")
    print(f"| engine: the world alone, 20 x world.step() + lidar | {best['engine']:.0f} | the ceiling for one robot |")
    print(f"| single env, seeker | {single:.0f} | step()+reset() time; target >= 1000 |")
    print(f"| single env, random actions | {best['single_random']:.0f} | more collisions and resets |")
    print(f"| SyncVectorEnv x2 | {best['sync2']:.0f} | {best['sync2'] / single:.2f}x single |")
    print(f"| AsyncVectorEnv x2 | {best['async2']:.0f} | {best['async2'] / single:.2f}x single |")
    ratios = sorted(r["ratio"] for r in res["interleaved"])
    median = statistics.median(ratios)
    print(f"| MvsimVectorEnv x2 (make_vec) | {best['mvsim2']:.0f} | {best['mvsim2'] / single:.2f}x single; "
          f"interleaved in one process: {median:.2f}x (median; {', '.join(f'{r:.2f}' for r in ratios)}); "
          f"target >= 1.6x |")
    twins = sorted(r["ratio"] for r in res["twins"])
    print(f"| two processes, each a single env, at once | | together {statistics.median(twins):.2f}x one alone "
          f"(median; "
          f"{', '.join(f'{r:.2f}' for r in twins)}): this machine's ceiling for x2 |")
    b64 = max(res["vec64_batched"], key=lambda r: r["rate"])
    print(f"| 64 copies, MvsimBatchedVectorEnv (make_vec vector='batched') | {best['vec64_batched']:.0f} | one "
          f"process; {100 * b64['world_share']:.0f} % of step() inside the copies' worlds, the rest "
          f"{b64['us_other']:.0f} us per copy |")
    print(f"| 64 copies, MvsimVectorEnv, 2 processes | {best['vec64_processes2']:.0f} | copies one by one |")
    print(f"| 64 copies, MvsimVectorEnv, 2 processes, batched=True | {best['vec64_processes2_batched']:.0f} | "
          f"each process's 32 in one pass |")
    print(f"| 64 copies, SyncVectorEnv | {best['vec64_sync']:.0f} | Gymnasium's, for comparison |")
    r64 = sorted(r["ratio"] for r in res["vec64_interleaved"])
    print(f"| 64 copies, batched / sync interleaved in one process | | batched {statistics.median(r64):.2f}x sync "
          f"(median; {', '.join(f'{r:.2f}' for r in r64)}) |")
    print(f"| batched potential, 4 robots in one world | {best['batched4']:.0f} | robot steps/s, "
          f"{best['batched4'] / best['engine']:.2f}x engine |")
    print(f"| batched potential, 16 robots in one world | {best['batched16']:.0f} | robot steps/s, "
          f"{best['batched16'] / best['engine']:.2f}x engine |")
    parts = min(res["single_seeker"], key=lambda r: sum(v for k, v in r.items() if k.startswith("us_")))
    total = sum(v for k, v in parts.items() if k.startswith("us_"))
    print(f"\nsingle env step, where the time goes (us per env step, seeker-driven, fastest process): "
          f"20 physics steps with their sensors {parts['us_world']:.0f} ({100 * parts['us_world'] / total:.0f} %), "
          f"command {parts['us_act']:.0f}, observation {parts['us_observe']:.0f}, task {parts['us_task']:.0f}")
    print(f"\nreset(): {reset['ms']:.2f} ms (by {reset['how']}; of which the world's own reset {reset['world_ms']:.2f} "
          f"ms); target <= 5 ms")
    print(f"import mvsim_core: {imp['mvsim_core_ms']:.0f} ms, of which mvsim_core.gym (registration) "
          f"{imp['gym_part_ms']:.2f} ms; import gymnasium alone: {imp['gymnasium_ms']:.0f} ms")


if __name__ == "__main__":
    main()

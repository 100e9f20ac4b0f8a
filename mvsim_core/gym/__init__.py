"""Gymnasium and PettingZoo environments on MVSim worlds (the ``gym`` extra: ``pip install .[gym]``).

* :class:`~mvsim_core.gym.env.MvsimEnv` — one vehicle of any world file as a Gymnasium environment: actions are a
  twist or Ackermann (speed, steering) commands held for one control period, observations a dict of the vehicle's
  sensors plus its odometry and whatever the task adds; reward and termination come from a
  :class:`~mvsim_core.gym.task.Task`.
* :class:`~mvsim_core.gym.goal_reaching.GoalReaching` — the example task: reach a goal drawn at random, without
  touching anything.
* :class:`~mvsim_core.gym.goal_reaching_env.GoalReachingEnv` — the registered configurations ``mvsim/GoalReaching-v0``
  (a differential robot with a 2D lidar in a small room) and ``mvsim/GoalReachingAckermann-v0``.
* :class:`~mvsim_core.gym.vector_env.MvsimVectorEnv` — copies of an environment stepped at once in this process and
  in worker processes (what ``gymnasium.make_vec`` makes for the registered ids).
* :class:`~mvsim_core.gym.batched_env.MvsimBatchedVectorEnv` — copies of an MvsimEnv all in this process, stepped
  in one pass, observations written straight into the batched arrays (``gymnasium.make_vec(id, n,
  vector="batched")``).
* :class:`~mvsim_core.gym.parallel_env.MvsimParallelEnv` — several vehicles of one world as the agents of a
  PettingZoo parallel environment.

``import mvsim_core`` makes the ids known to ``gymnasium.make`` without importing gymnasium
(:mod:`mvsim_core.gym.registration`). This package imports nothing heavy itself: import the modules above.
"""

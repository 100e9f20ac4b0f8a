"""Recorders above the world: they attach to a started :class:`mvsim_core.world.World` (a step listener), read its
vehicles and sensors and write what they see with the file formats of :mod:`mvsim_core.io`.

* :mod:`.mcap_recorder`: an MCAP (rosbag2) recording of the ROS node's topics, without ROS;
* :mod:`.schedule_run`: a vehicle driven through a twist schedule, sampled as the C++ reference trajectories.

``io`` keeps the file formats and imports nothing from the simulation; this layer may import the simulation
(``.importlinter`` puts it above ``world``).
"""

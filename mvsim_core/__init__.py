"""mvsim_core — the MVSim multi-vehicle simulator in pure Python (no ROS inside).

Public API::

    import mvsim_core as mv
    world = mv.load_world("worlds/demo.world.xml", seed=0)   # raises mv.WorldFileError(file, line, message)
    world.run(2.5)
"""

import logging

from mvsim_core.dynamics.command_limits import CommandLimits
from mvsim_core.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    AssetError,
    CommandValueError,
    ControllerError,
    ExpressionError,
    MvsimError,
    SnapshotError,
    StateValueError,
    WorldFileError,
)
from mvsim_core.gym.registration import register_on_import
from mvsim_core.loader import load_world
from mvsim_core.world import World
from mvsim_core.world_state import WorldState
from mvsim_core.xml.limits import LoadLimits

__all__ = ["load_world", "World", "MvsimError", "WorldFileError", "ControllerError", "CommandValueError",
           "StateValueError", "CommandLimits", "ExpressionError", "AssetError", "LoadLimits",
           "WorldState", "SnapshotError", "ArgumentTypeError", "ArgumentValueError"]
__version__ = "0.1.0"

# `gymnasium.make("mvsim/GoalReaching-v0")` works after `import mvsim_core`, without importing gymnasium here
# (mvsim_core/gym/registration.py: the ids are registered when gymnasium is imported)
register_on_import()

# a library does not print: warnings go to World.warnings and to this logger, which the application configures
logging.getLogger("mvsim_core").addHandler(logging.NullHandler())

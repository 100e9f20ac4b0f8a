"""``python -m mvsim_ros2 [WORLD_FILE] [--ros-args ...]``: the same as the ``mvsim_node`` command."""

import sys

from mvsim_ros2.entry import main

sys.exit(main())

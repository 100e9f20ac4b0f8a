"""The ``mvsim_node`` executable (ROS 2 bridge).

The bridge node is delivered by the ROS 2 bridge issue; this entry point exists so that the package layout and
console scripts are complete, and says so clearly instead of failing obscurely.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("mvsim_node: the ROS 2 bridge is not implemented yet in this version; use `mvsim launch WORLD`",
          file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

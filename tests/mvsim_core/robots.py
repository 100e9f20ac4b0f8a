"""The shared robot descriptions (../shared/robots) and a temporary ament prefix for their xacro sources' $(find)."""

from __future__ import annotations

from pathlib import Path

ROBOTS_DIR = Path(__file__).resolve().parents[3] / "shared" / "robots"

# robot -> (xacro entry in the prefix, {src dir: installed share dir}, radius m, track m, wheelbase m, dynamics class)
ROBOTS: dict[str, tuple[str, dict[str, str], float, float, float, str]] = {
    "turtlebot3_burger": ("turtlebot3_description/urdf/turtlebot3_burger.urdf",
                          {"turtlebot3_description": "turtlebot3_description"}, 0.033, 0.16, 0.0, "differential"),
    "turtlebot3_waffle": ("turtlebot3_description/urdf/turtlebot3_waffle.urdf",
                          {"turtlebot3_description": "turtlebot3_description"}, 0.033, 0.288, 0.0, "differential"),
    "husky": ("husky_description/urdf/husky.urdf.xacro",
              {"husky_description": "husky_description", "husky_control": "husky_control"}, 0.1651, 0.5708, 0.512,
              "differential_4_wheels"),
    "diffbot": ("ros2_control_demo_example_2/urdf/diffbot.urdf.xacro",
                {"example_2/description": "ros2_control_demo_example_2",
                 "ros2_control_demo_description": "ros2_control_demo_description"}, 0.015, 0.1, 0.0, "differential"),
    "carlikebot": ("ros2_control_demo_example_11/urdf/carlikebot.urdf.xacro",
                   {"example_11/description": "ros2_control_demo_example_11",
                    "ros2_control_demo_description": "ros2_control_demo_description"}, 0.05, 0.26, 0.325,
                   "ackermann_drivetrain"),
}


def urdf_path(robot: str) -> Path:
    """The expanded .urdf of ``robot``."""
    return ROBOTS_DIR / robot / f"{robot}.urdf"


def ament_prefix(robot: str, root: Path) -> tuple[Path, Path]:
    """An ament prefix under ``root`` with ``robot``'s src/ folders at their installed share paths (symlinks) and
    their packages in the resource index; (prefix, the xacro entry file in it)."""
    entry, dirs, *_ = ROBOTS[robot]
    share = root / "share"
    index = share / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    for src, pkg in dirs.items():
        (share / pkg).parent.mkdir(parents=True, exist_ok=True)
        if not (share / pkg).exists():
            (share / pkg).symlink_to(ROBOTS_DIR / robot / "src" / src)
        (index / pkg).write_text("")
    return root, share / entry

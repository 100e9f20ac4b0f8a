"""ament_python package mvsim_ros2: the mvsim_core simulator and its ROS 2 bridge."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "mvsim_ros2"


def tree(pattern: str) -> list[str]:
    return sorted(p for p in glob(pattern, recursive=True) if not p.endswith("/"))


def data_dirs(top: str) -> list[tuple[str, list[str]]]:
    """(install dir, files) pairs keeping the folder structure under share/<package>/<top>."""
    out: dict[str, list[str]] = {}
    import os

    for path in tree(f"{top}/**/*"):
        if os.path.isfile(path):
            out.setdefault(os.path.join("share", PACKAGE, os.path.dirname(path)), []).append(path)
    return sorted(out.items())


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=["mvsim_core", "mvsim_core.*", "mvsim_ros2", "mvsim_ros2.*"]),
    package_data={"mvsim_core": ["comms/proto/*.proto", "gym/worlds/*.xml", "gym/worlds/*.png"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        *data_dirs("launch"),
        *data_dirs("config"),
        *data_dirs("worlds"),
        *data_dirs("rviz"),
    ],
    python_requires=">=3.10",
    install_requires=[
        "numpy>=1.24,<2.5",
        "pillow>=9",
        "pyyaml>=6",
        "scipy>=1.10",
        "trimesh>=4",
        "pycollada>=0.8",
        "assimp-py>=1.1",  # FBX, glTF, OBJ, STL, PLY models through Assimp (a wheel that bundles the library)
        "embreex>=4.4",  # Intel Embree: rays against static mesh models (a wheel that bundles the library)
        "foxglove-sdk>=0.30",  # the live Foxglove view (mvsim launch --foxglove); imported only when it is asked for
        "networkx>=3",
        "box2d==2.3.10",  # exact: box2d_raw / box2d_state / collision_flags read its struct offsets (a test checks)
        "numba>=0.60",
        "pyzmq>=26",  # the ZMQ interface (mvsim_core.comms); imported only when a server or client is used
        "protobuf>=4.25,<8",  # its messages; the committed *_pb2 code (Debian protoc 3.21) loads on 4.25 .. 7.x
        "PyOpenGL>=3.1.7",  # offscreen camera rendering (EGL/OSMesa); imported only when a camera renders
        "glfw>=2.7",  # the viewer's window (bundles GLFW 3.4); imported only when a window is opened
        "mcap>=1.2",  # MCAP records of --record (mvsim_core.io.mcap_writer); imported only when recording
        "rosbags>=0.10",  # ROS 2 message definitions of the recorder's schemas; imported only when recording
        "zstandard>=0.22",  # zstd compression of the recording's chunks
        "lxml>=4.9",  # URDF files with their source lines (mvsim_core.io.urdf)
        "xacro>=2",  # .xacro robot descriptions (mvsim import-urdf, <vehicle:class urdf=...>)
    ],
    extras_require={
        "test": [
            "pytest>=7",
            "hypothesis>=6",
            "ruff>=0.5",
            "pyproj>=3",
            "import-linter>=2.16",  # `lint-imports`: the architecture contracts in .importlinter (make lint)
            "mypy>=2.4",  # type checking of mvsim_core, configured in mypy.ini (make lint)
            "evo>=1.28",  # reads the TUM ground-truth files in the tests, as users evaluate them
            "websockets>=13",  # a plain Foxglove WebSocket client in the tests
            "urdf-parser-py>=0.0.4",  # cross-check of the URDF reader
            "yourdfpy>=0.0.60",  # cross-check of the URDF reader
        ],
        # `mvsim plot-trajectory` (mvsim_core/io/trajectory_plot.py); imported only when a figure is drawn
        "plot": ["matplotlib>=3.8"],
        # Gymnasium environments (mvsim_core/gym); PettingZoo's parallel API for several vehicles
        "gym": ["gymnasium>=1.0", "pettingzoo>=1.24"],
        # `mvsim sweep` (mvsim_core/sweep): runs on Ray, results in Parquet, a progress bar
        "sweep": ["ray>=2.40", "pyarrow>=15", "tqdm>=4.66", "gymnasium>=1.0"],
    },
    zip_safe=True,
    maintainer="mvsim_ros2 developers",
    maintainer_email="mvsim-ros2@users.noreply.github.com",
    description="MVSim multi-vehicle simulator in pure Python, with a ROS 2 bridge",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "mvsim = mvsim_core.cli:main",
            "mvsim_node = mvsim_ros2.entry:main",  # stop signals handled before the heavy imports
        ],
    },
)

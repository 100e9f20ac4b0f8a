"""package.xml lists every runtime dependency for ``rosdep install``: each ROS package the bridge and the launch files
import, and each Python library of setup.py by its rosdep key; the libraries rosdep cannot provide are in
requirements-pip.txt, with setup.py's version specifiers."""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# PyPI distribution -> its rosdep key, as defined in rosdistro's rosdep/python.yaml. Box2D, numba (Debian and old
# Ubuntu only), glfw and trimesh (a -pip key only) have none usable on Ubuntu 24.04: requirements-pip.txt.
ROSDEP_KEYS = {
    "numpy": "python3-numpy",
    "scipy": "python3-scipy",
    "pillow": "python3-pil",
    "pyyaml": "python3-yaml",
    "networkx": "python3-networkx",
    "pyzmq": "python3-zmq",
    "protobuf": "python3-protobuf",
    "pyopengl": "python3-opengl",
    "pycollada": "python3-collada",
    "lxml": "python3-lxml",
}
# ... and those whose Debian 12 / Ubuntu 24.04 package is older than setup.py's minimum: in both places
TOO_OLD_IN_DISTROS = {"protobuf", "pycollada"}


def exec_depends() -> set[str]:
    root = ET.parse(REPO / "package.xml").getroot()
    return {e.text.strip() for e in root.iter("exec_depend") if e.text}


def install_requires() -> dict[str, str]:
    """setup.py's install_requires: lower-cased distribution name -> the whole requirement string."""
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            reqs = ast.literal_eval(node.value)
            return {re.split(r"[<>=!~\s\[]", r, maxsplit=1)[0].lower(): r.replace(" ", "") for r in reqs}
    raise AssertionError("setup.py has no install_requires")


def pip_only() -> dict[str, str]:
    """requirements-pip.txt: lower-cased distribution name -> the requirement string."""
    out = {}
    for line in (REPO / "requirements-pip.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out[re.split(r"[<>=!~\s\[]", line, maxsplit=1)[0].lower()] = line.replace(" ", "")
    return out


def test_every_python_dependency_has_a_rosdep_key_or_a_pip_line() -> None:
    deps, keys, pip = install_requires(), exec_depends(), pip_only()
    for name, req in deps.items():
        key = ROSDEP_KEYS.get(name)
        assert key is None or key in keys, f"package.xml lacks <exec_depend>{key}</exec_depend> ({req})"
        if key is None or name in TOO_OLD_IN_DISTROS:
            assert pip.get(name) == req, f"requirements-pip.txt should say {req} (as setup.py does)"
    assert set(pip) <= set(deps), f"requirements-pip.txt names what setup.py does not: {set(pip) - set(deps)}"


def test_python_rosdep_keys_are_real() -> None:
    """Every python3-* key is one rosdistro defines (python3-trimesh, say, is not: only python3-trimesh-pip)."""
    python_keys = {k for k in exec_depends() if k.startswith("python3-")}
    assert python_keys == set(ROSDEP_KEYS.values())


def test_every_imported_ros_package_is_an_exec_depend() -> None:
    packages = pytest.importorskip("ament_index_python.packages", reason="no ROS 2 (make setup)")
    ros_packages = set(packages.get_packages_with_prefixes()) - {"mvsim_ros2"}
    imported = set()
    for path in [*(REPO / "mvsim_ros2").rglob("*.py"), *(REPO / "launch").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    missing = (imported & ros_packages) - exec_depends()
    assert not missing, f"package.xml lacks <exec_depend> for {sorted(missing)}"

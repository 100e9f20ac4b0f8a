"""The architecture contracts (``.importlinter``) catch what they promise to catch.

Each case copies ``mvsim_core`` and ``mvsim_ros2`` with the repository's ``.importlinter`` to a temporary folder, adds
one small module with a deliberately bad import, and runs ``lint-imports`` there (it analyses the packages of its
working directory): the named contract must come out BROKEN and cite that very import. ``test_untouched_tree`` runs
the same command on an unmodified copy: every contract must be kept.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter is in the `test` extra: run `make setup`")

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("mvsim_core", "mvsim_ros2")
CONTRACTS = ("layers", "no-ros-in-core", "headless-no-gl", "acyclic")



def _copy_tree(dst: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    for pkg in PACKAGES:
        shutil.copytree(REPO / pkg, dst / pkg, ignore=ignore)
    shutil.copy2(REPO / ".importlinter", dst / ".importlinter")
    return dst


def _lint_imports(cwd: Path, contract: str) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the copied config, cwd = the copy (which it puts first on sys.path)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # never the real checkout
    env["COLUMNS"] = "250"  # no line wrapping in the report
    cmd = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())",
           "--no-cache", "--contract", contract]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return _copy_tree(tmp_path)


BAD_IMPORTS = {
    # contract id: ({new module: source}, text the report must contain)
    "layers": ({"mvsim_core/dynamics/_arch_probe.py": "import mvsim_core.comms\n"},
               "mvsim_core.dynamics._arch_probe -> mvsim_core.comms"),
    "no-ros-in-core": ({"mvsim_core/_arch_probe.py": "import rclpy\n"},
                       "mvsim_core._arch_probe -> rclpy"),
    "headless-no-gl": ({"mvsim_core/sensors/_arch_probe.py": "from OpenGL import GL\n"},
                       "mvsim_core.sensors._arch_probe -> OpenGL"),
    "acyclic": ({"mvsim_core/_arch_probe_a.py": "import mvsim_core._arch_probe_b\n",
                 "mvsim_core/_arch_probe_b.py": "import mvsim_core._arch_probe_a\n"},
                "._arch_probe_"),
}


@pytest.mark.parametrize("contract", CONTRACTS)
def test_bad_import_breaks_its_contract(tree: Path, contract: str) -> None:
    files, cited = BAD_IMPORTS[contract]
    for rel, src in files.items():
        (tree / rel).write_text(src)
    r = _lint_imports(tree, contract)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "BROKEN" in out and "Contracts: 0 kept, 1 broken." in out, out
    assert cited in out, out


def test_type_checking_imports_are_not_dependencies(tree: Path) -> None:
    """An annotation-only import (under ``if TYPE_CHECKING:``) of a higher layer is not a violation."""
    (tree / "mvsim_core/dynamics/_arch_probe.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import mvsim_core.comms\n")
    out = _lint_imports(tree, "layers").stdout
    assert "Contracts:" in out, out
    assert "_arch_probe" not in out, out


def test_render_and_gui_may_import_gl(tree: Path) -> None:
    """The allow-list of the headless contract: sensors.render and gui talk to OpenGL/glfw directly."""
    (tree / "mvsim_core/sensors/render/_arch_probe.py").write_text("from OpenGL import GL\n")
    (tree / "mvsim_core/gui/_arch_probe.py").write_text("import glfw\n")
    r = _lint_imports(tree, "headless-no-gl")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Contracts: 1 kept, 0 broken." in r.stdout, r.stdout


def test_every_top_level_module_has_a_layer() -> None:
    """A module or package added directly under mvsim_core must be placed in the layers contract (a layers contract
    says nothing about a module it does not list)."""
    cfg = configparser.ConfigParser()
    cfg.read(REPO / ".importlinter")
    listed = set(re.findall(r"[\w.]+", cfg["importlinter:contract:layers"]["layers"]))
    top = REPO / "mvsim_core"
    children = {p.stem for p in top.glob("*.py") if p.stem != "__init__"}
    children |= {p.name for p in top.iterdir() if (p / "__init__.py").is_file()}
    assert children, top
    missing = sorted(f"mvsim_core.{c}" for c in children if f"mvsim_core.{c}" not in listed)
    assert not missing, f"not in any layer of .importlinter's layers contract: {missing}"


def test_untouched_tree(tree: Path) -> None:
    for contract in CONTRACTS:
        r = _lint_imports(tree, contract)
        assert r.returncode == 0 and "KEPT" in r.stdout, r.stdout + r.stderr

"""The architecture contracts (``.importlinter``) catch what they promise to catch.

Each case copies ``mvsim_core`` and ``mvsim_ros2`` with the repository's ``.importlinter`` to a temporary folder, adds
one small module with a deliberately bad import, and runs ``lint-imports`` there (it analyses the packages of its
working directory): the named contract must come out BROKEN and cite that very import. ``test_untouched_tree`` runs
the same command on an unmodified copy: every contract must be kept.
"""

from __future__ import annotations

import ast
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
CONTRACTS = ("layers", "io-file-formats-only", "no-ros-in-core", "headless-no-gl", "acyclic")



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
    "io-file-formats-only": ({"mvsim_core/io/_arch_probe.py": "from mvsim_core.sensors import outputs\n"},
                             "mvsim_core.io._arch_probe -> mvsim_core.sensors"),
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


def test_an_upward_import_in_an_io_module_is_caught(tree: Path) -> None:
    """A copy of a real io module (the grid map) that imports the world breaks both the layers and the io contract;
    a lazy import (inside a function) counts as much as one at the top."""
    path = tree / "mvsim_core/io/grid_map.py"
    path.write_text(path.read_text() + "\n\ndef _probe():\n    from mvsim_core.record import mcap_recorder\n"
                    "    return mcap_recorder\n")
    for contract in ("layers", "io-file-formats-only"):
        r = _lint_imports(tree, contract)
        out = r.stdout + r.stderr
        assert r.returncode != 0 and "Contracts: 0 kept, 1 broken." in out, out
        assert "mvsim_core.io.grid_map -> mvsim_core.record" in out, out


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


# ---------------------------------------------------------------------- adapters encode output kinds (issue 33)
ADAPTERS = ("mvsim_ros2/*.py", "mvsim_core/comms/world_comms.py", "mvsim_core/comms/foxglove_view.py",
            "mvsim_core/record/mcap_recorder.py", "mvsim_core/gym/*.py", "mvsim_core/sweep/*.py", "mvsim_core/gui/*.py")
"""The modules that turn sensor data into something else (messages, records, observations, metrics, drawings): each
keeps one encoder per output kind (:mod:`mvsim_core.sensors.outputs`), never one per sensor class."""
BUILTIN_SENSOR_CLASSES = frozenset({"Lidar2D", "Lidar3D", "Camera", "RgbdCamera", "Imu", "Gnss"})


def sensor_class_names() -> frozenset[str]:
    """The names an adapter may not use: the built-in sensor classes, every class of ``Sensor.registry`` and every
    subclass of ``Sensor`` defined in ``mvsim_core`` (the base ``Sensor`` itself is fine: a type hint)."""
    import mvsim_core.sensors
    from mvsim_core.sensors import Sensor

    found: set[str] = set(BUILTIN_SENSOR_CLASSES) | {c.__name__ for c in Sensor.registry.values()}
    todo = list(Sensor.__subclasses__())
    while todo:
        c = todo.pop()
        todo += c.__subclasses__()
        if c.__module__.startswith(mvsim_core.sensors.__name__):
            found.add(c.__name__)
    return frozenset(found)


def _is_xml_class(node: ast.AST, held: frozenset[str] = frozenset()) -> bool:
    """``x.xml_class``, ``getattr(x, "xml_class"...)``, ``sensor_xml_class(x)`` or a variable of ``held`` (assigned
    one of those): a sensor's class name."""
    if isinstance(node, ast.Name):
        return node.id in held
    if isinstance(node, ast.Attribute):
        return node.attr == "xml_class"
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name == "sensor_xml_class":
            return True
        return (name == "getattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and node.args[1].value == "xml_class")
    return False


SENSORS_PACKAGE = "mvsim_core.sensors"


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` of a chain of attributes on a name ("" for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _in_sensors(module: str) -> bool:
    return module == SENSORS_PACKAGE or module.startswith(SENSORS_PACKAGE + ".")


def class_switches(source: str, path: str, names: frozenset[str]) -> list[str]:
    """``path:line: what`` for every place of ``source`` that names a sensor class of ``names`` (imports it from
    ``mvsim_core.sensors``, uses such a name, or reaches it as an attribute of a sensors module) or switches on a
    sensor's ``xml_class`` (compares it, tests membership, indexes a table by it, matches on it). A name imported
    from elsewhere is another thing (``sensor_msgs.msg.Imu`` is a ROS message); strings and f-strings are not looked
    at: a message may say the class."""
    tree = ast.parse(source, filename=path)
    foreign: set[str] = set()  # names bound by imports from outside mvsim_core.sensors
    modules: set[str] = set()  # local names of mvsim_core.sensors modules
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            for a in node.names:
                local = a.asname or a.name
                if not _in_sensors(module):
                    foreign.add(local)
                elif a.name in names:
                    out.append(f"{path}:{node.lineno}: imports sensor class {a.name}")
                else:
                    modules.add(local)  # a module (or a helper) of the sensors package
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and _in_sensors(a.name):
                    modules.add(a.asname)
    held = frozenset(t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and _is_xml_class(node.value)
                     for t in node.targets if isinstance(t, ast.Name))  # cls = sensor.xml_class
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id in names and node.id not in foreign:
            out.append(f"{path}:{line}: names sensor class {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in names:
            base = _dotted(node.value)
            if _in_sensors(base) or base.split(".", 1)[0] in modules:
                out.append(f"{path}:{line}: names sensor class {node.attr}")
        elif isinstance(node, ast.Compare) and any(_is_xml_class(x, held) for x in (node.left, *node.comparators)):
            out.append(f"{path}:{line}: compares xml_class")
        elif isinstance(node, ast.Subscript) and _is_xml_class(node.slice, held):
            out.append(f"{path}:{line}: indexes a table by xml_class")
        elif isinstance(node, ast.Match) and _is_xml_class(node.subject, held):
            out.append(f"{path}:{line}: matches on xml_class")
    return sorted(set(out), key=lambda s: (s.rsplit(":", 2)[0], int(s.rsplit(":", 2)[1])))


def _adapter_files() -> list[Path]:
    return sorted({p for pattern in ADAPTERS for p in REPO.glob(pattern)})


def test_adapters_encode_output_kinds_not_sensor_classes() -> None:
    """No adapter names a sensor class or switches on ``xml_class``: a new sensor of an existing output kind needs
    its own file only (README, *Adding a sensor*)."""
    names = sensor_class_names()
    files = _adapter_files()
    assert any(p.parent.name == "mvsim_ros2" for p in files) and len(files) > 20, files
    found = [f for p in files for f in class_switches(p.read_text(), str(p.relative_to(REPO)), names)]
    assert not found, "adapters that know sensor classes:\n" + "\n".join(found)


def test_the_class_check_catches_a_planted_class_name(tmp_path: Path) -> None:
    """A copy of an adapter with an ``isinstance(s, Lidar2D)`` planted in it is reported at that line; so are an
    import of a sensor class and a comparison of ``xml_class``."""
    names = sensor_class_names()
    assert {"Lidar2D", "RgbdCamera", "Gnss"} <= names
    src = (REPO / "mvsim_core/comms/foxglove_view.py").read_text()
    planted = src + ("\n\ndef _probe(s):\n"
                     "    from mvsim_core.sensors import Lidar2D\n"
                     "    if isinstance(s, Lidar2D):\n"
                     "        return 1\n"
                     "    return 2 if s.xml_class == 'imu' else getattr(s, 'xml_class', '') in ('gnss',)\n")
    copy = tmp_path / "foxglove_view.py"
    copy.write_text(planted)
    n = planted.splitlines().index("def _probe(s):") + 1
    found = class_switches(copy.read_text(), str(copy), names)
    assert found == [f"{copy}:{n + 1}: imports sensor class Lidar2D",
                     f"{copy}:{n + 2}: names sensor class Lidar2D",
                     f"{copy}:{n + 4}: compares xml_class"], found
    assert class_switches(src, "foxglove_view.py", names) == []  # the adapter as it is: clean
    table = "VIEWS = {}\n\ndef read(s):\n    return VIEWS[s.xml_class]\n"
    assert class_switches(table, "t.py", names) == ["t.py:4: indexes a table by xml_class"]
    via_module = "import mvsim_core.sensors.camera as cam\n\nx = cam.Camera\ny = mvsim_core.sensors.Gnss\n"
    assert class_switches(via_module, "m.py", names) == ["m.py:3: names sensor class Camera",
                                                          "m.py:4: names sensor class Gnss"]
    held = "def f(s):\n    cls = s.xml_class\n    return cls == 'laser'\n"
    assert class_switches(held, "h.py", names) == ["h.py:3: compares xml_class"]
    ros = "from sensor_msgs.msg import Imu\n\nmsg = Imu()\n"  # a ROS message of the same name: not a sensor class
    assert class_switches(ros, "r.py", names) == []


# ---------------------------------------------------------------------- io keeps file formats only (issue 33)
IO_MAY_IMPORT = frozenset({"mvsim_core.io", "mvsim_core.errors", "mvsim_core.geometry", "mvsim_core.jit",
                           "mvsim_core.memory_budget", "mvsim_core.output_kind"})
"""What of mvsim_core the modules of ``mvsim_core/io`` may import (a package covers its modules): the bottom layer's
helpers. The simulation (world, sensors, dynamics, ...) and the recorders and views above it are not here."""


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _runtime_imports(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, absolute module) of every import of ``tree`` that runs (at the top or in a function; not those under
    ``if TYPE_CHECKING:``, which the contracts do not count either); ``package``: the module's package, for the
    relative ones."""
    out: list[tuple[int, str]] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                todo += child.orelse
                continue
            if isinstance(child, ast.Import):
                out += [(child.lineno, a.name) for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    up = parts[:len(parts) - child.level + 1]
                    base = ".".join([*up, base] if base else up)
                out += [(child.lineno, f"{base}.{a.name}" if base else a.name) for a in child.names]
            todo.append(child)
    return sorted(out)


def io_import_violations(source: str, path: str, package: str = "mvsim_core.io") -> list[str]:
    """``path:line: imports M`` for every runtime import of ``source`` (a module of ``package``) of an ``mvsim_core``
    or ``mvsim_ros2`` module outside :data:`IO_MAY_IMPORT`."""
    out = []
    for line, module in _runtime_imports(ast.parse(source, filename=path), package):
        if module.split(".")[0] not in PACKAGES:
            continue
        if not any(module == ok or module.startswith(ok + ".") for ok in IO_MAY_IMPORT):
            out.append(f"{path}:{line}: imports {module}")
    return out


def test_io_imports_nothing_from_the_simulation() -> None:
    """Every module of mvsim_core/io imports only the bottom layer's helpers: no world, sensor, dynamics, object,
    element, world-file parser, recorder, view nor the ROS bridge, not even lazily."""
    files = sorted((REPO / "mvsim_core/io").glob("*.py"))
    assert len(files) > 10, files
    found = [v for f in files for v in io_import_violations(f.read_text(), str(f.relative_to(REPO)))]
    assert found == [], found


def test_the_io_check_catches_a_planted_import(tmp_path: Path) -> None:
    """A copy of an io module with a lazy import of the world, a relative import of a sensor module and an import of
    the recorders planted in it: each reported at its line; an annotation-only import is not."""
    src = (REPO / "mvsim_core/io/tum_trajectory.py").read_text()
    planted = src + ("\n\ndef _probe():\n"
                     "    from mvsim_core.world import World\n"
                     "    from ..sensors import outputs\n"
                     "    import mvsim_core.record.mcap_recorder\n"
                     "    from . import csv_logger\n"
                     "    return World, outputs, csv_logger\n\n\n"
                     "if TYPE_CHECKING:\n    from mvsim_core.sensors.outputs import Output\n")
    copy = tmp_path / "tum_trajectory.py"
    copy.write_text(planted)
    n = planted.splitlines().index("def _probe():") + 1
    found = io_import_violations(copy.read_text(), str(copy))
    assert found == [f"{copy}:{n + 1}: imports mvsim_core.world.World",
                     f"{copy}:{n + 2}: imports mvsim_core.sensors.outputs",
                     f"{copy}:{n + 3}: imports mvsim_core.record.mcap_recorder"], found
    assert io_import_violations(src, "tum_trajectory.py") == []  # the module as it is: clean


# ---------------------------------------------------------------------- typed seams (issue 33)
SEAM_NAMES = frozenset({"world", "ctx", "physics", "vehicle", "veh", "sensor", "scheduler", "scene", "renderer"})
"""Names of the seams between the layers: a parameter, attribute or field of one of these names has its real type
(:class:`~mvsim_core.world_model.WorldModel` below the world, the real classes above it), never ``Any``/``object``."""
NOT_SEAMS = frozenset({("mvsim_core/gym/vector_env.py", "ctx")})
"""(file, name) where a seam name means something else: the vector environment's ``ctx`` is a multiprocessing context
(typeshed gives no one type that has both ``Process`` and what gymnasium's shared memory accepts)."""
UNTYPED = frozenset({"Any", "object"})


def _untyped(node: ast.AST | None) -> bool:
    """Whether an annotation says nothing: ``Any``, ``typing.Any``, ``object``, their strings, or one of them
    ``| None`` / ``Optional[...]``."""
    if isinstance(node, ast.Name):
        return node.id in UNTYPED
    if isinstance(node, ast.Attribute):
        return node.attr in UNTYPED and _dotted(node.value) in ("typing", "t", "builtins")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _untyped(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        return len(sides) == 1 and _untyped(sides[0])
    if isinstance(node, ast.Subscript) and _dotted(node.value).split(".")[-1] == "Optional":
        return _untyped(node.slice)
    return False


def untyped_seams(source: str, path: str) -> list[str]:
    """``path:line: name: annotation`` for every parameter, annotated attribute or variable and dataclass field of
    ``source`` named one of :data:`SEAM_NAMES` and annotated ``Any`` or ``object`` (:func:`_untyped`)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source, filename=path)):
        found: list[tuple[str, ast.AST | None, int]] = []
        if isinstance(node, ast.arguments):
            every = [*node.posonlyargs, *node.args, *node.kwonlyargs, node.vararg, node.kwarg]
            found = [(a.arg, a.annotation, a.lineno) for a in every if a is not None]
        elif isinstance(node, ast.AnnAssign):
            t = node.target
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            found = [(name, node.annotation, node.lineno)]
        for name, ann, line in found:
            if name in SEAM_NAMES and (path, name) not in NOT_SEAMS and _untyped(ann):
                out.append(f"{path}:{line}: {name}: {ast.unparse(ann) if ann is not None else ''}")
    return sorted(out, key=lambda s: int(s.split(":")[1]))


def _package_sources(*packages: str) -> list[Path]:
    return sorted(p for pkg in packages for p in (REPO / pkg).rglob("*.py") if not p.name.endswith("_pb2.py"))


def test_seams_are_typed() -> None:
    """No world/ctx/physics/vehicle/veh/sensor/scheduler/scene/renderer of mvsim_core or mvsim_ros2 is annotated
    ``Any`` or ``object``: mypy checks every seam between the layers."""
    files = _package_sources(*PACKAGES)
    assert len(files) > 150, len(files)
    found = [f for p in files for f in untyped_seams(p.read_text(), str(p.relative_to(REPO)))]
    assert found == [], "seams annotated Any/object:\n" + "\n".join(found)


def test_the_seam_check_catches_planted_untyped_seams(tmp_path: Path) -> None:
    """A copy of a sensor module with untyped seams planted in it (parameters of each kind, a field, an attribute):
    each reported at its line; a seam name that is typed, and another name annotated ``Any``, are not."""
    src = (REPO / "mvsim_core/sensors/scheduler.py").read_text()
    planted = src + ("\n\ndef _probe(world: Any, ctx: SensorContext, *, sensor: object = None, **veh: Any) -> None:\n"
                     "    scene: Any | None = None\n"
                     "    other: Any = scene\n\n\n"
                     "class _Probe:\n"
                     "    physics: 'Any'\n\n"
                     "    def __init__(self, renderer: typing.Optional[Any]) -> None:\n"
                     "        self.renderer: typing.Any = renderer\n")
    copy = tmp_path / "scheduler.py"
    copy.write_text(planted)
    n = planted.splitlines().index("def _probe(world: Any, ctx: SensorContext, *, sensor: object = None, "
                                   "**veh: Any) -> None:") + 1
    found = untyped_seams(copy.read_text(), str(copy))
    assert found == [f"{copy}:{n}: world: Any", f"{copy}:{n}: sensor: object", f"{copy}:{n}: veh: Any",
                     f"{copy}:{n + 1}: scene: Any | None", f"{copy}:{n + 6}: physics: 'Any'",
                     f"{copy}:{n + 8}: renderer: typing.Optional[Any]",
                     f"{copy}:{n + 9}: renderer: typing.Any"], found
    assert untyped_seams(src, "scheduler.py") == []  # the module as it is: clean


DICT_STORES = frozenset({"get", "setdefault"})
PICKLING = frozenset({"__getstate__", "__setstate__", "__reduce__", "__reduce_ex__"})


def dict_tricks(source: str, path: str) -> list[str]:
    """``path:line: what`` for every ``x.__dict__[...]``, ``x.__dict__.get(...)`` and ``x.__dict__.setdefault(...)``
    of ``source`` outside the pickling methods (:data:`PICKLING`): an attribute kept out of sight of the class
    (declare it instead). A copy of one's own attributes (``out.__dict__.update(self.__dict__)``) is fine."""
    tree = ast.parse(source, filename=path)
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in PICKLING:
            allowed |= {id(n) for n in ast.walk(node)}
    out: list[str] = []
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
                and node.value.attr == "__dict__"):
            out.append(f"{path}:{node.lineno}: __dict__[...]")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DICT_STORES
              and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "__dict__"):
            out.append(f"{path}:{node.lineno}: __dict__.{node.func.attr}(...)")
    return sorted(set(out), key=lambda s: int(s.split(":")[1]))


def test_sensors_declare_their_caches() -> None:
    """No module of mvsim_core/sensors keeps a cache in an object's ``__dict__`` (SensorContext, the scenes and the
    sensors declare theirs)."""
    files = _package_sources("mvsim_core/sensors")
    assert len(files) > 20, len(files)
    found = [f for p in files for f in dict_tricks(p.read_text(), str(p.relative_to(REPO)))]
    assert found == [], found


def test_the_dict_check_catches_planted_tricks(tmp_path: Path) -> None:
    """A copy of a lidar module with the three tricks planted: each reported at its line; pickling and a copy of
    oneself are not."""
    src = (REPO / "mvsim_core/sensors/lidar3d.py").read_text()
    planted = src + ("\n\ndef _probe(ctx, scene, out, self):\n"
                     "    a = ctx.__dict__.get('_raycast_scene_3d')\n"
                     "    ctx.__dict__['_scene_renderer'] = a\n"
                     "    out.__dict__.update(self.__dict__)\n"
                     "    return scene.__dict__.setdefault('_ray_tables', {})\n\n\n"
                     "class _Probe:\n"
                     "    def __setstate__(self, state):\n"
                     "        self.__dict__['x'] = state\n")
    copy = tmp_path / "lidar3d.py"
    copy.write_text(planted)
    n = planted.splitlines().index("def _probe(ctx, scene, out, self):") + 1
    assert dict_tricks(copy.read_text(), str(copy)) == [f"{copy}:{n + 1}: __dict__.get(...)",
                                                        f"{copy}:{n + 2}: __dict__[...]",
                                                        f"{copy}:{n + 4}: __dict__.setdefault(...)"]
    assert dict_tricks(src, "lidar3d.py") == []


# ---------------------------------------------------------------------- raw Box2D access (issue 33)
RAW_OWNERS = frozenset({"box2d_raw.py", "box2d_state.py"})
"""The modules of mvsim_core/dynamics that may touch Box2D's memory themselves: the backend that owns the raw access
(offsets, the address-space view, the accessors) and the snapshots, which keep their own world-struct offsets."""


def _raw_constant(name: str) -> bool:
    """Whether a name of box2d_raw is one of its constants (struct offsets, flags, the address range, READ_COLS)."""
    return name == "*" or name.lstrip("_").isupper()


def raw_access_violations(source: str, path: str) -> list[str]:
    """``path:line: what`` for every raw access to Box2D's memory in ``source``: an import of ``ctypes``, a ``.this``
    read, a call of (or an import of) ``memory``, and an import of a constant of box2d_raw or a read of one off the
    module (``box2d_raw.OFF_V``). Calling box2d_raw's accessors (functions) is fine."""
    tree = ast.parse(source, filename=path)
    modules = {"box2d_raw"}  # names bound to the box2d_raw module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.asname and a.name.split(".")[-1] == "box2d_raw"}
        elif isinstance(node, ast.ImportFrom):
            modules |= {a.asname or a.name for a in node.names if a.name == "box2d_raw"}
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, "imports ctypes") for a in node.names if a.name.split(".")[0] == "ctypes"]
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if mod.split(".")[0] == "ctypes":
                out.append((node.lineno, "imports ctypes"))
            elif mod.split(".")[-1] == "box2d_raw":
                out += [(node.lineno, f"imports box2d_raw.{a.name}") for a in node.names
                        if _raw_constant(a.name) or a.name == "memory"]
        elif isinstance(node, ast.Attribute):
            if node.attr == "this":
                out.append((node.lineno, "reads .this"))
            elif _raw_constant(node.attr) and _dotted(node.value).split(".")[-1] in modules:
                out.append((node.lineno, f"reads box2d_raw.{node.attr}"))
        elif isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == "memory") or (isinstance(f, ast.Attribute) and f.attr == "memory"):
                out.append((node.lineno, "calls memory()"))
    return [f"{path}:{line}: {what}" for line, what in sorted(set(out))]


def test_only_the_box2d_backend_touches_box2d_memory() -> None:
    """In mvsim_core/dynamics only box2d_raw.py and box2d_state.py read ``.this``, call ``memory()`` or import
    box2d_raw's offsets and constants or ctypes; the other modules (bodies, kinematic drive, collision flags, ...)
    call box2d_raw's accessors."""
    files = [p for p in _package_sources("mvsim_core/dynamics") if p.name not in RAW_OWNERS]
    assert len(files) > 20, len(files)
    found = [f for p in files for f in raw_access_violations(p.read_text(), str(p.relative_to(REPO)))]
    assert found == [], "raw Box2D access outside the backend:\n" + "\n".join(found)


def test_the_raw_access_check_catches_planted_access(tmp_path: Path) -> None:
    """A copy of bodies.py with raw accesses planted in it (ctypes, an offset imported, memory() through a module
    alias, an offset read off the module, ``.this``): each reported at its line; importing the module and calling
    its accessors is not. The backend itself is reported (the check is not vacuous)."""
    src = (REPO / "mvsim_core/dynamics/bodies.py").read_text()
    planted = src + ("\n\ndef _probe(body):\n"
                     "    import ctypes\n"
                     "    from mvsim_core.dynamics.box2d_raw import OFF_V, body_address\n"
                     "    from mvsim_core.dynamics import box2d_raw as raw\n"
                     "    from . import box2d_raw\n"
                     "    _, _, f32, _ = raw.memory()\n"
                     "    f32[body_address(body) // 4 + raw.OFF_W] = 0.0\n"
                     "    return int(body.this), OFF_V, box2d_raw.MEM_LO, ctypes\n")
    copy = tmp_path / "bodies.py"
    copy.write_text(planted)
    n = planted.splitlines().index("def _probe(body):") + 1
    assert raw_access_violations(copy.read_text(), str(copy)) == [f"{copy}:{n + 1}: imports ctypes",
                                                                  f"{copy}:{n + 2}: imports box2d_raw.OFF_V",
                                                                  f"{copy}:{n + 5}: calls memory()",
                                                                  f"{copy}:{n + 6}: reads box2d_raw.OFF_W",
                                                                  f"{copy}:{n + 7}: reads .this",
                                                                  f"{copy}:{n + 7}: reads box2d_raw.MEM_LO"]
    assert raw_access_violations(src, "bodies.py") == []
    backend = raw_access_violations((REPO / "mvsim_core/dynamics/box2d_raw.py").read_text(), "box2d_raw.py")
    assert {v.split(": ", 1)[1] for v in backend} >= {"imports ctypes", "reads .this", "calls memory()"}, backend

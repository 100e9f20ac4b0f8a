"""The kernels built ahead of time (mvsim_core.aot, by ``make setup``): the same bits as numba's JIT, a first step
that imports no numba, and the layout merge and type specs the build relies on."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mvsim_core import aot, jit

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))

TRACE = r"""
import hashlib, sys
import numpy as np
import mvsim_core as mv
import mvsim_core.errors
from mvsim_core import jit
out = {}
for path in sys.argv[1:]:
    w = mv.load_world(path, seed=3)
    for k, v in enumerate(w.vehicles.values()):
        try:
            v.set_twist(0.4 + 0.05 * (k % 5), 0.0, 0.3 - 0.1 * (k % 3))
        except mv.errors.ControllerError:
            pass  # a trailer (raw controller)
    w.step()
    first_step_numba = "numba" in sys.modules
    for _ in range(299):
        w.step()
    ph = w.physics
    h = hashlib.sha256()
    for a in (ph.state, ph.z, ph.pitch, ph.roll, ph.odometry, ph.wheels.omega, ph.wheels.fx, ph.wheels.fy):
        h.update(np.ascontiguousarray(a).tobytes())
    for v in w.vehicles.values():
        for s in v.sensors.values():
            ranges = getattr(s.last, "ranges", None)
            if ranges is not None:
                h.update(np.ascontiguousarray(ranges).tobytes())
    out[path] = [h.hexdigest(), first_step_numba]
out["aot"] = jit.aot_active()
print(out)
"""

WORLDS = [
    REPO / "worlds" / "demo.world.xml",  # occupancy grid, 2D lidars, differential robots
    SHARED / "worlds" / "mvsim_tutorial" / "demo_elevation_map.world.xml",  # terrain fit
    SHARED / "worlds" / "mvsim_tutorial" / "demo_friction_zones.world.xml",
    SHARED / "worlds" / "mvsim_tutorial" / "demo_articulated_vehicle.world.xml",
]


def _fresh() -> dict:
    """The build's metadata, asserting it was built from these sources."""
    meta = jit.aot_meta() or {}
    assert meta.get("stamp") == jit.package_stamp() and not aot.is_stale(), (
        "mvsim_core._aot is missing or was built from other sources: run `make setup` (or "
        "`.venv/bin/python -m mvsim_core.aot`)")
    return meta


def _python(code: str, mode: str, *args: str) -> str:
    """The standard output of ``python -c code args`` run with ``MVSIM_JIT=mode`` and one thread (the threaded
    kernels, which a 3D lidar's sweep takes on two, are never built: mvsim_core.threads)."""
    return subprocess.run([sys.executable, "-c", code, *args],
                          env={**os.environ, "MVSIM_JIT": mode, "MVSIM_THREADS": "1"},
                          capture_output=True, text=True, check=True, cwd=REPO, timeout=600).stdout


def _trace(mode: str) -> dict:
    import ast

    return ast.literal_eval(_python(TRACE, mode, *map(str, WORLDS)).strip().splitlines()[-1])


@pytest.mark.slow
def test_aot_kernels_give_the_jits_bits_and_no_numba_on_the_first_step():
    _fresh()
    built, jitted = _trace("aot"), _trace("jit")
    assert built["aot"] is True and jitted["aot"] is False
    for w in map(str, WORLDS):
        assert built[w][0] == jitted[w][0], f"{w}: the built kernels and the JIT disagree"
        assert built[w][1] is False, f"{w}: numba imported by the first step with the built kernels"
        assert jitted[w][1] is True


def test_the_build_exports_every_recorded_kernel_the_demo_world_steps_with():
    meta = _fresh()
    for key in ("mvsim_core.dynamics.vehicle_kernels:vehicle_forces", "mvsim_core.dynamics.box2d_raw:apply_raw",
                "mvsim_core.dynamics.collision_flags:collision_flags_raw",
                "mvsim_core.sensors.raycast.segments:cast_segments", "mvsim_core.sensors.raycast.grid:cast_grid"):
        assert key in meta["exports"], key
    assert meta["skipped"].get("mvsim_core.sensors.raycast.rays3d:trace_sensors_parallel") in (None, "parallel")


def test_check_mode_names_the_kernel_called_with_other_types():
    _fresh()
    code = ("import numpy as np\n"
            "from mvsim_core.dynamics.collision_flags import polygon_distance as f\n"
            "a = np.array([[0, 0], [1, 0], [0, 1]], dtype=np.float64)\n"
            "print(f(a, 3, a + 3.0, 3, float('inf')))\n"
            "try:\n"
            "    f(a.astype(np.float32), 3, a, 3, float('inf'))\n"
            "except TypeError as e:\n"
            "    print(e)\n")
    out = _python(code, "check").splitlines()
    assert float(out[0]) == pytest.approx(5.0 / 2**0.5)  # edge x + y = 1 to the corner (3, 3)
    assert out[1].startswith("kernel mvsim_core.dynamics.collision_flags:polygon_distance is compiled for (")
    assert "array(float32, 2d, C)" in out[1]


def test_use_jit_puts_dispatchers_where_the_built_functions_were():
    _fresh()
    code = ("from mvsim_core.dynamics import vehicle_kernels as vk\n"
            "from mvsim_core import jit\n"
            "before = type(vk.vehicle_forces).__name__\n"
            "jit.use_jit()\n"
            "print(before, type(vk.vehicle_forces).__name__, type(vk.wheel_friction).__name__, jit.aot_active())\n")
    out = _python(code, "aot").split()
    assert out == ["builtin_function_or_method", "CPUDispatcher", "CPUDispatcher", "False"]


def test_type_specs_round_trip():
    from numba.core import types

    for t in (types.float64, types.int32, types.boolean, types.none, types.Array(types.float64, 2, "C"),
              types.Array(types.int64, 1, "A", readonly=True), types.UniTuple(types.float64, 3),
              types.Tuple([types.int64, types.float64])):
        spec = jit.type_spec(t)
        assert json.loads(json.dumps(spec)) == spec
        assert jit.spec_type(spec) == t
    assert jit.type_spec(types.pyobject) is None
    with pytest.raises(ValueError, match="not a numba scalar type"):
        jit.spec_type("__import__")


def test_layouts_merge_into_one_any_layout_signature():
    c = {"array": "float64", "ndim": 1, "layout": "C", "readonly": False}
    a = {**c, "layout": "A"}
    e1 = {"kernel": "m:f", "returns": "boolean", "args": [c, "float64", c]}
    e2 = {"kernel": "m:f", "returns": "boolean", "args": [a, "float64", c]}
    assert aot.merge_layouts([e1, e2])["args"] == [a, "float64", c]
    e3 = {**e2, "args": [{**c, "array": "float32"}, "float64", c]}
    assert aot.merge_layouts([e1, e3]) is None
    assert aot.merge_layouts([e1, {**e1, "args": [c, "int64", c]}]) is None


def test_a_module_built_from_other_sources_is_ignored(tmp_path, monkeypatch):
    meta = _fresh()
    monkeypatch.setattr(jit, "_mode", "aot")
    monkeypatch.setattr(jit, "AOT_META", tmp_path / "_aot.json")
    jit.AOT_META.write_text(json.dumps(meta))
    loaded = jit._load_aot()
    assert loaded is not None and loaded[1]["stamp"] == jit._STAMP
    jit.AOT_META.write_text(json.dumps({**meta, "stamp": "0" * 64}))  # built before some source changed
    assert jit._load_aot() is None
    jit.AOT_META.write_text("{not json")
    assert jit._load_aot() is None
    monkeypatch.setattr(jit, "_mode", "jit")
    jit.AOT_META.write_text(json.dumps(meta))
    assert jit._load_aot() is None


def test_package_stamp_changes_with_any_source_file(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(jit, "_PACKAGE_DIR", pkg)
    first = jit.package_stamp()
    assert jit.package_stamp() == first
    os.utime(pkg / "sub" / "b.py", ns=(1, 1))
    assert jit.package_stamp() != first


def test_module_closures_follow_package_imports_transitively(tmp_path):
    pkg = tmp_path / "mvsim_core"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "jit.py").write_text("import os\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from mvsim_core.jit import njit\nfrom . import b\n")
    (pkg / "sub" / "b.py").write_text("from ..c import K\nimport numpy\n")
    (pkg / "c.py").write_text("K = 1\n")
    (pkg / "d.py").write_text("import mvsim_core.sub.a\n")
    closures = aot.module_closures(pkg)
    assert closures["mvsim_core.sub.a"] == ["c.py", "jit.py", "sub/__init__.py", "sub/a.py", "sub/b.py"]
    assert closures["mvsim_core.sub.b"] == ["c.py", "sub/b.py"]
    assert closures["mvsim_core.c"] == ["c.py"]
    assert closures["mvsim_core.d"] == ["c.py", "d.py", "jit.py", "sub/__init__.py", "sub/a.py", "sub/b.py"]


def test_stale_modules_names_the_kernel_modules_whose_files_changed():
    mods = ["mvsim_core.dynamics.kinematic_drive", "mvsim_core.dynamics.box2d_raw"]
    meta = {"modules": aot.module_stamps(mods)}
    assert meta["modules"]["mvsim_core.dynamics.kinematic_drive"]["files"] == [
        "dynamics/box2d_raw.py", "dynamics/keyframes.py", "dynamics/kinematic_drive.py", "jit.py"]
    assert aot.stale_modules(meta) == []
    meta["modules"]["mvsim_core.dynamics.box2d_raw"]["stamp"] = "0" * 64  # built before box2d_raw.py changed
    assert aot.stale_modules(meta) == ["mvsim_core.dynamics.box2d_raw"]
    assert aot.stale_modules({"stamp": "0" * 64}) is None  # a build without per-module stamps


PROBE = '''

from mvsim_core.geometry.rotation_kernels import rotation_entries as _probe_rotation
from mvsim_core.jit import prange as _probe_prange


@njit(cache=True, parallel=True)
def probe_parallel(n: int, yaw: float) -> float:
    """sum of i cos(yaw) over i < n, in parallel, through a kernel of an unchanged module."""
    s = 0.0
    for i in _probe_prange(n):
        s += i * _probe_rotation(yaw, 0.0, 0.0)[0]
    return s
'''

PER_MODULE = r"""
import math, sys
import numpy as np
from mvsim_core import jit
from mvsim_core.dynamics import collision_flags as cf
from mvsim_core.dynamics import vehicle_kernels as vk
from mvsim_core.geometry import rotation_kernels as rk
out = {"before": [type(f).__name__ for f in (cf.polygon_distance, cf.probe_parallel, vk.vehicle_forces,
                                             rk.rotation_entries)],
       "numba_before": "numba" in sys.modules}
a = np.array([[0, 0], [1, 0], [0, 1]], dtype=np.float64)
out["distance"] = cf.polygon_distance(a, 3, a + 3.0, 3, math.inf)
out["parallel"] = cf.probe_parallel(1000, 0.5)
import numba
probe = jit.REGISTRY["mvsim_core.dynamics.collision_flags:probe_parallel"].dispatcher
out["prange"] = probe.py_func.__globals__["_probe_prange"] is numba.prange
out["after"] = [type(f).__name__ for f in (cf.polygon_distance, cf.probe_parallel, vk.vehicle_forces,
                                           rk.rotation_entries, cf.collision_flags_raw)]
out["jit_on"], out["aot"], out["stale"] = jit._jit_on, jit.aot_active(), sorted(jit.aot_stale_modules())
jit.use_jit()
out["use_jit"] = [type(f).__name__ for f in (vk.vehicle_forces, cf.collision_flags_raw)]
print(out)
"""


@pytest.fixture(scope="module")
def edited_copy(tmp_path_factory) -> Path:
    """A copy of the package and its build (file times kept, so the stamps are the build's) in which one kernel
    module, ``dynamics/collision_flags.py``, was edited since the build: a parallel kernel appended."""
    _fresh()
    root = tmp_path_factory.mktemp("edited")
    shutil.copytree(jit._PACKAGE_DIR, root / "mvsim_core", ignore=shutil.ignore_patterns("__pycache__"))
    with open(root / "mvsim_core" / "dynamics" / "collision_flags.py", "a") as fh:
        fh.write(PROBE)
    return root


def _python_in(root: Path, code: str, mode: str) -> str:
    """The standard output of ``python -c code`` run on the package copy under ``root``, ``MVSIM_JIT=mode``."""
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, "MVSIM_JIT": mode, "PYTHONPATH": str(root)},
                       capture_output=True, text=True, cwd=root, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["aot", "check"])
def test_an_edited_kernel_module_goes_to_the_jit_alone(edited_copy, mode):
    import ast

    meta = _fresh()
    edited = "dynamics/collision_flags.py"
    stale = sorted(m for m, rec in meta["modules"].items() if edited in rec["files"])  # it and its importers
    assert "mvsim_core.dynamics.collision_flags" in stale
    assert "mvsim_core.dynamics.vehicle_kernels" not in stale and "mvsim_core.geometry.rotation_kernels" not in stale
    out = ast.literal_eval(_python_in(edited_copy, PER_MODULE, mode).strip().splitlines()[-1])
    built = "builtin_function_or_method" if mode == "aot" else "function"  # (check mode: behind the type check)
    assert out["before"] == ["_LazyJit", "_LazyJit", built, built]
    if mode == "aot":
        assert out["numba_before"] is False
    assert out["distance"] == pytest.approx(5.0 / 2**0.5)  # edge x + y = 1 to the corner (3, 3)
    assert out["parallel"] == pytest.approx(499500 * math.cos(0.5), rel=1e-12)
    assert out["prange"] is True
    assert out["after"] == ["CPUDispatcher", "CPUDispatcher", built, built, "_LazyJit"]
    assert out["jit_on"] is False and out["aot"] is True and out["stale"] == stale
    assert out["use_jit"] == ["CPUDispatcher", "CPUDispatcher"]


def test_an_edit_of_jit_py_sends_every_kernel_to_the_jit(tmp_path):
    _fresh()
    shutil.copytree(jit._PACKAGE_DIR, tmp_path / "mvsim_core", ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "mvsim_core" / "jit.py", "a") as fh:
        fh.write("# edited\n")
    code = ("from mvsim_core import jit\n"
            "from mvsim_core.dynamics import vehicle_kernels as vk\n"
            "print(jit.aot_active(), jit._jit_on, type(vk.vehicle_forces).__name__, len(jit.aot_stale_modules()))\n")
    assert _python_in(tmp_path, code, "aot").split() == ["False", "True", "CPUDispatcher", "0"]


def test_a_build_serves_the_kernel_modules_whose_files_did_not_change(tmp_path, monkeypatch):
    meta = _fresh()
    monkeypatch.setattr(jit, "_mode", "aot")
    monkeypatch.setattr(jit, "AOT_META", tmp_path / "_aot.json")
    jit.AOT_META.write_text(json.dumps(meta))
    assert jit._load_aot_modules() is None  # the whole build is current: _load_aot serves it
    other = {**meta, "stamp": "0" * 64}  # some file changed, none of a kernel module's
    jit.AOT_META.write_text(json.dumps(other))
    loaded = jit._load_aot_modules()
    assert loaded is not None and loaded[1]["stamp"] == "0" * 64 and loaded[2] == frozenset()
    mod = "mvsim_core.dynamics.box2d_raw"
    modules = {**meta["modules"], mod: {**meta["modules"][mod], "stamp": "0" * 64}}  # box2d_raw's files changed
    jit.AOT_META.write_text(json.dumps({**other, "modules": modules}))
    loaded = jit._load_aot_modules()
    assert loaded is not None and loaded[2] == frozenset({mod})
    every = {m: {**rec, "stamp": "0" * 64} for m, rec in meta["modules"].items()}  # jit.py changed, say
    jit.AOT_META.write_text(json.dumps({**other, "modules": every}))
    assert jit._load_aot_modules() is None
    jit.AOT_META.write_text(json.dumps({k: v for k, v in other.items() if k != "modules"}))  # no per-module stamps
    assert jit._load_aot_modules() is None
    monkeypatch.setattr(jit, "_mode", "jit")
    jit.AOT_META.write_text(json.dumps(other))
    assert jit._load_aot_modules() is None
    assert jit.stale_modules({"modules": {mod: {"files": ["x.py"]}}}, {}) is None  # a record without its stamp


def test_the_build_records_the_modules_that_declared_kernels_and_jit_py_in_each():
    meta = _fresh()
    import mvsim_core.dynamics.friction.kernel  # noqa: F401 - declares default_wheel_force
    import mvsim_core.geometry.rotation_kernels  # noqa: F401 - declares rotation_terms

    assert jit.REGISTRY["mvsim_core.geometry.rotations:rotation_terms"].declared_in == (
        "mvsim_core.geometry.rotation_kernels")
    assert jit.REGISTRY["mvsim_core.dynamics.friction.default:default_wheel_force"].declared_in == (
        "mvsim_core.dynamics.friction.kernel")
    assert jit.REGISTRY["mvsim_core.geometry.rotation_kernels:rotation_entries"].declared_in == (
        "mvsim_core.geometry.rotation_kernels")
    for m in ("mvsim_core.geometry.rotations", "mvsim_core.geometry.rotation_kernels",
              "mvsim_core.dynamics.friction.default", "mvsim_core.dynamics.friction.kernel"):
        assert m in meta["modules"], m
    assert all("jit.py" in rec["files"] for rec in meta["modules"].values())
    assert meta["modules"]["mvsim_core.geometry.rotations"]["files"] == ["geometry/rotations.py", "jit.py"]

"""Build the package's kernels ahead of time into one extension module, :mod:`mvsim_core._aot`.

``make setup`` runs ``python -m mvsim_core.aot``; afterwards a process that steps a world neither imports numba nor
loads a cached kernel (see :mod:`mvsim_core.jit`). The signatures to compile come from
``mvsim_core/aot_signatures.jsonl`` (one JSON line per signature, as ``MVSIM_JIT_RECORD`` writes them); a kernel with
several signatures there (other than in array layouts, which one any-layout export serves), or a
parallel one, stays with the JIT. The module is compiled for this machine's CPU and
the package's current sources: beside it ``_aot.json`` records the sources' stamp and, per kernel module, the stamp
of the files its built code depends on; a process whose sources differ uses the built code of the kernel modules
whose files did not change and compiles the others' kernels with the JIT (see :mod:`mvsim_core.jit`) until the next
build.

    python -m mvsim_core.aot [--if-stale] [--record FILE ...]

``--if-stale`` builds only when the sources or the signature list changed since the last build (and names the kernel
modules whose built code is out of date, :func:`stale_modules`). ``--record`` merges signature files written by
``MVSIM_JIT_RECORD`` into the list first (deduplicated, sorted).

Besides the package stamp, ``_aot.json`` records per kernel module the stamp of the files its built code depends on
(``modules``: its own source and every package module it imports, transitively, :func:`module_closures`): built code
inlines its callees and freezes the module constants it reads, so those files are what must be unchanged for it to
hold. A process uses the built code of each kernel module whose files are unchanged; as an importer's files include
those of the modules it imports, a stale module's importers are stale too. The modules recorded are those of the
exported functions and those that declared them (``njit(...)(other.f)``), and every one's files include
``jit.py``, so an edit of that file makes the whole build stale (see :mod:`mvsim_core.jit`).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
SIGNATURES = PACKAGE_DIR / "aot_signatures.jsonl"
EXTENSION = "_aot"


def read_signatures(path: Path = SIGNATURES) -> dict[str, list[dict]]:
    """Signatures by kernel key (``module:function``), duplicates dropped."""
    out: dict[str, list[dict]] = {}
    if not path.is_file():
        return out
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        sigs = out.setdefault(entry["kernel"], [])
        if entry not in sigs:
            sigs.append(entry)
    return out


def merge_records(files: list[Path], path: Path = SIGNATURES) -> int:
    """Merge ``MVSIM_JIT_RECORD`` files into the signature list; returns how many lines it has."""
    lines = {line for f in [path, *files] if f.is_file() for line in f.read_text().splitlines() if line.strip()}
    path.write_text("".join(f"{line}\n" for line in sorted(lines)))
    return len(lines)


def merge_layouts(entries: list[dict]) -> dict | None:
    """One signature that takes the arguments of all ``entries``, where they differ only in array layout or
    writability (the merged array is any-layout, ``A``, and read-only unless all are writable); None otherwise."""
    first = entries[0]
    if any(e["returns"] != first["returns"] or len(e["args"]) != len(first["args"]) for e in entries):
        return None
    args = []
    for column in zip(*(e["args"] for e in entries), strict=True):
        a = column[0]
        if all(x == a for x in column):
            args.append(a)
            continue
        if not all(isinstance(x, dict) and "array" in x and (x["array"], x["ndim"]) == (a["array"], a["ndim"])
                   for x in column):
            return None
        layout = a["layout"] if all(x["layout"] == a["layout"] for x in column) else "A"
        args.append({**a, "layout": layout, "readonly": any(x["readonly"] for x in column)})
    return {**first, "args": args}


def _signatures_hash() -> str:
    return hashlib.sha256(SIGNATURES.read_bytes() if SIGNATURES.is_file() else b"").hexdigest()


def is_stale() -> bool:
    """Whether the module is missing or was built from other sources or signatures."""
    from mvsim_core import jit

    meta = jit.aot_meta()
    return meta is None or meta.get("stamp") != jit._STAMP or meta.get("signatures") != _signatures_hash()


def _module_name(rel: str) -> str:
    """``mvsim_core.a.b`` of the package file ``a/b.py`` (``a/__init__.py``: ``mvsim_core.a``)."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE_DIR.name, *parts])


def _imports(name: str, tree: ast.AST, is_package: bool) -> set[str]:
    """The package modules the module ``name`` imports by name (absolute or relative); a ``from m import x`` counts
    ``m`` and ``m.x`` (one of them is a module)."""
    top = PACKAGE_DIR.name
    here = name.split(".") if is_package else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            mod = ".".join([*base, *(node.module.split(".") if node.module else [])])
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return {m for m in out if m == top or m.startswith(top + ".")}


def module_closures(package_dir: Path | None = None) -> dict[str, list[str]]:
    """Per module of the package (``mvsim_core.a.b``), the package files (relative POSIX paths) its code may read:
    its own and those of every package module it imports, transitively (parsed, not imported)."""
    root = PACKAGE_DIR if package_dir is None else package_dir
    files = {(rel := p.relative_to(root).as_posix()): p for p in root.rglob("*.py") if "__pycache__" not in p.parts}
    by_name = {_module_name(rel): rel for rel in files}
    direct: dict[str, set[str]] = {}
    for rel, path in files.items():
        name = _module_name(rel)
        direct[name] = {m for m in _imports(name, ast.parse(path.read_text()), rel.endswith("__init__.py"))
                        if m in by_name}
    out: dict[str, list[str]] = {}
    for name in by_name:
        seen, stack = {name}, [name]
        while stack:
            for dep in direct[stack.pop()] - seen:
                seen.add(dep)
                stack.append(dep)
        out[name] = sorted(by_name[m] for m in seen)
    return out


def module_stamps(modules: list[str]) -> dict[str, dict]:
    """``{"files": [...], "stamp": ...}`` per module of ``modules``: the files of :func:`module_closures` and
    ``jit.py`` (the loader's own rules: an edit there makes every module stale), and
    :func:`~mvsim_core.jit.files_stamp` over them now."""
    from mvsim_core import jit

    closures, stamps = module_closures(), jit.file_stamps()
    files = {m: sorted({*closures.get(m, []), "jit.py"}) for m in modules}
    return {m: {"files": files[m], "stamp": jit.files_stamp(stamps, files[m])} for m in sorted(modules)}


def stale_modules(meta: dict | None = None) -> list[str] | None:
    """The kernel modules whose built code is out of date (a file of theirs changed since the build), sorted; None
    when the build recorded no per-module stamps (or there is no build)."""
    from mvsim_core import jit

    meta = jit.aot_meta() if meta is None else meta
    return None if meta is None else jit.stale_modules(meta, jit.file_stamps())


def build(verbose: bool = True) -> dict:
    """Compile every kernel with one recorded signature (up to array layouts); returns the metadata written to
    ``_aot.json``."""
    from numba.pycc import CC

    from mvsim_core import jit

    jit.use_jit()  # the kernels as numba dispatchers, whatever is built already
    import llvmlite.binding as llvm

    t0 = time.perf_counter()
    sigs = read_signatures()
    for key in sigs:
        importlib.import_module(key.split(":", 1)[0])
    cc = CC(EXTENSION)
    cc.output_dir = tempfile.mkdtemp(prefix="mvsim-aot-")
    cc.target_cpu = llvm.get_host_cpu_name()
    exports: dict[str, dict] = {}
    skipped: dict[str, str] = {}
    modules: set[str] = set()  # those of the exported functions and those that declared them
    for key, entries in sorted(sigs.items()):
        kernel = jit.REGISTRY.get(key)
        if kernel is None:
            skipped[key] = "no such kernel"
            continue
        merged = entries[0] if len(entries) == 1 else merge_layouts(entries)
        if merged is None:
            skipped[key] = f"{len(entries)} signatures"
            continue
        if kernel.options.get("parallel"):
            skipped[key] = "parallel"
            continue
        if key in jit.NEVER_BUILT:
            skipped[key] = "declared built=False"
            continue
        try:
            sig = jit.spec_type(merged["returns"])(*[jit.spec_type(a) for a in merged["args"]])
        except ValueError as err:
            skipped[key] = str(err)
            continue
        cc.export(jit.export_name(key), sig)(kernel.py_func)
        exports[key] = {"args": merged["args"], "returns": merged["returns"]}
        modules.update((key.split(":", 1)[0], kernel.declared_in))
    cc.compile()
    built = Path(cc.output_dir)
    for f in built.iterdir():
        shutil.move(str(f), PACKAGE_DIR / f.name)
    built.rmdir()
    meta = {"stamp": jit._STAMP, "signatures": _signatures_hash(), "cpu": cc.target_cpu, "exports": exports,
            "skipped": skipped, "modules": module_stamps(sorted(modules))}
    jit.AOT_META.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    if verbose:
        print(f"mvsim_core._aot: {len(exports)} kernels compiled for {cc.target_cpu} in "
              f"{time.perf_counter() - t0:.0f} s; {len(skipped)} left to the JIT")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mvsim_core.aot", description=__doc__.splitlines()[0])
    ap.add_argument("--if-stale", action="store_true", help="build only when sources or signatures changed")
    ap.add_argument("--record", nargs="*", type=Path, default=[], help="MVSIM_JIT_RECORD files to merge first")
    a = ap.parse_args(argv)
    if a.record:
        print(f"{SIGNATURES.name}: {merge_records(a.record)} signatures")
    if a.if_stale and not is_stale():
        print("mvsim_core._aot: up to date")
        return 0
    if a.if_stale and (stale := stale_modules()):
        print(f"mvsim_core._aot: built code out of date in {', '.join(stale)} (their kernels run on the JIT "
              "until this build)")
    build()
    return 0


if __name__ == "__main__":
    sys.exit(main())

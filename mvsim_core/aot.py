"""Build the package's kernels ahead of time into one extension module, :mod:`mvsim_core._aot`.

``make setup`` runs ``python -m mvsim_core.aot``; afterwards a process that steps a world neither imports numba nor
loads a cached kernel (see :mod:`mvsim_core.jit`). The signatures to compile come from
``mvsim_core/aot_signatures.jsonl`` (one JSON line per signature, as ``MVSIM_JIT_RECORD`` writes them); a kernel with
several signatures there (other than in array layouts, which one any-layout export serves), or a
parallel one, stays with the JIT. The module is compiled for this machine's CPU and
the package's current sources: beside it ``_aot.json`` records the sources' stamp, and a process whose sources differ
ignores the module (the JIT serves it) until the next build.

    python -m mvsim_core.aot [--if-stale] [--record FILE ...]

``--if-stale`` builds only when the sources or the signature list changed since the last build. ``--record`` merges
signature files written by ``MVSIM_JIT_RECORD`` into the list first (deduplicated, sorted).
"""

from __future__ import annotations

import argparse
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
        try:
            sig = jit.spec_type(merged["returns"])(*[jit.spec_type(a) for a in merged["args"]])
        except ValueError as err:
            skipped[key] = str(err)
            continue
        cc.export(jit.export_name(key), sig)(kernel.py_func)
        exports[key] = {"args": merged["args"], "returns": merged["returns"]}
    cc.compile()
    built = Path(cc.output_dir)
    for f in built.iterdir():
        shutil.move(str(f), PACKAGE_DIR / f.name)
    built.rmdir()
    meta = {"stamp": jit._STAMP, "signatures": _signatures_hash(), "cpu": cc.target_cpu, "exports": exports,
            "skipped": skipped}
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
    build()
    return 0


if __name__ == "__main__":
    sys.exit(main())

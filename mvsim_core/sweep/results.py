"""A sweep's results: one Parquet file, one row per run, written as the runs finish and safe to kill at any moment.

A Parquet file cannot be appended to (its footer is written last), so rows reach the disk in two steps:

1. Every finished run is written at once as its own small Parquet file in ``OUT.parts/`` (``RUNID-ATTEMPT.parquet``),
   first under a temporary name and then renamed: a part is whole or absent.
2. Every few seconds (:data:`COMPACT_EVERY_S`) and at the end, all rows are written to ``OUT`` (again a temporary file
   renamed over it) and the parts now in it are deleted.

So ``OUT`` is always a whole, readable file, at most a few seconds behind; killing the sweep loses only the runs in
flight, and the next sweep over the same ``OUT`` reads ``OUT`` and the parts left over (:func:`read_results` does the
same while a sweep runs). A row that is both in ``OUT`` and in a part (a kill between the rename and the deletions)
counts once: per run id, the row of the highest ``attempt`` (then the latest ``finished_at``) wins.

Every row carries ``spec_hash`` and ``mvsim_version``; a results file holds the runs of one spec only
(:class:`ResultStore` refuses another's). Columns: see :mod:`mvsim_core.sweep.execute`, plus ``attempt`` (1 for a
run's first try, 2 for the re-run of a failed one, ...), ``spec_hash`` and ``mvsim_version``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from mvsim_core.errors import MvsimError

COMPACT_EVERY_S = 5.0
"""Wall seconds between rewrites of the results file while a sweep runs."""
LEAD = ("run_id", "status", "error", "seed")
TAIL = ("final_x", "final_y", "final_yaw", "sim_time", "load_s", "sim_s", "wall_s", "cpu_s", "attempt",
        "started_at", "finished_at", "worker", "mcap", "spec_hash", "mvsim_version")
TEXT = ("run_id", "status", "error", "worker", "mcap", "spec_hash", "mvsim_version")
"""Columns always typed as text (even when every value is null)."""
METADATA_KEY = b"mvsim_sweep.spec_hash"


def parts_dir(out: Path) -> Path:
    """The folder of the parts of ``out`` (``OUT.parts``)."""
    return out.with_name(out.name + ".parts")


def _newer(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether row ``a`` replaces row ``b`` of the same run (higher attempt, then later finish)."""
    ka = (a.get("attempt") or 0, a.get("finished_at") or 0)
    kb = (b.get("attempt") or 0, b.get("finished_at") or 0)
    try:
        return ka >= kb
    except TypeError:  # a missing finish time against a real one
        return ka[0] >= kb[0]


def _merge(rows: dict[str, dict[str, Any]], new: Iterable[dict[str, Any]]) -> None:
    for r in new:
        rid = r.get("run_id")
        if isinstance(rid, str) and (rid not in rows or _newer(r, rows[rid])):
            rows[rid] = r


def _read_rows(out: Path) -> tuple[dict[str, dict[str, Any]], list[Path]]:
    """Rows of ``out`` and of its parts (deduplicated), and the parts read. A part deleted while reading (a sweep
    compacting meanwhile) starts the read again."""
    for _ in range(20):
        parts = sorted(parts_dir(out).glob("*.parquet"))
        rows: dict[str, dict[str, Any]] = {}
        try:
            if out.exists():
                _merge(rows, pq.read_table(out).to_pylist())
            for p in parts:
                _merge(rows, pq.read_table(p).to_pylist())
        except FileNotFoundError:
            time.sleep(0.05)
            continue
        except (OSError, pa.ArrowException) as e:
            raise MvsimError(f"cannot read the results {out}: {e}; move it away to start the sweep again") from None
        return rows, parts
    raise MvsimError(f"the results {out} keep changing while read; is another sweep writing them?")


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        for k in r:
            seen.setdefault(k, None)
    middle = [k for k in seen if k not in LEAD and k not in TAIL]
    params = [k for k in middle if k.startswith(("var.", "include["))]
    rest = [k for k in middle if k not in params]
    return [k for k in LEAD if k in seen] + params + rest + [k for k in TAIL if k in seen]


def _array(name: str, values: list[Any]) -> pa.Array:
    if name in TEXT:
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed kinds (a custom metric giving numbers and text): as text
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def rows_table(rows: list[dict[str, Any]]) -> pa.Table:
    """The rows as one table: every column any row has (null where a row lacks it), in a fixed order (run id,
    status, error, seed; parameters; metrics; timings and provenance)."""
    cols = _columns(rows)
    table = pa.table({c: _array(c, [r.get(c) for r in rows]) for c in cols})
    hashes = {r.get("spec_hash") for r in rows} - {None}
    if len(hashes) == 1:
        table = table.replace_schema_metadata({METADATA_KEY: str(hashes.pop()).encode()})
    return table


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` to ``path`` whole or not at all (a temporary file beside it, then renamed)."""
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(rows_table(rows), tmp)
    os.replace(tmp, path)


def read_results(out: str | Path) -> pa.Table:
    """The results of ``out`` as a table, including the runs of a sweep still going (its parts); one row per run id.
    An absent file gives an empty table."""
    rows, _ = _read_rows(Path(out))
    return rows_table(sorted(rows.values(), key=lambda r: str(r.get("finished_at") or "")))


class ResultStore:
    """The results of one sweep as it runs (see the module docstring).

    Args:
        out: the results file (``.parquet``); its folder is made.
        spec_hash: the sweep's spec hash; rows of another spec in ``out`` are refused.
        version: the software version written in every row.

    Raises:
        MvsimError: ``out`` holds the results of another spec, or cannot be read.
    """

    def __init__(self, out: str | Path, spec_hash: str, version: str) -> None:
        self.out = Path(out)
        self.parts = parts_dir(self.out)
        self.spec_hash, self.version = spec_hash, version
        self.out.parent.mkdir(parents=True, exist_ok=True)
        for tmp in [*self.out.parent.glob(f".{self.out.name}.tmp"), *self.parts.glob(".*.tmp")]:
            tmp.unlink(missing_ok=True)  # a write cut short by a kill
        self.rows, self._pending = _read_rows(self.out)
        other = {r.get("spec_hash") for r in self.rows.values()} - {spec_hash}
        if other:
            theirs = sorted(map(str, other))[0]
            raise MvsimError(f"{self.out} holds the results of another sweep spec (spec hash {theirs}; this spec's "
                             f"is {spec_hash}): the world file or what decides the runs changed. Write "
                             f"this sweep to another --out, or delete {self.out} (and {self.parts}) to start again")
        self._last_compact = time.monotonic()
        if self._pending:
            self.compact()  # what a killed sweep left in parts goes into the file now

    def done(self) -> set[str]:
        """Ids of the runs recorded as ok (a re-run skips them)."""
        return {rid for rid, r in self.rows.items() if r.get("status") == "ok"}

    def attempts(self, run_id: str) -> int:
        """How many times run ``run_id`` was tried and recorded (0: never)."""
        r = self.rows.get(run_id)
        return int(r.get("attempt") or 1) if r is not None else 0

    def add(self, row: dict[str, Any]) -> None:
        """Record a finished run (``attempt``, ``spec_hash`` and ``mvsim_version`` added): written to a part at once,
        to the results file at the next compaction."""
        row = dict(row)
        row["attempt"] = self.attempts(row["run_id"]) + 1
        row["spec_hash"], row["mvsim_version"] = self.spec_hash, self.version
        self.parts.mkdir(parents=True, exist_ok=True)
        part = self.parts / f"{row['run_id']}-{row['attempt']}.parquet"
        _write(part, [row])
        self._pending.append(part)
        self.rows[row["run_id"]] = row
        if time.monotonic() - self._last_compact >= COMPACT_EVERY_S:
            self.compact()

    def compact(self) -> None:
        """Write every row to the results file and delete the parts now in it."""
        rows = sorted(self.rows.values(), key=lambda r: str(r.get("finished_at") or ""))
        if rows:
            _write(self.out, rows)
        for p in self._pending:
            p.unlink(missing_ok=True)
        self._pending = []
        try:
            self.parts.rmdir()
        except OSError:  # not there, or holds something of someone else's
            pass
        self._last_compact = time.monotonic()

    def close(self) -> None:
        """Compact one last time."""
        self.compact()

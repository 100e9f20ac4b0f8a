"""The results file: rows on disk as soon as a run ends, one readable Parquet file, resume, one spec per file."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mvsim_core.errors import MvsimError
from mvsim_core.sweep import results
from mvsim_core.sweep.results import ResultStore, parts_dir, read_results

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def row(rid: str, status: str = "ok", k: int = 0, **extra) -> dict:
    r = {"run_id": rid, "status": status, "error": None if status == "ok" else "ValueError: no", "seed": k,
         "var.mu": 0.1 * k, "final_pose_error": 1.0 / (k + 1), "final_x": 1.0, "wall_s": 0.5,
         "finished_at": T0 + timedelta(seconds=k), "mcap": None}
    r.update(extra)
    return r


def test_rows_reach_the_disk_at_once_and_the_file_every_few_seconds(tmp_path, monkeypatch):
    out = tmp_path / "r.parquet"
    store = ResultStore(out, "h1", "9.9")
    store.add(row("a", k=0))
    store.add(row("b", "failed", k=1))
    assert not out.exists()  # not compacted yet (COMPACT_EVERY_S)
    assert sorted(p.name for p in parts_dir(out).iterdir()) == ["a-1.parquet", "b-1.parquet"]
    t = read_results(out)  # a reader sees the parts of a sweep still going
    assert t.column("run_id").to_pylist() == ["a", "b"]
    monkeypatch.setattr(results, "COMPACT_EVERY_S", 0.0)
    store.add(row("c", k=2))
    assert out.exists() and not parts_dir(out).exists()
    t = pq.read_table(out)
    assert t.num_rows == 3
    assert t.column_names == ["run_id", "status", "error", "seed", "var.mu", "final_pose_error", "final_x", "wall_s",
                              "attempt", "finished_at", "mcap", "spec_hash", "mvsim_version"]
    assert t.schema.field("error").type == pa.string() and t.schema.field("mcap").type == pa.string()
    assert t.column("attempt").to_pylist() == [1, 1, 1]
    assert set(t.column("spec_hash").to_pylist()) == {"h1"} and set(t.column("mvsim_version").to_pylist()) == {"9.9"}
    assert t.schema.metadata[b"mvsim_sweep.spec_hash"] == b"h1"
    assert t.column("final_pose_error").to_pylist() == [1.0, 0.5, pytest.approx(1 / 3)]


def test_resume_skips_ok_runs_and_retries_failed_ones(tmp_path):
    out = tmp_path / "r.parquet"
    store = ResultStore(out, "h1", "9.9")
    for k, status in enumerate(["ok", "failed", "timeout", "ok"]):
        store.add(row(f"r{k}", status, k))
    store.close()
    again = ResultStore(out, "h1", "9.9")
    assert again.done() == {"r0", "r3"}
    assert [again.attempts(f"r{k}") for k in range(5)] == [1, 1, 1, 1, 0]
    again.add(row("r1", "ok", 1, finished_at=T0 + timedelta(hours=1)))
    again.close()
    t = read_results(out)
    by_id = {r["run_id"]: r for r in t.to_pylist()}
    assert len(by_id) == 4 and by_id["r1"]["status"] == "ok" and by_id["r1"]["attempt"] == 2


def test_a_kill_leaves_readable_files_and_no_duplicates(tmp_path):
    out = tmp_path / "r.parquet"
    store = ResultStore(out, "h1", "9.9")
    store.add(row("a", k=0))
    store.close()
    store.add(row("b", k=1))  # then killed: b only in a part
    # ... between writing the file and deleting the parts: a's part is back beside the file that holds it
    results._write(parts_dir(out) / "a-1.parquet", [{**row("a", k=0), "attempt": 1, "spec_hash": "h1"}])
    (parts_dir(out) / ".c-1.parquet.tmp").write_bytes(b"PAR1 half a file")  # a write cut short
    (tmp_path / ".r.parquet.tmp").write_bytes(b"PAR1 half a file")
    again = ResultStore(out, "h1", "9.9")  # compacts what it finds: a once, b, no half files
    assert sorted(again.rows) == ["a", "b"]
    assert not (tmp_path / ".r.parquet.tmp").exists() and not parts_dir(out).exists()
    assert sorted(pq.read_table(out).column("run_id").to_pylist()) == ["a", "b"]


def test_another_spec_is_refused(tmp_path):
    out = tmp_path / "r.parquet"
    store = ResultStore(out, "h1", "9.9")
    store.add(row("a"))
    store.close()
    with pytest.raises(MvsimError) as e:
        ResultStore(out, "h2", "9.9")
    assert str(e.value).startswith(f"{out} holds the results of another sweep spec (spec hash h1; this spec's is h2)")
    assert "Write this sweep to another --out, or delete" in str(e.value)


def test_columns_of_some_rows_only_and_mixed_kinds(tmp_path):
    out = tmp_path / "r.parquet"
    store = ResultStore(out, "h1", "9.9")
    store.add({**row("a"), "score.x": 1.5, "label": 3})
    store.add({**row("b", "failed"), "label": "three"})
    store.close()
    t = pq.read_table(out)
    assert t.column("score.x").to_pylist() == [1.5, None]
    assert t.schema.field("label").type == pa.string() and t.column("label").to_pylist() == ["3", "three"]
    assert math.isclose(t.column("var.mu").to_pylist()[0], 0.0)


def test_absent_results_read_as_empty(tmp_path):
    assert read_results(tmp_path / "none.parquet").num_rows == 0

"""file_problem answers for every path a world file can name, even those the operating system refuses to look up."""

from __future__ import annotations

from pathlib import Path

from mvsim_core.io.file_check import file_problem, shown_path


def test_file_problem(tmp_path: Path) -> None:
    (tmp_path / "map.png").write_bytes(b"x")
    assert file_problem(tmp_path / "map.png") is None
    assert file_problem(tmp_path / "none.png") == "not found"
    assert file_problem(tmp_path) == "is not a regular file"
    assert file_problem(Path("/dev/zero")) == "is not a regular file"
    assert file_problem(tmp_path / ("m" * 300)) == "cannot be used (File name too long)"  # Path.is_file() raised


def test_shown_path(tmp_path: Path) -> None:
    assert shown_path(tmp_path / "map.png") == f"{tmp_path}/map.png"
    long = Path("/m" * 150)
    assert shown_path(long) == "'" + str(long)[:200] + "…' (300 characters)"
    assert shown_path(Path("/a\nb")) == "'/a\\nb'"

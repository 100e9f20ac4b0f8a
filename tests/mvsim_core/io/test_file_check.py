"""file_problem answers for every path a world file can name, even those the operating system refuses to look up."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvsim_core.io.file_check import FileProblem, file_problem, read_bytes_limited, shown_path


def test_file_problem(tmp_path: Path) -> None:
    (tmp_path / "map.png").write_bytes(b"x")
    assert file_problem(tmp_path / "map.png") is None
    assert file_problem(tmp_path / "none.png") == "not found"
    assert file_problem(tmp_path) == "is a directory"
    assert file_problem(Path("/dev/zero")) == "is not a regular file (a device, fifo or socket)"
    assert file_problem(tmp_path / "map.png" / "x") == "not found"  # a parent that is a file
    (tmp_path / "big.bin").write_bytes(b"y" * 100)
    assert file_problem(tmp_path / "big.bin", max_bytes=99) == "is too large (100 bytes, more than the limit of 99)"
    assert file_problem(tmp_path / "big.bin", max_bytes=100) is None


def test_read_bytes_limited_never_reads_forever(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"abc")
    assert read_bytes_limited(tmp_path / "a.txt", 3) == b"abc"
    with pytest.raises(FileProblem) as ei:
        read_bytes_limited(tmp_path / "a.txt", 2)
    assert ei.value.problem == "is too large (3 bytes, more than the limit of 2)"
    with pytest.raises(FileProblem) as ei:
        read_bytes_limited(Path("/dev/zero"), 2**20)
    assert str(ei.value) == "/dev/zero is not a regular file (a device, fifo or socket)"
    assert file_problem(tmp_path / ("m" * 300)) == "cannot be used (File name too long)"  # Path.is_file() raised


def test_shown_path(tmp_path: Path) -> None:
    assert shown_path(tmp_path / "map.png") == f"{tmp_path}/map.png"
    long = Path("/m" * 150)
    assert shown_path(long) == "'" + str(long)[:200] + "…' (300 characters)"
    assert shown_path(Path("/a\nb")) == "'/a\\nb'"

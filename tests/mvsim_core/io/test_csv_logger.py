"""The vehicles' CSV loggers (mvsim_core.io.csv_logger): the count of recording loggers a world's step looks at."""

from __future__ import annotations

from mvsim_core.io.csv_logger import RecordingCount, VehicleLogger


def test_the_count_follows_start_stop_new_session_and_clear(tmp_path):
    count = RecordingCount()
    a = VehicleLogger("a", 2, str(tmp_path), count)
    b = VehicleLogger("b", 1, str(tmp_path), count)
    assert count.n == 0
    a.start()
    a.start()  # already recording: counted once
    b.start()
    assert count.n == 2
    a.new_session()  # stops and starts again
    b.clear()  # the same
    assert count.n == 2 and a.recording and b.recording
    a.stop()
    a.stop()
    assert count.n == 1
    b.stop()
    assert count.n == 0
    a.clear()  # not recording: stays stopped
    assert count.n == 0 and not a.recording
    lone = VehicleLogger("c", 1, str(tmp_path))  # no count: records all the same
    lone.start()
    assert lone.recording and count.n == 0
    lone.stop()

"""Outcome classes of one fuzzed world, and how a failure is put in a bucket.

Good outcomes:

* ``ok`` — loaded, started and stepped with every vehicle, block, actor and sensor observation finite, and
  ``mvsim check`` exits 0;
* ``world_file_error`` — a :class:`~mvsim_core.errors.WorldFileError` whose message starts with ``file:line:``, and
  ``mvsim check`` exits 2 printing exactly that one line on stderr (no traceback).

Failures (any of these fails a campaign):

* ``uncaught`` — any other exception, while loading or running (bucket: stage, exception type, innermost
  ``mvsim_core`` frame);
* ``crash`` — the child died of a signal (segmentation fault, abort; bucket: signal and innermost frame of the
  faulthandler dump);
* ``hang`` — over the time limit (bucket: innermost frame of the stack dumped just before the limit);
* ``memory`` — ``MemoryError``, or a peak RSS over the memory limit;
* ``silent_nan`` — ran, but some state is not finite, or the timestep is outside the validated range;
* ``check_contract`` — ``mvsim check`` disagrees with the in-process outcome (wrong exit status, more than one
  line, a traceback);
* ``bad_error`` — a ``WorldFileError`` without ``file:line``.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

OK = "ok"
WORLD_FILE_ERROR = "world_file_error"
UNCAUGHT = "uncaught"
CRASH = "crash"
HANG = "hang"
MEMORY = "memory"
SILENT_NAN = "silent_nan"
CHECK_CONTRACT = "check_contract"
BAD_ERROR = "bad_error"

GOOD = (OK, WORLD_FILE_ERROR)
FAILURES = (UNCAUGHT, CRASH, HANG, MEMORY, SILENT_NAN, CHECK_CONTRACT, BAD_ERROR)
CLASSES = GOOD + FAILURES

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in | in )(?P<func>\S+)')


@dataclass
class Result:
    """What happened to one mutant.

    Attributes:
        outcome: one of :data:`CLASSES`.
        bucket: failures: what groups it with others of the same cause; ``world_file_error``: the message with
            numbers and quoted names blanked (for the coverage table); ``ok``: "".
        message: the error message (one line) or what is wrong.
        detail: traceback tail, faulthandler dump, or ``mvsim check`` output, when useful.
        stage: ``load``, ``start``, ``step``, ``state`` or ``check``: where it happened.
        steps: steps run; dt: the world's timestep (s); seconds: wall time of the child (s).
        max_rss_mb: the child's peak resident memory (MiB).
    """

    outcome: str
    bucket: str = ""
    message: str = ""
    detail: str = ""
    stage: str = ""
    steps: int = 0
    dt: float = 0.0
    seconds: float = 0.0
    max_rss_mb: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.outcome in FAILURES

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        return cls(**data)


def short_path(path: str) -> str:
    """``.../mvsim_core/x/y.py`` -> ``mvsim_core/x/y.py``; other paths keep their last two parts."""
    p = path.replace("\\", "/")
    i = p.rfind("/mvsim_core/")
    if i >= 0:
        return p[i + 1:]
    return "/".join(p.split("/")[-2:])


def innermost_frame(frames: list[tuple[str, str]]) -> str:
    """``file:function`` of the innermost frame inside ``mvsim_core`` (else the innermost one); ``frames`` go from
    outermost to innermost as (file, function)."""
    for f, func in reversed(frames):
        if "/mvsim_core/" in f.replace("\\", "/"):
            return f"{short_path(f)}:{func}"
    if frames:
        f, func = frames[-1]
        return f"{short_path(f)}:{func}"
    return "?"


def exception_bucket(stage: str, exc: BaseException) -> tuple[str, str]:
    """(bucket, traceback tail) of an unexpected exception."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = innermost_frame([(f.filename, f.name) for f in tb])
    tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
    return f"{stage}: {type(exc).__name__} @ {where}", tail[-3000:]


def dump_bucket(dump: str) -> str:
    """Innermost ``mvsim_core`` frame of a faulthandler dump (which lists the innermost call first)."""
    frames: list[tuple[str, str]] = []
    for block in dump.split("\n\n"):
        if "most recent call first" not in block and "Current thread" not in block and "Thread 0x" not in block:
            continue
        fs = [(m.group("file"), m.group("func")) for m in _FRAME.finditer(block)]
        frames = list(reversed(fs))
        if "Current thread" in block or frames:
            break
    return innermost_frame(frames)


_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf|NaN|Infinity)\b")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|(?<![\w.])/\S+")


def message_bucket(message: str) -> str:
    """A WorldFileError message without its place, numbers and quoted names (groups the coverage table)."""
    m = re.match(r"^.*?:\d+: ", message)
    text = message[m.end():] if m else message
    text = _QUOTED.sub("…", text)
    text = _NUM.sub("#", text)
    return text[:90]

"""The fuzzer's seed corpus: the shipped worlds (``worlds/`` of the repository) and the upstream example worlds
(``../shared/worlds/`` beside the checkout), with the XML files each world includes, and the per-mutant mirror a
mutant runs in.

A mutant never touches the originals: :func:`build_mirror` recreates the tree of the world's corpus root in a scratch
folder (real folders; every file a symbolic link to the original, except the files the mutant changes or adds, which
are written there), so relative includes and ``${MVSIM_CURRENT_FILE_DIRECTORY}`` resolve as in the original tree.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))

_INCLUDE = re.compile(r"<include\b[^>]*?\bfile\s*=\s*\"([^\"]+)\"", re.S)
_CURRENT_DIR = "${MVSIM_CURRENT_FILE_DIRECTORY}"
_TEXT_SUFFIXES = (".xml",)


@dataclass
class CorpusRoot:
    """One folder of worlds.

    Attributes:
        name: short name used in mutant ids and mirror paths (``worlds``, ``upstream``).
        path: the folder (absolute).
        files: every file under it, relative POSIX paths, sorted.
        text: the bytes of every XML file under it (what the mutator may change), by relative path.
    """

    name: str
    path: Path
    files: tuple[str, ...]
    text: dict[str, bytes] = field(repr=False)

    @classmethod
    def scan(cls, name: str, path: Path) -> CorpusRoot:
        path = path.resolve()
        files = tuple(sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()))
        text = {f: (path / f).read_bytes() for f in files if f.endswith(_TEXT_SUFFIXES)}
        return cls(name, path, files, text)


@dataclass(frozen=True)
class SourceWorld:
    """A world file of the corpus and the XML files it includes (transitively; relative to its root)."""

    root: CorpusRoot
    rel: str
    includes: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.root.name}/{self.rel}"


def included_files(root: CorpusRoot, rel: str) -> tuple[str, ...]:
    """XML files of ``root`` that ``rel`` includes, directly or through other includes, in order of discovery.
    Includes whose path depends on variables other than ``${MVSIM_CURRENT_FILE_DIRECTORY}`` are skipped."""
    seen: list[str] = []
    todo = [rel]
    while todo:
        cur = todo.pop(0)
        here = PurePosixPath(cur).parent
        for m in _INCLUDE.finditer(root.text.get(cur, b"").decode("utf-8", "replace")):
            target = m.group(1).replace(_CURRENT_DIR + "/", "")
            if "$" in target or target.startswith("/"):
                continue
            norm = os.path.normpath((here / target).as_posix())
            if norm in root.text and norm not in seen and norm != rel:
                seen.append(norm)
                todo.append(norm)
    return tuple(seen)


@dataclass
class Corpus:
    """Every source world of the fuzzer, in a fixed order (mutant k picks from this list)."""

    roots: list[CorpusRoot]
    worlds: list[SourceWorld]

    @classmethod
    def discover(cls, repo: Path = REPO, shared: Path | None = SHARED, *, include_shared: bool = True) -> Corpus:
        """The shipped worlds (``repo/worlds``) and, when ``shared`` exists and ``include_shared``, the upstream ones
        (``shared/worlds``)."""
        roots = [CorpusRoot.scan("worlds", repo / "worlds")]
        if include_shared and shared is not None and (shared / "worlds").is_dir():
            roots.append(CorpusRoot.scan("upstream", shared / "worlds"))
        worlds = [SourceWorld(r, f, included_files(r, f)) for r in roots for f in r.files if f.endswith(".world.xml")]
        if not worlds:
            raise RuntimeError(f"no *.world.xml under {[str(r.path) for r in roots]}")
        return cls(roots, worlds)

    def world(self, world_id: str) -> SourceWorld:
        for w in self.worlds:
            if w.id == world_id:
                return w
        raise KeyError(f"no source world '{world_id}'; known: {', '.join(w.id for w in self.worlds)}")


def build_mirror(root: CorpusRoot, dest: Path, files: dict[str, bytes]) -> None:
    """Recreate ``root`` under ``dest``: folders as real folders, ``files`` (relative path -> bytes; changed or new)
    written there, every other file a symbolic link to its original."""
    dest.mkdir(parents=True, exist_ok=True)
    made: set[str] = set()
    for rel in root.files:
        if rel in files:
            continue
        parent = PurePosixPath(rel).parent.as_posix()
        if parent not in made:
            (dest / parent).mkdir(parents=True, exist_ok=True)
            made.add(parent)
        os.symlink(root.path / rel, dest / rel)
    for rel, data in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

"""A fuzzing campaign: make mutants ``0 .. N-1`` of a seed (or the ones asked for), run each in a forked child, sort
the outcomes into classes and buckets, save every failing mutant, and write the summary (``summary.json`` and
``summary.txt``). Also runs given world files as they are (``--files``), which the regression tests use.

::

    python -m tests.fuzz [--n N] [--seed S] [--jobs J] [--timeout T] [--memory-mb M] [--out DIR]
    python -m tests.fuzz --seed S --only K [--keep]      # one mutant again: what it is and what it does
    python -m tests.fuzz --files A.world.xml B.world.xml  # these files, unchanged

Exit status: 0 when no failure class has a member, 1 otherwise, 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .child import MAX_STEPS, SIM_TIME
from .corpus import REPO, Corpus, build_mirror
from .forkserver import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, ForkServer, Job, Limits, prepare_environment, warm_up
from .mutator import Mutant, make_mutant
from .outcome import CLASSES, FAILURES, WORLD_FILE_ERROR, Result

DEFAULT_OUT = REPO / ".fuzz-out"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description="World-file fuzzer (issue 14).")
    p.add_argument("--n", type=int, default=1000, help="mutants to run: 0 .. N-1 (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    p.add_argument("--only", type=str, default=None, metavar="K[,K...]",
                   help="run only these mutant indices (reproduce them), e.g. --only 17 or --only 3,9")
    p.add_argument("--start", type=int, default=0, help="first mutant index (default 0)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="children at a time (default: CPUs)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="wall seconds per mutant (default 30)")
    p.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, help="MiB per mutant (default 2048)")
    p.add_argument("--sim-time", type=float, default=SIM_TIME,
                   help=f"simulated seconds each world runs (default {SIM_TIME:g})")
    p.add_argument("--max-steps", type=int, default=MAX_STEPS, help=f"at most this many steps (default {MAX_STEPS})")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default .fuzz-out)")
    p.add_argument("--keep", action="store_true", help="keep every mutant's work folder and print its path")
    p.add_argument("--no-shared", action="store_true", help="only the shipped worlds, not ../shared/worlds")
    p.add_argument("--files", nargs="+", type=Path, default=None,
                   help="run these world files unchanged instead of mutants; results in OUT/results.json")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    args = p.parse_args(argv)
    if args.n < 0 or args.jobs < 1 or args.timeout <= 0 or args.memory_mb < 64 or args.sim_time <= 0 \
            or args.max_steps < 1:
        p.error("--n >= 0, --jobs >= 1, --timeout > 0, --memory-mb >= 64, --sim-time > 0 and --max-steps >= 1 are "
                "needed")
    if args.only is not None:
        try:
            args.indices = [int(k) for k in args.only.split(",") if k.strip()]
        except ValueError:
            p.error(f"--only takes mutant indices such as 17 or 3,9 (got {args.only})")
    else:
        args.indices = list(range(args.start, args.start + args.n))
    return args


class Progress:
    """A one-line progress report on stderr, at most twice a second."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.quiet = total, quiet
        self.start = time.monotonic()
        self.last = 0.0
        self.counts: Counter[str] = Counter()

    def add(self, res: Result) -> None:
        self.counts[res.outcome] += 1
        now = time.monotonic()
        if self.quiet or (now - self.last < 0.5 and sum(self.counts.values()) < self.total):
            return
        self.last = now
        done = sum(self.counts.values())
        rate = done / max(1e-9, now - self.start)
        fails = sum(self.counts[c] for c in FAILURES)
        print(f"\r[{done}/{self.total}] {rate:.1f}/s ok {self.counts['ok']} wfe {self.counts[WORLD_FILE_ERROR]} "
              f"failures {fails}   ", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if not self.quiet:
            print(file=sys.stderr, flush=True)


def _save_failure(out: Path, m: Mutant, res: Result, workdir: Path) -> Path:
    """Save a failing mutant's changed files (as relative paths in its corpus root), what it is, and the child's
    log, under ``out/failures/<class>/<id>/``."""
    dest = out / "failures" / res.outcome / m.id
    if dest.exists():
        shutil.rmtree(dest)
    for rel, data in m.files.items():
        p = dest / "files" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    log = workdir / "child.log"
    if log.exists():
        shutil.copyfile(log, dest / "child.log")
    (dest / "mutant.json").write_text(json.dumps(_mutant_record(m, res), indent=2))
    return dest


def _repro(m: Mutant) -> str:
    return f"python -m tests.fuzz --seed {m.seed} --only {m.index} --keep"


def _mutant_record(m: Mutant, res: Result) -> dict[str, Any]:
    return {"id": m.id, "seed": m.seed, "index": m.index, "source": m.source.id, "ops": m.ops, "repro": _repro(m),
            "result": res.to_json()}


def run_mutants(args: argparse.Namespace) -> int:
    prepare_environment()
    scratch = Path(tempfile.mkdtemp(prefix="mvsim-fuzz-"))
    os.environ["MVSIM_CACHE_DIR"] = str(scratch / "asset-cache")  # an empty cache: the same assets on every machine
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "failures", ignore_errors=True)
    corpus = Corpus.discover(include_shared=not args.no_shared)
    t0 = time.monotonic()
    problems = warm_up([w.root.path / w.rel for w in corpus.worlds])
    warm_s = time.monotonic() - t0
    for p in problems:
        print(f"warm-up: {p}", file=sys.stderr)
    indices = args.indices
    mutants: dict[int, Mutant] = {}

    def jobs() -> Iterator[Job]:
        for k in indices:
            m = make_mutant(corpus, args.seed, k)
            mutants[k] = m
            workdir = scratch / f"m{k}"
            build_mirror(m.source.root, workdir / "tree", m.files)
            yield Job(k, str(workdir / "tree" / m.world_rel), workdir)

    server = ForkServer(Limits(args.timeout, args.memory_mb), args.jobs, sim_time=args.sim_time,
                        max_steps=args.max_steps)
    results: dict[int, Result] = {}
    log = (out / "results.jsonl").open("w")
    progress = Progress(len(indices), args.quiet or args.only is not None)
    t1 = time.monotonic()
    interrupted = False
    try:
        for job, res in server.run(jobs()):
            m = mutants[job.key]
            results[job.key] = res
            progress.add(res)
            log.write(json.dumps({"id": m.id, "source": m.source.id, "outcome": res.outcome, "bucket": res.bucket,
                                  "stage": res.stage, "steps": res.steps, "seconds": round(res.seconds, 3),
                                  "max_rss_mb": round(res.max_rss_mb)}) + "\n")
            if res.failed:
                _save_failure(out, m, res, job.workdir)
            if args.only is not None:
                _print_one(m, res, job, args.keep)
            if not args.keep:
                shutil.rmtree(job.workdir, ignore_errors=True)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        log.close()
        progress.close()
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    wall = time.monotonic() - t1
    summary = make_summary(args, corpus, mutants, results, wall, warm_s, interrupted)
    write_summary(out, summary)
    if args.only is None:
        print(format_summary(summary))
    else:
        print(f"summary: {out / 'summary.txt'}")
    return 1 if any(summary["classes"][c] for c in FAILURES) or interrupted else 0


def _print_one(m: Mutant, res: Result, job: Job, kept: bool) -> None:
    print(f"mutant {m.id} of {m.source.id}")
    for op in m.ops:
        print(f"  {op}")
    print(f"outcome: {res.outcome}  [{res.bucket}]")
    if res.message:
        print(f"message: {res.message}")
    if res.detail and res.failed:
        print(res.detail.rstrip())
    print(f"stage {res.stage}, {res.steps} steps of {res.dt:g} s, {res.seconds:.2f} s, peak RSS {res.max_rss_mb:.0f} "
          f"MiB")
    print(f"world file: {job.path}" + ("" if kept else " (removed afterwards; --keep keeps it)"))


def make_summary(args: argparse.Namespace, corpus: Corpus, mutants: dict[int, Mutant], results: dict[int, Result],
                 wall: float, warm_s: float, interrupted: bool) -> dict[str, Any]:
    classes = Counter(r.outcome for r in results.values())
    buckets: dict[tuple[str, str], list[int]] = defaultdict(list)
    wfe: Counter[str] = Counter()
    per_source: dict[str, Counter[str]] = defaultdict(Counter)
    faults: dict[str, list[int]] = defaultdict(list)
    for k in sorted(results):
        r = results[k]
        per_source[mutants[k].source.id][r.outcome] += 1
        if "faults" in r.extra:
            faults[r.extra.get("fault_bucket", "?")].append(k)
        if r.failed:
            buckets[(r.outcome, r.bucket)].append(k)
        elif r.outcome == WORLD_FILE_ERROR:
            wfe[r.bucket] += 1
    failure_rows = []
    for (cls, bucket), ks in sorted(buckets.items(), key=lambda kv: (FAILURES.index(kv[0][0]), -len(kv[1]))):
        ex = mutants[ks[0]]
        r = results[ks[0]]
        failure_rows.append({"class": cls, "bucket": bucket, "count": len(ks), "example": ex.id, "source": ex.source.id,
                             "ops": ex.ops, "message": r.message[:500], "detail": r.detail[-1500:],
                             "repro": _repro(ex), "mutants": ks[:50]})
    n = len(results)
    return {
        "seed": args.seed, "mutants": n, "asked": len(args.indices), "interrupted": interrupted,
        "jobs": args.jobs, "timeout_s": args.timeout, "memory_mb": args.memory_mb, "sim_time_s": args.sim_time,
        "max_steps": args.max_steps,
        "wall_s": round(wall, 2), "warmup_s": round(warm_s, 2),
        "mutants_per_s": round(n / wall, 2) if wall > 0 else 0.0,
        "classes": {c: classes.get(c, 0) for c in CLASSES},
        "failures": failure_rows,
        "truncated": [{"id": mutants[k].id, "source": mutants[k].source.id, "outcome": results[k].outcome,
                       "what": results[k].extra["truncated"], "repro": _repro(mutants[k])}
                      for k in sorted(results) if "truncated" in results[k].extra],
        "faults": [{"bucket": b, "count": len(ks), "example": mutants[ks[0]].id, "source": mutants[ks[0]].source.id,
                    "outcome": results[ks[0]].outcome, "what": results[ks[0]].extra.get("fault", ""),
                    "repro": _repro(mutants[ks[0]]), "mutants": ks[:50]}
                   for b, ks in sorted(faults.items(), key=lambda kv: -len(kv[1]))],
        "world_file_errors": [{"message": b, "count": c} for b, c in wfe.most_common()],
        "sources": {s: dict(c) for s, c in sorted(per_source.items())},
        "corpus": [w.id for w in corpus.worlds],
    }


def format_summary(s: dict[str, Any]) -> str:
    lines = [f"fuzz campaign: seed {s['seed']}, {s['mutants']} mutants"
             + (f" of {s['asked']} (interrupted)" if s["interrupted"] else "")
             + f", {s['jobs']} job(s), limits {s['timeout_s']:g} s / {s['memory_mb']} MiB, each run "
             f"min({s['sim_time_s']:g} s, {s['max_steps']} steps)",
             f"throughput: {s['mutants_per_s']:.2f} mutants/s ({s['wall_s']:.1f} s, warm-up {s['warmup_s']:.1f} s)",
             "", f"{'class':<18}{'count':>7}"]
    for c, n in s["classes"].items():
        lines.append(f"{c:<18}{n:>7}" + ("   <- failure" if n and c in FAILURES else ""))
    if s["failures"]:
        lines += ["", "failures by bucket (count, bucket, example; reproduce with the command shown):"]
        for row in s["failures"]:
            lines.append(f"{row['count']:>5}  {row['class']}: {row['bucket']}")
            lines.append(f"       e.g. {row['example']} ({row['source']}): {row['message'][:200]}")
            lines.append(f"       {row['repro']}")
    if s["truncated"]:
        lines += ["", f"slow worlds: {len(s['truncated'])} run(s) stopped stepping at 40 % of the time limit "
                      f"(not failures), e.g.:"]
        for row in s["truncated"][:5]:
            lines.append(f"       {row['id']} ({row['source']}): {row['what']}; {row['repro']}")
    if s.get("faults"):
        n = sum(row["count"] for row in s["faults"])
        lines += ["", f"physics faults: {n} run(s) had objects blow up and reset (World.faults; not failures: the "
                      f"world went on with finite state), by last fault:"]
        for row in s["faults"][:10]:
            lines.append(f"{row['count']:>5}  {row['bucket']}")
            lines.append(f"       e.g. {row['example']} ({row['source']}): {row['what'][:200]}")
            lines.append(f"       {row['repro']}")
    if s["world_file_errors"]:
        lines += ["", "world file errors by message (top 25):"]
        for row in s["world_file_errors"][:25]:
            lines.append(f"{row['count']:>5}  {row['message']}")
    return "\n".join(lines)


def write_summary(out: Path, summary: dict[str, Any]) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "summary.txt").write_text(format_summary(summary) + "\n")


def run_files(args: argparse.Namespace) -> int:
    """Run the given world files unchanged; results (path -> Result) in ``OUT/results.json`` and on stdout."""
    prepare_environment()
    scratch = Path(tempfile.mkdtemp(prefix="mvsim-fuzz-files-"))
    os.environ["MVSIM_CACHE_DIR"] = str(scratch / "asset-cache")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    corpus = Corpus.discover(include_shared=not args.no_shared)  # compiles the kernels once, not in every child
    warm_up([w.root.path / w.rel for w in corpus.worlds])
    files = [p.resolve() for p in args.files]
    jobs = [Job(str(p), str(p), scratch / f"f{i}") for i, p in enumerate(files)]
    results: dict[str, Result] = {}
    try:
        server = ForkServer(Limits(args.timeout, args.memory_mb), args.jobs, sim_time=args.sim_time,
                            max_steps=args.max_steps)
        for job, res in server.run(jobs):
            results[job.key] = res
            print(f"{res.outcome:<17} {job.key}: {res.bucket or res.message}"[:300], flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    (out / "results.json").write_text(json.dumps({k: r.to_json() for k, r in sorted(results.items())}, indent=2))
    return 1 if any(r.failed for r in results.values()) else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.files:
        return run_files(args)
    return run_mutants(args)

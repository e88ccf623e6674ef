"""The end-of-turn test set's seal (``bench/end_of_turn.py``): test is scored for one chosen policy, and every
scoring is written down.

**The rule.** Thresholds and rules are chosen on ``dev``. A run that touches ``test`` (``--split test`` or
``both``) runs one policy only, one that is in the code: it refuses a grid (``--only`` with more than one name)
and ad-hoc policies (``--policy``); without ``--only`` it runs ``current``. It scores committed code only: on a
tree whose tracked files have changes (``git status --porcelain --untracked-files=no``, the log itself aside) it
refuses to start, so the commit each line names is the code that was scored and can be checked out again (a dev
run may score a dirty tree). Every such run, offline or live, appends one line to ``docs/eot-test-log.md`` (there
is no way to turn that off), so how often test was looked at, and what it said each time, stays visible: a
policy picked after many looks at test is fitted to test.

It changes when the rule for the test set, or the log's line, changes.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.turns.report import PolicyResult, summarize, summary_rows

ROOT = Path(__file__).resolve().parents[2]
LOG_PATH = "docs/eot-test-log.md"
"""The log, from the repository's root (as ``git status`` names it)."""
LOG = ROOT / LOG_PATH
DEFAULT_TEST_POLICY = "current"
SHOWN = 5
"""Changed files named in the refusal (then a count of the rest)."""

HEADER = """# End-of-turn test-set log

One line per scoring of the end-of-turn **test** set (`bench/end_of_turn.py --split test` or `--split both`,
offline or `--live`), appended by the tool itself: every look at test is on record. Thresholds and rules are
chosen on **dev** only; test is only ever scored, for one policy that is in the code (the tool refuses a grid
or an ad-hoc `--policy` on test). Do not edit or delete lines: a policy chosen after many looks at test is
fitted to test, and this log is how a reader can tell.

Columns: `commit` is `git rev-parse --short HEAD`, `-dirty` when tracked files had changes (the tool now refuses
to score test on such a tree, so `-dirty` means they changed during the run; older `-dirty` lines were scored on
uncommitted code and cannot be reproduced); `mode`: `offline`
(audio time, ASR latency as in `asr`) or `live` (a real server over a socket, in real time); `load`: other
callers talking at the same time (`--load`); `n`: test utterances scored; `cut-offs`: false cut-offs (reply,
or end of turn offline, before the caller's audible end); `thinking`: false cut-offs among the thinking
utterances; `breath splits`: breath utterances made into more than one turn; `p50`/`p95`: latency, ms, from
the audible end to the end of turn (offline) or to the first reply audio at the caller (live); `WER`: of the
transcript the turn was answered with. `smoke` in `note`: a run cut short with `--limit` (a few utterances: a
check that the tool works, not a result to compare).

| date (UTC) | commit | mode | policy | asr | load | n | cut-offs | thinking | breath splits | p50 | p95 | WER | note |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
"""


def touches_test(split: str) -> bool:
    return split in ("test", "both")


def seal(args: argparse.Namespace, error: Callable[[str], Any], uncommitted: Callable[[], list[str]]) -> None:
    """Refuse a grid or an ad-hoc policy on the test set, and a tree with uncommitted changes (``uncommitted()``:
    the tracked files changed; ``OSError`` when git cannot tell): ``error`` is ``parser.error``. Without
    ``--only``, a run that touches test runs ``current`` (``args.only`` is set to it)."""
    if not touches_test(args.split):
        return
    where = f"--split {args.split} scores the test set"
    try:
        changed = uncommitted()
    except OSError as exc:
        error(f"{where}, on committed code only, and git cannot tell whether the tree has changes ({exc})")
        return
    if changed:
        named = ", ".join(changed[:SHOWN]) + (f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else "")
        error(
            f"{where}, on committed code only: {len(changed)} tracked file(s) have uncommitted changes ({named}); "
            "commit them first, so that the log's commit is the code scored (or score --split dev, which may run "
            "on a dirty tree)"
        )
        return
    if args.policy:
        added = ", ".join(name for name, _ in args.policy)
        error(f"{where}: --policy ({added}) is not allowed there; tune on --split dev, put the policy in the code")
    if args.only is not None:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        if len(names) > 1:
            error(
                f"{where} for one chosen policy only; --only names {len(names)} ({', '.join(names)}): run the grid "
                "on --split dev"
            )
    else:
        args.only = DEFAULT_TEST_POLICY


def changed_paths(porcelain: str, ignore: str = LOG_PATH) -> list[str]:
    """The paths of ``git status --porcelain`` output (``XY path``, ``XY old -> new`` for a rename: the new one),
    less ``ignore`` (the log, which each run appends to: its own lines do not change what is scored)."""
    paths = [line[3:].split(" -> ")[-1].strip('"') for line in porcelain.splitlines() if len(line) > 3]
    return [path for path in paths if path != ignore]


def uncommitted(root: Path = ROOT) -> list[str]:
    """The tracked files of the work tree at ``root`` with changes, staged or not (untracked files are not looked
    at), the log aside. Raises ``OSError`` when git cannot tell (no git, not a work tree)."""
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            env=os.environ | {"GIT_OPTIONAL_LOCKS": "0"},  # a look only: git must not refresh the index meanwhile
        )
    except subprocess.SubprocessError as exc:
        raise OSError(f"git status: {exc}") from exc
    if status.returncode != 0:
        raise OSError(f"git status: {status.stderr.strip() or f'exit status {status.returncode}'}")
    return changed_paths(status.stdout)


def git_commit(root: Path = ROOT) -> str:
    """``git rev-parse --short HEAD``, with ``-dirty`` when tracked files (the log aside) have changes; ``unknown``
    without git."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        dirty = bool(uncommitted(root))
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = head.stdout.strip() or "unknown"
    return commit + ("-dirty" if dirty else "")


def _pct(count: int | None, total: int | None) -> str:
    return f"{100 * count / total:.1f}% ({count}/{total})" if count is not None and total else "-"


def _num(value: float | int | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def log_line(
    row: dict[str, Any],
    *,
    mode: str,
    commit: str,
    asr: str,
    load: int,
    breath: dict[str, Any] | None,
    note: str = "",
    when: datetime.datetime | None = None,
) -> str:
    """One line of the log (a Markdown table row) from a test ``row`` of ``report.summary_rows`` and the
    breath category's ``summary`` (its ``splits`` and ``utterances``); ``note``: ``smoke`` for a run cut short."""
    when = when or datetime.datetime.now(datetime.UTC)
    lat = row["latency_ms"]
    wer = row["word_error_rate"]
    cells = [
        when.strftime("%Y-%m-%d %H:%M"),
        commit,
        mode,
        row["policy"],
        asr,
        str(load),
        str(row["utterances"]),
        _pct(row["cut_offs"], row["utterances"]),
        _pct(row["thinking_cut_offs"], row["thinking"]),
        f"{breath['splits']}/{breath['utterances']}" if breath else "-",
        _num(lat["p50"]),
        _num(lat["p95"]),
        "-" if wer is None else f"{100 * wer:.1f}%",
        note,
    ]
    return "| " + " | ".join(cells) + " |"


def append(lines: list[str], path: Path = LOG) -> None:
    """Append ``lines`` to the log, made with its header the first time (one write: other runs may append too)."""
    if not lines:
        return
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADER, encoding="utf-8")
    with path.open("a", encoding="utf-8") as log:
        log.write("".join(line + "\n" for line in lines))


def test_log_lines(results: Sequence[PolicyResult], *, mode: str, asr: str, load: int, note: str) -> list[str]:
    """The log's lines for the test set of each of ``results``."""
    commit = git_commit()
    lines = []
    for result in results:
        test = result.sets.get("test")
        if test is None:
            continue
        row = next(r for r in summary_rows([result]) if r["split"] == "test")
        breath = summarize(test.outcomes)["categories"].get("breath")
        lines.append(log_line(row, mode=mode, commit=commit, asr=asr, load=load, breath=breath, note=note))
    return lines


def run_note(args: argparse.Namespace) -> str:
    """The log's note: ``smoke`` for a run cut short, and what else narrowed the sets."""
    notes = ["smoke"] if args.limit is not None else []
    notes += [f"engine {args.engine}"] if args.engine else []
    notes += [f"renditions {args.renditions}"] if args.renditions != 3 else []
    notes += [f"languages {args.languages}"] if args.languages != "en" else []
    return ", ".join(notes)

"""The end-of-turn test set is scored on committed code only (bench/turns/seal.py): a run that touches test refuses a
tree whose tracked files have changes, saying to commit first; a dev run does not. The rule is checked on given
lists of changes; what counts as a change, on a temporary git repository."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import pytest

from bench.turns import seal as the_seal
from bench.turns.command import build_parser


def sealed(changes: list[str] | OSError, *argv: str) -> argparse.Namespace:
    args = build_parser().parse_args(list(argv))

    def error(message: str) -> None:
        raise SystemExit(message)

    def tree() -> list[str]:
        if isinstance(changes, OSError):
            raise changes
        return changes

    the_seal.seal(args, error, tree)
    return args


@pytest.mark.parametrize("split", ["test", "both"])
@pytest.mark.parametrize("live", [[], ["--live"]], ids=["offline", "live"])
def test_the_test_set_is_not_scored_on_uncommitted_changes(split: str, live: list[str]) -> None:
    with pytest.raises(SystemExit, match=r"committed code only: 1 tracked file\(s\) .*agent/core/turn_end\.py.*commit"):
        sealed(["agent/core/turn_end.py"], *live, "--split", split)
    many = [f"bench/f{n}.py" for n in range(8)]
    with pytest.raises(SystemExit, match=r"8 tracked file\(s\) .*bench/f4\.py and 3 more"):
        sealed(many, *live, "--split", split)
    with pytest.raises(SystemExit, match="git cannot tell"):
        sealed(OSError("not a git repository"), *live, "--split", split)


def test_the_default_run_touches_test_and_is_refused_on_a_dirty_tree_too() -> None:
    with pytest.raises(SystemExit, match="--split both scores the test set, on committed code only"):
        sealed(["agent/core/turn_end.py"])


def test_dev_runs_on_a_dirty_tree_and_test_on_a_clean_one() -> None:
    assert sealed(["agent/core/turn_end.py"], "--split", "dev", "--only", "current,max1200").only == "current,max1200"
    assert sealed(OSError("no git"), "--live", "--split", "dev").only is None
    assert sealed([], "--split", "test").only == "current"


def test_porcelain_lines_name_the_changed_paths_less_the_log() -> None:
    porcelain = f" M agent/wiring.py\nM  bench/turns/seal.py\nR  old.py -> new.py\n M {the_seal.LOG_PATH}\nD  gone.py\n"
    assert the_seal.changed_paths(porcelain) == ["agent/wiring.py", "bench/turns/seal.py", "new.py", "gone.py"]
    assert the_seal.changed_paths("") == []


def _git(root: Path, *argv: str) -> None:
    env = os.environ | {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *argv],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )


def test_a_tracked_change_staged_or_not_makes_the_tree_dirty_an_untracked_file_or_the_log_does_not(
    tmp_path: Path,
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "policy.py").write_text("WAIT_MS = 400\n")
    (tmp_path / the_seal.LOG_PATH).write_text("| a line |\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "one")
    assert the_seal.uncommitted(tmp_path) == []
    assert not the_seal.git_commit(tmp_path).endswith("-dirty")
    (tmp_path / "scratch.py").write_text("untracked\n")
    with (tmp_path / the_seal.LOG_PATH).open("a") as log:
        log.write("| the run's own line |\n")
    assert the_seal.uncommitted(tmp_path) == []
    (tmp_path / "policy.py").write_text("WAIT_MS = 300\n")
    assert the_seal.uncommitted(tmp_path) == ["policy.py"]
    assert the_seal.git_commit(tmp_path).endswith("-dirty")
    _git(tmp_path, "add", "policy.py")
    assert the_seal.uncommitted(tmp_path) == ["policy.py"]
    _git(tmp_path, "commit", "-q", "-m", "two")
    assert the_seal.uncommitted(tmp_path) == []


def test_a_folder_outside_git_cannot_tell(tmp_path: Path) -> None:
    env_root = tmp_path / "not-a-repo"
    env_root.mkdir()
    with pytest.raises(OSError, match="git status"):
        the_seal.uncommitted(env_root)

"""The human sets' split (bench/turns/human_split.py): no speaker of dev in test, every excerpt assigned, the
assignment stable, and the test rows sealed behind bench/turns/seal.py's rule."""

from __future__ import annotations

import argparse
import logging

import pytest

from bench.turns.human_labels import parse_rttm
from bench.turns.human_split import (
    AMI_SPLIT,
    SOURCE_SPLIT,
    SealedSplit,
    SplitError,
    Unsealed,
    check_open,
    check_split,
    unseal_test,
)

RTTM = """\
SPEAKER one 1 0.0 1.0 <NA> <NA> ALICE <NA> <NA>
SPEAKER one 1 1.5 1.0 <NA> <NA> BOB <NA> <NA>
SPEAKER two 1 0.0 1.0 <NA> <NA> CAROL <NA> <NA>
SPEAKER three 1 0.0 1.0 <NA> <NA> BÓB <NA> <NA>
"""


def test_a_speaker_in_dev_never_appears_in_test() -> None:
    segments = parse_rttm(RTTM)
    speakers = check_split(segments, {"one": "dev", "three": "dev", "two": "test"})
    assert speakers == {"dev": {"ALICE", "BOB"}, "test": {"CAROL"}}
    with pytest.raises(SplitError, match=r"BOB in dev \(one\) and test \(three\)"):
        check_split(segments, {"one": "dev", "two": "dev", "three": "test"})  # BÓB is BOB


def test_every_excerpt_needs_a_split() -> None:
    with pytest.raises(SplitError, match="without a split: two"):
        check_split(parse_rttm(RTTM), {"one": "dev", "three": "dev"})


def test_the_split_is_data_with_both_sides_and_each_one_recording_source_on_one_side() -> None:
    assert set(AMI_SPLIT.values()) == {"dev", "test"}
    assert len(AMI_SPLIT) == 14  # pyannote's 10 training, 2 development and 2 test excerpts
    assert {AMI_SPLIT["dev00"], AMI_SPLIT["dev01"]} == {"dev"}
    assert {AMI_SPLIT["tst00"], AMI_SPLIT["tst01"]} == {"test"}
    # Excerpts that share a speaker (FEE083: trn06 and trn09; MEO069: trn00-03; FEE087: trn07-08) share a side.
    for group in (("trn06", "trn09"), ("trn00", "trn01", "trn02", "trn03"), ("trn07", "trn08")):
        assert len({AMI_SPLIT[name] for name in group}) == 1
    assert SOURCE_SPLIT == {"jfk": "dev", "voxconverse": "test"}


def test_the_test_rows_are_refused_without_the_seal_and_the_refusal_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    check_open("dev", None)
    check_open("test", Unsealed("abc1234"))
    with caplog.at_level(logging.ERROR), pytest.raises(SealedSplit, match="sealed"):
        check_open("test", None)
    assert "refused" in caplog.text and "seal" in caplog.text


def _args(split: str, only: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(split=split, policy=[], only=only)


def _error(message: str) -> None:
    raise SystemExit(message)


def test_unsealing_runs_the_seal_and_names_the_commit_scored() -> None:
    args = _args("test")
    unsealed = unseal_test(args, _error, uncommitted=lambda: [], commit=lambda: "abc1234")
    assert unsealed == Unsealed("abc1234")
    assert args.only == "current"  # the seal's own default: one policy in the code


def test_unsealing_is_refused_on_uncommitted_code_for_a_grid_and_for_a_dev_run() -> None:
    with pytest.raises(SystemExit, match="committed code only"):
        unseal_test(_args("test"), _error, uncommitted=lambda: ["agent/core/x.py"], commit=lambda: "x")
    with pytest.raises(SystemExit, match="one chosen policy"):
        unseal_test(_args("both", only="a,b"), _error, uncommitted=lambda: [], commit=lambda: "x")
    with pytest.raises(SystemExit, match="does not score the test split"):
        unseal_test(_args("dev"), _error, uncommitted=lambda: [], commit=lambda: "x")
    messages: list[str] = []
    with pytest.raises(SealedSplit):  # an error callback that returns does not open the seal
        unseal_test(_args("test"), messages.append, uncommitted=lambda: ["x.py"], commit=lambda: "x")
    assert messages

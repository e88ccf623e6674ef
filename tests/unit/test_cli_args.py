"""Command-line parsing of ``python -m clients.cli``."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.cli import parse_args
from clients.protocol_client import DEFAULT_URL


def test_defaults() -> None:
    args = parse_args(["--wav", "in.wav"])
    assert args.url == DEFAULT_URL == "ws://127.0.0.1:8765/ws"
    assert args.wav == Path("in.wav")
    assert args.voice is None
    assert args.language is None  # not sent: the server detects the language
    assert args.out is None
    assert args.json is False
    assert args.rate == 16000
    assert args.output_rate is None
    assert args.timeout == 60.0
    assert args.trailing_silence == 1.0


def test_all_options() -> None:
    args = parse_args(
        [
            "--url", "ws://h:1/ws", "--wav", "a.flac", "--voice", "alice", "--out", "o.wav", "--json",
            "--rate", "48000", "--output-rate", "16000", "--timeout", "5", "--trailing-silence", "2.5",
        ]
    )  # fmt: skip
    assert (args.url, args.wav, args.voice, args.out, args.json) == (
        "ws://h:1/ws", Path("a.flac"), "alice", Path("o.wav"), True,
    )  # fmt: skip
    assert (args.rate, args.output_rate, args.timeout, args.trailing_silence) == (48000, 16000, 5.0, 2.5)


@pytest.mark.parametrize(
    "argv",
    [
        [],  # --wav is required
        ["--wav", "a.wav", "--rate", "44100"],
        ["--wav", "a.wav", "--output-rate", "11025"],
        ["--wav", "a.wav", "--timeout", "0"],
        ["--wav", "a.wav", "--timeout", "soon"],
        ["--wav", "a.wav", "--language", "xx"],
        ["--wav", "a.wav", "--language", ""],
        ["--wav", "a.wav", "--language", "nl-NL"],  # not one of the ten
        ["--wav", "a.wav", "--language", "de", "--twilio"],  # the phone paths take no language
        ["--wav", "a.wav", "--language", "de", "--realtime"],
    ],
)
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(["ws", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for needle in ("--url", "--wav", "--voice", "--language", "--out", "--json", "--rate", "--timeout", "exit status"):
        assert needle in out
    assert "CODE|auto" in out and "en, zh, ja, ko, de, fr, ru, pt, es, it" in " ".join(out.split())


@pytest.mark.parametrize(
    ("given", "sent"),
    [("de", "de"), ("DE", "de"), ("de-DE", "de"), ("pt_BR", "pt"), ("zh", "zh"), ("auto", "auto"), ("AUTO", "auto")],
)
def test_language_is_a_code_of_the_ten_or_auto(given: str, sent: str) -> None:
    assert parse_args(["--wav", "a.wav", "--language", given]).language == sent
    assert parse_args(["--mic", "--language", given]).language == sent


def test_a_bad_language_names_the_ones_it_takes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--wav", "a.wav", "--language", "klingon"])
    err = capsys.readouterr().err
    assert "--language" in err and "auto" in err and "de" in err

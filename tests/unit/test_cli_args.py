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


TOOLS_FILE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "tools.json"


def test_tools_and_a_tool_command() -> None:
    args = parse_args(["ws", "--wav", "a.wav"])
    assert (args.tools, args.tool_command, args.tool_timeout) == (None, None, 8.0)
    args = parse_args(
        ["ws", "--wav", "a.wav", "--tools", str(TOOLS_FILE), "--tool-command", "python tool.py --x 'a b'",
         "--tool-timeout", "2.5"]
    )  # fmt: skip
    assert [tool["name"] for tool in args.tools] == ["get_weather", "lookup_order"]
    assert (args.tool_command, args.tool_timeout) == ("python tool.py --x 'a b'", 2.5)


def test_a_tools_file_may_be_an_object_with_a_tools_list(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text('{"instructions": "Be brief.", "tools": [{"name": "hang_up"}]}')
    assert parse_args(["ws", "--wav", "a.wav", "--tools", str(path)]).tools == [{"name": "hang_up"}]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read"),
        ("[{", "is not JSON"),
        ('{"name": "get_time"}', "JSON list of tool objects"),
        ('["get_time"]', "JSON list of tool objects"),
    ],
)
def test_a_bad_tools_file_exits_2_saying_why(
    content: str | None, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tools.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as exc:
        parse_args(["ws", "--wav", "a.wav", "--tools", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--tools" in err and says in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--tool-command", "python tool.py"], "give --tools FILE too"),
        (["--tools", str(TOOLS_FILE), "--tool-command", ""], "the command is empty"),
        (["--tools", str(TOOLS_FILE), "--tool-command", "python 'tool.py"], "No closing quotation"),
        (["--tools", str(TOOLS_FILE), "--tool-timeout", "0"], "must be positive"),
    ],
)
def test_bad_tool_options_exit_2(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(["ws", "--wav", "a.wav", *argv])
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_help_explains_the_tool_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["ws", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for needle in ("--tools FILE", "--tool-command CMD", "--tool-timeout S", "stdin", "stdout", "stderr"):
        assert needle in out
    assert '{"name", "call_id", "arguments"}' in out and "docs/examples/tool_command.py" in out

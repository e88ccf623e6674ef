"""``python -m clients.cli --telnyx | --vonage``: the phone gateways' options, their defaults and refusals."""

from __future__ import annotations

import pytest

from clients.cli import parse_args
from clients.cli import phone as phone_cli


def test_gateway_flags_pick_their_path_and_rate() -> None:
    telnyx = parse_args(["--telnyx", "--wav", "q.wav"])
    assert telnyx.url == "ws://127.0.0.1:8765/telnyx" and telnyx.encoding == "PCMU"
    assert phone_cli.provider(telnyx) == "telnyx" and phone_cli.call_rate(telnyx) == 8000
    l16 = parse_args(["--telnyx", "--encoding", "L16", "--wav", "q.wav"])
    assert phone_cli.call_rate(l16) == 16000
    l16_8k = parse_args(["--telnyx", "--encoding", "L16", "--phone-rate", "8000", "--wav", "q.wav"])
    assert phone_cli.call_rate(l16_8k) == 8000
    vonage = parse_args(["--vonage", "--wav", "q.wav"])
    assert vonage.url == "ws://127.0.0.1:8765/vonage" and phone_cli.call_rate(vonage) == 16000
    assert phone_cli.call_rate(parse_args(["--vonage", "--phone-rate", "8000", "--wav", "q.wav"])) == 8000
    explicit = parse_args(["--vonage", "--url", "wss://agent.example.com/vonage", "--wav", "q.wav"])
    assert explicit.url == "wss://agent.example.com/vonage"
    assert phone_cli.provider(parse_args(["--wav", "q.wav"])) is None


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--telnyx", "--vonage"], "choose one"),
        (["--twilio", "--telnyx"], "choose one"),
        (["--telnyx", "--phone-rate", "16000"], "--phone-rate"),  # G.711 is 8 kHz
        (["--phone-rate", "16000"], "--phone-rate"),
        (["--telnyx", "--encoding", "OPUS"], "invalid choice"),
        (["--vonage", "--phone-rate", "24000"], "invalid choice"),
        (["--telnyx", "--signature-secret", "s"], "--vonage"),
        (["--vonage", "--signature-secret", "s", "--authorization", "x"], "choose one"),
    ],
)
def test_bad_combinations_are_refused_with_a_reason(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        parse_args([*argv, "--wav", "q.wav"])
    assert info.value.code == 2
    assert says in capsys.readouterr().err

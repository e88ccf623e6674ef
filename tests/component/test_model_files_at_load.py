"""Every model file the install step hash-checks is checked again when it is loaded: a copy of the installed file
altered by one byte is refused with a ``ConfigError`` naming the file, the expected and the found sha256 (Smart Turn's
ONNX, the text end-of-turn graph and tokenizer, resemblyzer's weights, Whisper base's files), where the intact copy
loads. The installed files themselves are only read (make installs them: a missing one fails these tests).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
from pathlib import Path

import pytest

from agent.adapters import resemblyzer_similarity, smart_turn, smollm2_graph, whisper_base_install
from agent.adapters.faster_whisper_asr import FasterWhisperASR
from agent.adapters.resemblyzer_similarity import load_weights
from agent.adapters.smart_turn import SmartTurnModel
from agent.adapters.smollm2_text_turn import SmolLM2Model
from agent.config import AsrSettings
from agent.errors import ConfigError

pytestmark = pytest.mark.models


def alter(path: Path, append: bool = False) -> str:
    """Change one byte of ``path`` (the lowest bit of its middle byte; or one byte more at its end, for a text file
    that must still parse); returns the file's new sha256."""
    data = bytearray(path.read_bytes())
    if append:
        data += b" "
    else:
        data[len(data) // 2] ^= 1
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def refused(path: Path, found: str, expected: str) -> str:
    """What the ``ConfigError`` must say: the file, the sha256 it has, the one it should have."""
    return rf"{re.escape(str(path))}.*sha256 is {found}, expected {expected}"


def test_smart_turn_refuses_its_model_altered_by_one_byte(tmp_path: Path) -> None:
    copy = tmp_path / smart_turn.MODEL_FILE
    shutil.copyfile(smart_turn.default_model_path(), copy)
    SmartTurnModel(copy)  # the checked bytes, wherever they are, load
    found = alter(copy)
    with pytest.raises(ConfigError, match=refused(copy, found, smart_turn.MODEL_SHA256)):
        SmartTurnModel(copy)


@pytest.mark.parametrize("name", [smollm2_graph.MODEL_FILE, smollm2_graph.TOKENIZER_FILE])
def test_the_text_turn_model_refuses_its_graph_or_tokenizer_altered_by_one_byte(tmp_path: Path, name: str) -> None:
    copy = tmp_path / "smollm2"
    copy.mkdir()
    for file in (smollm2_graph.MODEL_FILE, smollm2_graph.TOKENIZER_FILE):
        shutil.copyfile(smollm2_graph.default_model_dir() / file, copy / file)
    SmolLM2Model(copy)
    graph = name == smollm2_graph.MODEL_FILE
    expected = smollm2_graph.GRAPH_SHA256 if graph else smollm2_graph.TOKENIZER_SHA256
    found = alter(copy / name, append=not graph)
    with pytest.raises(ConfigError, match=refused(copy / name, found, expected)):
        SmolLM2Model(copy)


def test_the_speaker_model_refuses_its_weights_altered_by_one_byte(tmp_path: Path) -> None:
    copy = tmp_path / resemblyzer_similarity.MODEL_FILE
    shutil.copyfile(resemblyzer_similarity.default_model_path(), copy)
    load_weights(copy)
    found = alter(copy)
    with pytest.raises(ConfigError, match=refused(copy, found, resemblyzer_similarity.MODEL_SHA256)):
        load_weights(copy)


@pytest.mark.parametrize("name", ["model.bin", "tokenizer.json"])
def test_whisper_base_refuses_a_file_altered_by_one_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # Another environment (sys.prefix) holding a copy of the installed model: AGENT_ASR__MODEL=base loads it from there.
    installed = whisper_base_install.default_model_dir()
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    copy = whisper_base_install.default_model_dir()
    shutil.copytree(installed, copy)
    expected = {**whisper_base_install.SIDE_FILES, "model.bin": whisper_base_install.MODEL_SHA256}[name]
    found = alter(copy / name, append=name.endswith(".json"))
    with pytest.raises(ConfigError, match=refused(copy / name, found, expected)):
        FasterWhisperASR.load(AsrSettings(model="base"))

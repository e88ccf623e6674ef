"""Model files held to their sha256 when loaded (agent/model_files.py): the refusal names the file, the sha256 it has,
the one it should have and the install step that puts it back. The adapters' own checks, on the installed models:
tests/component/test_model_files_at_load.py."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agent.errors import ConfigError
from agent.model_files import check_file, file_sha256


def test_a_file_altered_by_one_byte_is_refused_naming_it_and_both_sha256(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    data = bytes(range(256)) * 64
    path.write_bytes(data)
    expected = hashlib.sha256(data).hexdigest()
    assert file_sha256(path) == expected
    assert check_file("a model", path, expected, "make a-model") == path
    altered = bytearray(data)
    altered[len(data) // 2] ^= 1
    path.write_bytes(altered)
    found = hashlib.sha256(altered).hexdigest()
    with pytest.raises(ConfigError) as refused:
        check_file("a model", path, expected, "make a-model")
    message = str(refused.value)
    assert str(path) in message and f"sha256 is {found}" in message and f"expected {expected}" in message
    assert "make a-model" in message

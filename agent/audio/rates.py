"""The audio sample rates the wire protocols accept: shared by the settings and the codecs."""

from __future__ import annotations

SUPPORTED_INPUT_RATES: tuple[int, ...] = (8000, 16000, 24000, 48000)
SUPPORTED_OUTPUT_RATES: tuple[int, ...] = (8000, 16000, 22050, 24000, 48000)

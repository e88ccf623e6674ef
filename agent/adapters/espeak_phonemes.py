"""Piper's text → phonemes step without its memory leak.

``piper.espeakbridge.get_phonemes`` (piper-tts 1.8.0, the latest release) appends each clause's
``(phonemes, terminator, end_of_sentence)`` tuple to its result list without releasing its own reference, so
every clause leaks the tuple and its two strings: about 570 bytes per sentence spoken, 1.2 kB of resident
memory (measured: 20,000 calls, +11.3 MB traced, +24 MB RSS). A server that speaks all day grows without
bound (our 30-minute soak: most of a 7 MB/h slope).

``get_phonemes`` here does the same through the same espeak-ng, whose functions that extension module exports:
it calls ``espeak_TextToPhonemesWithTerminator`` clause by clause with ctypes and builds ordinary Python
objects. It is loaded with ``ctypes.PyDLL``, which keeps the GIL during each call, as the extension did:
espeak-ng is not thread-safe, and Piper runs on several model workers. ``install()`` puts it in place of the
extension's function (``piper.phonemize_espeak`` looks it up at every call). Checked against the original,
output for output, in ``tests/component/test_espeak_phonemes.py``.
"""

from __future__ import annotations

import ctypes
import threading

from piper import espeakbridge

CHARS_AUTO = 0
PHONEMES_IPA = 0x02
# espeak-ng's clause flags (translate.h): pause length in the low bits, intonation in bits 12-13, clause or
# sentence in bits 18-19. The six combinations Piper gives a punctuation mark:
_TYPE_CLAUSE = 0x40000
_TYPE_SENTENCE = 0x80000
_TERMINATORS = {
    40 | 0x0000 | _TYPE_SENTENCE: ".",
    40 | 0x2000 | _TYPE_SENTENCE: "?",
    45 | 0x3000 | _TYPE_SENTENCE: "!",
    20 | 0x1000 | _TYPE_CLAUSE: ",",
    30 | 0x0000 | _TYPE_CLAUSE: ":",
    30 | 0x1000 | _TYPE_CLAUSE: ";",
}

_lib = ctypes.PyDLL(espeakbridge.__file__)
_to_phonemes = _lib.espeak_TextToPhonemesWithTerminator
_to_phonemes.restype = ctypes.c_char_p
_to_phonemes.argtypes = [
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.c_int,
    ctypes.c_int,
    ctypes.POINTER(ctypes.c_int),
]
_installed = threading.Lock()
leaky = espeakbridge.get_phonemes
"""The extension's own function (for comparison in the tests)."""


def get_phonemes(text: str) -> list[tuple[str, str, bool]]:
    """``(IPA phonemes, terminator, ends a sentence)`` for each clause of ``text``, as ``espeakbridge`` gives."""
    if "\x00" in text:
        raise ValueError("embedded null character")  # as the extension's argument parsing says
    buffer = ctypes.create_string_buffer(text.encode("utf-8"))
    cursor = ctypes.c_void_p(ctypes.addressof(buffer))
    clauses: list[tuple[str, str, bool]] = []
    while cursor.value is not None:
        terminator = ctypes.c_int(0)
        phonemes = _to_phonemes(ctypes.byref(cursor), CHARS_AUTO, PHONEMES_IPA, ctypes.byref(terminator))
        flags = terminator.value & 0x000FFFFF
        clauses.append(
            (
                (phonemes or b"").decode("utf-8"),
                _TERMINATORS.get(flags, ""),
                flags & _TYPE_SENTENCE == _TYPE_SENTENCE,
            )
        )
    return clauses


def install() -> None:
    """Use ``get_phonemes`` for Piper's phonemization in this process (idempotent)."""
    with _installed:
        espeakbridge.get_phonemes = get_phonemes

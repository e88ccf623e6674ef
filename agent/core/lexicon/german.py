"""German words of the turn rules: ``GERMAN`` (``agent.core.lexicon``).

One reason to change: what German speakers say. Pure data.
"""

from __future__ import annotations

from agent.core.lexicon.schema import Lexicon
from agent.core.lexicon.shared import ABBREVIATIONS, HUMS, SPACED

# fmt: off
_DE_UNITS = ("ein", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun")
_DE_TENS = ("zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig")

GERMAN = Lexicon(
    fillers=frozenset(["äh", "ähm", "öh", "öhm", "ehm", "hm", "hmm", "also"]),
    # Not "das", "die", "der", "den", "dem", "ein", "eine", "einen" (pronouns: "Ich nehme den."), nor the
    # separable prefixes "an", "auf", "aus", "ab", "mit", "zu", "vor", "nach", "um" ("Hör auf.", "Ruf mich an.").
    trailing=frozenset(
        [
            "und", "oder", "aber", "denn", "sondern", "weil", "dass", "daß", "ob", "wenn", "falls", "obwohl",
            "obgleich", "bevor", "nachdem", "sodass", "sowie", "als", "beziehungsweise", "bzw", "sowohl", "weder",
            "des", "einem", "meinem", "deinem", "seinem", "ihrem", "unserem", "eurem", "mein", "dein", "unser", "euer",
            "dessen", "deren",
        ]
    ),
    open_words=frozenset(
        [
            "für", "von", "in", "im", "ins", "am", "zum", "zur", "vom", "beim", "gegen", "ohne", "zwischen", "wegen",
            "trotz", "seit", "bis", "außer", "hinter", "neben", "statt", "anstatt", "innerhalb", "außerhalb", "während",
            "bezüglich",
        ]
    ),
    backchannels=(
        "ja", "jaja", "ja ja", "jap", "jo", "genau", "genau genau", "mhm", "okay", "ok", "stimmt", "richtig", "klar",
        "alles klar", "na klar", "gut", "sehr gut", "super", "toll", "prima", "schön", "aha", "ach so", "achso", "ach",
        "verstehe", "ich verstehe", "verstanden", "natürlich", "sicher", "in ordnung", "passt", "echt", "wirklich",
        "eben", "jawohl", "logisch", "cool", "danke", "danke schön", "vielen dank", "gerne", "klingt gut", "ah", "oh",
    ),
    sounds=(*HUMS, "äh", "ähm", "öh", "öhm", "ehm", "uh", "ha", "hah"),
    stop_words=(
        "stopp", "stop", "halt", "warte", "warten sie", "wart mal", "warte mal", "moment", "moment mal", "einen moment",
        "momentchen", "augenblick", "einen augenblick", "sekunde", "eine sekunde", "nein", "nee", "nö", "hallo", "hey",
        "he", "entschuldigung", "entschuldigen sie", "entschuldige", "sorry", "verzeihung", "aber", "was", "wie bitte",
        "hör zu", "hören sie", "hör mal", "hör auf", "hören sie auf", "doch", "eigentlich", "nicht", "ruhe", "genug",
        "abbrechen", "achtung",
    ),
    subordinators=frozenset(
        [
            "wenn", "falls", "weil", "obwohl", "obgleich", "nachdem", "bevor", "ehe", "während", "seit", "seitdem",
            "sobald", "solange", "sofern", "ob", "indem", "dass",
        ]
    ),
    short_answers=frozenset(
        [
            "ja", "nein", "nee", "nö", "genau", "okay", "ok", "gut", "sehr", "danke", "bitte", "schön", "klar",
            "sicher", "natürlich", "gerne", "gern", "richtig", "stimmt", "super", "prima", "perfekt", "toll",
            "vielleicht", "jawohl", "doch", "nicht", "noch", "alles", "kein", "problem", "vielen", "dank", "in",
            "ordnung", "selbstverständlich", "eben", "logisch", "passt", "ebenfalls", "gleichfalls", "einverstanden",
            "auch",
        ]
    ),
    greetings=(
        "hallo", "guten tag", "guten morgen", "guten abend", "gute nacht", "servus", "moin", "grüß gott", "tschüss",
        "tschüs", "auf wiedersehen", "auf wiederhören", "bis bald", "bis später", "bis dann", "bis gleich", "hi", "hey",
        "ciao", "willkommen", "einen schönen tag noch",
    ),
    numbers=frozenset(
        [
            "null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zwölf",
            "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn",
            "hundert", "tausend", "million", "millionen", *_DE_TENS,
            *(unit + "und" + tens for unit in _DE_UNITS for tens in _DE_TENS),
            *(unit + "hundert" for unit in _DE_UNITS),
            *(unit + "tausend" for unit in _DE_UNITS),
        ]
    ),
    abbreviations=ABBREVIATIONS,
    writing=SPACED,
)
# fmt: on

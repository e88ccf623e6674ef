"""Italian words of the turn rules: ``ITALIAN`` (``agent.core.lexicon``).

One reason to change: what Italian speakers say. Pure data.
"""

from __future__ import annotations

from agent.core.lexicon.schema import Lexicon
from agent.core.lexicon.shared import ABBREVIATIONS, HUMS, SPACED

# fmt: off
_IT_UNITS = ("uno", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove")
_IT_TENS = ("venti", "trenta", "quaranta", "cinquanta", "sessanta", "settanta", "ottanta", "novanta")


def _it_compound(tens: str, unit: str) -> str:
    """Tens and a unit as one word ("ventitré"); the vowel of the tens drops before "uno" and "otto" ("ventuno")."""
    return (tens[:-1] if unit in ("uno", "otto") else tens) + ("tré" if unit == "tre" else unit)


ITALIAN = Lexicon(
    fillers=frozenset(["ehm", "eh", "ehh", "uhm", "mh", "mmh", "hmm", "beh", "cioè"]),
    # Not "perché", "però", "quando", "uno", "una", "mio" ...: they end sentences.
    trailing=frozenset(
        [
            "e", "ed", "o", "od", "oppure", "ma", "che", "se", "sebbene", "benché", "affinché", "poiché", "siccome",
            "mentre", "quindi", "il", "lo", "la", "i", "gli", "le", "l", "un", "del", "dello", "della", "dei", "degli",
            "delle", "dell", "al", "allo", "alla", "ai", "agli", "alle", "all", "nel", "nello", "nella", "nei", "negli",
            "nelle", "nell", "sul", "sullo", "sulla", "sui", "sugli", "sulle", "sull", "col", "coi", "quel", "quell",
            "cui",
        ]
    ),
    # Not "su", "dopo", "prima", "circa" ("Vieni su.", "A dopo.").
    open_words=frozenset(["di", "a", "da", "in", "con", "per", "tra", "verso", "senza", "presso", "tranne", "fino"]),
    backchannels=(
        "sì", "si", "sì sì", "certo", "certo certo", "esatto", "esattamente", "ok", "okay", "va bene", "d'accordo",
        "giusto", "capito", "ho capito", "perfetto", "benissimo", "bene", "mhm", "ecco", "ah ecco", "sicuro",
        "certamente", "chiaro", "infatti", "davvero", "vero", "già", "ottimo", "grazie", "grazie mille",
        "assolutamente", "appunto", "bravo", "ah", "oh", "eh",
    ),
    sounds=(*HUMS, "ehm", "eh", "uhm", "mh", "mmh", "uh"),
    stop_words=(
        "aspetta", "aspetti", "aspettate", "un attimo", "un attimino", "attimo", "un momento", "momento", "un secondo",
        "un minuto", "fermo", "ferma", "fermati", "si fermi", "fermi", "basta", "stop", "no", "no no", "scusa", "scusi",
        "scusate", "mi scusi", "senti", "senta", "sentite", "ehi", "ascolta", "ascolti", "pronto", "ma", "cosa", "come",
        "che cosa", "però", "zitto", "silenzio", "annulla", "in realtà", "veramente",
    ),
    subordinators=frozenset(
        [
            "se", "quando", "perché", "mentre", "sebbene", "benché", "affinché", "poiché", "siccome", "finché",
            "qualora", "nonostante", "dopo",
        ]
    ),
    short_answers=frozenset(
        [
            "sì", "si", "no", "ok", "okay", "certo", "grazie", "mille", "tante", "prego", "bene", "va", "benissimo",
            "molto", "perfetto", "esatto", "esattamente", "giusto", "d'accordo", "forse", "magari", "volentieri",
            "certamente", "sicuro", "assolutamente", "tutto", "ottimo", "niente", "di", "nulla", "figurati", "figuri",
            "non", "c'è", "problema", "ecco", "chiaro", "capito", "ho", "davvero", "a", "lei", "te",
        ]
    ),
    greetings=(
        "ciao", "salve", "buongiorno", "buonasera", "buonanotte", "arrivederci", "arrivederla", "a presto", "a dopo",
        "a domani", "ci vediamo", "pronto", "buona giornata", "buona serata", "benvenuto", "benvenuta",
    ),
    numbers=frozenset(
        [
            "zero", "uno", "una", "un", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove", "dieci",
            "undici", "dodici", "tredici", "quattordici", "quindici", "sedici", "diciassette",
            "diciotto", "diciannove", "cento", "mille", "mila", "milione", "milioni", *_IT_TENS,
            *(_it_compound(tens, unit) for tens in _IT_TENS for unit in _IT_UNITS),
            *(unit + "cento" for unit in _IT_UNITS[1:]),
        ]
    ),
    drawn=frozenset(["e"]),
    not_endings=("di che",),
    abbreviations=ABBREVIATIONS,
    writing=SPACED,
)
# fmt: on

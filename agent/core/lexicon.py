"""The words of each language that the end-of-turn and backchannel rules read (``agent.core.endpointing``).

One reason to change: the words of a language. ``LEXICONS`` holds one ``Lexicon`` per language of
``agent.languages.LANGUAGES``; ``lexicon(code)`` looks one up (``None`` for any other language: the rules then
use punctuation and sounds only, never another language's words). The rules themselves, and how text is cut
into words, live in ``agent.core.endpointing``.

Entries are written as people write them (lower case, accents, apostrophes and hyphens as usual); the rules
normalise both sides the same way. Several words may form one entry ("o sea", "hold on"). Chinese and Japanese
are written without spaces (``compact``): their entries are matched as strings of characters, at the end of
what was said (``whole_only`` entries only where they stand alone, after a pause mark or at the start) or at
its start. Whatever the language, an entry does not count where the text ends in one of ``not_endings``.

A word belongs in ``fillers``, ``trailing`` or ``open_words`` only if a sentence rarely ends with it: "das",
"le", "una", "その" end whole sentences ("I like that", "take it", "I want one") and are left out. Pure data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One language's words, by what they say about the speaker's turn."""

    fillers: frozenset[str]
    """Sounds and words of thinking ("um", "ähm", "えーと"; "also", "значит", "那个"): a transcript ending in one
    trails off. Those that are also ``sounds`` do so whatever the punctuation (Whisper writes "Is it, um?"); the
    words not before a question mark ("Что это значит?")."""
    trailing: frozenset[str]
    """Conjunctions, articles, determiners: a transcript ending in one is unfinished unless it is a question."""
    open_words: frozenset[str]
    """Prepositions: an unfinished clause, unless the recogniser heard a question ("Where are you from?")."""
    backchannels: tuple[str, ...]
    """Acknowledgements said over a speaker that do not take the floor ("ja", "genau", "oui", "はい")."""
    sounds: tuple[str, ...]
    """Sounds that are no words (hums, grunts, a laugh) and what the recogniser writes for a noise or a
    cough: never a bid for the floor, accepted with any non-empty list of acknowledgements."""
    stop_words: tuple[str, ...]
    """Interjections that stop a speaker ("wait", "warte", "attends", "待って"): a short sound whose transcript
    begins with one claims the floor."""
    subordinators: frozenset[str]
    """Words opening a clause that needs a main clause after it ("if", "wenn", "如果"): such a transcript with
    no comma yet is a fragment."""
    short_answers: frozenset[str]
    """Words (compact languages: phrases) of short answers that are whole turns ("Yes.", "Nein, danke.")."""
    greetings: tuple[str, ...] = ()
    """Greetings and goodbyes, whole turns too ("Guten Morgen.", "你好")."""
    numbers: frozenset[str] = frozenset()
    """Number words: a statement ending in one may be a number still being said ("Es ist vier")."""
    numeral_chars: str = ""
    """Characters that spell numbers (Chinese, Japanese, Sino-Korean): a run of two or more ends in a number."""
    endings: tuple[str, ...] = ()
    """Endings of a word that leave its clause open (Korean connective endings and particles: "-지만", "-를")."""
    drawn: frozenset[str] = frozenset()
    """Short words that are a thinking sound only when drawn out (Portuguese "éééé", Spanish "eeee")."""
    compact: bool = False
    """Written without spaces between words (Chinese, Japanese): entries are matched character by character."""
    whole_only: frozenset[str] = field(default_factory=frozenset)
    """Compact languages: entries that also end ordinary words or sentences ("我要那个" = "I want that one"), so
    count only when they stand alone."""
    not_endings: tuple[str, ...] = ()
    """Complete endings that end in a listed entry: whole words of a compact language ("暖和" = "warm" ends in
    "和" = "and"), set phrases of another ("non c'è di che" ends in "che")."""


def _words(phrases: Iterable[str]) -> frozenset[str]:
    """The words of ``phrases`` ("guten morgen" -> "guten", "morgen")."""
    return frozenset(word for phrase in phrases for word in phrase.split())


# --- English --------------------------------------------------------------------------------------------------

TRAILING_WORDS: frozenset[str] = frozenset(
    [
        "and",
        "or",
        "but",
        "so",
        "because",
        "um",
        "uh",
        "er",
        "erm",
        "hmm",
        "the",
        "a",
        "an",
        "my",
        "your",
        "our",
        "their",
        "his",
        "her",
        "its",
        "if",
        "when",
        "then",
        "that",
        "which",
        "while",
        "although",
        "though",
        "since",
        "unless",
        "until",
        "whether",
        "than",
    ]
)
"""Words after which an English speaker is rarely finished, whatever punctuation the recogniser added."""

OPEN_WORDS: frozenset[str] = frozenset(
    [
        "to",
        "of",
        "for",
        "with",
        "in",
        "on",
        "at",
        "from",
        "about",
        "into",
        "onto",
        "over",
        "under",
        "after",
        "before",
        "between",
        "as",
        "like",
    ]
)
"""Words that end an unfinished clause unless the recogniser heard a question ("Where are you from?")."""

FILLERS: frozenset[str] = frozenset(["um", "uh", "er", "erm", "hmm"])
"""Sounds of thinking: a transcript ending in one trails off whatever its punctuation."""

BACKCHANNELS: tuple[str, ...] = (
    "uh-huh", "uh huh", "mm-hmm", "mm hmm", "mhm", "hmm", "mm", "yeah", "yep", "yes", "yup", "okay", "ok", "right",
    "sure", "i see", "got it", "alright", "all right", "cool", "nice", "ah", "oh",
)  # fmt: skip
"""English acknowledgements: the default of the configured list (``agent.config``)."""

SOUNDS: tuple[str, ...] = (
    "uh", "um", "em", "er", "erm", "uh uh", "uh oh", "aha", "ah ha", "m hm", "m m", "a", "ha", "hah", "ha ha", "heh",
    "you", "thank you",
)  # fmt: skip
"""Sounds that are no words, so never a bid for the floor: what Whisper (tiny.en) writes for a real "uh-huh",
"mm-hmm" or "hmm", whole or cut short (bench/backchannels.py: "Uh", "Uh-uh", "Uh-oh.", "Aha", "M-", "Em",
"Um"). Accepted with any non-empty list of acknowledgements (configured lists name words, not these). Also a
laugh, and what Whisper makes of a cough, a noise burst or a short sound: "A..." or "Uh." for a cough on a
phone line; "You" and "Thank you.", its best-known hallucinations on sounds that are no speech (said over the
agent, "thank you" is no bid either)."""

STOP_WORDS: tuple[str, ...] = (
    "wait", "stop", "no", "nope", "hold on", "hold it", "hang on", "sorry", "excuse me", "pardon", "what", "hey",
    "hello", "listen", "actually", "but", "cancel", "enough", "quiet", "shut up", "one moment", "one second",
    "just a second", "just a moment",
)  # fmt: skip
"""Interjections that stop a speaker. A sound shorter than a barge-in needs takes the floor only when its
transcript begins with one of these: Whisper makes words of coughs and clicks ("On.", "Ha!"), and a short
real interruption is almost always one of them."""

SUBORDINATORS: frozenset[str] = frozenset(
    ["if", "when", "whenever", "after", "before", "because", "although", "though", "while", "since", "until", "unless"]
)
"""Words that open a clause which needs a main clause after it ("If it rains tomorrow, ..."): such a transcript
with no comma yet is a fragment, however long ("After the meeting.", Whisper's period on a breath)."""

SHORT_ANSWER_WORDS: frozenset[str] = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "yup",
        "no",
        "nope",
        "nah",
        "sure",
        "okay",
        "ok",
        "fine",
        "right",
        "correct",
        "exactly",
        "absolutely",
        "definitely",
        "maybe",
        "please",
        "thanks",
        "thank",
        "you",
        "bye",
        "goodbye",
        "hello",
        "hi",
        "hey",
        "great",
        "perfect",
        "cool",
        "alright",
        "not",
        "really",
        "of",
        "course",
        "there",
        "good",
        "morning",
        "afternoon",
        "evening",
        "night",
        "welcome",
    ]
)
"""Words of short answers and greetings that are whole turns ("Yes.", "No, thanks.", "Good morning."): never
fragments."""

# fmt: off
ENGLISH_NUMBERS: frozenset[str] = frozenset(
    [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty",
        "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million",
    ]
)

ENGLISH = Lexicon(
    fillers=FILLERS,
    trailing=TRAILING_WORDS,
    open_words=OPEN_WORDS,
    backchannels=BACKCHANNELS,
    sounds=SOUNDS,
    stop_words=STOP_WORDS,
    subordinators=SUBORDINATORS,
    short_answers=SHORT_ANSWER_WORDS,
    greetings=(
        "hello", "hi", "hey", "hi there", "hello there", "good morning", "good afternoon", "good evening", "good night",
        "bye", "goodbye", "thank you",
    ),
    numbers=ENGLISH_NUMBERS,
)

# --- sounds shared by the languages written in Latin letters ---------------------------------------------------

_HUMS: tuple[str, ...] = ("mhm", "m hm", "mm hmm", "m m", "mm", "hm", "hmm", "aha", "ah ha", "ha ha", "heh")
"""Hums and a laugh, the same in every language written in Latin letters (none of them a word there)."""

NEUTRAL_SOUNDS: tuple[str, ...] = (*_HUMS, "uh huh", "uh", "ah", "oh")
"""What any language's caller may hum over the agent: the acknowledgements of a language the rules have no
words for (``lexicon`` gives ``None``)."""

# --- German ---------------------------------------------------------------------------------------------------

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
    sounds=(*_HUMS, "äh", "ähm", "öh", "öhm", "ehm", "uh", "ha", "hah"),
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
)

# --- French ---------------------------------------------------------------------------------------------------

FRENCH = Lexicon(
    fillers=frozenset(["euh", "euhm", "heu", "hum", "hmm", "bah", "ben", "beh"]),
    # Not "un", "une" ("J'en veux un."), "son" (sound), "quand" or "leur" ("Je ne sais pas quand.", "le
    # leur"). "le", "la", "les" after a hyphen are pronouns ("Fais-le.") and stay inside their word.
    trailing=frozenset(
        [
            "et", "ou", "mais", "car", "parce", "que", "qu", "puisque", "lorsque", "lorsqu", "comme", "puis", "ni",
            "le", "la", "les", "l", "d", "j", "des", "du", "au", "aux", "mon", "ma", "mes", "ton", "ta", "tes", "sa",
            "ses", "notre", "votre", "nos", "vos", "ce", "cet", "cette", "ces", "chaque", "dont", "quelques", "afin",
            "tandis", "quoique",
        ]
    ),
    # Not "contre", "après", "avant", "depuis", "selon": they end sentences ("On verra après.").
    open_words=frozenset(
        [
            "à", "de", "pour", "avec", "dans", "sur", "sous", "chez", "vers", "par", "sans", "entre", "pendant",
            "jusqu", "jusque", "envers", "parmi", "malgré", "dès",
        ]
    ),
    backchannels=(
        "oui", "ouais", "ouaip", "oui oui", "ouais ouais", "d'accord", "d'ac", "dac", "ok", "okay", "ah bon", "ah oui",
        "ah d'accord", "bon", "bien", "très bien", "voilà", "exactement", "tout à fait", "c'est ça", "bien sûr",
        "je vois", "carrément", "super", "parfait", "entendu", "merci", "merci beaucoup", "ça marche", "effectivement",
        "évidemment", "absolument", "génial", "cool", "c'est vrai", "vrai", "en effet", "certes", "certainement",
        "pas de souci", "pas de problème", "nickel", "impeccable", "ah", "oh",
    ),
    sounds=(*_HUMS, "euh", "euhm", "heu", "hum", "bah", "ben", "beh", "ha", "hah"),
    stop_words=(
        "attends", "attendez", "arrête", "arrêtez", "stop", "non", "non non", "pardon", "excusez moi", "excuse moi",
        "excusez", "une seconde", "une petite seconde", "deux secondes", "une minute", "minute", "un instant",
        "un moment", "hé", "hey", "allô", "écoute", "écoutez", "mais", "attention", "quoi", "comment", "hein",
        "ça suffit", "tais toi", "taisez vous", "silence", "en fait", "désolé", "désolée", "annule", "annuler", "alors",
        "qu'est ce",
    ),
    subordinators=frozenset(
        [
            "si", "s'il", "s'ils", "quand", "lorsque", "lorsqu", "puisque", "puisqu", "parce", "quoique", "avant",
            "après", "pendant", "dès", "tandis", "afin",
        ]
    ),
    short_answers=frozenset(
        [
            "oui", "non", "si", "ouais", "d'accord", "d'ac", "ok", "okay", "merci", "beaucoup", "bien", "sûr", "très",
            "bon", "bonne", "voilà", "exactement", "parfait", "super", "génial", "volontiers", "pas", "de", "problème",
            "souci", "avec", "plaisir", "peut-être", "s'il", "vous", "plaît", "te", "absolument", "évidemment", "tout",
            "à", "fait", "ça", "marche", "c'est", "entendu", "rien", "je", "en", "prie", "certainement", "nickel",
            "carrément", "vraiment", "effectivement",
        ]
    ),
    greetings=(
        "bonjour", "bonsoir", "salut", "allô", "coucou", "au revoir", "bonne journée", "bonne soirée", "bonne nuit",
        "à bientôt", "à demain", "à plus", "à plus tard", "bienvenue", "bye", "ciao",
    ),
    numbers=frozenset(
        [
            "zéro", "un", "une", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze",
            "douze", "treize", "quatorze", "quinze", "seize", "vingt", "vingts", "trente", "quarante", "cinquante",
            "soixante", "septante", "huitante", "octante", "nonante", "cent", "cents", "mille", "million", "millions",
            "vingt-et-un", "trente-et-un", "quarante-et-un", "cinquante-et-un", "soixante-et-un", "soixante-et-onze",
        ]
    ),
)

# --- Spanish --------------------------------------------------------------------------------------------------

SPANISH = Lexicon(
    fillers=frozenset(["eh", "ehm", "em", "eeh", "mmm", "hmm", "este", "pues", "o sea"]),
    # Not "una", "como", "luego", "entonces", "más", nor "si" and "se" (Whisper may write "Creo que si.", "No
    # se." for "sí", "sé"): they end sentences.
    trailing=frozenset(
        [
            "y", "e", "o", "u", "ni", "pero", "sino", "porque", "que", "aunque", "mientras", "el", "la", "los", "las",
            "lo", "le", "les", "me", "un", "del", "al", "mi", "tu", "su", "mis", "tus", "sus", "cuyo", "cuya", "cuyos",
            "cuyas", "muy", "tan",
        ]
    ),
    # Not "contra", "bajo", "según" ("Estoy en contra.", "Según.").
    open_words=frozenset(
        ["a", "de", "en", "con", "para", "por", "sin", "sobre", "entre", "hacia", "hasta", "desde", "durante",
         "mediante", "ante", "tras"]
    ),
    backchannels=(
        "sí", "si", "sí sí", "ajá", "aja", "vale", "claro", "claro que sí", "bueno", "ok", "okay", "de acuerdo",
        "exacto", "exactamente", "perfecto", "entiendo", "entendido", "ya", "ya ya", "ya veo", "muy bien", "bien",
        "genial", "cierto", "correcto", "por supuesto", "obvio", "dale", "está bien", "órale", "sale", "ándale",
        "gracias", "muchas gracias", "vaya", "listo", "seguro", "efectivamente", "ah", "oh",
    ),
    sounds=(*_HUMS, "eh", "ehm", "em", "eeh", "uh"),
    stop_words=(
        "espera", "espere", "esperá", "espérate", "espérame", "espéreme", "para", "pare", "paren", "alto", "basta",
        "ya basta", "no", "no no", "oye", "oiga", "disculpa", "disculpe", "perdón", "perdona", "perdone", "un momento",
        "un momentito", "momento", "un segundo", "un minuto", "pero", "qué", "cómo", "cállate", "silencio", "cancela",
        "cancelar", "mira", "mire", "escucha", "escuche", "en realidad", "hola", "aló", "a ver",
    ),
    subordinators=frozenset(["si", "cuando", "porque", "aunque", "mientras", "después", "antes"]),
    short_answers=frozenset(
        [
            "sí", "si", "no", "vale", "claro", "bueno", "bien", "muy", "gracias", "muchas", "mil", "de", "nada", "por",
            "favor", "supuesto", "perfecto", "exacto", "exactamente", "ok", "okay", "correcto", "genial", "listo",
            "quizás", "quizá", "tal", "vez", "obvio", "dale", "seguro", "encantado", "encantada", "igualmente",
            "también", "tampoco", "sale", "ya", "está", "cierto", "acuerdo", "lo", "siento", "a", "mejor",
        ]
    ),
    greetings=(
        "hola", "buenos días", "buenas tardes", "buenas noches", "buenas", "adiós", "chao", "chau", "hasta luego",
        "hasta mañana", "hasta pronto", "nos vemos", "aló", "bienvenido", "bienvenida",
    ),
    numbers=frozenset(
        [
            "cero", "uno", "una", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once",
            "doce", "trece", "catorce", "quince", "dieciséis", "dieciseis", "diecisiete", "dieciocho", "diecinueve",
            "veinte", "veintiuno", "veintidós", "veintidos", "veintitrés", "veintitres", "veinticuatro", "veinticinco",
            "veintiséis", "veintiseis", "veintisiete", "veintiocho", "veintinueve", "treinta", "cuarenta", "cincuenta",
            "sesenta", "setenta", "ochenta", "noventa", "cien", "ciento", "doscientos", "trescientos", "cuatrocientos",
            "quinientos", "seiscientos", "setecientos", "ochocientos", "novecientos", "mil", "millón", "millones",
        ]
    ),
    drawn=frozenset(["e", "a"]),
)

# --- Italian --------------------------------------------------------------------------------------------------

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
    sounds=(*_HUMS, "ehm", "eh", "uhm", "mh", "mmh", "uh"),
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
)

# --- Portuguese -----------------------------------------------------------------------------------------------

PORTUGUESE = Lexicon(
    # "é" ("it is", "yes") only drawn out ("éééé"); not "né", "então", "assim", "sabe": they end sentences.
    fillers=frozenset(["hum", "humm", "hmm", "ahn", "eh", "tipo"]),
    # Not "um", "uma" ("Quero um."), "meu", "seu", "pois", "como", "quando": they end sentences.
    trailing=frozenset(
        [
            "e", "ou", "mas", "porque", "que", "se", "embora", "enquanto", "porém", "o", "a", "os", "as", "do", "da",
            "dos", "das", "no", "na", "nos", "nas", "ao", "aos", "à", "às", "pelo", "pela", "pelos", "pelas", "num",
            "numa", "dum", "duma", "cujo", "cuja", "cujos", "cujas",
        ]
    ),
    # Not "até", "contra", "segundo" ("Até.", "Sou contra.").
    open_words=frozenset(
        ["de", "em", "com", "para", "pra", "pro", "por", "sem", "sobre", "entre", "desde", "sob", "após",
         "perante", "durante"]
    ),
    backchannels=(
        "sim", "sim sim", "é", "pois é", "pois", "tá", "tá bom", "tá bem", "tá certo", "está bem", "está bom", "ok",
        "okay", "certo", "claro", "claro que sim", "beleza", "uhum", "aham", "ahã", "entendi", "entendo", "exato",
        "exatamente", "verdade", "é verdade", "isso", "isso mesmo", "é isso", "com certeza", "perfeito", "show",
        "legal", "sei", "ótimo", "obrigado", "obrigada", "valeu", "tudo bem", "fechado", "pode ser", "bacana",
        "certinho", "nossa", "ah", "oh",
    ),
    sounds=(*_HUMS, "hum", "humm", "ahn", "ahã", "aham", "uhum", "uh"),
    stop_words=(
        "espera", "espere", "espera aí", "peraí", "pera", "para", "pare", "não", "nao", "não não", "desculpa",
        "desculpe", "com licença", "licença", "perdão", "ei", "olha", "olhe", "escuta", "escute", "um momento",
        "um segundo", "um minuto", "só um momento", "só um segundo", "momento", "calma", "mas", "o quê", "o que", "quê",
        "como", "chega", "cancela", "cancelar", "na verdade", "alô", "oi", "silêncio",
    ),
    subordinators=frozenset(["se", "quando", "porque", "embora", "enquanto", "caso", "depois", "antes", "apesar"]),
    short_answers=frozenset(
        [
            "sim", "não", "nao", "ok", "okay", "certo", "claro", "obrigado", "obrigada", "valeu", "por", "favor", "de",
            "nada", "tá", "bom", "boa", "bem", "está", "tudo", "perfeito", "exato", "exatamente", "beleza", "talvez",
            "com", "certeza", "pode", "ser", "combinado", "fechado", "ótimo", "ótima", "legal", "é", "isso", "muito",
            "sei", "verdade",
        ]
    ),
    greetings=(
        "oi", "olá", "alô", "bom dia", "boa tarde", "boa noite", "tchau", "até logo", "até mais", "até amanhã",
        "até já", "tudo bem", "bem-vindo", "bem-vinda",
    ),
    numbers=frozenset(
        [
            "zero", "um", "uma", "dois", "duas", "três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez",
            "onze", "doze", "treze", "catorze", "quatorze", "quinze", "dezesseis", "dezasseis", "dezessete",
            "dezassete", "dezoito", "dezenove", "dezanove", "vinte", "trinta", "quarenta", "cinquenta", "sessenta",
            "setenta", "oitenta", "noventa", "cem", "cento", "duzentos", "trezentos", "quatrocentos", "quinhentos",
            "seiscentos", "setecentos", "oitocentos", "novecentos", "mil", "milhão", "milhões",
        ]
    ),
    drawn=frozenset(["é", "e", "a", "ã"]),
)

# --- Russian --------------------------------------------------------------------------------------------------

RUSSIAN = Lexicon(
    # Not "вот", "это", "так", "короче": they end sentences ("Я пришёл, вот.", "Я люблю это.").
    fillers=frozenset(["э", "ээ", "эм", "эмм", "м", "мм", "хм", "ну", "значит", "типа", "как бы", "это самое"]),
    # Not "как", "когда", "пока" (bye), "потом", "так", "мой", "его": they end sentences.
    trailing=frozenset(
        [
            "и", "а", "но", "или", "либо", "что", "чтобы", "чтоб", "потому", "потому что", "так как", "если", "хотя",
            "который", "которая", "которое", "которые", "которого", "которой", "которому", "которым", "которых", "чей",
            "чья", "чье", "чьи", "ибо", "причем",
        ]
    ),
    # Not "после", "около", "вокруг": adverbs that end sentences too ("Поговорим после.").
    open_words=frozenset(
        [
            "в", "во", "на", "с", "со", "к", "ко", "по", "о", "об", "обо", "от", "до", "из", "изо", "за", "для", "без",
            "под", "над", "при", "про", "через", "у", "между", "перед", "вместо", "ради", "из-за", "из-под", "кроме",
            "среди", "сквозь", "насчет",
        ]
    ),
    backchannels=(
        "да", "да да", "ага", "ага ага", "угу", "угу угу", "ну да", "ясно", "понятно", "все понятно", "хорошо", "ладно",
        "так", "так так", "окей", "ок", "конечно", "точно", "верно", "правильно", "ну", "ого", "ух ты", "ах", "ох",
        "спасибо", "спасибо большое", "понял", "поняла", "понимаю", "вот как", "вот", "именно", "отлично", "супер",
        "класс", "здорово", "замечательно", "разумеется", "естественно", "само собой", "слушаю", "есть", "принято",
    ),
    sounds=("э", "ээ", "эм", "м", "мм", "хм", "угу", "ага", "а", "ах", "ох", "эх", "ха", "ха ха", *_HUMS),
    stop_words=(
        "стоп", "стоп стоп", "стой", "стойте", "подожди", "подождите", "погоди", "погодите", "постой", "постойте",
        "секунду", "секундочку", "минуту", "минутку", "минуточку", "момент", "одну минуту", "одну секунду", "нет",
        "нет нет", "не надо", "извините", "извини", "простите", "прости", "алло", "эй", "слушай", "слушайте",
        "послушай", "послушайте", "но", "что", "как", "хватит", "отмена", "отмени", "тихо", "замолчи", "перестань",
        "перестаньте", "вообще то", "на самом деле",
    ),
    subordinators=frozenset(["если", "когда", "хотя", "потому", "поскольку", "чтобы", "после", "перед"]),
    short_answers=frozenset(
        [
            "да", "нет", "конечно", "хорошо", "ладно", "спасибо", "большое", "пожалуйста", "ага", "угу", "точно",
            "верно", "окей", "ок", "отлично", "нормально", "согласен", "согласна", "разумеется", "возможно", "может",
            "быть", "наверное", "очень", "ясно", "понятно", "супер", "давай", "давайте", "вам", "тебе", "само", "собой",
            "правильно", "именно", "еще",
        ]
    ),
    greetings=(
        "привет", "здравствуйте", "здравствуй", "добрый день", "доброе утро", "добрый вечер", "спокойной ночи",
        "доброй ночи", "пока", "до свидания", "всего доброго", "всего хорошего", "алло", "до встречи", "до завтра",
    ),
    numbers=frozenset(
        [
            "ноль", "нуль", "один", "одна", "одно", "два", "две", "три", "четыре", "пять", "шесть", "семь", "восемь",
            "девять", "десять", "одиннадцать", "двенадцать", "тринадцать", "четырнадцать", "пятнадцать", "шестнадцать",
            "семнадцать", "восемнадцать", "девятнадцать", "двадцать", "тридцать", "сорок", "пятьдесят", "шестьдесят",
            "семьдесят", "восемьдесят", "девяносто", "сто", "двести", "триста", "четыреста", "пятьсот", "шестьсот",
            "семьсот", "восемьсот", "девятьсот", "тысяча", "тысячи", "тысяч", "миллион", "миллиона", "миллионов",
        ]
    ),
    drawn=frozenset(["а", "и"]),
    not_endings=("за что", "и что", "а что", "вот что"),
)

# --- Korean ---------------------------------------------------------------------------------------------------

KOREAN = Lexicon(
    fillers=frozenset(["음", "으음", "어", "에", "흠", "그", "저", "저기", "그러니까", "그니까", "뭐랄까"]),
    # Not "그럼" ("Of course."), "이" (also "two"), "뭐" ("What?"): they end sentences.
    trailing=frozenset(
        [
            "그리고", "그런데", "근데", "그래서", "하지만", "그러나", "또는", "아니면", "왜냐하면", "만약", "만약에",
            "혹은", "및", "그래도", "그러면", "그러면은", "게다가", "또", "이제", "막", "제",
        ]
    ),
    open_words=frozenset(),
    backchannels=(
        "네", "넵", "예", "네네", "예예", "응", "응응", "어", "음", "아", "그래", "그래요", "맞아", "맞아요",
        "맞습니다", "알겠어", "알겠어요", "알겠습니다", "알았어", "알았어요", "좋아", "좋아요", "좋습니다", "오케이",
        "그렇군요", "그렇구나", "그렇죠", "그쵸", "그렇네요", "그러게요", "아하", "진짜", "정말", "대박", "그럼요",
        "물론이죠", "당연하죠", "감사합니다", "고맙습니다", "고마워요", "고마워", "아 네", "아 그래요",
    ),
    sounds=("음", "으음", "흠", "어", "아", "오", "에", "하하", "헤헤", "허", *_HUMS),
    stop_words=(
        "잠깐", "잠깐만", "잠깐만요", "잠시만", "잠시만요", "멈춰", "멈춰요", "그만", "그만해", "그만해요", "스톱",
        "아니", "아니요", "아뇨", "아니야", "저기요", "저기", "여보세요", "근데", "그런데", "하지만", "죄송한데",
        "죄송합니다", "죄송해요", "미안", "미안해요", "실례합니다", "뭐라고", "뭐라고요", "뭐", "뭐요", "취소",
        "조용히", "사실은", "있잖아", "있잖아요", "들어봐", "들어보세요",
    ),
    subordinators=frozenset(["만약", "만약에", "만일", "비록", "왜냐하면"]),
    short_answers=frozenset(
        [
            "네", "예", "응", "어", "아니요", "아뇨", "아니", "좋아요", "좋아", "괜찮아요", "괜찮아", "괜찮습니다",
            "감사합니다", "고맙습니다", "고마워요", "고마워", "맞아요", "맞아", "그래요", "그래", "알겠어요",
            "알겠습니다", "물론이죠", "물론", "됐어요", "됐습니다", "오케이", "좋습니다", "그럼요", "그럼", "천만에요",
            "네네", "당연하죠",
        ]
    ),
    greetings=(
        "안녕하세요", "안녕", "여보세요", "안녕히 가세요", "안녕히 계세요", "반갑습니다", "반가워요", "좋은 아침",
        "수고하세요", "또 봐요", "잘 자요",
    ),
    numbers=frozenset(
        ["하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟", "아홉", "열", "스물", "서른", "마흔", "쉰", "십",
         "백", "천", "만"]
    ),
    numeral_chars="영공일이삼사오육칠팔구십백천만억",
    # Connective endings and particles that cannot end a sentence: "-지만" (but), "-면서" (while), "-려고"
    # (in order to), "-거나" (or), "-를" (object), "-에게"/"-한테" (to), "-께서", and the topic "-는" (not "-은":
    # given names end in it, "김지은").
    endings=("지만", "면서", "려고", "거나", "를", "에게", "한테", "께서", "는"),
)

# --- Chinese --------------------------------------------------------------------------------------------------

_CJK_NUMERALS = "〇零一二三四五六七八九十百千万亿億两"

CHINESE = Lexicon(
    fillers=frozenset(["嗯", "呃", "唔", "那个", "这个", "就是", "就是说", "然后", "那么", "怎么说", "怎么说呢"]),
    trailing=frozenset(
        [
            "和", "跟", "与", "或", "或者", "还是", "但是", "可是", "不过", "但", "而", "所以", "因为", "而且", "并且",
            "如果", "要是", "以及", "还有", "比如", "比如说", "例如", "虽然", "因此", "于是", "另外",
        ]
    ),
    open_words=frozenset(["从", "对于", "关于", "为了", "除了", "按照", "根据"]),
    backchannels=(
        "嗯", "嗯嗯", "嗯哼", "对", "对的", "对啊", "对呀", "是", "是的", "是啊", "是呀", "好", "好的", "好啊", "好吧",
        "行", "行啊", "哦", "噢", "喔", "啊", "明白", "明白了", "知道", "知道了", "懂了", "了解", "没错", "可以",
        "收到", "好嘞", "谢谢", "谢谢你", "多谢", "确实", "是这样", "原来如此", "当然", "有道理", "ok", "okay",
    ),
    sounds=("嗯", "呃", "唔", "啊", "哦", "噢", "哈", "呵呵", "嘿嘿", "额", "谢谢观看", "mhm", "hmm", "mm"),
    # Not a bare "不": it begins "不错" (not bad) and "不客气" (you're welcome).
    stop_words=(
        "等等", "等一下", "等一等", "等下", "等会儿", "稍等", "停", "停下", "停一下", "别说了", "打住", "慢着", "不对",
        "不是", "不要", "不行", "不用", "喂", "哎", "诶", "抱歉", "对不起", "不好意思", "但是", "可是", "什么", "啥",
        "取消", "安静", "其实", "听我说", "你听我说", "我说",
    ),
    subordinators=frozenset(
        ["如果", "要是", "假如", "假设", "因为", "虽然", "尽管", "即使", "就算", "只要", "除非", "既然", "等到", "一旦",
         "哪怕", "不管", "无论"]
    ),
    short_answers=frozenset(
        [
            "是", "是的", "对", "对的", "不是", "没有", "有", "好", "好的", "行", "可以", "不用", "谢谢", "谢谢你",
            "多谢", "不客气", "没事", "没关系", "没问题", "嗯", "当然", "明白", "知道", "收到", "不要", "要", "不",
            "不行", "没错", "好嘞", "辛苦", "麻烦", "你", "您", "了", "啊", "呀", "吧", "啦", "哦", "嘛", "呢", "太",
            "很", "挺", "不错", "真的", "也许", "可能", "一定", "ok",
        ]
    ),
    greetings=(
        "你好", "您好", "喂", "早", "早上好", "下午好", "晚上好", "早安", "晚安", "再见", "拜拜", "回头见", "明天见",
    ),
    numeral_chars=_CJK_NUMERALS,
    compact=True,
    whole_only=frozenset(["那个", "这个", "就是", "那么", "还有"]),
    not_endings=(
        "暖和", "温和", "平和", "柔和", "缓和", "随和", "总和", "参与", "给与", "赋与", "自从", "服从", "听从", "顺从",
        "无从", "再好不过",
    ),
)

# --- Japanese -------------------------------------------------------------------------------------------------

JAPANESE = Lexicon(
    fillers=frozenset(
        [
            "えーと", "えーとー", "えっと", "えっとー", "ええと", "えーっと", "えと", "あのー", "あの", "そのー",
            "その", "うーん", "うーんと", "んー", "えー", "まあ", "まぁ", "なんか",
        ]
    ),
    # Not "のに" (a sentence-final regret), "とか", "し", "て", "は" ("こんにちは"), "が" alone.
    trailing=frozenset(
        [
            "けど", "けれど", "けれども", "だけど", "ですが", "ますが", "でも", "ので", "なので", "だから", "ながら",
            "たら", "だったら", "それで", "それから", "そして", "それに", "しかし", "または", "あるいは", "あと", "を",
        ]
    ),
    open_words=frozenset(["から", "まで", "へ", "について", "として", "によって", "に対して"]),
    backchannels=(
        "はい", "はいはい", "うん", "うんうん", "ええ", "そう", "そうそう", "そうですね", "そうですか", "そうなんだ",
        "そうなんですね", "そうなんですか", "そっか", "そうか", "なるほど", "へえ", "へー", "ほう", "ふーん", "ああ",
        "あー", "おお", "わかった", "わかりました", "分かりました", "了解", "了解です", "了解しました", "オッケー",
        "オーケー", "ok", "okay", "確かに", "たしかに", "いいですね", "いいね", "ありがとう", "ありがとうございます",
        "どうも", "本当", "ほんと", "まじ", "マジ", "すごい", "ですね", "ね",
    ),
    sounds=(
        "ん", "んー", "うーん", "えー", "えーと", "えっと", "ええと", "あー", "おー", "ふふ", "はは",
        "ご視聴ありがとうございました", "mhm", "hmm",
    ),
    stop_words=(
        "ちょっと待って", "待って", "まって", "ちょっと", "ストップ", "やめて", "止めて", "とめて", "すみません",
        "すいません", "ごめん", "いいえ", "いや", "違う", "違います", "ちがう", "ちがいます", "でも", "もしもし",
        "ねえ", "おい", "何", "なに", "なんで", "聞いて", "キャンセル", "静かに", "実は", "失礼",
    ),
    subordinators=frozenset(),
    short_answers=frozenset(
        [
            "はい", "いいえ", "うん", "ううん", "ええ", "いや", "そう", "そうです", "そうですね", "そうだね", "そうか",
            "そっか", "なるほど", "わかりました", "分かりました", "わかった", "了解", "了解です", "了解しました",
            "オッケー", "ok", "ありがとう", "ありがと", "ありがとうございます", "ありがとうございました", "どうも",
            "すみません", "お願いします", "よろしく", "よろしくお願いします", "大丈夫", "大丈夫です", "結構です",
            "いいです", "いいですよ", "いいよ", "もちろん", "もちろんです", "はいはい", "違います", "ごめんなさい",
            "そうそう", "本当", "本当に", "ほんと", "ね", "よ", "です",
        ]
    ),
    greetings=(
        "こんにちは", "こんばんは", "おはよう", "おはようございます", "もしもし", "さようなら", "じゃあね", "またね",
        "おやすみ", "おやすみなさい", "はじめまして", "失礼します", "お疲れ様です",
    ),
    numeral_chars=_CJK_NUMERALS,
    compact=True,
    whole_only=frozenset(["あの", "その", "えー", "まあ", "まぁ", "なんか", "でも", "あと"]),
    not_endings=("へへ",),
)
# fmt: on

LEXICONS: Mapping[str, Lexicon] = {
    "en": ENGLISH,
    "zh": CHINESE,
    "ja": JAPANESE,
    "ko": KOREAN,
    "de": GERMAN,
    "fr": FRENCH,
    "ru": RUSSIAN,
    "pt": PORTUGUESE,
    "es": SPANISH,
    "it": ITALIAN,
}
"""The ten languages' words, by ISO 639-1 code (``agent.languages.LANGUAGES``)."""


def lexicon(language: str) -> Lexicon | None:
    """The words of ``language`` (a code; a region is ignored: ``"de-AT"``); ``None`` for any other language."""
    return LEXICONS.get(language.strip().lower().replace("_", "-").split("-")[0])


def answer_words(lex: Lexicon) -> frozenset[str]:
    """The words (compact languages: phrases) of ``lex``'s short answers and greetings."""
    if lex.compact:
        return lex.short_answers | frozenset(lex.greetings)
    return lex.short_answers | _words(lex.greetings)

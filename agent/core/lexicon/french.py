"""French words of the turn rules: ``FRENCH`` (``agent.core.lexicon``).

One reason to change: what French speakers say. Pure data.
"""

from __future__ import annotations

from agent.core.lexicon.schema import Lexicon
from agent.core.lexicon.shared import ABBREVIATIONS, HUMS, SPACED

# fmt: off
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
    sounds=(*HUMS, "euh", "euhm", "heu", "hum", "bah", "ben", "beh", "ha", "hah"),
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
    abbreviations=ABBREVIATIONS,
    writing=SPACED,
)
# fmt: on

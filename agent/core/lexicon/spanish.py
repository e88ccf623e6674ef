"""Spanish words of the turn rules: ``SPANISH`` (``agent.core.lexicon``).

One reason to change: what Spanish speakers say. Pure data.
"""

from __future__ import annotations

from agent.core.lexicon.schema import Lexicon
from agent.core.lexicon.shared import ABBREVIATIONS, HUMS, SPACED

# fmt: off
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
    sounds=(*HUMS, "eh", "ehm", "em", "eeh", "uh"),
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
    abbreviations=ABBREVIATIONS,
    writing=SPACED,
)
# fmt: on

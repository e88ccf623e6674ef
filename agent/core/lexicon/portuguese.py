"""Portuguese words of the turn rules: ``PORTUGUESE`` (``agent.core.lexicon``).

One reason to change: what Portuguese speakers say. Pure data.
"""

from __future__ import annotations

from agent.core.lexicon.schema import Lexicon
from agent.core.lexicon.shared import ABBREVIATIONS, HUMS, SPACED

# fmt: off
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
    sounds=(*HUMS, "hum", "humm", "ahn", "ahã", "aham", "uhum", "uh"),
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
    abbreviations=ABBREVIATIONS,
    writing=SPACED,
)
# fmt: on

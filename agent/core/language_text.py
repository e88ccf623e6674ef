"""The words the agent itself says, per language: its fixed phrases and what a language model is told.

``reply_instruction(code)`` is the system-prompt sentence that asks a model to answer in the caller's language
(nothing for English, so English prompts are as they were). ``phrase_text(key, configured, language)`` is a
fixed phrase (apology, idle prompt, hold, goodbye, no voice) in the caller's language: the built-in translation
while the operator kept the English default (``agent.config.TurnSettings``), and the operator's own text, as
written, once they changed it; ``localised(phrases, language)`` is a session's ``Phrases`` in the caller's language.
One reason to change: what the agent says in a language. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from agent.core.policies import Phrases
from agent.languages import DEFAULT, NAMES

DEFAULTS: Mapping[str, str] = {
    "apology": "Sorry, something went wrong on my side. Could you say that again?",
    "idle_prompt": "Are you still there?",
    "hold": "One moment.",
    "goodbye": "Sorry, I have to end the call now. Goodbye.",
    "no_voice": "Sorry, this line cannot take your call right now. Please try again later. Goodbye.",
}
"""The English texts of the fixed phrases: the defaults of ``TurnSettings`` (``*_text``), by phrase key."""

TRANSLATIONS: Mapping[str, Mapping[str, str]] = {
    "apology": {
        "zh": "抱歉，我这边出了点问题。您能再说一遍吗？",
        "ja": "申し訳ありません、こちらで問題が発生しました。もう一度おっしゃっていただけますか？",
        "ko": "죄송합니다, 제 쪽에 문제가 생겼습니다. 다시 한 번 말씀해 주시겠어요?",
        "de": "Entschuldigung, bei mir ist etwas schiefgelaufen. Können Sie das bitte noch einmal sagen?",
        "fr": "Désolé, un problème est survenu de mon côté. Pouvez-vous répéter, s'il vous plaît ?",
        "ru": "Извините, у меня что-то пошло не так. Не могли бы вы повторить?",
        "pt": "Desculpe, algo deu errado do meu lado. Pode repetir, por favor?",
        "es": "Lo siento, algo ha fallado por mi parte. ¿Podría repetirlo, por favor?",
        "it": "Mi scusi, qualcosa è andato storto da parte mia. Può ripetere, per favore?",
    },
    "idle_prompt": {
        "zh": "您还在吗？",
        "ja": "まだいらっしゃいますか？",
        "ko": "아직 계신가요?",
        "de": "Sind Sie noch da?",
        "fr": "Vous êtes toujours là ?",
        "ru": "Вы ещё здесь?",
        "pt": "Você ainda está aí?",
        "es": "¿Sigue ahí?",
        "it": "È ancora lì?",
    },
    "hold": {
        "zh": "请稍等。",
        "ja": "少々お待ちください。",
        "ko": "잠시만 기다려 주세요.",
        "de": "Einen Moment, bitte.",
        "fr": "Un instant, s'il vous plaît.",
        "ru": "Одну минуту.",
        "pt": "Um momento, por favor.",
        "es": "Un momento, por favor.",
        "it": "Un momento, per favore.",
    },
    "goodbye": {
        "zh": "抱歉，我现在必须结束通话了。再见。",
        "ja": "申し訳ありませんが、ここで通話を終了させていただきます。失礼いたします。",
        "ko": "죄송하지만 이제 통화를 종료해야 합니다. 안녕히 계세요.",
        "de": "Entschuldigung, ich muss das Gespräch jetzt beenden. Auf Wiederhören.",
        "fr": "Désolé, je dois mettre fin à l'appel maintenant. Au revoir.",
        "ru": "Извините, мне нужно завершить звонок. До свидания.",
        "pt": "Desculpe, preciso encerrar a ligação agora. Até logo.",
        "es": "Lo siento, tengo que terminar la llamada ahora. Adiós.",
        "it": "Mi dispiace, devo terminare la chiamata adesso. Arrivederci.",
    },
    "no_voice": {
        "zh": "抱歉，这条线路目前无法接听您的电话。请稍后再试。再见。",
        "ja": "申し訳ありません、この回線では現在お電話をお受けできません。後ほどおかけ直しください。失礼いたします。",
        "ko": "죄송합니다. 지금은 이 회선으로 전화를 받을 수 없습니다. 나중에 다시 걸어 주세요. 안녕히 계세요.",
        "de": (
            "Entschuldigung, diese Leitung kann Ihren Anruf gerade nicht annehmen. Bitte versuchen Sie es später "
            "noch einmal. Auf Wiederhören."
        ),
        "fr": (
            "Désolé, cette ligne ne peut pas prendre votre appel pour le moment. Veuillez réessayer plus tard. "
            "Au revoir."
        ),
        "ru": "Извините, эта линия сейчас не может принять ваш звонок. Пожалуйста, перезвоните позже. До свидания.",
        "pt": (
            "Desculpe, esta linha não pode atender a sua ligação agora. Por favor, tente novamente mais tarde. "
            "Até logo."
        ),
        "es": (
            "Lo siento, esta línea no puede atender su llamada en este momento. Por favor, inténtelo de nuevo "
            "más tarde. Adiós."
        ),
        "it": (
            "Mi dispiace, questa linea non può accettare la sua chiamata in questo momento. La preghiamo di "
            "riprovare più tardi. Arrivederci."
        ),
    },
}
"""The fixed phrases in the nine other languages, by phrase key and language code."""


def reply_instruction(code: str) -> str:
    """The system-prompt sentence asking a model to answer in ``code``'s language; ``""`` for English (and for
    a code that is not one of the ten), so English prompts stay as they are."""
    if code == DEFAULT or code not in NAMES:
        return ""
    name = NAMES[code]
    return f"The caller speaks {name}. Always answer in {name}, in plain spoken sentences."


def phrase_text(key: str, configured: str, language: str) -> str:
    """The fixed phrase ``key`` to say in ``language`` (a code).

    While ``configured`` is the English default of that phrase, the built-in translation (the English text for
    English); otherwise the operator wrote their own text (or emptied it to turn the phrase off), and it is
    said as written. A key without built-in texts (``"greeting"``) is always ``configured``.
    """
    default = DEFAULTS.get(key)
    if default is None or configured != default:
        return configured
    return TRANSLATIONS[key].get(language, configured)


def localised(phrases: Phrases, language: str) -> Phrases:
    """The fixed phrases in ``language``: each one the operator left at its English default is said in the
    caller's language (``phrase_text``); one they wrote themselves is kept as written."""
    return replace(
        phrases,
        apology=phrase_text("apology", phrases.apology, language),
        hold=phrase_text("hold", phrases.hold, language),
        goodbye=phrase_text("goodbye", phrases.goodbye, language),
    )

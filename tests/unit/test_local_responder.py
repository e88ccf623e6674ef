"""The offline responder: one test per intent, a fixed clock, streamed deltas; then the nine other languages."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from agent.adapters.local_responder import LocalResponder
from agent.adapters.local_responder_lines import LINES
from agent.languages import LANGUAGES
from agent.ports import ChatMessage

CLOCK = datetime(2025, 3, 4, 15, 5)  # Tuesday, 4 March 2025, 3:05 PM


def _fixed() -> datetime:
    return CLOCK


def _reply(text: str, now: datetime = CLOCK) -> str:
    return LocalResponder(now=lambda: now).reply_text([ChatMessage("user", text)], language="en")


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


@pytest.mark.parametrize("text", ["Hello", "hi there!", "Hey.", "Good morning", "HELLO?!"])
def test_greeting_says_what_it_can_do(text: str) -> None:
    reply = _reply(text)
    assert reply.startswith("Hello!")
    assert "time" in reply
    assert "story" in reply


@pytest.mark.parametrize("text", ["What time is it?", "time please", "What's the time"])
def test_time_comes_from_the_injected_clock(text: str) -> None:
    assert _reply(text) == "It's 3:05 PM."


@pytest.mark.parametrize(
    ("now", "spoken"),
    [
        (datetime(2025, 1, 1, 0, 0), "It's 12:00 AM."),
        (datetime(2025, 1, 1, 9, 30), "It's 9:30 AM."),
        (datetime(2025, 1, 1, 12, 1), "It's 12:01 PM."),
        (datetime(2025, 1, 1, 23, 59), "It's 11:59 PM."),
    ],
)
def test_time_formatting(now: datetime, spoken: str) -> None:
    assert _reply("what time is it", now) == spoken


@pytest.mark.parametrize("text", ["What's the date?", "What day is it today", "today's date please"])
def test_date(text: str) -> None:
    assert _reply(text) == "Today is Tuesday, March fourth, 2025."


def test_date_ordinals() -> None:
    assert _reply("date", datetime(2024, 12, 31)) == "Today is Tuesday, December thirty-first, 2024."
    assert _reply("date", datetime(2024, 2, 22)) == "Today is Thursday, February twenty-second, 2024."


@pytest.mark.parametrize("text", ["Tell me a story", "story time? no, a story!"])
def test_story_is_several_sentences(text: str) -> None:
    reply = _reply("Tell me a story")
    assert 6 <= len(_sentences(reply)) <= 8
    assert _reply(text) == reply


@pytest.mark.parametrize("text", ["help", "What can you do?"])
def test_help_lists_capabilities(text: str) -> None:
    reply = _reply(text)
    assert "offline" in reply
    assert "story" in reply
    assert "joke" in reply


@pytest.mark.parametrize("text", ["thanks", "Thank you!", "thanks a lot"])
def test_thanks(text: str) -> None:
    assert _reply(text).startswith("You're welcome")


@pytest.mark.parametrize("text", ["bye", "Goodbye.", "OK bye now"])
def test_goodbye(text: str) -> None:
    assert _reply(text).startswith("Goodbye")


def test_joke() -> None:
    assert "scarecrow" in _reply("Tell me a joke")


@pytest.mark.parametrize("text", ["Who are you?", "what's your name"])
def test_who_are_you_is_honest(text: str) -> None:
    reply = _reply(text)
    assert "offline demo responder" in reply
    assert "language model" in reply


@pytest.mark.parametrize("text", ["", "   ", "?!", "..."])
def test_empty_text_asks_to_repeat(text: str) -> None:
    assert _reply(text) == "Sorry, I didn't catch that. Could you say it again?"


def test_anything_else_is_echoed() -> None:
    reply = _reply("Please cancel my order.")
    assert reply.startswith("You said: Please cancel my order. ")
    assert len(_sentences(reply)) == 2


def test_words_inside_other_words_do_not_trigger() -> None:
    assert _reply("this is whistling").startswith("You said: this is whistling.")


def test_replies_are_plain_spoken_text() -> None:
    texts = ["hello", "help", "story", "joke", "who are you", "thanks", "bye", "time", "date", "", "xyz"]
    for text in texts:
        reply = _reply(text)
        assert not re.search(r"[*#_`\[\]<>|]", reply), reply
        assert reply.endswith((".", "?", "!")), reply


def test_uses_only_the_last_user_message() -> None:
    history = [
        ChatMessage("system", "be nice"),
        ChatMessage("user", "tell me a joke"),
        ChatMessage("assistant", "Why did the scarecrow..."),
        ChatMessage("user", "what time is it"),
        ChatMessage("assistant", "hmm"),
    ]
    assert LocalResponder(now=_fixed).reply_text(history, language="en") == "It's 3:05 PM."
    assert LocalResponder(now=_fixed).reply_text([], language="en").startswith("Sorry")


def test_is_deterministic() -> None:
    responder = LocalResponder(now=_fixed)
    history = [ChatMessage("user", "tell me a story")]
    assert responder.reply_text(history, language="en") == responder.reply_text(history, language="en")


def test_delta_words_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LocalResponder(delta_words=0)


# --- The other nine languages -------------------------------------------------------------------------------

ASKED = {  # language -> (what a caller says, what it is understood as)
    "de": [
        ("Hallo!", "greeting"),
        ("Guten Morgen", "greeting"),
        ("Wie spät ist es?", "time"),
        ("Sag mir die Uhrzeit", "time"),
        ("Welches Datum haben wir heute?", "date"),
        ("Erzähl mir einen Witz.", "joke"),
        ("Danke schön!", "thanks"),
        ("Vielen Dank", "thanks"),
        ("Tschüss", "goodbye"),
        ("Wer bist du?", "who"),
        ("Wie heisst du", "who"),  # "ß" as ASR may spell it
        ("Was kannst du?", "help"),
    ],
    "fr": [
        ("Bonjour", "greeting"),
        ("Quelle heure est-il ?", "time"),
        ("On est quel jour aujourd'hui ?", "date"),
        ("Raconte-moi une blague", "joke"),
        ("Merci beaucoup", "thanks"),
        ("Au revoir", "goodbye"),
        ("Qui êtes-vous ?", "who"),
        ("Que pouvez-vous faire ?", "help"),
    ],
    "es": [
        ("Hola", "greeting"),
        ("¿Qué hora es?", "time"),
        ("Que hora es", "time"),  # without the accent
        ("¿Cuál es la fecha de hoy?", "date"),
        ("Cuéntame un chiste", "joke"),
        ("Muchas gracias", "thanks"),
        ("Adiós", "goodbye"),
        ("¿Quién eres?", "who"),
        ("¿Qué puedes hacer?", "help"),
    ],
    "it": [
        ("Buongiorno", "greeting"),
        ("Che ore sono?", "time"),
        ("Che giorno è oggi?", "date"),
        ("Raccontami una barzelletta", "joke"),
        ("Grazie mille", "thanks"),
        ("Arrivederci", "goodbye"),
        ("Chi sei?", "who"),
        ("Cosa sai fare?", "help"),
    ],
    "pt": [
        ("Olá", "greeting"),
        ("Que horas são?", "time"),
        ("Qual é a data de hoje?", "date"),
        ("Conta uma piada", "joke"),
        ("Obrigada", "thanks"),
        ("Tchau", "goodbye"),
        ("Quem é você?", "who"),
        ("O que você sabe fazer?", "help"),
    ],
    "ru": [
        ("Привет", "greeting"),
        ("Здравствуйте", "greeting"),
        ("Который час?", "time"),
        ("Какое сегодня число?", "date"),
        ("Расскажи анекдот", "joke"),
        ("Расскажи шутку", "joke"),
        ("Спасибо", "thanks"),
        ("До свидания", "goodbye"),
        ("Кто ты?", "who"),
        ("Что ты умеешь?", "help"),
    ],
    "zh": [
        ("你好", "greeting"),
        ("现在几点了？", "time"),
        ("今天几号？", "date"),
        ("讲个笑话吧", "joke"),
        ("谢谢你", "thanks"),
        ("再见", "goodbye"),
        ("你是谁？", "who"),
        ("你能做什么？", "help"),
    ],
    "ja": [
        ("こんにちは", "greeting"),
        ("今何時ですか？", "time"),
        ("今日は何日ですか？", "date"),
        ("冗談を言って", "joke"),
        ("ありがとうございます", "thanks"),
        ("さようなら", "goodbye"),
        ("あなたは誰ですか？", "who"),
        ("何ができますか？", "help"),
    ],
    "ko": [
        ("안녕하세요", "greeting"),
        ("지금 몇 시예요?", "time"),
        ("지금 몇시야", "time"),
        ("오늘 날짜가 뭐예요?", "date"),
        ("농담 하나 해 줘", "joke"),
        ("감사합니다", "thanks"),
        ("안녕히 계세요", "goodbye"),
        ("누구세요?", "who"),
        ("도움이 필요해요", "help"),
    ],
}
DEMO = {  # how each language says "offline" in the lines that describe the responder
    "de": "Offline",
    "fr": "hors ligne",
    "es": "sin conexión",
    "it": "offline",
    "pt": "offline",
    "ru": "офлайн",
    "zh": "离线",
    "ja": "オフライン",
    "ko": "오프라인",
}
SCRIPT = {"ru": r"[а-яё]", "zh": r"[\u4e00-\u9fff]", "ja": r"[\u3040-\u30ff]", "ko": r"[\uac00-\ud7a3]"}
SAID = {
    "de": "Ich möchte eine Pizza bestellen.",
    "fr": "Je voudrais annuler ma commande.",
    "es": "Quiero cancelar mi pedido.",
    "it": "Vorrei annullare il mio ordine.",
    "pt": "Quero cancelar meu pedido.",
    "ru": "Я хочу отменить заказ.",
    "zh": "我想取消我的订单。",
    "ja": "注文をキャンセルしたいです。",
    "ko": "주문을 취소하고 싶어요.",
}


def _said(text: str, language: str, now: datetime = CLOCK) -> str:
    return LocalResponder(now=lambda: now).reply_text([ChatMessage("user", text)], language=language)


def _expected(language: str, intent: str, now: datetime = CLOCK) -> str:
    lines = LINES[language]
    if intent in ("time", "date"):
        answer: str = getattr(lines, intent)(now)
        return answer
    text: str = getattr(lines, intent)
    return text


def test_every_language_but_english_has_lines() -> None:
    assert set(LINES) == set(LANGUAGES) - {"en"} == set(ASKED)


@pytest.mark.parametrize(("language", "text", "intent"), [(k, t, i) for k, v in ASKED.items() for t, i in v])
def test_keywords_in_each_language(language: str, text: str, intent: str) -> None:
    assert _said(text, language) == _expected(language, intent)


@pytest.mark.parametrize("language", sorted(LINES))
def test_it_says_it_only_demonstrates_the_pipeline(language: str) -> None:
    lines = LINES[language]
    for reply in (lines.greeting, lines.help, lines.who, _said(SAID[language], language)):
        assert DEMO[language] in reply, reply


@pytest.mark.parametrize("language", sorted(LINES))
def test_what_it_does_not_understand_is_echoed_with_the_tail(language: str) -> None:
    said = SAID[language]
    reply = _said(said, language)
    assert said.rstrip(".。") in reply
    assert reply == LINES[language].echo.format(said=said.rstrip(".。"))
    assert "You said" not in reply


@pytest.mark.parametrize("language", sorted(LINES))
@pytest.mark.parametrize("text", ["", "   ", "?!", "…"])
def test_empty_text_asks_to_repeat_in_each_language(language: str, text: str) -> None:
    assert _said(text, language) == LINES[language].repeat


@pytest.mark.parametrize("language", sorted(LINES))
def test_replies_are_plain_spoken_text_in_their_script(language: str) -> None:
    lines = LINES[language]
    replies = [lines.greeting, lines.help, lines.who, lines.joke, lines.thanks, lines.goodbye, lines.repeat]
    replies += [lines.time(CLOCK), lines.date(CLOCK), _said(SAID[language], language)]
    for reply in replies:
        assert not re.search(r"[*#_`\[\]<>|{}]", reply), reply
        assert reply.endswith((".", "?", "!", "。", "？", "！")), reply
        assert "  " not in reply and reply == reply.strip(), reply
        if language in SCRIPT:
            assert re.search(SCRIPT[language], reply.lower()), reply


@pytest.mark.parametrize(
    ("language", "time", "date"),
    [
        ("de", "Es ist 15 Uhr 5.", "Heute ist Dienstag, der 4. März 2025."),
        ("fr", "Il est 15 heures 5.", "Nous sommes le mardi 4 mars 2025."),
        ("es", "Son las 3 y 5 de la tarde.", "Hoy es martes, 4 de marzo de 2025."),
        ("it", "Sono le 15 e 5.", "Oggi è martedì 4 marzo 2025."),
        ("pt", "São 15 horas e 5 minutos.", "Hoje é terça-feira, 4 de março de 2025."),
        ("ru", "Сейчас 15 часов 5 минут.", "Сегодня вторник, 4 марта 2025 года."),
        ("zh", "现在是15点05分。", "今天是2025年3月4日，星期二。"),
        ("ja", "今は15時5分です。", "今日は2025年3月4日、火曜日です。"),
        ("ko", "지금은 15시 5분입니다.", "오늘은 2025년 3월 4일 화요일입니다."),
    ],
)
def test_time_and_date_as_each_language_says_them(language: str, time: str, date: str) -> None:
    assert LINES[language].time(CLOCK) == time
    assert LINES[language].date(CLOCK) == date


@pytest.mark.parametrize(
    ("language", "now", "spoken"),
    [
        ("de", datetime(2025, 1, 1, 1, 0), "Es ist ein Uhr."),
        ("fr", datetime(2025, 1, 1, 0, 30), "Il est minuit 30."),
        ("fr", datetime(2025, 1, 1, 1, 0), "Il est une heure."),
        ("es", datetime(2025, 1, 1, 0, 0), "Son las 12 en punto de la madrugada."),
        ("es", datetime(2025, 1, 1, 13, 20), "Es la una y 20 de la tarde."),
        ("it", datetime(2025, 1, 1, 13, 0), "Sono le 13."),
        ("it", datetime(2025, 1, 1, 1, 10), "È l'una e 10."),
        ("pt", datetime(2025, 1, 1, 1, 1), "É uma hora e 1 minuto."),
        ("pt", datetime(2025, 1, 1, 12, 0), "É meio-dia."),
        ("ru", datetime(2025, 1, 1, 21, 1), "Сейчас 21 час 1 минута."),
        ("ru", datetime(2025, 1, 1, 22, 3), "Сейчас 22 часа 3 минуты."),
        ("ru", datetime(2025, 1, 1, 11, 0), "Сейчас ровно 11 часов."),
        ("zh", datetime(2025, 1, 1, 9, 0), "现在是9点整。"),
        ("ja", datetime(2025, 1, 1, 9, 0), "今は9時ちょうどです。"),
        ("ko", datetime(2025, 1, 1, 9, 0), "지금은 9시 정각입니다."),
    ],
)
def test_time_edge_cases(language: str, now: datetime, spoken: str) -> None:
    assert LINES[language].time(now) == spoken


def test_first_of_the_month() -> None:
    first = datetime(2025, 5, 1)
    assert LINES["fr"].date(first) == "Nous sommes le jeudi 1er mai 2025."
    assert LINES["it"].date(first) == "Oggi è giovedì 1º maggio 2025."
    assert LINES["pt"].date(first) == "Hoje é quinta-feira, 1º de maio de 2025."


def test_keywords_are_whole_words_in_spaced_languages() -> None:
    assert _said("Das Datumsformat ist falsch.", "de").startswith("Sie haben gesagt:")
    assert _said("Il a dit merci", "fr") == LINES["fr"].thanks


def test_another_language_is_not_understood_but_answered_in_the_callers() -> None:
    assert _said("What time is it?", "de").startswith("Sie haben gesagt: What time is it")
    assert _said("hello", "ja") == LINES["ja"].echo.format(said="hello")


def test_a_language_without_lines_gets_english() -> None:
    assert _said("What time is it?", "nl") == "It's 3:05 PM."
    assert _said("hello", "en") == _reply("hello")

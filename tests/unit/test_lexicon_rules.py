"""The end-of-turn and backchannel text rules in each of the ten languages (pure: no loop, no models).

Each language's words live in ``agent.core.lexicon``; the rules (``agent.core.endpointing``) take the
transcript's language as ``language=``. A language without a lexicon gets punctuation and hums only.
"""

from __future__ import annotations

import pytest

from agent.core.endpointing import (
    Acknowledgements,
    Completeness,
    EndpointPolicy,
    claims_floor,
    completeness,
    is_backchannel,
    no_bid,
    normalise_phrase,
    short_bid,
)
from agent.core.lexicon import ENGLISH, LEXICONS, answer_words, lexicon
from agent.core.lexicon.english import BACKCHANNELS, SHORT_ANSWER_WORDS
from agent.languages import LANGUAGES

POLICY = EndpointPolicy(hangover_min_ms=320, hangover_ms=420, hangover_max_ms=1500)
FRAGMENTS = EndpointPolicy(fragment_words=2, fragment_numbers=True, fragment_ms=700)

# Per language: (a thinking pause ending in a filler, an acknowledgement, a finished sentence, an interjection).
SPOKEN = {
    "en": ("I'd like a table, um.", "Yeah.", "I need a table for two people.", "Wait."),
    "de": ("Ich hätte gern einen Tisch, ähm.", "Genau.", "Wir möchten einen Tisch für zwei Personen.", "Warte!"),
    "fr": ("Je voudrais une table, euh.", "D'accord.", "Je voudrais une table pour deux personnes.", "Attends."),
    "es": ("Quería reservar una mesa, este.", "Vale.", "Quiero reservar una mesa para dos personas.", "Espera."),
    "it": ("Vorrei prenotare un tavolo, ehm.", "Va bene.", "Vorrei prenotare un tavolo per due persone.", "Aspetta."),
    "pt": ("Eu queria reservar uma mesa, hum.", "Tá bom.", "Eu queria uma mesa para duas pessoas.", "Espera aí."),
    "ru": ("Я хотел бы заказать столик, э.", "Угу.", "Я хотел бы заказать столик на двоих.", "Подождите."),
    "ko": ("테이블을 예약하고 싶은데 음.", "네.", "두 명 테이블을 예약하고 싶어요.", "잠깐만요."),
    "zh": ("我想订一张桌子嗯。", "嗯嗯。", "我想订一张两个人的桌子。", "等一下。"),
    "ja": ("予約したいんですがえーと。", "はい。", "二人で予約したいです。", "ちょっと待ってください。"),
}  # fmt: skip


def test_every_language_has_a_lexicon_and_the_examples_cover_them_all() -> None:
    assert set(LEXICONS) == set(LANGUAGES) == set(SPOKEN)
    assert all(lexicon(code) is LEXICONS[code] for code in LANGUAGES)
    assert lexicon("de-DE") is LEXICONS["de"] and lexicon("pt_BR") is LEXICONS["pt"]
    assert lexicon("nl") is None and lexicon("") is None


def test_english_keeps_its_tables() -> None:
    assert answer_words(ENGLISH) == SHORT_ANSWER_WORDS  # the greetings add no word to the short answers
    assert ENGLISH.backchannels == BACKCHANNELS


@pytest.mark.parametrize("language", sorted(SPOKEN))
def test_a_filler_at_the_end_is_a_thinking_pause(language: str) -> None:
    thinking = SPOKEN[language][0]
    assert completeness(thinking, language=language) is Completeness.TRAILING
    assert POLICY.hangover_for(thinking, language=language) == 1500
    assert POLICY.hangover_for(thinking, 0.95, language=language) == 1500  # the words win over a sure sound


@pytest.mark.parametrize("language", sorted(SPOKEN))
def test_a_finished_sentence_ends_at_the_minimum(language: str) -> None:
    finished = SPOKEN[language][2]
    assert completeness(finished, language=language) is Completeness.COMPLETE
    assert POLICY.hangover_for(finished, language=language) == 320
    assert FRAGMENTS.hangover_for(finished, language=language) == 320  # no fragment


@pytest.mark.parametrize("language", sorted(SPOKEN))
def test_an_acknowledgement_over_the_agent_does_not_take_the_floor(language: str) -> None:
    acknowledgement = SPOKEN[language][1]
    assert is_backchannel(acknowledgement, language=language)
    assert no_bid(acknowledgement, language=language)
    assert not claims_floor(acknowledgement, language=language)
    assert not is_backchannel(acknowledgement, Acknowledgements(on=False), language=language)  # the switch


@pytest.mark.parametrize("language", sorted(SPOKEN))
def test_an_interjection_over_the_agent_takes_the_floor(language: str) -> None:
    interjection = SPOKEN[language][3]
    assert short_bid(interjection, language=language)
    assert claims_floor(interjection, language=language)
    assert not is_backchannel(interjection, language=language)
    assert not no_bid(interjection, language=language)


@pytest.mark.parametrize("language", sorted(SPOKEN))
def test_a_finished_sentence_is_no_acknowledgement(language: str) -> None:
    assert not is_backchannel(SPOKEN[language][2], language=language)


# --- German: "ja", "genau" over a reply; "warte" stops it -------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["Ja.", "ja", "Genau.", "Ja, genau.", "Jaaa.", "Mhm.", "Okay.", "Stimmt.", "Alles klar."]
)
def test_german_acknowledgements(text: str) -> None:
    assert is_backchannel(text, language="de")
    assert not claims_floor(text, language="de")


@pytest.mark.parametrize(
    "text", ["Warte!", "warte", "Moment mal.", "Stopp.", "Nein.", "Ja, aber was ist mit Dienstag?", "Entschuldigung."]
)
def test_german_interruptions(text: str) -> None:
    assert claims_floor(text, language="de")
    assert not is_backchannel(text, language="de")


def test_english_words_are_not_german_ones() -> None:
    assert not short_bid("Listen.", language="de")  # an English interjection
    assert short_bid("Listen.", language="en")
    assert is_backchannel("Ja.", language="de") and not is_backchannel("Ja.", language="en")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ich hätte gerne einen Tisch und", Completeness.TRAILING),
        ("Ich hätte gerne einen Tisch für", Completeness.TRAILING),
        ("Ich möchte ähm", Completeness.TRAILING),
        ("Ich möchte ähhh", Completeness.TRAILING),  # drawn out
        ("Ich möchte, ähm?", Completeness.TRAILING),  # a sound before Whisper's question mark
        # Separable prefixes and pronouns end whole sentences.
        ("Hör auf.", Completeness.COMPLETE),
        ("Ruf mich bitte an.", Completeness.COMPLETE),
        ("Ich mag das.", Completeness.COMPLETE),
        ("Kommst du mit?", Completeness.COMPLETE),
    ],
)
def test_german_endings(text: str, expected: Completeness) -> None:
    assert completeness(text, language="de") is expected


def test_german_fragments_and_short_answers() -> None:
    assert FRAGMENTS.hangover_for("Wenn es morgen regnet.", language="de") == 700  # no main clause yet
    assert FRAGMENTS.hangover_for("Wenn es regnet, bleiben wir zu Hause.", language="de") == 320
    assert FRAGMENTS.hangover_for("Es ist fünfundzwanzig.", language="de") == 700  # a number still being said
    assert FRAGMENTS.hangover_for("Nein, danke.", language="de") == 320
    assert FRAGMENTS.hangover_for("Guten Morgen.", language="de") == 320


# --- the other languages written with spaces --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("fr", "Je pense que", Completeness.TRAILING),
        ("fr", "Je vais à", Completeness.TRAILING),
        ("fr", "Je voudrais le", Completeness.TRAILING),
        ("fr", "Fais-le, s'il te plaît.", Completeness.COMPLETE),  # "le" after a hyphen is a pronoun
        ("es", "Creo que", Completeness.TRAILING),
        ("es", "Quiero pues", Completeness.TRAILING),
        ("es", "Y o sea", Completeness.TRAILING),  # a filler of two words
        ("es", "¿Este?", Completeness.COMPLETE),  # a word filler before a question mark is a question
        ("es", "No sé nada.", Completeness.COMPLETE),
        ("it", "Penso che", Completeness.TRAILING),
        ("it", "Non c'è di che.", Completeness.COMPLETE),
        ("it", "Vorrei, cioè", Completeness.TRAILING),
        ("pt", "Eu queria, tipo", Completeness.TRAILING),
        ("pt", "Eu queria ééé", Completeness.TRAILING),  # "é" drawn out is a thinking sound
        ("pt", "É isso mesmo.", Completeness.COMPLETE),
        ("pt", "Acho que", Completeness.TRAILING),
        ("ru", "Я думаю, что", Completeness.TRAILING),
        ("ru", "Не за что.", Completeness.COMPLETE),
        ("ru", "Я хочу как бы", Completeness.TRAILING),
        ("ru", "Что это значит?", Completeness.COMPLETE),
        ("ru", "Я иду в", Completeness.TRAILING),
        ("ru", "Я люблю это.", Completeness.COMPLETE),
        ("ko", "사과를", Completeness.TRAILING),  # an object with no verb yet
        ("ko", "비싸지만", Completeness.TRAILING),  # "but"
        ("ko", "저는 김지은.", Completeness.COMPLETE),  # a name ending in "-은"
        ("ko", "그리고", Completeness.TRAILING),
    ],
)
def test_words_that_leave_a_clause_open(language: str, text: str, expected: Completeness) -> None:
    assert completeness(text, language=language) is expected


@pytest.mark.parametrize(
    ("language", "acknowledgement", "interruption"),
    [
        ("fr", "Ouais, d’accord.", "Oui, mais non."),
        ("es", "Sí, claro.", "¿Qué?"),
        ("it", "Sì, sì, certo.", "Scusi, un attimo."),
        ("pt", "Uhum.", "Não, não."),
        ("ru", "Ага, понятно.", "Да, но во вторник нет."),
        ("ko", "네네.", "네, 근데 화요일은요?"),
    ],
)
def test_acknowledgements_and_interruptions(language: str, acknowledgement: str, interruption: str) -> None:
    assert is_backchannel(acknowledgement, language=language)
    assert not claims_floor(acknowledgement, language=language)
    assert claims_floor(interruption, language=language)
    assert not is_backchannel(interruption, language=language)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("fr", "D'accord, merci."),
        ("es", "Hasta luego."),
        ("it", "Ciao, grazie mille."),
        ("pt", "Bom dia."),
        ("ru", "Спасибо, до свидания."),
        ("ko", "안녕히 가세요."),
    ],
)
def test_short_answers_and_greetings_are_no_fragments(language: str, text: str) -> None:
    assert FRAGMENTS.hangover_for(text, language=language) == 320


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("es", "Si llueve mañana."),  # opens with "if": no main clause yet
        ("fr", "Quand il arrivera demain."),
        ("it", "Sono ventitré."),  # a number still being said
        ("pt", "São vinte e cinco."),
        ("ru", "Двадцать пять."),
    ],
)
def test_fragments(language: str, text: str) -> None:
    assert FRAGMENTS.hangover_for(text, language=language) == 700


# --- Chinese and Japanese: no spaces, matched by characters -----------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("ja", "えーと", Completeness.TRAILING),
        ("ja", "明日は、えーと", Completeness.TRAILING),
        ("ja", "明日はえーーと", Completeness.TRAILING),  # drawn out
        ("ja", "あのー", Completeness.TRAILING),
        ("ja", "雨が降ったら", Completeness.TRAILING),
        ("ja", "ちょっと高いですけど", Completeness.TRAILING),
        ("ja", "東京から", Completeness.TRAILING),
        ("ja", "東京からですか？", Completeness.COMPLETE),
        ("ja", "ありがとうございます。", Completeness.COMPLETE),
        ("zh", "我想订嗯", Completeness.TRAILING),
        ("zh", "我想，那个", Completeness.TRAILING),  # "那个" standing alone is a filler...
        ("zh", "我要那个。", Completeness.COMPLETE),  # ... and "that one" at the end of a sentence
        ("zh", "我要苹果和", Completeness.TRAILING),
        ("zh", "今天天气很暖和。", Completeness.COMPLETE),  # "暖和" (warm) ends in "和" (and)
        ("zh", "你们几点开门？", Completeness.COMPLETE),
        ("zh", "我想订一张桌子，", Completeness.TRAILING),  # a full-width comma
        ("zh", "因为", Completeness.TRAILING),
    ],
)
def test_compact_languages_are_matched_by_characters(language: str, text: str, expected: Completeness) -> None:
    assert completeness(text, language=language) is expected


def test_japanese_thinking_pause_waits_longest() -> None:
    assert POLICY.hangover_for("えーと", language="ja") == 1500
    assert POLICY.hangover_for("えーと", 0.99, language="ja") == 1500


def test_chinese_and_japanese_acknowledgements_and_interruptions() -> None:
    for text in ("嗯。", "对对对。", "好的，好的。", "是的", "哈哈哈"):
        assert is_backchannel(text, language="zh") and not claims_floor(text, language="zh"), text
    for text in ("等等！", "停。", "不对。", "对，但是星期二呢？", "嗯，等一下"):
        assert claims_floor(text, language="zh") and not is_backchannel(text, language="zh"), text
    for text in ("はい。", "うんうん。", "なるほど。", "そうですね。"):
        assert is_backchannel(text, language="ja") and not claims_floor(text, language="ja"), text
    for text in ("待って！", "すみません。", "はい、でも火曜日は？"):
        assert claims_floor(text, language="ja") and not is_backchannel(text, language="ja"), text
    assert is_backchannel("明", language="zh")  # a quick transcript cut short in "明白"
    assert not claims_floor("不客气", language="zh")  # "you're welcome": no bid, though it begins with "不"


@pytest.mark.parametrize(
    ("language", "text", "hangover"),
    [
        ("zh", "我要那个。", 700),  # four characters: two words, a fragment
        ("zh", "我想订一张两个人的桌子。", 320),
        ("zh", "好的，谢谢。", 320),  # a short answer
        ("ja", "こんにちは。", 320),  # a greeting
        ("zh", "如果明天下雨。", 700),  # "if" with no main clause
        ("zh", "如果明天下雨，我们就不去了。", 320),
        ("zh", "我的电话号码是一三八。", 700),  # a number still being said
        ("zh", "他是我们班的第一。", 320),  # one numeral character ends ordinary words ("第一")
    ],
)
def test_compact_fragments_count_two_characters_as_a_word(language: str, text: str, hangover: int) -> None:
    assert FRAGMENTS.hangover_for(text, language=language) == hangover


# --- normalisation and languages without a lexicon -------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "normalised"),
    [
        ("de", "Ähm, JA!", "ähm ja"),
        ("fr", "D’accord… Très bien", "d'accord très bien"),
        ("es", "¡Sí, señor!", "sí señor"),
        ("ru", "Ёлки-палки, да.", "елки палки да"),
        ("ja", "はい、そうですね。", "はいそうですね"),
        ("zh", "OK，好的", "ok好的"),
        ("ko", "네, 알겠습니다.", "네 알겠습니다"),
        ("nl", "Ja, prima!", "ja prima"),
    ],
)
def test_normalisation_keeps_letters_of_every_script(language: str, text: str, normalised: str) -> None:
    assert normalise_phrase(text, language=language) == normalised


def test_an_unknown_language_gets_punctuation_and_hums_not_english_words() -> None:
    assert completeness("I want to go to", language="nl") is Completeness.UNKNOWN  # no English "to"
    assert completeness("Ik wil graag,", language="nl") is Completeness.TRAILING
    assert completeness("Ik wil graag een tafel.", language="nl") is Completeness.COMPLETE
    assert completeness("Waar?", language="nl") is Completeness.COMPLETE
    assert not is_backchannel("Yeah.", language="nl")
    assert is_backchannel("Mhm.", language="nl")
    assert not short_bid("Wait.", language="nl")
    assert not claims_floor("Wacht.", language="nl")
    assert claims_floor("Ik wil graag een tafel voor twee.", language="nl")  # enough words
    assert FRAGMENTS.hangover_for("Dat is 25.", language="nl") == 700  # digits need no words
    assert FRAGMENTS.hangover_for("Ja.", language="nl") == 420  # no short-answer or fragment words


def test_configured_additions_count_in_every_language() -> None:
    mine = Acknowledgements(extra=("jawoll",))
    assert is_backchannel("Jawoll!", mine, language="de")
    assert is_backchannel("Jawoll!", mine, language="nl")  # a language without a lexicon
    assert not is_backchannel("Jawoll!", language="de")
    assert is_backchannel("Ja.", mine, language="de") and not is_backchannel("Ja.", mine, language="en")


def test_no_language_is_assumed() -> None:
    """A forgotten language is an error, never silently English."""
    for text in ("Um", "Yeah, but what about Tuesday", "I need a table for two.", "Ja."):
        with pytest.raises(TypeError):
            completeness(text)  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            claims_floor(text)  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            is_backchannel(text)  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            POLICY.hangover_for(text)  # type: ignore[call-arg]

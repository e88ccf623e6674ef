"""``python -m agent voices check NAME``: how much the configured voice backend still sounds like an enrolled voice.

It speaks a few built-in sentences (``SENTENCES``, five per language for each of the ten languages) in the voice
with the configured cloning backend (``AGENT_TTS__BACKEND`` sagemaker or vllm-omni), and scores each against the
voice's reference audio with the speaker-similarity model (``agent.adapters.resemblyzer_similarity``; installed
by ``make``). The same score as the server's ``voice_agent_voice_similarity`` gauge (``agent.runtime.call.fidelity``),
on demand: a drift signal to compare over time and across voices, not a verifier of who is speaking.

Reason to change: how a voice is checked (the sentences, the score, the report).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import textwrap
from collections.abc import Callable, Mapping

from agent.config import Settings
from agent.errors import ConfigError
from agent.languages import LANGUAGES, NAMES, parse_language
from agent.ports import TextToSpeech

SENTENCES: Mapping[str, tuple[str, ...]] = {
    "en": (
        "The weather has been lovely all week, so we spent most evenings in the garden.",
        "Could you tell me when the next train to the city centre leaves?",
        "I have booked a table for four people at eight o'clock tonight.",
        "Thank you for calling, your order will arrive on Thursday afternoon.",
        "Please remember to bring your passport and a copy of the invitation.",
    ),
    "zh": (
        "这个星期天气一直很好，所以我们每天晚上都在花园里度过。",
        "请问下一班去市中心的火车什么时候出发？",
        "我已经预订了今晚八点四个人的桌子。",
        "感谢您的来电，您的订单将在星期四下午送达。",
        "请记得带上您的护照和一份邀请函的复印件。",
    ),
    "ja": (
        "今週はずっと天気が良かったので、毎晩庭で過ごしました。",
        "市内中心部へ行く次の電車はいつ出発しますか。",
        "今夜八時に四人で席を予約しました。",
        "お電話ありがとうございます。ご注文の品は木曜日の午後に届きます。",
        "パスポートと招待状のコピーを忘れずにお持ちください。",
    ),
    "ko": (
        "이번 주 내내 날씨가 좋아서 저녁마다 정원에서 시간을 보냈어요.",
        "시내 중심가로 가는 다음 기차가 언제 출발하는지 알려 주시겠어요?",
        "오늘 저녁 여덟 시에 네 명 자리를 예약했습니다.",
        "전화해 주셔서 감사합니다. 주문하신 상품은 목요일 오후에 도착합니다.",
        "여권과 초대장 사본을 꼭 가져오시기 바랍니다.",
    ),
    "de": (
        "Das Wetter war die ganze Woche herrlich, deshalb waren wir abends oft im Garten.",
        "Können Sie mir sagen, wann der nächste Zug in die Innenstadt fährt?",
        "Ich habe für heute Abend um acht Uhr einen Tisch für vier Personen reserviert.",
        "Vielen Dank für Ihren Anruf, Ihre Bestellung kommt am Donnerstagnachmittag an.",
        "Bitte denken Sie daran, Ihren Reisepass und eine Kopie der Einladung mitzubringen.",
    ),
    "fr": (
        "Il a fait très beau toute la semaine, alors nous avons passé nos soirées au jardin.",
        "Pourriez-vous me dire quand part le prochain train pour le centre-ville ?",
        "J'ai réservé une table pour quatre personnes ce soir à vingt heures.",
        "Merci de votre appel, votre commande arrivera jeudi après-midi.",
        "N'oubliez pas d'apporter votre passeport et une copie de l'invitation.",
    ),
    "ru": (
        "Всю неделю стояла прекрасная погода, поэтому вечерами мы сидели в саду.",
        "Скажите, пожалуйста, когда отправляется следующий поезд в центр города?",
        "Я забронировал столик на четырёх человек сегодня на восемь часов вечера.",
        "Спасибо за звонок, ваш заказ прибудет в четверг после обеда.",
        "Пожалуйста, не забудьте взять с собой паспорт и копию приглашения.",
    ),
    "pt": (
        "O tempo esteve ótimo a semana toda, por isso passamos as noites no jardim.",
        "Pode me dizer quando sai o próximo trem para o centro da cidade?",
        "Reservei uma mesa para quatro pessoas hoje à noite, às oito horas.",
        "Obrigado por ligar, o seu pedido vai chegar na quinta-feira à tarde.",
        "Por favor, lembre-se de trazer o seu passaporte e uma cópia do convite.",
    ),
    "es": (
        "Ha hecho muy buen tiempo toda la semana, así que pasamos las tardes en el jardín.",
        "¿Podría decirme cuándo sale el próximo tren hacia el centro de la ciudad?",
        "He reservado una mesa para cuatro personas esta noche a las ocho.",
        "Gracias por llamar, su pedido llegará el jueves por la tarde.",
        "Por favor, recuerde traer su pasaporte y una copia de la invitación.",
    ),
    "it": (
        "Il tempo è stato splendido per tutta la settimana, così abbiamo passato le serate in giardino.",
        "Potrebbe dirmi quando parte il prossimo treno per il centro città?",
        "Ho prenotato un tavolo per quattro persone stasera alle otto.",
        "Grazie per aver chiamato, il suo ordine arriverà giovedì pomeriggio.",
        "Si ricordi di portare il passaporto e una copia dell'invito.",
    ),
}
MAX_SENTENCES = min(len(texts) for texts in SENTENCES.values())
DEFAULT_SENTENCES = 3
INTERPRETATION = (
    "note: speaker similarity (resemblyzer embeddings, cosine 0..1) is a drift signal, not a verifier. On the "
    'project\'s synthetic test voices (docs/benchmarks.md, "Voice similarity") a voice scored 0.85-0.96 against '
    "its own reference and others 0.33-0.93 (median 0.66): similar voices overlap, so no single score proves or "
    "disproves who is speaking. Compare this voice's scores over time and with your other voices: a mean 0.05 or "
    "more below its usual is worth listening to."
)


def language_code(value: str) -> str:
    """``--language``: a code of ``agent.languages`` (or a name parse_language accepts)."""
    try:
        code = parse_language(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if code is None:
        raise argparse.ArgumentTypeError(f"give a language: one of {', '.join(LANGUAGES)}")
    return code


def sentence_count(value: str) -> int:
    try:
        count = int(value)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_SENTENCES:
        raise argparse.ArgumentTypeError(f"give 1-{MAX_SENTENCES} sentences")
    return count


def add_arguments(check: argparse.ArgumentParser) -> None:
    check.add_argument("name", help="the enrolled voice")
    check.add_argument(
        "--language",
        type=language_code,
        default=None,
        help=f"the language to speak: one of {', '.join(LANGUAGES)} (default: the voice's own language)",
    )
    check.add_argument(
        "--sentences",
        type=sentence_count,
        default=DEFAULT_SENTENCES,
        help=f"how many built-in sentences to speak, 1-{MAX_SENTENCES} (default {DEFAULT_SENTENCES})",
    )


DESCRIPTION = (
    "Speak a few built-in sentences in an enrolled voice with the configured cloning backend "
    "(AGENT_TTS__BACKEND=sagemaker or vllm-omni) and score each against the voice's reference audio with the "
    "offline speaker-similarity model (resemblyzer's voice encoder, installed by make): per sentence, then the "
    "mean and the minimum. The same score as the server's voice_agent_voice_similarity gauge. It is a drift "
    "signal to compare over time and across voices, not a verifier of who is speaking."
)


async def run_check(args: argparse.Namespace, settings: Settings, progress: Callable[[str], None]) -> int:
    """Run ``voices check``; raises ``AgentError`` (``UnknownVoice``, ``ConfigError``, ``ProviderError``...)."""
    # Imported here, as in agent.__main__: the runtime and the adapters load only for the commands that use them.
    from agent.wiring import build_speaker_scorer, build_tts, build_voice_store

    if settings.tts.backend == "piper":
        raise ConfigError(
            "the piper backend speaks only its own local voice; voices check measures a cloning backend "
            "(AGENT_TTS__BACKEND=sagemaker or vllm-omni) against an enrolled voice's reference audio"
        )
    progress("loading the speaker-similarity model")
    scorer = await asyncio.to_thread(build_speaker_scorer, settings)
    store = build_voice_store(settings)
    voice = await store.get(args.tenant, args.name)
    language = args.language or parse_language(voice.record.language) or "en"
    tts = build_tts(settings, store)
    try:
        handle = await tts.resolve_voice(voice.record.name, args.tenant)
        texts = SENTENCES[language][: args.sentences]
        print(
            f"voice {voice.record.name!r} in tenant {args.tenant!r}, {NAMES[language]} ({language}), "
            f"voice backend {settings.tts.backend}, {len(texts)} sentence(s)"
        )
        print(f"{'#':>2}  {'SIMILARITY':>10}  {'AUDIO':>6}  SENTENCE")
        scores = []
        for i, text in enumerate(texts, 1):
            progress(f"sentence {i}/{len(texts)}: synthesizing")
            pcm = b"".join([chunk async for chunk in tts.synthesize(text, handle, language=language)])
            progress(f"sentence {i}/{len(texts)}: scoring {len(pcm) / 2 / tts.sample_rate:.1f} s of audio")
            score = await scorer.similarity(voice.wav, pcm, tts.sample_rate)
            scores.append(score)
            seconds = len(pcm) / 2 / tts.sample_rate
            print(f"{i:>2}  {score:>10.3f}  {seconds:>4.1f} s  {text}", flush=True)
    finally:
        await _close(tts)
    print(f"mean {sum(scores) / len(scores):.3f}, min {min(scores):.3f} over {len(scores)} sentence(s)")
    print(textwrap.fill(INTERPRETATION, width=100, subsequent_indent="      "))
    return 0


async def _close(tts: TextToSpeech) -> None:
    close = getattr(tts, "aclose", None) or getattr(tts, "close", None)
    if close is None:
        return
    with contextlib.suppress(Exception):
        result = close()
        if inspect.isawaitable(result):
            await result

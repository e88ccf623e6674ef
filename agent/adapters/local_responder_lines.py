"""What the offline responder says and listens for in the nine languages other than English.

One ``Lines`` per language: the fixed replies (each honest that this is only a demo of the speech pipeline where
it describes itself), the time and the date as spoken there, a short joke, and the keywords that pick a reply.
English lives in ``local_responder`` itself. Pure data and formatting; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Lines:
    """One language's replies. ``echo`` holds ``{said}``; ``keywords`` maps an intent (``who``, ``help``,
    ``joke``, ``time``, ``date``, ``thanks``, ``goodbye``, ``greeting``) to its phrases, where a word ending in
    ``*`` matches any word it begins. ``spaced``: words are separated by spaces (matched word by word, accents
    ignored); else phrases are looked for anywhere in the text, spaces ignored (Chinese, Japanese, Korean)."""

    greeting: str
    help: str
    who: str
    joke: str
    thanks: str
    goodbye: str
    repeat: str
    echo: str
    time: Callable[[datetime], str]
    date: Callable[[datetime], str]
    keywords: Mapping[str, tuple[str, ...]]
    spaced: bool = True


def _plural_ru(n: int, one: str, few: str, many: str) -> str:
    if n % 10 == 1 and n % 100 != 11:
        return one
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return few
    return many


def _time_de(t: datetime) -> str:
    hour = "ein" if t.hour == 1 else str(t.hour)
    return f"Es ist {hour} Uhr {t.minute}." if t.minute else f"Es ist {hour} Uhr."


def _time_fr(t: datetime) -> str:
    hour = {0: "minuit", 12: "midi", 1: "une heure"}.get(t.hour, f"{t.hour} heures")
    return f"Il est {hour} {t.minute}." if t.minute else f"Il est {hour}."


def _time_es(t: datetime) -> str:
    hour = t.hour % 12 or 12
    part = ("de la madrugada", "de la mañana", "de la tarde", "de la noche")[
        0 if t.hour < 6 else 1 if t.hour < 12 else 2 if t.hour < 20 else 3
    ]
    head = "Es la una" if hour == 1 else f"Son las {hour}"
    minutes = f"y {t.minute}" if t.minute else "en punto"
    return f"{head} {minutes} {part}."


def _time_it(t: datetime) -> str:
    head = {0: "È mezzanotte", 12: "È mezzogiorno", 1: "È l'una"}.get(t.hour, f"Sono le {t.hour}")
    return f"{head} e {t.minute}." if t.minute else f"{head}."


def _time_pt(t: datetime) -> str:
    head = {0: "É meia-noite", 12: "É meio-dia", 1: "É uma hora"}.get(t.hour, f"São {t.hour} horas")
    if not t.minute:
        return f"{head}."
    return f"{head} e {t.minute} {'minuto' if t.minute == 1 else 'minutos'}."


def _time_ru(t: datetime) -> str:
    hours = f"{t.hour} {_plural_ru(t.hour, 'час', 'часа', 'часов')}"
    if not t.minute:
        return f"Сейчас ровно {hours}."
    return f"Сейчас {hours} {t.minute} {_plural_ru(t.minute, 'минута', 'минуты', 'минут')}."


def _time_zh(t: datetime) -> str:
    return f"现在是{t.hour}点{t.minute:02d}分。" if t.minute else f"现在是{t.hour}点整。"


def _time_ja(t: datetime) -> str:
    return f"今は{t.hour}時{t.minute}分です。" if t.minute else f"今は{t.hour}時ちょうどです。"


def _time_ko(t: datetime) -> str:
    return f"지금은 {t.hour}시 {t.minute}분입니다." if t.minute else f"지금은 {t.hour}시 정각입니다."


def _names(words: str) -> tuple[str, ...]:
    """Weekday (Monday first) or month names, written as one string."""
    return tuple(words.split())


_DE_DAYS = _names("Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag")
_DE_MONTHS = _names("Januar Februar März April Mai Juni Juli August September Oktober November Dezember")
_FR_DAYS = _names("lundi mardi mercredi jeudi vendredi samedi dimanche")
_FR_MONTHS = _names("janvier février mars avril mai juin juillet août septembre octobre novembre décembre")
_ES_DAYS = _names("lunes martes miércoles jueves viernes sábado domingo")
_ES_MONTHS = _names("enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre")
_IT_DAYS = _names("lunedì martedì mercoledì giovedì venerdì sabato domenica")
_IT_MONTHS = _names("gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre")
_PT_DAYS = _names("segunda-feira terça-feira quarta-feira quinta-feira sexta-feira sábado domingo")
_PT_MONTHS = _names("janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro")
_RU_DAYS = _names("понедельник вторник среда четверг пятница суббота воскресенье")
# Month names in the genitive ("4 марта"), as a date says them.
_RU_MONTHS = _names("января февраля марта апреля мая июня июля августа сентября октября ноября декабря")
_ZH_DAYS = _names("星期一 星期二 星期三 星期四 星期五 星期六 星期日")
_JA_DAYS = _names("月曜日 火曜日 水曜日 木曜日 金曜日 土曜日 日曜日")
_KO_DAYS = _names("월요일 화요일 수요일 목요일 금요일 토요일 일요일")


def _date_de(d: datetime) -> str:
    return f"Heute ist {_DE_DAYS[d.weekday()]}, der {d.day}. {_DE_MONTHS[d.month - 1]} {d.year}."


def _date_fr(d: datetime) -> str:
    day = "1er" if d.day == 1 else str(d.day)
    return f"Nous sommes le {_FR_DAYS[d.weekday()]} {day} {_FR_MONTHS[d.month - 1]} {d.year}."


def _date_es(d: datetime) -> str:
    return f"Hoy es {_ES_DAYS[d.weekday()]}, {d.day} de {_ES_MONTHS[d.month - 1]} de {d.year}."


def _date_it(d: datetime) -> str:
    day = "1º" if d.day == 1 else str(d.day)
    return f"Oggi è {_IT_DAYS[d.weekday()]} {day} {_IT_MONTHS[d.month - 1]} {d.year}."


def _date_pt(d: datetime) -> str:
    day = "1º" if d.day == 1 else str(d.day)
    return f"Hoje é {_PT_DAYS[d.weekday()]}, {day} de {_PT_MONTHS[d.month - 1]} de {d.year}."


def _date_ru(d: datetime) -> str:
    return f"Сегодня {_RU_DAYS[d.weekday()]}, {d.day} {_RU_MONTHS[d.month - 1]} {d.year} года."


def _date_zh(d: datetime) -> str:
    return f"今天是{d.year}年{d.month}月{d.day}日，{_ZH_DAYS[d.weekday()]}。"


def _date_ja(d: datetime) -> str:
    return f"今日は{d.year}年{d.month}月{d.day}日、{_JA_DAYS[d.weekday()]}です。"


def _date_ko(d: datetime) -> str:
    return f"오늘은 {d.year}년 {d.month}월 {d.day}일 {_KO_DAYS[d.weekday()]}입니다."


LINES: Mapping[str, Lines] = {
    "de": Lines(
        greeting="Hallo! Ich bin die Offline-Demo dieses Sprachassistenten und führe nur die Sprachverarbeitung "
        "vor. Ich kann Ihnen die Uhrzeit oder das Datum sagen, einen Witz erzählen oder wiederholen, was Sie "
        "sagen. Was möchten Sie?",
        help="Ich bin ein einfacher Offline-Responder, kein echtes Sprachmodell. Ich kann Ihnen die Uhrzeit oder "
        "das heutige Datum sagen, einen Witz erzählen oder wiederholen, was ich gehört habe. Damit lässt sich die "
        "Sprachverarbeitung gut testen.",
        who="Ich bin die Offline-Demo dieses Sprachassistenten. Statt eines Sprachmodells folge ich ein paar "
        "einfachen Regeln, damit das ganze System auf einem Rechner ohne Netzwerk laufen kann.",
        joke="Treffen sich zwei Magnete. Sagt der eine: Was soll ich heute bloß anziehen?",
        thanks="Gern geschehen! Kann ich sonst noch etwas für Sie tun?",
        goodbye="Auf Wiederhören! Danke für das Gespräch und noch einen schönen Tag.",
        repeat="Entschuldigung, das habe ich nicht verstanden. Können Sie das noch einmal sagen?",
        echo="Sie haben gesagt: {said}. Ich bin nur die Offline-Demo, mehr als Wiederholen kann ich nicht.",
        time=_time_de,
        date=_date_de,
        keywords={
            "who": ("wer bist du", "wer sind sie", "wie heißt du", "wie heißen sie", "dein name", "ihr name"),
            "help": ("hilfe", "was kannst du", "was können sie"),
            "joke": ("witz*",),
            "time": ("uhrzeit", "wie spät", "wie viel uhr", "wieviel uhr"),
            "date": ("datum", "welcher tag", "welchen tag", "der wievielte", "den wievielten"),
            "thanks": ("danke*", "vielen dank"),
            "goodbye": ("tschüss", "tschüs", "auf wiedersehen", "auf wiederhören", "bis bald", "ciao"),
            "greeting": ("hallo", "guten tag", "guten morgen", "guten abend", "servus", "moin", "grüß gott"),
        },
    ),
    "fr": Lines(
        greeting="Bonjour ! Je suis la démo hors ligne de cet agent vocal, je ne fais que montrer le traitement "
        "de la parole. Je peux vous donner l'heure ou la date, raconter une blague ou répéter ce que vous dites. "
        "Que voulez-vous ?",
        help="Je suis un simple répondeur hors ligne, pas un vrai modèle de langage. Je peux vous donner l'heure "
        "ou la date du jour, raconter une blague ou répéter ce que j'ai entendu, ce qui est pratique pour tester "
        "le traitement de la parole.",
        who="Je suis la démo hors ligne de cet agent vocal. Je suis quelques règles simples au lieu d'un modèle "
        "de langage, pour que tout le système fonctionne sur un seul ordinateur, sans réseau.",
        joke="Pourquoi les plongeurs plongent-ils toujours en arrière ? Parce que sinon, ils tombent dans le bateau.",
        thanks="Je vous en prie ! Puis-je faire autre chose pour vous ?",
        goodbye="Au revoir ! Merci pour cette conversation, et bonne journée.",
        repeat="Désolé, je n'ai pas compris. Pouvez-vous répéter ?",
        echo="Vous avez dit : {said}. Je ne suis que la démo hors ligne, alors je ne peux que le répéter.",
        time=_time_fr,
        date=_date_fr,
        keywords={
            "who": ("qui es tu", "qui êtes vous", "comment tu t appelles", "comment vous appelez vous", "ton nom"),
            "help": ("aide", "aidez moi", "que sais tu faire", "que pouvez vous faire", "tu sais faire quoi"),
            "joke": ("blague*",),
            "time": ("quelle heure", "l heure"),
            "date": ("date", "quel jour", "on est le combien"),
            "thanks": ("merci",),
            "goodbye": ("au revoir", "à bientôt", "à plus tard", "bonne journée", "bonne soirée"),
            "greeting": ("bonjour", "bonsoir", "salut", "coucou", "allô"),
        },
    ),
    "es": Lines(
        greeting="¡Hola! Soy la demostración sin conexión de este agente de voz y solo muestro el procesamiento "
        "del habla. Puedo decirle la hora o la fecha, contarle un chiste o repetir lo que diga. ¿Qué desea?",
        help="Soy un contestador sencillo sin conexión, no un modelo de lenguaje de verdad. Puedo decirle la hora "
        "o la fecha de hoy, contarle un chiste o repetir lo que he oído, algo útil para probar el procesamiento "
        "del habla.",
        who="Soy la demostración sin conexión de este agente de voz. Sigo unas pocas reglas sencillas en lugar "
        "de un modelo de lenguaje, para que todo el sistema funcione en un solo equipo y sin red.",
        joke="¿Qué le dice un jardinero a otro? ¡Disfrutemos mientras podamos!",
        thanks="¡De nada! ¿Puedo ayudarle en algo más?",
        goodbye="¡Adiós! Gracias por hablar conmigo, y que tenga un buen día.",
        repeat="Perdón, no le he entendido. ¿Puede repetirlo?",
        echo="Usted ha dicho: {said}. Solo soy la demostración sin conexión, así que repetirlo es lo único que "
        "puedo hacer.",
        time=_time_es,
        date=_date_es,
        keywords={
            "who": ("quién eres", "quién es usted", "cómo te llamas", "cómo se llama", "tu nombre", "su nombre"),
            "help": ("ayuda", "ayúdame", "qué puedes hacer", "qué sabes hacer", "qué puede hacer"),
            "joke": ("chiste*",),
            "time": ("qué hora", "la hora"),
            "date": ("fecha", "qué día", "a cuántos estamos"),
            "thanks": ("gracias",),
            "goodbye": ("adiós", "hasta luego", "hasta pronto", "chao", "chau"),
            "greeting": ("hola", "buenos días", "buenas tardes", "buenas noches", "buenas"),
        },
    ),
    "it": Lines(
        greeting="Salve! Sono la demo offline di questo agente vocale e mostro soltanto l'elaborazione del "
        "parlato. Posso dirle l'ora o la data, raccontarle una barzelletta o ripetere quello che dice. Che cosa "
        "desidera?",
        help="Sono un semplice risponditore offline, non un vero modello linguistico. Posso dirle l'ora o la data "
        "di oggi, raccontarle una barzelletta o ripetere ciò che ho sentito, cosa utile per provare "
        "l'elaborazione del parlato.",
        who="Sono la demo offline di questo agente vocale. Seguo poche regole semplici invece di un modello "
        "linguistico, così l'intero sistema può funzionare su un solo computer senza rete.",
        joke="Qual è il colmo per un giardiniere? Piantare in asso la fidanzata.",
        thanks="Prego! Posso fare altro per lei?",
        goodbye="Arrivederci! Grazie per la chiacchierata, e buona giornata.",
        repeat="Mi scusi, non ho capito. Può ripetere?",
        echo="Ha detto: {said}. Sono solo la demo offline, quindi posso soltanto ripeterlo.",
        time=_time_it,
        date=_date_it,
        keywords={
            "who": ("chi sei", "chi è lei", "come ti chiami", "come si chiama", "il tuo nome", "il suo nome"),
            "help": ("aiuto", "aiutami", "cosa sai fare", "cosa puoi fare", "che cosa sai fare"),
            "joke": ("barzellett*", "battuta"),
            "time": ("che ora", "che ore", "l ora"),
            "date": ("data", "che giorno", "quanti ne abbiamo"),
            "thanks": ("grazie",),
            "goodbye": ("arrivederci", "a presto", "addio", "buona giornata", "buona serata"),
            "greeting": ("ciao", "salve", "buongiorno", "buonasera", "pronto"),
        },
    ),
    "pt": Lines(
        greeting="Olá! Sou a demonstração offline deste agente de voz e só mostro o processamento da fala. Posso "
        "dizer a hora ou a data, contar uma piada ou repetir o que você disser. O que você gostaria?",
        help="Sou um respondedor offline simples, não um modelo de linguagem de verdade. Posso dizer a hora ou a "
        "data de hoje, contar uma piada ou repetir o que ouvi, o que é útil para testar o processamento da fala.",
        who="Sou a demonstração offline deste agente de voz. Sigo algumas regras simples em vez de um modelo de "
        "linguagem, para que o sistema inteiro funcione em um só computador, sem rede.",
        joke="O que o pato disse para a pata? Vem quá!",
        thanks="De nada! Posso ajudar em mais alguma coisa?",
        goodbye="Tchau! Obrigado pela conversa, e tenha um ótimo dia.",
        repeat="Desculpe, não entendi. Pode repetir?",
        echo="Você disse: {said}. Sou só a demonstração offline, então repetir é o melhor que posso fazer.",
        time=_time_pt,
        date=_date_pt,
        keywords={
            "who": ("quem é você", "quem és tu", "qual é o seu nome", "seu nome", "como você se chama"),
            "help": ("ajuda", "me ajuda", "o que você sabe fazer", "o que você pode fazer"),
            "joke": ("piada*",),
            "time": ("que horas", "que hora", "horas são"),
            "date": ("data", "que dia", "dia é hoje"),
            "thanks": ("obrigad*", "valeu"),
            "goodbye": ("tchau", "adeus", "até logo", "até mais", "até breve"),
            "greeting": ("olá", "oi", "bom dia", "boa tarde", "boa noite", "alô"),
        },
    ),
    "ru": Lines(
        greeting="Здравствуйте! Я офлайн-демо этого голосового агента и только показываю, как работает обработка "
        "речи. Я могу сказать, который час или какое сегодня число, рассказать анекдот или повторить то, что вы "
        "скажете. Что бы вы хотели?",
        help="Я простой офлайн-автоответчик, а не настоящая языковая модель. Я могу сказать время или сегодняшнюю "
        "дату, рассказать анекдот или повторить услышанное. Это удобно для проверки обработки речи.",
        who="Я офлайн-демо этого голосового агента. Вместо языковой модели я следую нескольким простым правилам, "
        "чтобы вся система могла работать на одном компьютере без сети.",
        joke="Штирлиц долго смотрел в одну точку, потом в другую. Двоеточие, догадался Штирлиц.",
        thanks="Пожалуйста! Могу ли я ещё чем-нибудь помочь?",
        goodbye="До свидания! Спасибо за разговор, хорошего дня.",
        repeat="Извините, я не расслышал. Повторите, пожалуйста.",
        echo="Вы сказали: {said}. Я всего лишь офлайн-демо, поэтому могу только повторить.",
        time=_time_ru,
        date=_date_ru,
        keywords={
            "who": ("кто ты", "кто вы", "как тебя зовут", "как вас зовут"),
            "help": ("помощь", "помоги*", "что ты умеешь", "что вы умеете"),
            "joke": ("анекдот*", "шутк*", "пошути*"),
            "time": ("который час", "сколько времени", "время"),
            "date": ("дата", "какое сегодня число", "какое число", "какой сегодня день", "какой день"),
            "thanks": ("спасибо", "благодар*"),
            "goodbye": ("до свидания", "пока", "всего доброго", "до встречи"),
            "greeting": ("привет*", "здравствуй*", "добрый день", "доброе утро", "добрый вечер", "алло"),
        },
    ),
    "zh": Lines(
        greeting="您好！我是这个语音助手的离线演示程序，只用来展示语音处理流程。我可以告诉您现在的时间或日期，"
        "讲个笑话，或者重复您说的话。您想做什么？",
        help="我只是一个简单的离线应答程序，不是真正的语言模型。我可以告诉您时间或今天的日期，讲个笑话，"
        "或者重复我听到的话，方便测试语音处理流程。",
        who="我是这个语音助手的离线演示程序。我按照几条简单的规则回答，而不是使用语言模型，"
        "这样整个系统可以在一台没有网络的电脑上运行。",
        joke="为什么数学书总是很忧郁？因为它有太多的问题。",
        thanks="不客气！还有什么可以帮您的吗？",
        goodbye="再见！谢谢您和我聊天，祝您今天愉快。",
        repeat="抱歉，我没听清楚。您能再说一遍吗？",
        echo="您说的是：{said}。我只是离线演示程序，只能把它重复一遍。",
        time=_time_zh,
        date=_date_zh,
        keywords={
            "who": ("你是谁", "您是谁", "你叫什么", "名字"),
            "help": ("帮助", "帮忙", "能做什么", "会做什么", "会什么"),
            "joke": ("笑话",),
            "time": ("几点", "时间"),
            "date": ("日期", "几号", "星期几", "哪一天", "哪天"),
            "thanks": ("谢谢", "多谢", "感谢"),
            "goodbye": ("再见", "拜拜"),
            "greeting": ("你好", "您好", "早上好", "晚上好", "下午好", "喂", "嗨"),
        },
        spaced=False,
    ),
    "ja": Lines(
        greeting="こんにちは！この音声エージェントのオフラインデモで、音声処理の流れをお見せするだけのものです。"
        "時刻や日付をお伝えしたり、冗談を言ったり、おっしゃったことを繰り返したりできます。何をしましょうか？",
        help="私は簡単なオフラインの応答プログラムで、本物の言語モデルではありません。時刻や今日の日付をお伝え"
        "したり、冗談を言ったり、聞こえたことを繰り返したりできるので、音声処理のテストに便利です。",
        who="私はこの音声エージェントのオフラインデモです。言語モデルの代わりにいくつかの簡単なルールに従って"
        "答えるので、システム全体をネットワークなしで一台のコンピューターで動かせます。",
        joke="ダジャレをひとつ。布団が吹っ飛んだ！",
        thanks="どういたしまして！ほかに何かお手伝いできることはありますか？",
        goodbye="さようなら！お話しいただきありがとうございました。良い一日を。",
        repeat="すみません、よく聞き取れませんでした。もう一度言っていただけますか？",
        echo="「{said}」とおっしゃいましたね。私はオフラインデモなので、繰り返すことしかできません。",
        time=_time_ja,
        date=_date_ja,
        keywords={
            "who": ("誰", "だれ", "名前", "なまえ"),
            "help": ("ヘルプ", "助けて", "何ができ", "なにができ"),
            "joke": ("冗談", "ジョーク", "ダジャレ", "笑い話"),
            "time": ("何時", "なんじ", "時間", "時刻"),
            "date": ("日付", "何日", "なんにち", "何曜日", "なんようび"),
            "thanks": ("ありがとう", "感謝", "どうも"),
            "goodbye": ("さようなら", "さよなら", "バイバイ", "じゃあね", "失礼します"),
            "greeting": ("こんにちは", "こんばんは", "おはよう", "もしもし", "はじめまして"),
        },
        spaced=False,
    ),
    "ko": Lines(
        greeting="안녕하세요! 저는 이 음성 에이전트의 오프라인 데모로, 음성 처리 과정을 보여 드리기만 합니다. "
        "지금 시간이나 날짜를 알려 드리거나, 농담을 하거나, 말씀하신 내용을 따라 할 수 있어요. 무엇을 "
        "도와드릴까요?",
        help="저는 간단한 오프라인 응답기일 뿐, 진짜 언어 모델이 아닙니다. 시간이나 오늘 날짜를 알려 드리거나, "
        "농담을 하거나, 들은 말을 그대로 반복할 수 있어서 음성 처리 과정을 테스트할 때 유용합니다.",
        who="저는 이 음성 에이전트의 오프라인 데모입니다. 언어 모델 대신 몇 가지 간단한 규칙을 따르기 때문에, "
        "네트워크 없이 컴퓨터 한 대에서 전체 시스템을 실행할 수 있습니다.",
        joke="세상에서 가장 뜨거운 과일은 뭘까요? 천도복숭아!",
        thanks="천만에요! 더 도와드릴 일이 있을까요?",
        goodbye="안녕히 계세요! 대화해 주셔서 감사합니다. 좋은 하루 보내세요.",
        repeat="죄송해요, 잘 못 들었어요. 다시 한 번 말씀해 주시겠어요?",
        echo="이렇게 말씀하셨어요: {said}. 저는 오프라인 데모일 뿐이라 따라 말하는 것밖에 못 해요.",
        time=_time_ko,
        date=_date_ko,
        keywords={
            "who": ("누구", "이름"),
            "help": ("도움", "도와", "뭘 할 수", "무엇을 할 수"),
            "joke": ("농담", "유머", "웃긴"),
            "time": ("몇 시", "시간"),
            "date": ("날짜", "며칠", "무슨 요일", "몇 월"),
            "thanks": ("고마워", "고맙", "감사"),
            "goodbye": ("안녕히", "잘 가", "또 봐", "바이바이"),
            "greeting": ("안녕", "여보세요", "반가워", "반갑"),
        },
        spaced=False,
    ),
}
"""The nine languages' replies, by ``agent.languages`` code."""

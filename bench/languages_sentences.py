"""What the callers of bench/languages.py say in each language: the espeak-ng voices, the reference sentences and what
espeak-ng is given to read; changes only with the languages' text. Plain data.
"""

from __future__ import annotations

VOICES: dict[str, tuple[tuple[str, int], tuple[str, int]]] = {
    "en": (("en-us", 170), ("en-gb", 150)),
    "zh": (("cmn-latn-pinyin", 170), ("cmn-latn-pinyin+f3", 145)),
    "ja": (("ja", 170), ("ja+f3", 145)),
    "ko": (("ko", 170), ("ko+f3", 145)),
    "de": (("de", 170), ("de+f3", 150)),
    "fr": (("fr-fr", 170), ("fr-be", 150)),
    "ru": (("ru", 170), ("ru-lv", 150)),
    "pt": (("pt-br", 170), ("pt", 150)),
    "es": (("es", 170), ("es-419", 150)),
    "it": (("it", 170), ("it+f3", 145)),
}
"""Two espeak-ng voices (name, words per minute) per language: two accents where espeak-ng has them, else one
voice and its female variant at another speed."""

SENTENCES: dict[str, tuple[str, ...]] = {
    "en": (
        "Hello, I'd like to book a table for tonight.",
        "Could you tell me where the nearest station is?",
        "I'm calling about my order from last week.",
        "Yes, that works for me.",
        "My flight was cancelled and I need to rebook it as soon as possible.",
        "What time do you open tomorrow morning?",
        "Thank you very much, have a nice day.",
        "I think there's a mistake on my bill, it shows two payments instead of one.",
    ),
    "de": (
        "Guten Tag, ich möchte einen Tisch für heute Abend reservieren.",
        "Können Sie mir sagen, wo der nächste Bahnhof ist?",
        "Ich rufe wegen meiner Bestellung von letzter Woche an.",
        "Ja, das passt mir gut.",
        "Mein Flug wurde gestrichen und ich muss so schnell wie möglich umbuchen.",
        "Wann öffnen Sie morgen früh?",
        "Vielen Dank und einen schönen Tag noch.",
        "Ich glaube, auf meiner Rechnung ist ein Fehler, dort stehen zwei Zahlungen statt einer.",
    ),
    "fr": (
        "Bonjour, je voudrais réserver une table pour ce soir.",
        "Pouvez-vous me dire où se trouve la gare la plus proche ?",
        "J'appelle au sujet de ma commande de la semaine dernière.",
        "Oui, ça me convient très bien.",
        "Mon vol a été annulé et je dois le changer le plus vite possible.",
        "À quelle heure ouvrez-vous demain matin ?",
        "Merci beaucoup, bonne journée.",
        "Je crois qu'il y a une erreur sur ma facture, il y a deux paiements au lieu d'un seul.",
    ),
    "es": (
        "Hola, me gustaría reservar una mesa para esta noche.",
        "¿Me puede decir dónde está la estación más cercana?",
        "Llamo por mi pedido de la semana pasada.",
        "Sí, eso me viene bien.",
        "Me cancelaron el vuelo y necesito cambiarlo lo antes posible.",
        "¿A qué hora abren mañana por la mañana?",
        "Muchas gracias, que tenga un buen día.",
        "Creo que hay un error en mi factura, aparecen dos pagos en lugar de uno.",
    ),
    "it": (
        "Buongiorno, vorrei prenotare un tavolo per stasera.",
        "Mi può dire dov'è la stazione più vicina?",
        "Chiamo per il mio ordine della settimana scorsa.",
        "Sì, per me va bene.",
        "Il mio volo è stato cancellato e devo cambiarlo il prima possibile.",
        "A che ora aprite domani mattina?",
        "Grazie mille, buona giornata.",
        "Penso che ci sia un errore nella mia bolletta, ci sono due pagamenti invece di uno.",
    ),
    "pt": (
        "Olá, eu gostaria de reservar uma mesa para hoje à noite.",
        "Pode me dizer onde fica a estação mais próxima?",
        "Estou ligando por causa do meu pedido da semana passada.",
        "Sim, para mim está ótimo.",
        "O meu voo foi cancelado e preciso remarcar o mais rápido possível.",
        "A que horas vocês abrem amanhã de manhã?",
        "Muito obrigado, tenha um bom dia.",
        "Acho que há um erro na minha conta, aparecem dois pagamentos em vez de um.",
    ),
    "ru": (
        "Здравствуйте, я хотел бы забронировать столик на сегодня вечером.",
        "Вы не подскажете, где ближайшая станция?",
        "Я звоню по поводу моего заказа с прошлой недели.",
        "Да, мне это подходит.",
        "Мой рейс отменили, и мне нужно как можно скорее его перенести.",
        "Во сколько вы открываетесь завтра утром?",
        "Большое спасибо, хорошего дня.",
        "Кажется, в моём счёте ошибка, там два платежа вместо одного.",
    ),
    "ko": (
        "안녕하세요, 오늘 저녁에 테이블을 예약하고 싶어요.",
        "가장 가까운 역이 어디에 있는지 알려 주시겠어요?",
        "지난주에 주문한 물건 때문에 전화했어요.",
        "네, 저는 괜찮아요.",
        "비행기가 취소되어서 최대한 빨리 다시 예약해야 해요.",
        "내일 아침 몇 시에 문을 여세요?",
        "정말 감사합니다, 좋은 하루 보내세요.",
        "제 청구서에 오류가 있는 것 같아요, 결제가 한 번이 아니라 두 번 되어 있어요.",
    ),
    "ja": (
        "こんにちは、今夜のテーブルを予約したいのですが。",
        "一番近い駅はどこですか。",
        "先週の注文について電話しました。",
        "はい、それで大丈夫です。",
        "飛行機が欠航になったので、できるだけ早く予約を変更したいです。",
        "明日の朝は何時に開きますか。",
        "どうもありがとうございました。良い一日を。",
        "請求書に間違いがあると思います。支払いが一回ではなく二回になっています。",
    ),
    "zh": (
        "你好，我想预订今天晚上的一张桌子。",
        "请问最近的车站在哪里？",
        "我打电话是为了上周的订单。",
        "好的，这个时间可以。",
        "我的航班被取消了，我需要尽快改签。",
        "你们明天早上几点开门？",
        "非常感谢，祝你有美好的一天。",
        "我觉得我的账单有错误，上面有两笔付款而不是一笔。",
    ),
}
"""The same eight things said in each language (the reference transcripts)."""

SPOKEN: dict[str, tuple[str, ...]] = {
    "ja": (
        "こんにちは、こんやのテーブルをよやくしたいのですが。",
        "いちばんちかいえきはどこですか。",
        "せんしゅうのちゅうもんについてでんわしました。",
        "はい、それでだいじょうぶです。",
        "ひこうきがけっこうになったので、できるだけはやくよやくをへんこうしたいです。",
        "あしたのあさはなんじにひらきますか。",
        "どうもありがとうございました。よいいちにちを。",
        "せいきゅうしょにまちがいがあるとおもいます。しはらいがいっかいではなくにかいになっています。",
    ),
    "zh": (
        "ni3 hao3, wo3 xiang3 yu4 ding4 jin1 tian1 wan3 shang4 de5 yi4 zhang1 zhuo1 zi5.",
        "qing3 wen4 zui4 jin4 de5 che1 zhan4 zai4 na3 li3?",
        "wo3 da3 dian4 hua4 shi4 wei4 le5 shang4 zhou1 de5 ding4 dan1.",
        "hao3 de5, zhe4 ge5 shi2 jian1 ke3 yi3.",
        "wo3 de5 hang2 ban1 bei4 qu3 xiao1 le5, wo3 xu1 yao4 jin3 kuai4 gai3 qian1.",
        "ni3 men5 ming2 tian1 zao3 shang4 ji3 dian3 kai1 men2?",
        "fei1 chang2 gan3 xie4, zhu4 ni3 you3 mei3 hao3 de5 yi4 tian1.",
        "wo3 jue2 de5 wo3 de5 zhang4 dan1 you3 cuo4 wu4, shang4 mian4 you3 liang3 bi3 fu4 kuan3 er2 bu2 shi4 yi4 bi3.",
    ),
}
"""What espeak-ng is given where it cannot read the reference: kana for Japanese, pinyin for Chinese."""

"""Korean words of the turn rules: ``KOREAN`` (``agent.core.lexicon``).

One reason to change: what Korean speakers say. Pure data.
"""

from __future__ import annotations

from agent.core.lexicon.schema import Lexicon
from agent.core.lexicon.shared import ABBREVIATIONS, HUMS, SPACED

# fmt: off
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
    sounds=("음", "으음", "흠", "어", "아", "오", "에", "하하", "헤헤", "허", *HUMS),
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
    abbreviations=ABBREVIATIONS,
    writing=SPACED,
)
# fmt: on

"""Which recordings the end-of-turn sets use (Debian's telephone prompts and pocketsphinx's read speech), who says
them, and where each is cut or joined: changes only with the recorded material. Plain data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.turns.sentences import Category, Split

SOUNDS = Path("/usr/share/asterisk/sounds")
SPHINX = Path("/usr/share/pocketsphinx/test/data")
LIBRIVOX = "librivox/sense_and_sensibility_01_austen_64kb-0"


@dataclass(frozen=True, slots=True)
class Speaker:
    """A recorded person: ``name``, where the recordings are (``base``), their language and split."""

    name: str
    base: Path
    language: str
    split: Split


ALLISON_EN = Speaker("Allison Smith (asterisk en-US)", SOUNDS / "en_US_f_Allison", "en", "dev")
READER = Speaker("LibriVox reader (pocketsphinx)", SPHINX, "en", "test")
COMMANDS = Speaker("pocketsphinx test speaker (cards, commands)", SPHINX, "en", "test")
SPEAKERS: tuple[Speaker, ...] = (
    ALLISON_EN,
    Speaker("Allison Smith (asterisk es-MX)", SOUNDS / "es_MX_f_Allison", "es", "dev"),
    Speaker("June Wallack (asterisk fr-CA)", SOUNDS / "fr_CA_f_June", "fr", "dev"),
    Speaker("Paola Dal Zot (asterisk it, Menardi)", SOUNDS / "it_IT_f_Menardi", "it", "dev"),
    READER,
    COMMANDS,
    Speaker("Carlo Flora (asterisk it)", SOUNDS / "it_IT_m_Carlo", "it", "test"),
    Speaker("ivrvoice.ru (asterisk ru)", SOUNDS / "ru_RU_f_IvrvoiceRU", "ru", "test"),
    Speaker("asterisk-prompt-es-co (es-CO)", SOUNDS / "es", "es", "test"),
    Speaker("Armelle Desjardins (asterisk fr)", SOUNDS / "fr", "fr", "test"),
)

# (file, reference text); "|" marks the cut (breath) or the join of two lists of files (thinking, "+" inside a part).
WHOLE: dict[Speaker, tuple[tuple[str, str], ...]] = {
    ALLISON_EN: (
        ("auth-thankyou", "Thank you."),
        ("vm-goodbye", "Goodbye."),
        ("hello-world", "Hello world."),
        ("vm-nomore", "No more messages."),
        ("vm-deleted", "Message deleted."),
        ("conf-errormenu", "Invalid choice."),
        ("pbx-transfer", "Transfer."),
        ("vm-msgsaved", "Your message has been saved."),
        ("transfer", "Please hold while I try that extension."),
        ("vm-nobodyavail", "Nobody is available to take your call at the moment."),
        ("conf-leaderhasleft", "The leader has left the conference."),
        ("vm-passchanged", "Your passwords have been changed."),
        ("tt-weasels", "Weasels have eaten our phone system."),
        ("queue-thankyou", "Thank you for your patience."),
        ("vm-tempremoved", "Your temporary greeting has been removed."),
        ("demo-echodone", "The echo test has been completed."),
        ("vm-changeto", "Change to which folder?"),
        ("vm-savefolder", "Which folder should I save this message to?"),
        ("vm-incorrect-mailbox", "Login incorrect. Mailbox?"),
    ),
    READER: (
        (
            f"{LIBRIVOX}870.wav",
            "And Mr. John Dashwood had then leisure to consider how much there might be prudently in his power "
            "to do for them.",
        ),
        (f"{LIBRIVOX}880.wav", "He was not an ill-disposed young man."),
        (f"{LIBRIVOX}890.wav", "Unless to be rather cold-hearted and rather selfish is to be ill-disposed."),
        (
            f"{LIBRIVOX}920.wav",
            "Had he married a more amiable woman, he might have been made still more respectable than he was.",
        ),
        (f"{LIBRIVOX}930.wav", "He might even have been made amiable himself."),
    ),
    COMMANDS: (
        ("cards/001.wav", "Ten of clubs."),
        ("cards/002.wav", "Four, queen of clubs."),
        ("cards/003.wav", "Seven of clubs."),
        ("cards/004.wav", "Five, five."),
        ("cards/005.wav", "Eight of spades, four of clubs, seven of hearts."),
        ("goforward.raw", "Go forward ten meters."),
        ("something.raw", "Go somewhere and do something."),
    ),
}
BREATHS: dict[Speaker, tuple[tuple[str, str], ...]] = {
    ALLISON_EN: (
        ("vm-rec-temp", "After the tone, | say your temporary message, and then press the pound key."),
        ("privacy-prompt", "Please enter your phone number, | starting with the area code."),
        ("followme/options", "Press one to accept this call, | or two to reject it."),
        (
            "vm-tempgreeting2",
            "Press one to record your temporary greeting, | or press two to erase your temporary greeting.",
        ),
        ("vm-saveoper", "Press one to accept this recording, | otherwise, please continue to hold."),
    ),
}
"""Prompts cut at the real pause nearest the "|" (by its place in the text), rejoined with a breath pause."""
JOINS: tuple[tuple[str, str], ...] = (
    ("vm-youhave | digits/2+vm-INBOX+vm-messages", "You have | two new messages."),
    ("queue-thereare | digits/3", "You are currently caller number | three."),
    ("vm-theperson | digits/4+digits/5+vm-isunavail", "The person at extension | four five is unavailable."),
    ("dir-pls-enter | digits/3+dir-last", "Please enter the first | three letters of your party's last name."),
    ("conf-thereare | digits/2+conf-otherinparty", "There are currently | two other participants in the conference."),
    ("vm-youhave | digits/5+vm-messages", "You have | five messages."),
)
"""Allison's prompts joined as a telephone system joins them: the first part a fragment (a thinking pause)."""
CUTS: dict[Speaker, tuple[tuple[str, str, float, Category], ...]] = {
    READER: (
        (
            f"{LIBRIVOX}870.wav",
            "And Mr. John Dashwood had then leisure to | consider how much there might be prudently in his power "
            "to do for them.",
            2860,
            "thinking",
        ),
        (
            f"{LIBRIVOX}870.wav",
            "And Mr. John Dashwood had then leisure to consider | how much there might be prudently in his power "
            "to do for them.",
            3360,
            "breath",
        ),
        (f"{LIBRIVOX}880.wav", "He was not an | ill-disposed young man.", 1300, "thinking"),
        (
            f"{LIBRIVOX}890.wav",
            "Unless to be rather cold-hearted and | rather selfish is to be ill-disposed.",
            2360,
            "thinking",
        ),
        (
            f"{LIBRIVOX}920.wav",
            "Had he married a more amiable woman, | he might have been made still more respectable than he was.",
            2460,
            "breath",
        ),
        (
            f"{LIBRIVOX}920.wav",
            "Had he married a more amiable woman, he might have been made still more | respectable than he was.",
            4220,
            "thinking",
        ),
        (f"{LIBRIVOX}930.wav", "He might even have been made | amiable himself.", 1600, "thinking"),
    ),
}
"""Read sentences cut at a word boundary (ms into the recording, from Whisper base word times)."""
CARD_LIST = ("cards/005.wav", "Eight of spades, four of clubs, | seven of hearts.")
"""The card list, cut at the real pause before its last item (a list item: thinking)."""

LID_PROMPTS: dict[str, str] = {
    "vm-goodbye": "Goodbye.", "auth-thankyou": "Thank you.", "vm-msgsaved": "Your message has been saved.",
    "transfer": "Please hold while I try that extension.", "vm-nobodyavail": "Nobody is available to take your call.",
    "privacy-prompt": "Please enter your phone number, starting with the area code.",
    "vm-savefolder": "Which folder should I save the message to?", "conf-leaderhasleft": "The leader has left.",
    "vm-passchanged": "Your passwords have been changed.", "pbx-invalid": "That's not a valid extension.",
    "vm-intro": "Please leave your message after the tone.", "vm-newpassword": "Please enter your new password.",
    "agent-pass": "Please enter your password.", "queue-periodic-announce": "All of our representatives are busy.",
    "ss-noservice": "The number you have dialed is not in service.", "vm-instructions": "To look into your messages.",
    "vm-nomore": "No more messages.", "vm-deleted": "Message deleted.", "queue-thankyou": "Thank you for waiting.",
    "vm-sorry": "I did not understand your response.", "vm-mismatch": "The passwords did not match.",
    "vm-reenterpassword": "Please re-enter your password.", "vm-rec-name": "After the tone say your name.",
    "vm-incorrect-mailbox": "Login incorrect. Mailbox?",
}  # fmt: skip
"""The prompts said in every language (file name: the gist of the English original, for the category)."""

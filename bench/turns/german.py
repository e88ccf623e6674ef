"""The German sentences and voices of the end-of-turn sets (``bench/turns/corpus.py``, ``plan(..., languages)``).

Changes when the German part of the sets changes. Plain data (no import of ``corpus``, which reads it): the
same five categories and pause marks ("|") as the English sentences, other sentences for dev and test (none in
both), and other espeak-ng voices: espeak-ng has one German voice (``de``; the MBROLA voices it lists need the
mbrola program, not installed), so the splits differ by variant, speed and pitch (dev: m3, f2, m7 and the plain
voice; test: f4, m5, croak, klatt, f1). The thinking pauses come where a German speaker stops to think: after
"ähm", "und", "für", an article (der/die/das/den), half a number ("vierhundert | und zwanzig"), a list item.
"""

from __future__ import annotations

SENTENCES_DE: dict[str, dict[str, tuple[str, ...]]] = {
    "dev": {
        "short": ("Ja.", "Nein, danke.", "Dienstag.", "Zwei.", "Klingt gut.", "Hallo.", "Danke schön!"),
        "long": (
            "Bitte stornieren Sie meine Bestellung.",
            "Ich möchte einen Tisch für zwei Personen reservieren.",
            "Mein Name ist Anna und ich wohne in Berlin.",
            "Das Paket ist heute Morgen angekommen.",
            "Ich muss die Adresse in meinem Konto ändern.",
            "Wir übernachten im Hotel am Flughafen.",
            "Das klingt super, vielen Dank.",
        ),
        "question": (
            "Wann öffnen Sie morgen?",
            "Wie viel kostet die große Pizza?",
            "Gibt es eine Apotheke in der Nähe?",
            "Können Sie mir die Quittung per E-Mail schicken?",
            "Haben Sie am Samstag noch einen Tisch frei?",
            "Wo kann ich mein Auto parken?",
            "Ist die Bibliothek heute geöffnet?",
        ),
        "breath": (
            "Hallo, | ich möchte meine Reservierung ändern.",
            "Wenn es morgen regnet, | bleiben wir zu Hause.",
            "Also, | ich finde das blaue besser.",
            "Ehrlich gesagt, | ich bin mir beim Preis nicht sicher.",
            "Ja, | das passt mir gut.",
            "Um ehrlich zu sein, | das Zimmer war sehr sauber.",
            "Übrigens, | wir sind zu dritt.",
        ),
        "thinking": (
            "Ich dachte ähm | vielleicht am Dienstag.",
            "Ich hätte gern die Nudeln und | ein Glas Rotwein.",
            "Ich brauche einen Termin für | nächsten Freitag.",
            "Ich suche die | Bahnhofstraße neun.",
            "Es kostet vierhundert | und zwanzig Euro im Monat.",
            "Ich brauche Eier, Milch, | Brot und etwas Butter.",
            "Wir haben den Zug verpasst, also | kommen wir eine Stunde später.",
            "Ich möchte einen Flug nach | München buchen.",
        ),
    },
    "test": {
        "short": (
            "Hallo zusammen.",
            "Ja, bitte.",
            "Wie spät ist es?",
            "Freitag.",
            "Sieben.",
            "Perfekt.",
            "Eher nicht.",
        ),
        "long": (
            "Ich rufe wegen der Rechnung von letzter Woche an.",
            "Die Heizung in unserer Wohnung ist gestern ausgefallen.",
            "Wir würden das Auto gern gegen Mittag abholen.",
            "Meine Tochter hat am Donnerstag einen Zahnarzttermin.",
            "Ich habe heute Nachmittag online bezahlt.",
            "Unser Flug hatte fast drei Stunden Verspätung.",
            "Ich habe meinen Regenschirm im Bus vergessen.",
        ),
        "question": (
            "Von welchem Gleis fährt der nächste Zug?",
            "Liefern Sie auch in die Innenstadt?",
            "Sind Hunde im Restaurant erlaubt?",
            "Wann schließt das Museum am Sonntag?",
            "Mit wem kann ich über eine Erstattung sprechen?",
            "Wie lange dauert die Reparatur?",
            "Kann ich mit Kreditkarte bezahlen?",
        ),
        "breath": (
            "Oh, | ich habe den Parkplatz vergessen.",
            "Moment, | könnten wir es auf sieben Uhr legen?",
            "Gut, | die zweite Möglichkeit klingt besser.",
            "Wenn Sie Zeit haben, | schicken Sie mir die Adresse.",
            "Entschuldigung, | ich meinte die andere Filiale.",
            "Nur damit Sie es wissen, | ich komme etwas später.",
            "Bevor ich es vergesse, | meine Nummer hat sich geändert.",
        ),
        "thinking": (
            "Ich hätte gern ähm | ein Hähnchensandwich mit Pommes.",
            "Der Betrag war vierhundert | und fünfundzwanzig Euro.",
            "Ich nehme die | grüne Jacke in Größe M.",
            "Sie kommt am Sonntag aus | Hamburg an.",
            "Wir brauchen Küchenrolle, Seife, | und einen neuen Schwamm.",
            "Ich würde anrufen, aber | die schließen um fünf.",
            "Können Sie es auf die ähm | zweite Juniwoche verschieben?",
            "Ich warte auf den | Techniker von der Telekom.",
            "Das ist ein Geschenk für | meine Mutter.",
        ),
    },
}
"""German sentences per split and category (keys as ``sentences.SPLITS`` and ``CATEGORIES``)."""

VOICES_DE: dict[str, tuple[tuple[str, str, int, int | None], ...]] = {
    "dev": (
        ("espeak de 160", "de", 160, None),
        ("espeak de+m3 190", "de+m3", 190, None),
        ("espeak de+f2 150", "de+f2", 150, None),
        ("espeak de+m7 175 p40", "de+m7", 175, 40),
    ),
    "test": (
        ("espeak de+f4 140 p70", "de+f4", 140, 70),
        ("espeak de+m5 180 p35", "de+m5", 180, 35),
        ("espeak de+croak 165 p45", "de+croak", 165, 45),
        ("espeak de+klatt 200 p50", "de+klatt", 200, 50),
        ("espeak de+f1 135 p60", "de+f1", 135, 60),
    ),
}
"""German espeak-ng voices per split: (label, espeak-ng voice, words per minute, pitch 0-99 or None)."""

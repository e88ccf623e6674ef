"""What the end-of-turn sets say: the splits, the categories and the English sentences of each (German:
bench/turns/german.py); changes only with the sets' text. Plain data.
"""

from __future__ import annotations

from typing import Literal

Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = ("dev", "test")
Category = Literal["short", "long", "question", "breath", "thinking"]
Source = Literal["synthetic", "human"]
CATEGORIES: tuple[Category, ...] = ("short", "long", "question", "breath", "thinking")
PAUSED: tuple[Category, ...] = ("breath", "thinking")
"""The categories said in parts: the turn must not end in their pauses (where splits are counted)."""
SENTENCES: dict[Split, dict[Category, tuple[str, ...]]] = {
    # The set the end-of-turn rules were tuned on (the first 87 utterances of the bench, and a few more).
    "dev": {
        "short": ("Yes.", "No, thanks.", "Tuesday.", "Two.", "Sounds good.", "Hello.", "Thanks!"),
        "long": (
            "Please cancel my order.",
            "I'd like to book a table for two tonight.",
            "My name is Sarah and I live in Boston.",
            "That sounds great, thank you very much.",
            "The package arrived this morning.",
            "I need to change the address on my account.",
            "We are staying at the hotel near the airport.",
        ),
        "question": (
            "What time do you open tomorrow?",
            "Can you tell me the weather for the weekend?",
            "How much does the large pizza cost?",
            "Is there a pharmacy near the station?",
            "Could you send me the receipt by email?",
            "Do you have any tables left for Saturday?",
            "Where can I park my car?",
        ),
        "breath": (
            "Hi, | I'd like to change my reservation.",
            "If it rains tomorrow, | we'll stay at home.",
            "Well, | I think the blue one is better.",
            "After the meeting, | please call my sister.",
            "Yes, | that works for me.",
            "Honestly, | I'm not sure about the price.",
            "To be fair, | the room was very clean.",
        ),
        "thinking": (
            "I was thinking um | maybe we could meet on Tuesday.",
            "I'd like the pasta and | a glass of red wine.",
            "We missed the train so | we'll be about an hour late.",
            "I can't come tomorrow because | my car is in the shop.",
            "It was like | the worst traffic I've ever seen.",
            "I need eggs, milk, | bread and some butter.",
            "It's four | hundred and twenty dollars a month.",
            "I want to book a flight to | Boston on Friday.",
        ),
    },
    # Only ever scored. Other sentences, so a rule fitted to dev's words cannot pass here by memory.
    "test": {
        "short": ("Hi there.", "Yes please.", "What time is it?", "Friday.", "Seven.", "Perfect.", "Not really."),
        "long": (
            "I'm calling about the invoice you sent last week.",
            "The heating in our apartment stopped working yesterday.",
            "We would like to pick up the car around noon.",
            "My daughter has a dentist appointment on Thursday.",
            "I already paid the bill online this afternoon.",
            "Our flight was delayed by almost three hours.",
            "I left my umbrella on the bus this morning.",
        ),
        "question": (
            "Which platform does the next train leave from?",
            "Do you deliver to the north side of town?",
            "Are dogs allowed inside the restaurant?",
            "When does the museum close on Sundays?",
            "Who should I talk to about a refund?",
            "How long will the repair take?",
            "Can I pay with a credit card?",
        ),
        "breath": (
            "Oh, | I forgot to mention the parking.",
            "Actually, | could we make it seven instead?",
            "Right, | the second option sounds better.",
            "When you get a chance, | send me the address.",
            "Sorry, | I meant the other branch.",
            "Just so you know, | I'll be a little late.",
            "Before I forget, | my number has changed.",
        ),
        "thinking": (
            "Can I get uh | a chicken sandwich with fries?",
            "My name is John, that's J, O, | H, N.",
            "The total came to four hundred | and twenty five dollars.",
            "I'll take the | green jacket in medium.",
            "She's flying in from | Chicago on Sunday.",
            "We need paper towels, soap, | and a new sponge.",
            "I would call them but | they close at five.",
            "Could you move it to the um | second week of June?",
            "Let's meet at the station or | maybe at the cafe.",
        ),
    },
}

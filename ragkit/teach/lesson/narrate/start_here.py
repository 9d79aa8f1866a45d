"""What notebook 00-start-here says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from IPython.display import Markdown

from ragkit.corpus import Corpus
from ragkit.data import OutOfDomain, Question
from ragkit.errors import ModelUnavailable
from ragkit.plumbing import locations
from ragkit.plumbing.models import HubModel, hub_model_path
from ragkit.teach.course import chapter
from ragkit.teach.language import say
from ragkit.teach.lesson.widgets import kind_of

__all__ = [
    "chapter_figure",
    "corpus_loaded",
    "ground_truth",
    "ground_truth_problems",
    "model_here",
    "out_of_domain_kinds",
    "read_a_file",
]


def corpus_loaded(corpus: Corpus, total: pd.Series) -> Markdown:
    """How much was loaded, what it holds, and where the files are."""
    return Markdown(
        say(
            "**{documents}** documents loaded, **{failed}** failed; **{characters:,}** characters in "
            "**{sections:,}** sections, with **{tables:,}** tables, **{formulas:,}** formulas and "
            "**{code_blocks:,}** code blocks. The files are in `{folder}`.",
            documents=len(corpus),
            failed=len(corpus.failed),
            characters=total.characters,
            sections=total.sections,
            tables=total.tables,
            formulas=total.formulas,
            code_blocks=total.code_blocks,
            folder=str(locations.data_dir() / "corpus"),
        )
    )


def read_a_file(corpus: Corpus) -> Markdown:
    """An invitation to read one document of the corpus, linked from the notebook."""
    first = corpus.documents[0]
    return Markdown(
        say(
            "Open one of the files in `data/corpus/` now and read a page of it, for instance "
            "[{folder}/{name}]({link}) (the link opens it in "
            "JupyterLab; in the file browser on the left, go up from this notebook's folder to the project folder, "
            "then into `data/corpus/`). Everything the retrievers return later is a piece of these files, and you "
            "will judge the results much better if you know the text.",
            folder=first.path.parent.name,
            name=first.path.name,
            link=_from_here(first.path),
        )
    )


def _from_here(path: Path) -> str:
    """A link to ``path`` from the kernel's folder, the notebook's: right at any depth (notebooks/, notebooks/nl/)."""
    try:
        return Path(os.path.relpath(path.resolve(), Path.cwd())).as_posix()
    except ValueError:  # another drive on Windows: no relative way there
        return path.resolve().as_uri()


def ground_truth(questions: Sequence[Question], queries: Sequence[object], corpus: Corpus) -> Markdown:
    """How many questions and queries, over how many documents, and how long the needles are."""
    lengths = pd.Series([len(q.needle) for q in questions])
    return Markdown(
        say(
            "**{questions}** questions, so **{queries}** queries, spread over "
            "**{covered}** of the **{documents}** documents. Needles are "
            "**{shortest}** to **{longest}** characters long (median **{median:.0f}**).",
            questions=len(questions),
            queries=len(queries),
            covered=len({q.doc_id for q in questions}),
            documents=len(corpus),
            shortest=lengths.min(),
            longest=lengths.max(),
            median=lengths.median(),
        )
    )


def model_here(model: HubModel) -> Markdown:
    """Whether one optional model is on this machine (and where), or what to run where there is internet."""
    try:
        path = hub_model_path(model)
    except ModelUnavailable:
        return Markdown(
            say("- `{name}`: **not on this machine**; run `make models` where there is internet.", name=model.name)
        )
    return Markdown(say("- `{name}`: found at `{path}`.", name=model.name, path=str(path)))


def out_of_domain_kinds(queries: Sequence[OutOfDomain]) -> Markdown:
    """How many out-of-domain queries there are, and how many of each kind (in the order the set first has them)."""
    counts = Counter(q.kind for q in queries)
    kinds = ", ".join(say("**{n}** {kind}", n=n, kind=kind_of(kind)) for kind, n in counts.items())
    return Markdown(say("**{n}** out-of-domain queries: {kinds}.", n=len(queries), kinds=kinds))


def ground_truth_problems(problems: Sequence[object]) -> Markdown:
    """How many problems the ground truth's checks found against the corpus."""
    return Markdown(say("Problems found in the ground truth: **{n}**.", n=len(problems)))


def chapter_figure() -> Markdown:
    """One figure of the chapter, as an example of where they live, and the notebook that measures it here."""
    return Markdown(
        say(
            "The chapter reports blind chunking destroying **{destroyed}** of its **{questions}** answers. "
            "Notebook 01 measures the same on this corpus.",
            destroyed=chapter.DESTROYED_BLIND,
            questions=chapter.QUESTIONS,
        )
    )

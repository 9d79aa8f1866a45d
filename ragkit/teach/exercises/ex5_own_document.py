"""Exercise 5's check: the student's own document and a question a reader would ask of it, not a copy of it."""

from __future__ import annotations

import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragkit.chunking import chunk_corpus
from ragkit.retrieval import cosine_distance
from ragkit.teach.exercises.feedback import Feedback, embedded, record
from ragkit.teach.exercises.rules import EX5, SHARED_RUN
from ragkit.teach.language import _, say
from ragkit.teach.untrusted import readable
from ragkit.tokens import TruncationWarning
from ragkit.words import content_words, copied_share, words

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = [
    "MAX_CHARACTERS",
    "MAX_WORDS",
    "PARAPHRASE_HINT",
    "check_own_document",
    "copied_sentence",
    "reworded_sentence",
    "sentences",
    "shared_runs",
]


def shared_runs(question: str, document: str, n: int = SHARED_RUN) -> list[str]:
    """Runs of n words the question copies from the document, compared as words (a paraphrase has none)."""
    q, d = words(question), words(document)
    seen = {tuple(d[i : i + n]) for i in range(len(d) - n + 1)}
    return [" ".join(q[i : i + n]) for i in range(len(q) - n + 1) if tuple(q[i : i + n]) in seen]


def sentences(document: str) -> list[str]:
    """The sentences and heading lines of a document (split at . ! ? followed by space, and at line breaks)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n\s*\n|\n(?=#)", document) if s.strip()]


def copied_sentence(question: str, document: str) -> tuple[str, float] | None:
    """The document sentence a question copies as a bag of words (order and filler aside), and how much; or None."""
    mine = content_words(question)
    scored = [
        (s, copied_share(mine, theirs))
        for s in sentences(document)
        if len(theirs := content_words(s)) >= EX5.sentence_words
    ]
    best = max(scored, key=lambda x: x[1], default=None)
    return best if best is not None and best[1] >= EX5.copy_share else None


def reworded_sentence(course: Course, question: str, document: str) -> tuple[str, float] | None:
    """The document sentence whose embedding lies nearest the question's, and their cosine distance (None: none)."""
    counted = [s for s in sentences(document) if len(content_words(s)) >= EX5.sentence_words]
    if not counted:
        return None
    retriever = course.retriever(EX5.strategy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        distance = cosine_distance(retriever.embed([question]), retriever.embed(counted))[0]
    return counted[int(np.argmin(distance))], float(np.min(distance))


def _off_course(course: Course, chunks) -> tuple[float, str]:
    """How near the document gets to the course: the smallest cosine distance from its chunks to a course chunk."""
    retriever = course.retriever(EX5.strategy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        distance = cosine_distance(retriever.embed([c.text for c in chunks]), retriever.vectors)
    row, col = np.unravel_index(int(np.argmin(distance)), distance.shape)
    near = retriever.chunks[int(col)]
    return float(distance[row, col]), f"{near.doc_id} > {near.section or near.doc_title}"


MAX_WORDS = 6_000
"""Words of a document the check reads: more than the course's longest chapter (a test keeps it so).

The exercise asks for a short document; a longer one is refused before anything is embedded, so that
judging it stays short (every chunk of the document is embedded)."""
MAX_CHARACTERS = 12 * MAX_WORDS
"""Characters of a document the check reads: twice the course's characters per word, for long words (a test keeps it
above twice its longest chapter); a few very long "words" are as costly to embed as many short ones."""
PARAPHRASE_HINT = "ask what a reader who has not seen the section would ask, in the words they would use"


def check_own_document(course: Course, document: str | None, question: str | None) -> Feedback:
    """Exercise 5: your document, on a topic the course lacks, cited first under the default cut for a paraphrase."""
    from ragkit.answer import DEFAULT_CUT, NoAnswer, answer
    from ragkit.citations import verify
    from ragkit.corpus import load_corpus

    if not document or not question:
        return Feedback(
            False, (_("write `my_document` (Markdown with a '# Title' line and '## ' sections) and `my_question`"),)
        )
    if not isinstance(document, str) or not isinstance(question, str):
        return record(
            "ex5",
            Feedback(
                False,
                (
                    say(
                        "`my_document` is a {document} and `my_question` a {question}: make both text (str)",
                        document=type(document).__name__,
                        question=type(question).__name__,
                    ),
                ),
            ),
        )
    if len(counted := words(document)) > MAX_WORDS or len(document) > MAX_CHARACTERS:
        return record(
            "ex5",
            Feedback(
                False,
                (
                    say(
                        "the document has {words:,} words and {characters:,} characters; at most {max_words:,} words "
                        "and {max_characters:,} characters are checked: the exercise asks for a short document, one or "
                        "a few sections",
                        words=len(counted),
                        characters=len(document),
                        max_words=MAX_WORDS,
                        max_characters=MAX_CHARACTERS,
                    ),
                ),
                {"words": len(counted)},
            ),
        )
    if not re.search(r"^# \S", document, re.M) or not re.search(r"^## \S", document, re.M):
        return record("ex5", Feedback(False, (_("give the document a '# Title' line and at least one '## ' section"),)))
    if copied := shared_runs(question, document):
        return record(
            "ex5",
            Feedback(
                False,
                (
                    say(
                        "your question copies {run} words in a row from your document "
                        "('{copied}'): ask it in other words, as a reader would",
                        run=SHARED_RUN,
                        copied=copied[0],
                    ),
                ),
                {"copied_runs": len(copied)},
                hints=(_(PARAPHRASE_HINT),),
            ),
        )
    if bag := copied_sentence(question, document):
        return record(
            "ex5",
            Feedback(
                False,
                (
                    say(
                        "{share:.0%} of the distinctive words of the shorter of your question and the sentence (of "
                        "{sentence_words} or more distinctive words) '{sentence}' are in the other (a copy from "
                        "{copy_share:.0%} on, whatever the word order or the words added): ask it in other words, as a "
                        "reader would",
                        share=bag[1],
                        sentence_words=EX5.sentence_words,
                        sentence=readable(" ".join(bag[0].split()), 80),
                        copy_share=EX5.copy_share,
                    ),
                ),
                {"copied_share": bag[1]},
                hints=(_(PARAPHRASE_HINT),),
            ),
        )
    if (near := reworded_sentence(course, question, document)) and near[1] < EX5.copy_distance:
        return record(
            "ex5",
            Feedback(
                False,
                (
                    say(
                        "your question lies at cosine distance {distance:.3f} from the sentence '{sentence}', closer "
                        "than {copy_distance}: that sentence reworded in form (inflections, word order, filler or "
                        "synonyms change its words, not the sentence); ask it in other words, as a reader would",
                        distance=near[1],
                        sentence=readable(" ".join(near[0].split()), 80),
                        copy_distance=EX5.copy_distance,
                    ),
                ),
                {"sentence_distance": near[1]},
                hints=(_(PARAPHRASE_HINT),),
            ),
        )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        shutil.copytree(course.corpus.folder, folder)
        (folder / "99-my-document.md").write_text(document, encoding="utf-8")
        corpus = load_corpus(folder)
        chunks = chunk_corpus(corpus, EX5.strategy)
        retriever, truncated = embedded(chunks)
        result = answer(question, retriever, cut=DEFAULT_CUT)
    if isinstance(result, NoAnswer):
        return record(
            "ex5",
            Feedback(
                False,
                (
                    say(
                        "nothing is under the default cut {cut}: the gate refuses your question, so nothing gets cited",
                        cut=DEFAULT_CUT,
                    ),
                ),
                {"answered": False},
                hints=(_("make the question and one section about the same thing"),),
            ),
        )
    first = result.citations[0]
    numbers = {"answered": True, "top_document": first.document_id, "distance": float(first.cosine_distance)}
    notes = [
        say(
            "top source: {document} - {locator} {fragment} (distance {distance:.3f}, under the default cut {cut})",
            document=first.document_id,
            locator=first.locator_label,
            fragment=first.fragment,
            distance=first.cosine_distance,
            cut=DEFAULT_CUT,
        ),
        *truncated,
    ]
    if first.document_id != "99-my-document":
        return record(
            "ex5",
            Feedback(
                False,
                tuple(notes + [_("your document is not the first source")]),
                numbers,
                hints=(_("make the question and the section about the same thing"),),
            ),
        )
    cited = [c for c in chunks if c.doc_id == first.document_id and c.content == first.quote]
    nearest, where = _off_course(course, cited or [c for c in chunks if c.doc_id == first.document_id])
    numbers["nearest_course"] = nearest
    if nearest <= EX5.off_course:
        return record(
            "ex5",
            Feedback(
                False,
                tuple(
                    notes
                    + [
                        say(
                            "the cited section comes within cosine distance {nearest:.3f} of the course ({where}); a "
                            "topic the course lacks stays farther than {off_course} from every course chunk (about as "
                            "far as one course chapter is from the others)",
                            nearest=nearest,
                            where=where,
                            off_course=EX5.off_course,
                        )
                    ]
                ),
                numbers,
                hints=(_("write about something the course does not cover"),),
            ),
        )
    notes.append(
        say(
            "the cited section's nearest course chunk is at cosine distance {nearest:.3f} ({where}), farther "
            "than {off_course}: a topic the course lacks",
            nearest=nearest,
            where=where,
            off_course=EX5.off_course,
        )
    )
    if not verify(first, corpus):
        return record(
            "ex5",
            Feedback(
                False, tuple(notes + [_("the locator does not slice the quote: report this, it is a bug")]), numbers
            ),
        )
    return record(
        "ex5",
        Feedback(True, tuple(notes + [_("the fragment slices exactly the quoted words out of your file")]), numbers),
    )

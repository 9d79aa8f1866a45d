"""The knowledge checks of notebooks 02b and 03b to 05: the statistics further, tuning on one half, reranking,
distances."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragkit.retrieval import RERANK_DEPTH
from ragkit.statistics import ALPHA, holm
from ragkit.teach import language
from ragkit.teach.language import _, say
from ragkit.teach.lesson.quiz.question import Option, QuizQuestion, applied, asked_before_reveal
from ragkit.teach.lesson.settings import setting_name, setting_value
from ragkit.tuning import Study

if TYPE_CHECKING:
    from ragkit.teach.course import Course

__all__ = [
    "HOLM_FAMILY",
    "distances_questions",
    "rerank_questions",
    "statistics_further_questions",
    "study_questions",
    "tuning_questions",
]


def _effective_queries(course: Course) -> QuizQuestion:
    """How many independent queries a run's evidence is worth, from its design effect: the dense run and hit rate
    whose design effect is largest (02b narrates E's Hit@20, so this is a new case)."""
    ev = course.evaluation()
    figures = ev.figures([label for label in ev.results if label.endswith("/dense")])
    f = max((f for f in figures if f.metric != "MRR"), key=lambda f: f.design_effect)
    needles = len(set(ev[f"{f.strategy}/{f.retriever}"].needle_ids))
    right = f"{f.n / f.design_effect:.0f}"
    candidates = (
        (
            right,
            say(
                "{n} / {d:.2f}: the effective number divides the queries by the design effect", n=f.n, d=f.design_effect
            ),
        ),
        (f"{f.n * f.design_effect:.0f}", _("that multiplies by the design effect; the effective number divides by it")),
        (str(f.n), _("that counts every query as independent evidence, which is what the design effect corrects")),
        (
            str(needles),
            _("that counts each needle once, as if its two phrasings always agreed (a design effect of 2)"),
        ),
    )
    seen: set[str] = set()
    options = []
    for text, why in candidates:
        if text not in seen:
            seen.add(text)
            options.append(Option(text, text == right, why))
    return applied(
        say(
            "Strategy {strategy}'s dense run answers {n} queries, two phrasings of each of {needles} needles; at "
            "{metric} its design effect is {d:.2f}. About how many independent queries is its evidence worth?",
            strategy=f.strategy,
            n=f.n,
            needles=needles,
            metric=f.metric,
            d=f.design_effect,
        ),
        tuple(options),
    )


HOLM_FAMILY = (0.005, 0.015, 0.03, 0.04)
"""Four p-values of one family on which no correction, Bonferroni and Holm all keep a different number."""


def _holm_family() -> QuizQuestion:
    m = len(HOLM_FAMILY)
    counts = {
        "holm": sum(p < ALPHA for p in holm(HOLM_FAMILY)),
        "none": sum(p < ALPHA for p in HOLM_FAMILY),
        "bonferroni": sum(min(1.0, p * m) < ALPHA for p in HOLM_FAMILY),
    }
    why = {
        "holm": say(
            "Holm multiplies the smallest p by {m}, the next by {fewer}, and so on, never below the one before: "
            "{adjusted}",
            m=m,
            fewer=m - 1,
            adjusted=language.listed(say("{p:.3g}", p=p) for p in holm(HOLM_FAMILY)),
        ),
        "none": say("that counts the raw p-values: with {m} looks the chance of a false alarm grows", m=m),
        "bonferroni": say(
            "that multiplies every p by {m} (Bonferroni); Holm multiplies only the smallest by {m}, the next by "
            "{fewer}, and so on",
            m=m,
            fewer=m - 1,
        ),
    }
    return applied(
        say(
            "Four comparisons of one family have p = {a}, {b}, {c} and {d}. How many of them stay below 0.05 under "
            "Holm's correction?",
            a=HOLM_FAMILY[0],
            b=HOLM_FAMILY[1],
            c=HOLM_FAMILY[2],
            d=HOLM_FAMILY[3],
        ),
        tuple(Option(str(counts[rule]), rule == "holm", why[rule]) for rule in ("holm", "none", "bonferroni")),
    )


def statistics_further_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 02b's knowledge check: a design effect applied and one below 1, Holm applied and what it keeps at
    0.05, metric shopping."""
    ev = course.evaluation()
    hit_rates = [
        f for f in ev.figures([label for label in ev.results if label.endswith("/dense")]) if f.metric != "MRR"
    ]
    below = sum(f.design_effect < 1 for f in hit_rates)
    return [
        _effective_queries(course),
        QuizQuestion(
            say(
                "Here {below} of the {total} design effects of the dense runs' hit rates are below 1. What does a "
                "design effect below 1 say?",
                below=below,
                total=len(hit_rates),
            ),
            (
                Option(
                    _(
                        "the two phrasings of a needle disagree more often than two independent queries would, so the "
                        "clustered interval is narrower than Wilson's"
                    ),
                    True,
                    _(
                        "when one phrasing tends to be found and the other not, each needle's mean varies less than "
                        "two independent queries would"
                    ),
                ),
                Option(
                    _("the bootstrap went wrong: clustering can only widen an interval"),
                    False,
                    _(
                        "clustering widens the interval only when the members of a cluster agree; phrasings that "
                        "disagree narrow it"
                    ),
                ),
                Option(
                    _("the run finds fewer needles than it has queries"),
                    False,
                    _("the design effect is about how much the estimate varies, not about its value"),
                ),
            ),
        ),
        _holm_family(),
        QuizQuestion(
            _("What does Holm's correction keep at or below 0.05?"),
            (
                Option(
                    _("the chance that some comparison of the family falls below 0.05 when nothing is going on"),
                    True,
                    _("that chance is the family-wise error rate, and Holm bounds it without assuming independence"),
                ),
                Option(
                    _("the chance that each finding is a fluke"),
                    False,
                    _("a p-value is not the chance that a finding is a fluke, and an adjusted one is not either"),
                ),
                Option(
                    _("the share of the findings that are false"),
                    False,
                    _(
                        "that is the false discovery rate, which Benjamini and Hochberg's procedure controls; Holm "
                        "controls the family-wise error rate"
                    ),
                ),
            ),
        ),
        QuizQuestion(
            _(
                "F against E was compared at five metrics, and a report gives only the metric with the smallest p. "
                "What is wrong with that?"
            ),
            (
                Option(
                    _("the metric was chosen after seeing the results: the family is every look, corrected together"),
                    True,
                    _(
                        "among five looks at noise one is likely to look exciting; fix the metric first, or pay for "
                        "every look"
                    ),
                ),
                Option(
                    _("nothing: the metric with the smallest p is the most sensitive one"),
                    False,
                    _("it is the luckiest one on these queries, which says nothing about the next queries"),
                ),
                Option(
                    _("it should give the mean of the five p-values instead"),
                    False,
                    _("a mean of p-values is no test; fix the metric in advance, or correct for every look"),
                ),
            ),
        ),
    ]


def _shortlist(course: Course) -> QuizQuestion:
    ranks = course.evaluation("E")["E/hybrid"].ranks
    i = next((i for i, r in enumerate(ranks) if r > RERANK_DEPTH or r == 0), int(np.argmax(ranks)))
    rank, query = int(ranks[i]), course.queries[i]
    reachable = 0 < rank <= RERANK_DEPTH
    where = say("at rank {rank}", rank=rank) if rank else _("nowhere")
    why = say("the reranker sees only the top {depth}, and the chunk is {where}", depth=RERANK_DEPTH, where=where)
    return applied(
        say(
            'For the query "{query}", E/hybrid ranks the first chunk carrying its needle {where}. '
            "The reranker rereads the hybrid top {depth}. Can it put that chunk first?",
            query=query.text,
            where=where,
            depth=RERANK_DEPTH,
        ),
        (
            Option(_("no"), not reachable, why),
            Option(_("yes"), reachable, why),
            Option(
                _("yes, because a cross-encoder reads every chunk of the corpus"),
                False,
                _("it reads query-chunk pairs, which is why it only rereads a shortlist"),
            ),
        ),
    )


def _l2_to_cosine(course: Course) -> QuizQuestion:
    vectors = course.retriever("E").vectors
    similarity = vectors[1:] @ vectors[0]
    a, b = vectors[0], vectors[1 + int(np.argmax(similarity))]  # a near pair: d, d² and d²/2 read apart
    d = float(np.linalg.norm(a - b))
    return applied(
        say(
            "Two normalised chunk vectors of this course lie at L2 distance {d:.3f}. What is their cosine distance?",
            d=d,
        ),
        (
            Option(say("{x:.3f}", x=d * d / 2), True, say("1 - cos = d² / 2 = {d:.3f}² / 2", d=d)),
            Option(
                say("{x:.3f}", x=d),
                False,
                _("the square is missing: the two distances rank pairs alike but are not equal"),
            ),
            Option(say("{x:.3f}", x=d * d), False, _("half of that: expand |a - b|² = 2 - 2 cos for unit vectors")),
        ),
    )


def rerank_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 04's knowledge check: why a cross-encoder reads pairs, and a needle outside its shortlist."""
    return [
        QuizQuestion(
            _("Why can a cross-encoder not be precomputed like the chunk vectors?"),
            (
                Option(
                    _("it reads query and chunk together, so every pair is new work at query time"),
                    True,
                    _("that joint reading is what makes it precise and slow"),
                ),
                Option(
                    _("it is a bi-encoder with a larger model, so its vectors are too big to store"),
                    False,
                    _("a cross-encoder makes no chunk vector at all: it scores each (query, chunk) pair"),
                ),
                Option(
                    _("it can, with a larger cache"), False, _("no cache holds pairs with queries nobody has asked yet")
                ),
            ),
        ),
        asked_before_reveal(
            QuizQuestion(
                _("The reranker sees the hybrid top 25. A needle missing from those 25 ..."),
                (
                    Option(
                        _("can never be fixed by the reranker"),
                        True,
                        _("a reranker reorders a shortlist; the shortlist sets its ceiling"),
                    ),
                    Option(_("is found if the reranker is good enough"), False, _("it never sees that chunk")),
                    Option(_("moves into the top 25 after reranking"), False, _("reranking only reorders")),
                ),
            )
        ),
        QuizQuestion(
            _("Late interaction (MaxSim) keeps one vector per ..."),
            (
                Option(_("word piece"), True, _("each query piece takes its best match among a chunk's pieces")),
                Option(_("chunk"), False, _("that is the bi-encoder of notebook 02")),
                Option(
                    _("query, matched against every piece of the chunk"),
                    False,
                    _("the query keeps one vector per piece too: each query piece takes its own best match"),
                ),
            ),
        ),
        _shortlist(course),
    ]


def distances_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 05's knowledge check: L2 and cosine distance, normalisation, what a norm tracks."""
    return [
        QuizQuestion(
            _("For unit-length vectors, how are the L2 distance d and the cosine distance related?"),
            (
                Option(_("1 - cos = d² / 2"), True, _("expand |a - b|² with |a| = |b| = 1")),
                Option(_("1 - cos = d"), False, _("the square is missing: check it on two real chunks")),
                Option(_("1 - cos = d²"), False, _("half of that: |a - b|² = 2 - 2 cos for unit vectors")),
            ),
        ),
        asked_before_reveal(
            QuizQuestion(
                _("Without normalisation, what does a vector's norm track?"),
                (
                    Option(
                        _("largely the length of the text"),
                        True,
                        _("a mean-pooled vector's norm grows and shrinks with the text, not only its meaning"),
                    ),
                    Option(
                        _("how relevant the chunk is"),
                        False,
                        _("relevance is a relation to a query; a norm has no query"),
                    ),
                    Option(_("nothing: all norms are 1"), False, _("only after normalisation")),
                ),
            )
        ),
        QuizQuestion(
            _("Why does a fixed threshold need normalised vectors?"),
            (
                Option(
                    _("so that a vector's length, which tracks the text's length, no longer adds to the distance"),
                    True,
                    _(
                        "without it a long chunk and a short one would need different cuts; length still moves "
                        "the mean-pooled direction, so check a cut on short and long queries alike"
                    ),
                ),
                Option(
                    _("so that distances lie between 0 and 1"),
                    False,
                    _(
                        "the cosine distance of unit vectors still runs from 0 to 2; the point is one closeness per "
                        "number"
                    ),
                ),
                Option(
                    _("it does not"), False, _("see the un-normalised distances above: they drift with length far more")
                ),
            ),
        ),
        _l2_to_cosine(course),
    ]


def study_questions(result: Study) -> list[QuizQuestion]:
    """Notebook 03b's questions, the applied ones computed from the study."""
    changed = next((t for t in result.tunings if t.chosen != t.default), result.tunings[0])
    trial = changed.trial(changed.chosen)
    lost = next((t for t in result.tunings if t.loses), None)
    judged = lost or changed
    below = judged.loses
    scores = say(
        "{held:.3f} against {default:.3f} held out",
        held=judged.trial(judged.chosen).held,
        default=judged.trial(judged.default).held,
    )
    return [
        QuizQuestion(
            say(
                "The tuning half chose {value} for {setting}. Which figure estimates how it will do on "
                "questions nobody has asked yet?",
                value=setting_value(changed.chosen),
                setting=setting_name(changed.parameter),
            ),
            (
                Option(
                    say("its score on the held-out half, {held:.3f}", held=trial.held),
                    True,
                    _(
                        "the held-out needles played no part in choosing it, so their score carries no luck of the "
                        "choice"
                    ),
                ),
                Option(
                    say("its score on the tuning half, {tune:.3f}", tune=trial.tune),
                    False,
                    _("that score is why it was chosen: the best of several noisy scores is partly the luckiest"),
                ),
                Option(
                    say("the mean of the two, {mean:.3f}", mean=(trial.tune + trial.held) / 2),
                    False,
                    _("half of that mean is still the score the value was chosen on"),
                ),
            ),
            applies=True,
        ),
        QuizQuestion(
            say(
                "On the held-out half, does {setting}'s value chosen on the tuning half, {chosen}, score "
                "below the default, {default}?",
                setting=setting_name(judged.parameter),
                chosen=setting_value(judged.chosen),
                default=setting_value(judged.default),
            ),
            (Option(_("yes"), below, scores), Option(_("no"), not below, scores)),
            applies=True,
        ),
        QuizQuestion(
            _("Why do both phrasings of a needle go to the same half?"),
            (
                Option(
                    _(
                        "they look for the same sentence in the same chunk: split them and the tuning half has seen "
                        "half of every held-out answer"
                    ),
                    True,
                    _("the held-out half must hold needles the choice never saw"),
                ),
                Option(
                    _("so that each half has the same number of queries"),
                    False,
                    _("splitting by query would balance the counts too; the reason is what the halves must not share"),
                ),
                Option(
                    _("because the ticket phrasing is harder"),
                    False,
                    _("both halves get both phrasings of their needles; difficulty is not the reason"),
                ),
            ),
        ),
        QuizQuestion(
            _(
                "Five settings were each judged on the held-out half. Why do their p-values take Holm's "
                "correction together?"
            ),
            (
                Option(
                    _("five looks give five chances for one p below 0.05 by luck alone"),
                    True,
                    _("Holm keeps the chance of any false finding among the five at 0.05 or below"),
                ),
                Option(
                    _("because the held-out half is smaller than the whole"),
                    False,
                    _("a smaller sample widens each test, it does not multiply the looks"),
                ),
                Option(
                    _("because the settings were chosen on the tuning half"),
                    False,
                    _("the held-out half already takes care of that; Holm is for the number of comparisons"),
                ),
            ),
        ),
    ]


def tuning_questions(course: Course) -> list[QuizQuestion]:
    """Notebook 03b's knowledge check, on the course's own tuning study (MRR)."""
    from ragkit.tuning import study

    return study_questions(study(course.tuning_sweeps(), "MRR"))

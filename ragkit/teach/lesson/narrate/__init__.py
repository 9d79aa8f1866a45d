"""Narration, a module per notebook: the sentences a notebook writes from its results, so a cell of prose is one call.

Each narrator takes the result objects a cell has computed and returns the Markdown the notebook displays; the
figures in it are always the computation's (the corpus can change, the prose must not lie).
"""

from ragkit.teach.lesson.narrate.approximate import (
    build_and_memory as build_and_memory,
)
from ragkit.teach.lesson.narrate.approximate import (
    close_calls as close_calls,
)
from ragkit.teach.lesson.narrate.approximate import (
    large_collection as large_collection,
)
from ragkit.teach.lesson.narrate.approximate import (
    small_collection as small_collection,
)
from ragkit.teach.lesson.narrate.approximate import (
    when_exact as when_exact,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    ahead_of_both as ahead_of_both,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    bm25_against_dense as bm25_against_dense,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    bm25_checked as bm25_checked,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    chapter_verdicts as chapter_verdicts,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    constant_ranks as constant_ranks,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    dense_first_choice as dense_first_choice,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    fused_ranks as fused_ranks,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    needle_tests as needle_tests,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    playground_columns as playground_columns,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    rrf_checked as rrf_checked,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    rrf_weights as rrf_weights,
)
from ragkit.teach.lesson.narrate.bm25_and_hybrid import (
    two_scales as two_scales,
)
from ragkit.teach.lesson.narrate.chunking import (
    blind_losses as blind_losses,
)
from ragkit.teach.lesson.narrate.chunking import (
    boundaries_checked as boundaries_checked,
)
from ragkit.teach.lesson.narrate.chunking import (
    chunk_counts as chunk_counts,
)
from ragkit.teach.lesson.narrate.chunking import (
    destroyed as destroyed,
)
from ragkit.teach.lesson.narrate.chunking import (
    header_share as header_share,
)
from ragkit.teach.lesson.narrate.chunking import (
    most_over_window as most_over_window,
)
from ragkit.teach.lesson.narrate.chunking import (
    overlap_rule as overlap_rule,
)
from ragkit.teach.lesson.narrate.chunking import (
    overlap_saves as overlap_saves,
)
from ragkit.teach.lesson.narrate.chunking import (
    reference_costs as reference_costs,
)
from ragkit.teach.lesson.narrate.chunking import (
    text_and_content as text_and_content,
)
from ragkit.teach.lesson.narrate.chunking import (
    two_texts as two_texts,
)
from ragkit.teach.lesson.narrate.chunking import (
    window_counts as window_counts,
)
from ragkit.teach.lesson.narrate.chunking import (
    window_limit as window_limit,
)
from ragkit.teach.lesson.narrate.citations import (
    calls_saved as calls_saved,
)
from ragkit.teach.lesson.narrate.citations import (
    changed_prompt as changed_prompt,
)
from ragkit.teach.lesson.narrate.citations import (
    chapter_identifiers as chapter_identifiers,
)
from ragkit.teach.lesson.narrate.citations import (
    citations_verified as citations_verified,
)
from ragkit.teach.lesson.narrate.citations import (
    gate_reply as gate_reply,
)
from ragkit.teach.lesson.narrate.citations import (
    generated_markers as generated_markers,
)
from ragkit.teach.lesson.narrate.citations import (
    generator_halves as generator_halves,
)
from ragkit.teach.lesson.narrate.citations import (
    halves_at_cut as halves_at_cut,
)
from ragkit.teach.lesson.narrate.citations import (
    identifier_checks as identifier_checks,
)
from ragkit.teach.lesson.narrate.citations import (
    invented_ids as invented_ids,
)
from ragkit.teach.lesson.narrate.citations import (
    more_chunks as more_chunks,
)
from ragkit.teach.lesson.narrate.citations import (
    needle_in_prompt as needle_in_prompt,
)
from ragkit.teach.lesson.narrate.citations import (
    needle_positions as needle_positions,
)
from ragkit.teach.lesson.narrate.citations import (
    no_generator as no_generator,
)
from ragkit.teach.lesson.narrate.citations import (
    prompt_flaws as prompt_flaws,
)
from ragkit.teach.lesson.narrate.citations import (
    prompt_length as prompt_length,
)
from ragkit.teach.lesson.narrate.citations import (
    quote_or_text as quote_or_text,
)
from ragkit.teach.lesson.narrate.citations import (
    retrieval_bill as retrieval_bill,
)
from ragkit.teach.lesson.narrate.citations import (
    shifted_range as shifted_range,
)
from ragkit.teach.lesson.narrate.citations import (
    small_model as small_model,
)
from ragkit.teach.lesson.narrate.citations import (
    supported_rule as supported_rule,
)
from ragkit.teach.lesson.narrate.citations import (
    two_locators as two_locators,
)
from ragkit.teach.lesson.narrate.citations import (
    unknown_markers as unknown_markers,
)
from ragkit.teach.lesson.narrate.citations import (
    what_figures_say as what_figures_say,
)
from ragkit.teach.lesson.narrate.citations import (
    written_ranges as written_ranges,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    batched_scan as batched_scan,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    first_ranking as first_ranking,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    header_alone as header_alone,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    headline as headline,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    interval_width as interval_width,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    metrics_disagree as metrics_disagree,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    one_product as one_product,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    queries_or_needles as queries_or_needles,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    question_or_ticket as question_or_ticket,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    room_to_win as room_to_win,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    sign_test_checked as sign_test_checked,
)
from ragkit.teach.lesson.narrate.dense_retrieval import (
    sign_test_on_chapter_counts as sign_test_on_chapter_counts,
)
from ragkit.teach.lesson.narrate.distances import (
    FLOAT32_STEP as FLOAT32_STEP,
)
from ragkit.teach.lesson.narrate.distances import (
    identity_gap as identity_gap,
)
from ragkit.teach.lesson.narrate.distances import (
    identity_noise as identity_noise,
)
from ragkit.teach.lesson.narrate.distances import (
    identity_pair as identity_pair,
)
from ragkit.teach.lesson.narrate.distances import (
    length_and_norm as length_and_norm,
)
from ragkit.teach.lesson.narrate.distances import (
    length_cut as length_cut,
)
from ragkit.teach.lesson.narrate.distances import (
    length_sensitivity as length_sensitivity,
)
from ragkit.teach.lesson.narrate.distances import (
    nearest_moved as nearest_moved,
)
from ragkit.teach.lesson.narrate.distances import (
    query_shown as query_shown,
)
from ragkit.teach.lesson.narrate.distances import (
    unnormalised as unnormalised,
)
from ragkit.teach.lesson.narrate.exercises import (
    before_own_document as before_own_document,
)
from ragkit.teach.lesson.narrate.exercises import (
    cheapest_cuts as cheapest_cuts,
)
from ragkit.teach.lesson.narrate.exercises import (
    conclusion as conclusion,
)
from ragkit.teach.lesson.narrate.exercises import (
    cost_on_tune as cost_on_tune,
)
from ragkit.teach.lesson.narrate.exercises import (
    cost_rows as cost_rows,
)
from ragkit.teach.lesson.narrate.exercises import (
    cost_valleys as cost_valleys,
)
from ragkit.teach.lesson.narrate.exercises import (
    destroyed_at_size as destroyed_at_size,
)
from ragkit.teach.lesson.narrate.exercises import (
    e_against_c as e_against_c,
)
from ragkit.teach.lesson.narrate.exercises import (
    ex2_rules as ex2_rules,
)
from ragkit.teach.lesson.narrate.exercises import (
    header_duel as header_duel,
)
from ragkit.teach.lesson.narrate.exercises import (
    header_measured as header_measured,
)
from ragkit.teach.lesson.narrate.exercises import (
    header_pieces as header_pieces,
)
from ragkit.teach.lesson.narrate.exercises import (
    header_room as header_room,
)
from ragkit.teach.lesson.narrate.exercises import (
    header_shares as header_shares,
)
from ragkit.teach.lesson.narrate.exercises import (
    near_cheapest as near_cheapest,
)
from ragkit.teach.lesson.narrate.exercises import (
    needle_cut as needle_cut,
)
from ragkit.teach.lesson.narrate.exercises import (
    out_of_domain_answer as out_of_domain_answer,
)
from ragkit.teach.lesson.narrate.exercises import (
    perfect_cut as perfect_cut,
)
from ragkit.teach.lesson.narrate.exercises import (
    phrasing_hits as phrasing_hits,
)
from ragkit.teach.lesson.narrate.exercises import (
    phrasing_sign_test as phrasing_sign_test,
)
from ragkit.teach.lesson.narrate.exercises import (
    rates_at_cut as rates_at_cut,
)
from ragkit.teach.lesson.narrate.exercises import (
    smallest_p as smallest_p,
)
from ragkit.teach.lesson.narrate.exercises import (
    ticket_words as ticket_words,
)
from ragkit.teach.lesson.narrate.exercises import (
    window_owner as window_owner,
)
from ragkit.teach.lesson.narrate.exercises import (
    window_start as window_start,
)
from ragkit.teach.lesson.narrate.phrasing import (
    dutch_phrasing as dutch_phrasing,
)
from ragkit.teach.lesson.narrate.production import (
    appended_found as appended_found,
)
from ragkit.teach.lesson.narrate.production import (
    build_time as build_time,
)
from ragkit.teach.lesson.narrate.production import (
    guessed_counts as guessed_counts,
)
from ragkit.teach.lesson.narrate.production import (
    index_table as index_table,
)
from ragkit.teach.lesson.narrate.production import (
    killed_update as killed_update,
)
from ragkit.teach.lesson.narrate.production import (
    needle_after_extraction as needle_after_extraction,
)
from ragkit.teach.lesson.narrate.production import (
    needle_in_hits as needle_in_hits,
)
from ragkit.teach.lesson.narrate.production import (
    repaired as repaired,
)
from ragkit.teach.lesson.narrate.production import (
    stamp_differences as stamp_differences,
)
from ragkit.teach.lesson.narrate.production import (
    update_summary as update_summary,
)
from ragkit.teach.lesson.narrate.production import (
    working_copy as working_copy,
)
from ragkit.teach.lesson.narrate.reranking import (
    chapter_latencies as chapter_latencies,
)
from ragkit.teach.lesson.narrate.reranking import (
    chapter_rerank_time as chapter_rerank_time,
)
from ragkit.teach.lesson.narrate.reranking import (
    cross_encoder_here as cross_encoder_here,
)
from ragkit.teach.lesson.narrate.reranking import (
    maxsim_gains as maxsim_gains,
)
from ragkit.teach.lesson.narrate.reranking import (
    maxsim_query_time as maxsim_query_time,
)
from ragkit.teach.lesson.narrate.reranking import (
    maxsim_wall_time as maxsim_wall_time,
)
from ragkit.teach.lesson.narrate.reranking import (
    no_cross_encoder as no_cross_encoder,
)
from ragkit.teach.lesson.narrate.reranking import (
    rerank_skipped as rerank_skipped,
)
from ragkit.teach.lesson.narrate.reranking import (
    shortlist_ceiling as shortlist_ceiling,
)
from ragkit.teach.lesson.narrate.start_here import (
    chapter_figure as chapter_figure,
)
from ragkit.teach.lesson.narrate.start_here import (
    corpus_loaded as corpus_loaded,
)
from ragkit.teach.lesson.narrate.start_here import (
    ground_truth as ground_truth,
)
from ragkit.teach.lesson.narrate.start_here import (
    ground_truth_problems as ground_truth_problems,
)
from ragkit.teach.lesson.narrate.start_here import (
    model_here as model_here,
)
from ragkit.teach.lesson.narrate.start_here import (
    out_of_domain_kinds as out_of_domain_kinds,
)
from ragkit.teach.lesson.narrate.start_here import (
    read_a_file as read_a_file,
)
from ragkit.teach.lesson.narrate.statistics_further import (
    clustered_interval as clustered_interval,
)
from ragkit.teach.lesson.narrate.statistics_further import (
    design_effects as design_effects,
)
from ragkit.teach.lesson.narrate.statistics_further import (
    holm_checked as holm_checked,
)
from ragkit.teach.lesson.narrate.statistics_further import (
    metric_shopping as metric_shopping,
)
from ragkit.teach.lesson.narrate.thresholds import (
    abstention_rules as abstention_rules,
)
from ragkit.teach.lesson.narrate.thresholds import (
    crossings as crossings,
)
from ragkit.teach.lesson.narrate.thresholds import (
    distributions as distributions,
)
from ragkit.teach.lesson.narrate.thresholds import (
    gate_kept as gate_kept,
)
from ragkit.teach.lesson.narrate.thresholds import (
    literal_match as literal_match,
)
from ragkit.teach.lesson.narrate.thresholds import (
    near_miss as near_miss,
)
from ragkit.teach.lesson.narrate.thresholds import (
    query_line as query_line,
)
from ragkit.teach.lesson.narrate.thresholds import (
    strict_cut as strict_cut,
)
from ragkit.teach.lesson.narrate.thresholds import (
    sweep_shape as sweep_shape,
)
from ragkit.teach.lesson.narrate.tuning import (
    gain_shrinks as gain_shrinks,
)
from ragkit.teach.lesson.narrate.tuning import (
    halves_agree as halves_agree,
)
from ragkit.teach.lesson.narrate.tuning import (
    held_out_verdicts as held_out_verdicts,
)
from ragkit.teach.lesson.narrate.tuning import (
    needle_halves as needle_halves,
)
from ragkit.teach.lesson.narrate.tuning import (
    recut_corpus as recut_corpus,
)
from ragkit.teach.lesson.narrate.tuning import (
    second_sweep as second_sweep,
)
from ragkit.teach.lesson.narrate.tuning import (
    sweep_cost as sweep_cost,
)
from ragkit.teach.lesson.narrate.tuning import (
    swept_values as swept_values,
)

__all__ = [
    "FLOAT32_STEP",
    "abstention_rules",
    "ahead_of_both",
    "appended_found",
    "batched_scan",
    "before_own_document",
    "blind_losses",
    "bm25_against_dense",
    "bm25_checked",
    "boundaries_checked",
    "build_and_memory",
    "build_time",
    "calls_saved",
    "changed_prompt",
    "chapter_figure",
    "chapter_identifiers",
    "chapter_latencies",
    "chapter_rerank_time",
    "chapter_verdicts",
    "cheapest_cuts",
    "chunk_counts",
    "citations_verified",
    "close_calls",
    "clustered_interval",
    "conclusion",
    "constant_ranks",
    "corpus_loaded",
    "cost_on_tune",
    "cost_rows",
    "cost_valleys",
    "cross_encoder_here",
    "crossings",
    "dense_first_choice",
    "design_effects",
    "destroyed",
    "destroyed_at_size",
    "distributions",
    "dutch_phrasing",
    "e_against_c",
    "ex2_rules",
    "first_ranking",
    "fused_ranks",
    "gain_shrinks",
    "gate_kept",
    "gate_reply",
    "generated_markers",
    "generator_halves",
    "ground_truth",
    "ground_truth_problems",
    "guessed_counts",
    "halves_agree",
    "halves_at_cut",
    "header_alone",
    "header_duel",
    "header_measured",
    "header_pieces",
    "header_room",
    "header_share",
    "header_shares",
    "headline",
    "held_out_verdicts",
    "holm_checked",
    "identifier_checks",
    "identity_gap",
    "identity_noise",
    "identity_pair",
    "index_table",
    "interval_width",
    "invented_ids",
    "killed_update",
    "large_collection",
    "length_and_norm",
    "length_cut",
    "length_sensitivity",
    "literal_match",
    "maxsim_gains",
    "maxsim_query_time",
    "maxsim_wall_time",
    "metric_shopping",
    "metrics_disagree",
    "model_here",
    "more_chunks",
    "most_over_window",
    "near_cheapest",
    "near_miss",
    "nearest_moved",
    "needle_after_extraction",
    "needle_cut",
    "needle_halves",
    "needle_in_hits",
    "needle_in_prompt",
    "needle_positions",
    "needle_tests",
    "no_cross_encoder",
    "no_generator",
    "one_product",
    "out_of_domain_answer",
    "out_of_domain_kinds",
    "overlap_rule",
    "overlap_saves",
    "perfect_cut",
    "phrasing_hits",
    "phrasing_sign_test",
    "playground_columns",
    "prompt_flaws",
    "prompt_length",
    "queries_or_needles",
    "query_line",
    "query_shown",
    "question_or_ticket",
    "quote_or_text",
    "rates_at_cut",
    "read_a_file",
    "recut_corpus",
    "reference_costs",
    "repaired",
    "rerank_skipped",
    "retrieval_bill",
    "room_to_win",
    "rrf_checked",
    "rrf_weights",
    "second_sweep",
    "shifted_range",
    "shortlist_ceiling",
    "sign_test_checked",
    "sign_test_on_chapter_counts",
    "small_collection",
    "small_model",
    "smallest_p",
    "stamp_differences",
    "strict_cut",
    "supported_rule",
    "sweep_cost",
    "sweep_shape",
    "swept_values",
    "text_and_content",
    "ticket_words",
    "two_locators",
    "two_scales",
    "two_texts",
    "unknown_markers",
    "unnormalised",
    "update_summary",
    "what_figures_say",
    "when_exact",
    "window_counts",
    "window_limit",
    "window_owner",
    "window_start",
    "working_copy",
    "written_ranges",
]

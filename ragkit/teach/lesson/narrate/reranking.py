"""What notebook 04-reranking says from its results: one narrator per cell of computed prose."""

from __future__ import annotations

from IPython.display import HTML, Markdown

from ragkit.teach.course import chapter


def no_cross_encoder() -> HTML:
    """The boxed warning shown when the chapter's cross-encoder is not installed: what is missing and what to do."""
    return HTML(
        "<div style='border:2px solid #ef6c00;background:#fff3e0;padding:.6em 1em;border-radius:4px'>"
        "<b>No cross-encoder on this machine.</b> The chapter's reranker, "
        "<code>cross-encoder/ms-marco-MiniLM-L-6-v2</code>, is not installed here, so this notebook cannot measure its "
        "gain. Below you get the chapter's own figures, labelled as such, and an offline reranker (MaxSim) that runs "
        "without it. <b>MaxSim is not a stand-in for the cross-encoder's gain</b>: it is a different, untrained "
        "method, and whatever it scores tells you nothing about what the cross-encoder would do on this corpus. To "
        "measure the real thing, run <code>make models</code> on a machine with internet, then rerun this "
        "notebook.</div>")


def chapter_rerank_time() -> Markdown:
    """What the chapter's cross-encoder cost per query."""
    return Markdown(f"The chapter's cross-encoder over its top 25 took **{chapter.RERANK_MS} ms** per query on its "
                    "CPU.")

"""The book's own words around a notebook (navigation, launch buttons, the widget note), in each language of the site.

The notebooks bring their own prose; these are the few fixed strings the templates add. English is the source:
a language is a folder of notebooks (``notebooks/nl/``) and a table here.
"""

from __future__ import annotations

from ragkit.teach.language import SOURCE

NAMES = {"en": "English", "nl": "Nederlands"}
"""Each language by its own name: the label of the switch that leads to it."""

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "site_title": "ragkit: RAG in production, the notebooks",
        "binder": "Launch on Binder",
        "colab": "Open in Colab",
        "source": "Source",
        "download": "Download .ipynb",
        "switch": "This page in English",
        "site_switch": "This site in English",
        "kernel_note": "An interactive widget was here: it needs a running Python kernel.",
        "kernel_launch": "Launch this notebook on Binder",
        "kernel_local": "or run it with",
        "kernel_run": "Run it with",
        "index": "index.html",
        "pdf": "course.pdf",
        "contents": "Contents",
    },
    "nl": {
        "site_title": "ragkit: RAG in productie, de notebooks",
        "binder": "Starten op Binder",
        "colab": "Openen in Colab",
        "source": "Bron",
        "download": ".ipynb downloaden",
        "switch": "Deze pagina in het Nederlands",
        "site_switch": "Deze site in het Nederlands",
        "kernel_note": "Hier stond een interactieve widget: die werkt alleen met een draaiende Python-kernel.",
        "kernel_launch": "Start dit notebook op Binder",
        "kernel_local": "of draai het met",
        "kernel_run": "Draai het met",
        "index": "index.nl.html",
        "pdf": "course.nl.pdf",
        "contents": "Inhoud",
    },
}
TRANSLATIONS = tuple(language for language in LABELS if language != SOURCE)
"""The languages with a folder of their own under notebooks/ (``notebooks/nl/``)."""
assert set(LABELS) == set(NAMES) and all(LABELS[lang].keys() == LABELS[SOURCE].keys() for lang in LABELS)

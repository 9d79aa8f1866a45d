"""The teaching layer: the course as notebooks load it, the chapter's figures, plots, widgets, quiz and exercises.

It imports the engine (``ragkit``); nothing in the engine imports it.
"""

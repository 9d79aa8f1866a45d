"""What a student sees: narration (one module per notebook), plots, widgets, tables, the quiz, claims, overlap, latency.

It reads the course and the exercises' rules; nothing but the notebooks imports it.
"""

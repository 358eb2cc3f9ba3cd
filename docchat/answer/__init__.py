"""Answering a question: qa.ask, pacing, presets, metrics, background chat answers."""

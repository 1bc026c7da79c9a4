"""The local LLM server's process: llama-cpp-python's OpenAI-compatible server, changed in two
ways, and configured by its command line alone (see main).

    python -m apps.llm_server.process <llama_cpp.server arguments>

llm_server.py starts the server through this module. Plain Python (no Django).

**No AMX kernels.** pip builds llama.cpp for the machine it runs on (`-march=native`), which on a
CPU with Intel AMX compiles in llama.cpp's AMX matrix kernels; on such a machine (a Xeon VM) the
first prompt crashed the server with a segmentation fault in `ggml_backend_amx_mul_mat`. Where the
build has AMX, the model is loaded with `use_extra_bufts` off: llama.cpp keeps the weights in
their file layout and uses its ordinary AVX-512 kernels. (A portable AVX2 build avoids AMX too,
but evaluated prompts a third slower here.)

**Check the greedy pick first.** For a JSON-constrained reply llama-cpp-python (0.3.x) puts
llama.cpp's grammar sampler in front of the greedy pick, so at every generated token the grammar
checks every entry of the vocabulary: 262,144 for Gemma 3, about 50 ms per token on one core, more
than the model itself takes. llama.cpp's own server picks first, checks only the picked token, and
filters the whole vocabulary only when that token is refused; this adds the same shortcut for
greedy requests (temperature 0, the judges' default), checking the best-scoring token and, when
the grammar refuses it, the next 64 in order. It picks exactly the same tokens: the greedy pick is
the best-scoring token the grammar allows (ties to the lower token id), and the first allowed
token in that order is it. When all 64 are refused the full filter runs as before. Sampling at a
temperature above 0 and requests without a grammar keep llama-cpp-python's own chain.
`PLURALIST_LLM_PICK_FIRST=0` turns the shortcut off (bench/bench_llm.py's reference).
"""

from __future__ import annotations

import ctypes
import math
import os
from typing import Any

import numpy as np

# How many of the best-scoring tokens are checked one by one when the best one is refused.
NEXT_BEST = 64


def install(*, pick_first: bool = True) -> None:
    """Patch llama-cpp-python (pinned in pyproject.toml) in this process."""
    import llama_cpp
    import llama_cpp.llama as llama_module
    from llama_cpp import _internals

    if b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info():
        default_params = llama_cpp.llama_model_default_params

        def model_params() -> Any:
            params = default_params()
            params.use_extra_bufts = False
            return params

        llama_module.llama_cpp.llama_model_default_params = model_params
    if not pick_first:
        return
    original = llama_cpp.Llama._init_sampler

    def init_sampler(self: Any, *args: Any, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        if grammar is None or kwargs.get("temp") != 0.0 or args or kwargs.get("logits_processor"):
            return original(self, *args, **kwargs)
        sampler = _internals.LlamaSampler()
        sampler.add_penalties(
            n_vocab=self._n_vocab,
            penalty_last_n=self.last_n_tokens_size,
            penalty_repeat=kwargs.get("repeat_penalty", 1.0),
            penalty_freq=kwargs.get("frequency_penalty", 0.0),
            penalty_present=kwargs.get("presence_penalty", 0.0),
        )
        # The shortcut consults the grammar sampler, which comes right after it in the chain.
        grammar_index = llama_cpp.llama_sampler_chain_n(sampler.sampler) + 1
        sampler.add_custom(_pick_first(sampler, grammar_index))
        sampler.add_grammar(self._model, grammar)
        sampler.add_greedy()
        return sampler

    llama_cpp.Llama._init_sampler = init_sampler  # type: ignore[method-assign]


def _pick_first(chain: Any, grammar_index: int) -> Any:
    """A sampler step that narrows the candidates to the best one the grammar allows, checking
    the best-scoring token first, then the next NEXT_BEST; only when the grammar refuses all of
    them does the grammar sampler after it filter the whole vocabulary."""
    import llama_cpp

    def allowed_best(entries: list[Any]) -> Any:
        """The best-scoring of `entries` (sorted best first) that the grammar allows, or None."""
        batch = (llama_cpp.llama_token_data * len(entries))(*entries)
        view = llama_cpp.llama_token_data_array(
            data=batch, size=len(entries), selected=-1, sorted=True
        )
        grammar = llama_cpp.llama_sampler_chain_get(chain.sampler, grammar_index)
        llama_cpp.llama_sampler_apply(grammar, ctypes.byref(view))
        return next((entry for entry in batch if not math.isinf(entry.logit)), None)

    def apply(cur_p: Any) -> None:
        candidates = cur_p.contents
        size = int(candidates.size)
        if size <= 1:
            return
        rows = np.ctypeslib.as_array(candidates.data, shape=(size,))
        logits = rows["logit"]
        first = int(np.argmax(logits))
        chosen = allowed_best([_entry(rows, first)])
        if chosen is None and size > NEXT_BEST:
            top = np.argpartition(logits, -NEXT_BEST)[-NEXT_BEST:]
            top = top[np.lexsort((top, -logits[top]))]  # best first; ties by token order
            chosen = allowed_best([_entry(rows, int(i)) for i in top])
        if chosen is None:
            return  # the grammar filters the whole vocabulary next, as before
        candidates.data[0] = chosen
        candidates.size = 1
        candidates.sorted = True

    return apply


def _entry(rows: np.ndarray, index: int) -> Any:
    import llama_cpp

    return llama_cpp.llama_token_data(
        int(rows["id"][index]), float(rows["logit"][index]), float(rows["p"][index])
    )


def main() -> None:
    install(pick_first=os.environ.get("PLURALIST_LLM_PICK_FIRST", "1") != "0")
    from llama_cpp.server.__main__ import main as serve
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    # llama-cpp-python's server takes settings from the environment too, and HOST and PORT there
    # beat its command line: `PORT=8080 bin/demo --llm` moved the LLM server onto the web
    # server's port. llm_server.py's command line is the whole configuration.
    names = {"HOST", "PORT", "CONFIG_FILE"}
    names |= {
        name.upper() for model in (ModelSettings, ServerSettings) for name in model.model_fields
    }
    for name in [n for n in os.environ if n.upper() in names]:
        del os.environ[name]

    serve()


if __name__ == "__main__":
    main()

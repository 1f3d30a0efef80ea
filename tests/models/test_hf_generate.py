"""Hugging Face ``generate()`` beyond the zoo's greedy GPT-2 entry: Llama greedy, GPT-2
sampling (``top_k``, seeded) and T5 (encoder-decoder) under `bcfront.capture`, against
eager with the same seed.  The only breaks left are the ones that read the input ids or
mask and the per-step stop check: the eos/pad token checks are decided while tracing
(`known_tensors`) and the ``with self._optimize_model_for_decode():`` around the decoding
loop is captured across its breaks (`resume_gen`), neither breaking any more."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from .vision_cpu import import_torchvision  # noqa: E402

try:
    import_torchvision()  # before transformers, which imports torchvision
except ImportError:
    pytest.skip("torchvision is not installed", allow_module_level=True)
pytest.importorskip("transformers")

import bcfront  # noqa: E402
from bcfront.reasons import BreakReason  # noqa: E402

from .real_zoo import transformers  # noqa: E402

# the checks generate() makes on the input ids/mask (negative ids, right padding, an all-ones
# mask) and its stop check: they read tensor data, every other break is a regression
READS_DATA = {BreakReason.DATA_DEPENDENT, BreakReason.DATA_DEPENDENT_BRANCH}


def llama():
    tf = transformers()
    cfg = tf.LlamaConfig(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    return tf.LlamaForCausalLM(cfg)


def gpt2():
    tf = transformers()
    return tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=128, n_positions=64, n_embd=64, n_layer=2, n_head=4))


def t5():
    tf = transformers()
    cfg = tf.T5Config(
        vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, decoder_start_token_id=0
    )
    return tf.T5ForConditionalGeneration(cfg)


GREEDY = {"do_sample": False}
CASES = {  # name: (model, generate's options, most break places)
    "llama_greedy": (llama, GREEDY, 4),
    "gpt2_top_k": (gpt2, {"do_sample": True, "top_k": 10}, 4),
    "t5_greedy": (t5, GREEDY, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generate_matches_eager_and_breaks_only_on_data(name):
    make, options, most = CASES[name]
    torch.manual_seed(0)
    model = make().eval()
    ids = torch.randint(1, 128, (2, 5), generator=torch.Generator().manual_seed(1))

    def generate(ids):
        return model.generate(ids, max_new_tokens=6, pad_token_id=0, **options)

    cf = bcfront.capture(generate)
    with torch.no_grad():
        for seed in (42, 7):  # the second call runs the cached entries
            torch.manual_seed(seed)
            expected = generate(ids)
            torch.manual_seed(seed)
            with bcfront.explain.collect() as run:
                got = cf(ids)
            assert torch.equal(got, expected), f"{name}, seed {seed}"
            if seed == 42:
                report = run.report()
    assert {b.reason for b in report.graph_breaks} <= READS_DATA, report
    assert len(report.graph_breaks) <= most, report
    assert not report.native_fallbacks

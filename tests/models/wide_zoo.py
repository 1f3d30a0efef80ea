"""A wider set of tiny, random-init library models than the zoo, for coverage probing.

`WIDE` maps a name to a factory returning ``(module, make_inputs)`` as in
`real_zoo` (``make_inputs(seed, variant)``; variant 1 has another batch and/or
sequence length); its ``kind`` is ``"inference"`` or ``"train"``.  Every model
is built from a config (no download), seeded, float32 on the CPU, small enough
to run eagerly in well under a second.  tools/probe_models.py measures them
under `bcfront.capture` (breaks, share in graphs, recompiles, native fallbacks,
equality with eager); entries that capture whole may be promoted to the zoo.
"""

from __future__ import annotations

import torch

from .real_zoo import (
    CausalLMOptimizerStep,
    ClassifierTrainStep,
    HFGenerate,
    _gen,
    _hf,
    audio_encoder,
    audio_inputs,
    hf_distilbert_cls,
    image_inputs,
    labelled_image_inputs,
    labelled_masked_text_inputs,
    masked_text_inputs,
    prompt_inputs,
    text_inputs,
    timm,
    transformers,
)
from .tiny_configs import DECODER, DISTILBERT, ENCODER, T5, VIT, VOCAB

WIDE: dict = {}


def entry(kind: str = "inference"):
    def register(factory):
        factory.kind = kind
        WIDE[factory.__name__] = factory
        return factory

    return register


# -- decoder-only language models ------------------------------------------------------


def _causal(config: str, model: str, attn: str = "sdpa", **kw):
    tf = transformers()
    return _hf(getattr(tf, config), getattr(tf, model), attn, **{**DECODER, **kw})


@entry()
def mistral():
    """MistralForCausalLM, GQA, sliding window 4 (shorter than the sequence)."""
    return _causal("MistralConfig", "MistralForCausalLM", sliding_window=4).eval(), text_inputs


@entry()
def qwen2():
    """Qwen2ForCausalLM (q/k/v bias), GQA."""
    return _causal("Qwen2Config", "Qwen2ForCausalLM").eval(), text_inputs


@entry()
def qwen3():
    """Qwen3ForCausalLM (q/k norms), GQA."""
    return _causal("Qwen3Config", "Qwen3ForCausalLM", head_dim=8).eval(), text_inputs


@entry()
def phi():
    """PhiForCausalLM (partial rotary, parallel attention and MLP)."""
    return _causal("PhiConfig", "PhiForCausalLM", num_key_value_heads=4).eval(), text_inputs


@entry()
def phi3():
    """Phi3ForCausalLM (fused qkv and gate_up projections)."""
    return _causal("Phi3Config", "Phi3ForCausalLM", pad_token_id=0).eval(), text_inputs


@entry()
def gemma():
    """GemmaForCausalLM (scaled embeddings, RMSNorm with 1+w, gelu-tanh MLP)."""
    return _causal("GemmaConfig", "GemmaForCausalLM", head_dim=8).eval(), text_inputs


@entry()
def gemma2():
    """Gemma2ForCausalLM (soft-capped logits and attention, alternating sliding window)."""
    return (
        _causal("Gemma2Config", "Gemma2ForCausalLM", "eager", head_dim=8, sliding_window=4).eval(),
        text_inputs,
    )


@entry()
def gpt_neox():
    """GPTNeoXForCausalLM (parallel residual, partial rotary)."""
    return (
        _causal("GPTNeoXConfig", "GPTNeoXForCausalLM", num_key_value_heads=None).eval(),
        text_inputs,
    )


@entry()
def opt():
    """OPTForCausalLM (learned positions offset by 2, from the attention mask)."""
    tf = transformers()
    m = _hf(
        tf.OPTConfig,
        tf.OPTForCausalLM,
        "sdpa",
        num_hidden_layers=2,
        hidden_size=32,
        ffn_dim=64,
        num_attention_heads=4,
        word_embed_proj_dim=32,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        use_cache=False,
    )
    return m.eval(), masked_text_inputs


@entry()
def falcon():
    """FalconForCausalLM (multi-query attention, rotary)."""
    tf = transformers()
    m = _hf(
        tf.FalconConfig,
        tf.FalconForCausalLM,
        "sdpa",
        num_hidden_layers=2,
        hidden_size=32,
        num_attention_heads=4,
        vocab_size=VOCAB,
        use_cache=False,
    )
    return m.eval(), text_inputs


@entry()
def bloom():
    """BloomForCausalLM (ALiBi position bias built from the attention mask)."""
    tf = transformers()
    m = _hf(
        tf.BloomConfig,
        tf.BloomForCausalLM,
        "eager",
        n_layer=2,
        hidden_size=32,
        n_head=4,
        vocab_size=VOCAB,
        use_cache=False,
    )
    return m.eval(), masked_text_inputs


# -- encoders --------------------------------------------------------------------------


def _encoder(config: str, model: str, attn: str = "sdpa", **kw):
    tf = transformers()
    return _hf(getattr(tf, config), getattr(tf, model), attn, **{**ENCODER, **kw}).eval()


@entry()
def distilbert():
    """DistilBertModel with a padding mask."""
    tf = transformers()
    m = _hf(tf.DistilBertConfig, tf.DistilBertModel, "sdpa", **DISTILBERT)
    return m.eval(), masked_text_inputs


@entry()
def roberta():
    """RobertaModel (positions from the non-padding tokens' cumulative sum)."""
    return _encoder("RobertaConfig", "RobertaModel", pad_token_id=1), masked_text_inputs


@entry()
def deberta_v2():
    """DebertaV2Model (disentangled relative attention)."""
    return _encoder("DebertaV2Config", "DebertaV2Model", "eager"), masked_text_inputs


@entry()
def electra():
    """ElectraModel (embedding size 16 projected to 32)."""
    return _encoder("ElectraConfig", "ElectraModel", embedding_size=16), masked_text_inputs


@entry()
def albert():
    """AlbertModel (one shared layer group, factorized embeddings)."""
    return _encoder("AlbertConfig", "AlbertModel", "eager", embedding_size=16), masked_text_inputs


# -- encoder-decoder, audio, multimodal ---------------------------------------------------


def whisper_inputs(seed: int, variant: int):
    gen = _gen(seed)
    b = (2, 3)[variant]
    dec = (4, 3)[variant]
    feats = torch.randn(b, 16, 64, generator=gen)  # 16 mel bins, 64 frames (2x conv stride)
    return (), {
        "input_features": feats,
        "decoder_input_ids": torch.randint(0, VOCAB, (b, dec), generator=gen),
    }


@entry()
def whisper():
    """WhisperModel (2+2 layers): log-mel features through the conv stem, then the decoder."""
    tf = transformers()
    m = _hf(
        tf.WhisperConfig,
        tf.WhisperModel,
        "sdpa",
        num_mel_bins=16,
        encoder_layers=2,
        decoder_layers=2,
        d_model=32,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        vocab_size=VOCAB,
        max_source_positions=32,
        max_target_positions=32,
        use_cache=False,
        decoder_start_token_id=0,
    )
    return m.eval(), whisper_inputs


def clip_inputs(seed: int, variant: int):
    (_, mask_kw), (images,) = masked_text_inputs(seed, variant), image_inputs(seed, variant)[0]
    return (), {**mask_kw, "pixel_values": images[: mask_kw["input_ids"].shape[0]]}


@entry()
def clip():
    """CLIPModel: text and vision towers, 32x32 images in 8x8 patches, the logits."""
    tf = transformers()
    torch.manual_seed(0)
    small = dict(num_hidden_layers=2, hidden_size=32, intermediate_size=64, num_attention_heads=4)
    cfg = tf.CLIPConfig(
        text_config=dict(small, vocab_size=VOCAB, max_position_embeddings=64, eos_token_id=2),
        vision_config=dict(small, image_size=32, patch_size=8),
        projection_dim=16,
        attn_implementation="sdpa",
    )
    return tf.CLIPModel(cfg).eval(), clip_inputs


# -- vision (transformers) ------------------------------------------------------------------


@entry()
def hf_swin():
    """SwinModel: shifted windows (window 4) over 32x32 images, 2 stages."""
    tf = transformers()
    m = _hf(
        tf.SwinConfig,
        tf.SwinModel,
        "eager",
        image_size=32,
        patch_size=2,
        embed_dim=16,
        depths=[2, 2],
        num_heads=[2, 4],
        window_size=4,
    )
    return m.eval(), image_inputs


@entry()
def hf_convnext():
    """ConvNextModel, 2 stages, with layer scale and drop path."""
    tf = transformers()
    m = _hf(tf.ConvNextConfig, tf.ConvNextModel, "eager", hidden_sizes=[16, 32], depths=[1, 1], num_stages=2)
    return m.eval(), image_inputs


@entry()
def segformer():
    """SegformerForSemanticSegmentation: overlapping patch merging, efficient attention, decode head."""
    tf = transformers()
    m = _hf(
        tf.SegformerConfig,
        tf.SegformerForSemanticSegmentation,
        "eager",
        num_encoder_blocks=2,
        depths=[1, 1],
        sr_ratios=[2, 1],
        hidden_sizes=[16, 32],
        num_attention_heads=[1, 2],
        decoder_hidden_size=32,
        num_labels=5,
    )
    return m.eval(), image_inputs


@entry()
def mobilevit():
    """MobileViTModel: convolutions unfolded into patches for transformer blocks."""
    tf = transformers()
    m = _hf(
        tf.MobileViTConfig,
        tf.MobileViTModel,
        "eager",
        image_size=32,
        hidden_sizes=[32, 40, 48],
        neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
    )
    return m.eval(), image_inputs


# -- timm -------------------------------------------------------------------------------------


def _timm(name: str, **kw):
    torch.manual_seed(0)
    return timm().create_model(name, pretrained=False, num_classes=10, **kw)


@entry()
def timm_vit_tiny():
    """timm vit_tiny_patch16_224 at 32x32, patch 8 (cls token, pos-embed)."""
    return _timm("vit_tiny_patch16_224", img_size=32, patch_size=8, depth=2).eval(), image_inputs


@entry()
def timm_deit():
    """timm deit_tiny_distilled_patch16_224 at 32x32 (distillation token, two heads)."""
    return _timm("deit_tiny_distilled_patch16_224", img_size=32, patch_size=8, depth=2).eval(), image_inputs


@entry()
def timm_swin():
    """timm swin_tiny at 32x32 (window 2, 2 stages)."""
    m = _timm(
        "swin_tiny_patch4_window7_224",
        img_size=32,
        patch_size=4,
        window_size=2,
        depths=(1, 1),
        num_heads=(2, 4),
        embed_dim=32,
    )
    return m.eval(), image_inputs


@entry()
def timm_convnext_atto():
    """timm convnext_atto."""
    return _timm("convnext_atto").eval(), image_inputs


@entry()
def timm_efficientnet_b0():
    """timm efficientnet_b0 (squeeze-excite, drop path)."""
    return _timm("efficientnet_b0").eval(), image_inputs


@entry()
def timm_regnet():
    """timm regnetx_002."""
    return _timm("regnetx_002").eval(), image_inputs


@entry()
def timm_levit():
    """timm levit_128s at 32x32 (attention biases indexed by relative offsets)."""
    return _timm("levit_128s", img_size=32).eval(), image_inputs


@entry()
def timm_poolformer():
    """timm poolformer_s12 (pooling as the token mixer, layer scale)."""
    return _timm("poolformer_s12").eval(), image_inputs


@entry()
def timm_mixer():
    """timm mixer_s16_224 at 32x32 (MLP-mixer)."""
    return _timm("mixer_s16_224", img_size=32).eval(), image_inputs


@entry()
def timm_cait():
    """timm cait_xxs24 at 32x32 (class attention, talking heads)."""
    return _timm("cait_xxs24_224", img_size=32, patch_size=8, depth=2).eval(), image_inputs


# -- training steps ---------------------------------------------------------------------------


@entry(kind="train")
def train_mistral():
    """A Mistral AdamW step (CausalLMOptimizerStep)."""
    return CausalLMOptimizerStep(mistral()[0]), text_inputs


@entry(kind="train")
def train_qwen2():
    """A Qwen2 AdamW step."""
    return CausalLMOptimizerStep(qwen2()[0]), text_inputs


@entry(kind="train")
def train_timm_vit():
    """A timm vit_tiny training step (cross-entropy, backward)."""
    return ClassifierTrainStep(timm_vit_tiny()[0]).train(), labelled_image_inputs


@entry(kind="train")
def train_timm_efficientnet():
    """A timm efficientnet_b0 training step in train mode (batch-norm, drop path 0)."""
    return ClassifierTrainStep(_timm("efficientnet_b0", drop_rate=0.0)).train(), labelled_image_inputs


class SequenceClassifierTrainStep(torch.nn.Module):
    """A sequence classifier's forward with labels, backward, an SGD step; returns the loss."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def forward(self, input_ids, attention_mask, labels):
        self.opt.zero_grad()
        loss = self.model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
        loss.backward()
        self.opt.step()
        return loss.detach()


def labelled_text_inputs(seed: int, variant: int):
    _, kw = labelled_masked_text_inputs(seed, variant)
    return (kw["input_ids"], kw["attention_mask"], kw["labels"]), {}


@entry(kind="train")
def train_distilbert():
    """A DistilBertForSequenceClassification SGD step (the zoo's hf_distilbert_cls, dropout 0)."""
    return SequenceClassifierTrainStep(hf_distilbert_cls()[0]).train(), labelled_text_inputs


# -- more decoders and encoders -------------------------------------------------------------------


@entry()
def mixtral():
    """MixtralForCausalLM: top-2 routing over 4 experts (per-expert token gather and index_add)."""
    return (
        _causal("MixtralConfig", "MixtralForCausalLM", num_local_experts=4, num_experts_per_tok=2).eval(),
        text_inputs,
    )


@entry()
def qwen2_moe():
    """Qwen2MoeForCausalLM: routed experts plus a gated shared expert."""
    m = _causal(
        "Qwen2MoeConfig",
        "Qwen2MoeForCausalLM",
        num_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        shared_expert_intermediate_size=32,
    )
    return m.eval(), text_inputs


@entry()
def gptj():
    """GPTJForCausalLM (interleaved rotary on a slice of the head)."""
    return _gptj_like("GPTJConfig", "GPTJForCausalLM"), text_inputs


def _gptj_like(config: str, model: str):
    """GPT-J's layout (n_layer/n_embd/n_head names, rotary on 4 of each head's 8 dims)."""
    tf = transformers()
    kw = dict(n_layer=2, n_embd=32, n_head=4, rotary_dim=4, vocab_size=VOCAB, n_positions=64, use_cache=False)
    return _hf(getattr(tf, config), getattr(tf, model), "eager", **kw).eval()


@entry()
def codegen():
    """CodeGenForCausalLM (fused qkv split in model-parallel blocks)."""
    return _gptj_like("CodeGenConfig", "CodeGenForCausalLM"), text_inputs


@entry()
def mpt():
    """MptForCausalLM (ALiBi, no biases)."""
    tf = transformers()
    m = _hf(
        tf.MptConfig,
        tf.MptForCausalLM,
        "eager",
        n_layers=2,
        d_model=32,
        n_heads=4,
        vocab_size=VOCAB,
        max_seq_len=64,
        use_cache=False,
    )
    return m.eval(), text_inputs


@entry()
def stablelm():
    """StableLmForCausalLM (partial rotary, LayerNorm)."""
    return _causal("StableLmConfig", "StableLmForCausalLM").eval(), text_inputs


@entry()
def olmo():
    """OlmoForCausalLM (non-parametric layer norm, qkv clipping)."""
    return _causal("OlmoConfig", "OlmoForCausalLM", clip_qkv=8.0).eval(), text_inputs


@entry()
def xlnet():
    """XLNetModel (two-stream relative attention, permutation-free inference)."""
    tf = transformers()
    m = _hf(
        tf.XLNetConfig,
        tf.XLNetModel,
        "eager",
        n_layer=2,
        d_model=32,
        n_head=4,
        d_inner=64,
        vocab_size=VOCAB,
        use_mems_eval=False,
    )
    return m.eval(), masked_text_inputs


@entry()
def funnel():
    """FunnelModel (pooled blocks, relative shift attention)."""
    tf = transformers()
    m = _hf(
        tf.FunnelConfig,
        tf.FunnelModel,
        "eager",
        block_sizes=[1, 1],
        num_decoder_layers=1,
        d_model=32,
        n_head=4,
        d_head=8,
        d_inner=64,
        vocab_size=VOCAB,
    )
    return m.eval(), masked_text_inputs


@entry()
def fnet():
    """FNetModel (Fourier token mixing: torch.fft)."""
    return _encoder("FNetConfig", "FNetModel", "eager"), text_inputs


@entry()
def bigbird():
    """BigBirdModel with full attention (sequence too short for block-sparse)."""
    return _encoder(
        "BigBirdConfig", "BigBirdModel", "eager", attention_type="original_full"
    ), masked_text_inputs


@entry()
def hubert():
    """HubertModel: Wav2Vec2's feature encoder, weight-normed positional conv."""
    return audio_encoder("HubertConfig", "HubertModel"), audio_inputs


@entry()
def beit():
    """BeitModel (relative position bias, layer scale, mean pooling)."""
    tf = transformers()
    m = _hf(tf.BeitConfig, tf.BeitModel, "eager", **VIT, use_relative_position_bias=True)
    return m.eval(), image_inputs


@entry()
def dinov2():
    """Dinov2Model (interpolated position embeddings, layer scale)."""
    tf = transformers()
    m = _hf(
        tf.Dinov2Config,
        tf.Dinov2Model,
        "sdpa",
        num_hidden_layers=2,
        hidden_size=32,
        mlp_ratio=2,
        num_attention_heads=4,
        image_size=32,
        patch_size=8,
    )
    return m.eval(), image_inputs


def image64_inputs(seed: int, variant: int):
    return (torch.randn((2, 3)[variant], 3, 64, 64, generator=_gen(seed)),), {}


def _timm_entry(name: str, model: str, inputs=image_inputs, **kw):
    def factory():
        return _timm(model, **kw).eval(), inputs

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"timm {model} {kw or ''}".strip()
    entry()(factory)


for _name, _model, _inputs, _kw in (
    ("timm_maxvit", "maxvit_nano_rw_256", image64_inputs, dict(img_size=64)),
    ("timm_coatnet", "coatnet_nano_rw_224", image64_inputs, dict(img_size=64)),
    ("timm_nfnet", "dm_nfnet_f0", image_inputs, {}),
    ("timm_ghostnet", "ghostnet_100", image_inputs, {}),
    ("timm_xcit", "xcit_nano_12_p8_224", image_inputs, dict(img_size=32, depth=2)),
    ("timm_pit", "pit_ti_224", image64_inputs, dict(img_size=64)),
    ("timm_eva02", "eva02_tiny_patch14_224", image_inputs, dict(img_size=32, patch_size=8, depth=2)),
    ("timm_fastvit", "fastvit_t8", image64_inputs, {}),
    ("timm_repvit", "repvit_m1", image64_inputs, {}),
    ("timm_tiny_vit", "tiny_vit_5m_224", image64_inputs, {}),
    ("timm_edgenext", "edgenext_xx_small", image64_inputs, {}),
    ("timm_davit", "davit_tiny", image64_inputs, {}),
    ("timm_focalnet", "focalnet_tiny_srf", image64_inputs, {}),
    ("timm_hiera", "hiera_tiny_224", image64_inputs, dict(img_size=64)),
    ("timm_gcvit", "gcvit_xxtiny", image64_inputs, dict(img_size=64)),
    ("timm_efficientformerv2", "efficientformerv2_s0", image64_inputs, dict(img_size=64)),
    ("timm_mobilevitv2", "mobilevitv2_050", image64_inputs, {}),
    ("timm_nest", "nest_tiny", image64_inputs, dict(img_size=64, patch_size=4)),
    ("timm_volo", "volo_d1_224", image64_inputs, dict(img_size=64)),
    ("timm_convmixer", "convmixer_768_32", image_inputs, {}),
    ("timm_hrnet", "hrnet_w18_small", image64_inputs, {}),
    ("timm_dla", "dla34", image_inputs, {}),
    ("timm_res2net", "res2net50_14w_8s", image_inputs, {}),
):
    _timm_entry(_name, _model, _inputs, **_kw)


# -- transformers' generate() ------------------------------------------------------------------


@entry(kind="generate")
def gen_mistral_hf_generate():
    """MistralForCausalLM.generate() (greedy, KV cache, sliding window 4), 6 new tokens."""
    return HFGenerate(
        _causal("MistralConfig", "MistralForCausalLM", sliding_window=4, use_cache=True), 6
    ).eval(), prompt_inputs


@entry(kind="generate")
def gen_t5_hf_generate():
    """T5ForConditionalGeneration.generate() (greedy, encoder once, decoder cache), 6 tokens."""
    tf = transformers()
    m = _hf(tf.T5Config, tf.T5ForConditionalGeneration, "eager", **T5)
    return HFGenerate(m, 6).eval(), prompt_inputs

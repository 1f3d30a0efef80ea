"""The tiny transformers configs the zoos build their models from (keyword arguments).

`real_zoo` and `wide_zoo` both build these families; each config is written once here,
so that a model of one zoo and its sibling in the other (a T5Model and its generate(),
a DistilBert encoder and its classifier) stay the same size.  Every model is small
enough to run eagerly in well under a second: 2 layers, width 32, 4 heads, vocabulary
`VOCAB`, 64 positions.
"""

from __future__ import annotations

VOCAB = 100

# the layers every tiny transformer here has: 2 layers of width 32, 4 heads, MLP 64
LAYERS = dict(num_hidden_layers=2, hidden_size=32, intermediate_size=64, num_attention_heads=4)

# BERT-style encoders (BERT, RoBERTa, DeBERTa-v2, ELECTRA, ALBERT...)
ENCODER = dict(**LAYERS, vocab_size=VOCAB, max_position_embeddings=64)

# decoder-only causal LMs (Llama and its kin: Mistral, Qwen2, Gemma...): GQA, no cache
DECODER = dict(**ENCODER, num_key_value_heads=2, use_cache=False)

# DistilBERT (its own names for the same sizes)
DISTILBERT = dict(
    n_layers=2,
    dim=32,
    hidden_dim=64,
    n_heads=4,
    vocab_size=VOCAB,
    max_position_embeddings=64,
)

# T5 (2 encoder and 2 decoder layers)
T5 = dict(
    num_layers=2,
    d_model=32,
    d_ff=64,
    num_heads=4,
    d_kv=8,
    vocab_size=VOCAB,
    decoder_start_token_id=0,
)

# ViT-style image encoders (ViT, BEiT): 32x32 images in 8x8 patches
VIT = dict(**LAYERS, image_size=32, patch_size=8)

"""Small-model and tensor-idiom correctness corpus for `bcfront.capture` (torch needed)."""

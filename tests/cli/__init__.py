"""Tests of `bcfront-explain` (bcfront/cli) and the examples it runs on."""

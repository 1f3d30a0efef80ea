"""The data the symbolic interpreter works on: values, sources, guards, frames, the tracer, the effect log."""

"""From a trace to runnable code: entries, generated guard/region source, graph breaks, continuations.

`driver` (tracing a call) is at the top, then `breaks`, then `entry` (what
both build), `codegen` and `region_errors`.  What regions need from the API
layer above (`capture`) comes in on the `CapturedFunction` they are handed.
"""

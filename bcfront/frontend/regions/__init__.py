"""From a trace to runnable code: entries, generated guard/region source, graph breaks, continuations."""

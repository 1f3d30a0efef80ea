"""The IR captured graphs are made of, and the passes over it.

SSA graph, fake tensors, alias facts, functionalization.
"""

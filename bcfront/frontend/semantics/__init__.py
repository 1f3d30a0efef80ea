"""Python and torch semantics on symbolic values: operators, calls, attributes, iteration, builtins, torch calls."""

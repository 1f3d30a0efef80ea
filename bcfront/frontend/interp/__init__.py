"""The bytecode interpreter: the run loop and its opcode handler tables."""

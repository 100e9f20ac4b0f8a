"""The MVSim world-file language: lenient XML, substitutions, flow control, typed parameters."""

"""Real-time pacing of a World (being written)."""

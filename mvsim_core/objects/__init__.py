"""Simulated objects: blocks, vehicles and their wheels, joints, markers, actors, visual models."""

"""Dock widgets of the main window (Graph, Structure, Log; Run and Results on the compute side)."""

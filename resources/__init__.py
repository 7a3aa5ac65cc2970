"""Package data of GPU Graph Explorer: sample graphs, icons, desktop metadata.

Loaded through ``importlib.resources`` (``gge_resources``) so that it works from a
source checkout, an installed wheel and a frozen bundle alike.
"""

"""Algorithm families that tests load as plugins (``GRAPH_KERNELS_PLUGINS``)."""

"""JSON Schemas of the result files the project writes and reads: ``record.schema.json`` (one
run record, a line of a ``.jsonl`` file) and ``sweep.schema.json`` (a sweep). Package data,
read through ``importlib.resources``; :mod:`kernels.results.schema` applies them."""

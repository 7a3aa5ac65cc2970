"""The Dask backend: jobs run on the workers of a Dask cluster (see ``docs/cluster.md``).

``connect`` builds the client (addresses, TLS, the plain-text warning), ``tasks`` is what runs
on a Dask worker, ``backend`` is the :class:`~kernels.compute.backend.ComputeBackend`,
``cluster`` starts a scheduler and one worker per GPU on this machine."""

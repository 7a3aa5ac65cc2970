"""A run's time limit counts the run: not the worker's start, not the import of the variant's
family, not gathering the environment a record carries (on a busy machine those alone can take
longer than a short limit)."""

from __future__ import annotations

import pytest

from kernels.compute.local.client import WorkerClient, WorkerTimeout
from kernels.graph.csr import CSRGraph
from kernels.samples import sample_path

IMPORT_SECONDS = 8.0        # the family module's import, much longer than the run's limit
RUN_LIMIT_S = 5.0           # the run itself (np.diff of 35 pointers) takes milliseconds


@pytest.fixture
def karate() -> CSRGraph:
    from kernels.graph.io import read_graph

    return read_graph(sample_path())


def plugin_env(**extra) -> dict:
    return {"GRAPH_KERNELS_PLUGINS": "tests.plugins.slow_import_family", "SLOW_IMPORT_SECONDS": str(IMPORT_SECONDS),
            **extra}


def test_a_slow_family_import_is_not_charged_to_the_run(karate):
    with WorkerClient(env=plugin_env()) as client:
        client.add_graph("g", karate)
        reply = client.run("g", "slowimport", "cpu-serial", repeat=1, warmup=0, timeout=RUN_LIMIT_S)
        assert reply["record"]["verified"]


def test_a_run_that_outlasts_its_limit_is_stopped_and_says_so(karate):
    with WorkerClient(env={"GRAPH_KERNELS_PLUGINS": "tests.plugins.faulty_family"}) as client:
        client.add_graph("g", karate)
        with pytest.raises(WorkerTimeout) as info:
            client.run("g", "faulty", "cpu-serial", {"mode": "hang"}, repeat=1, warmup=0, timeout=2)
        assert str(info.value) == "stopped after 2 s, the time limit"
        assert info.value.limit_s == 2 and info.value.started
        assert not client.alive

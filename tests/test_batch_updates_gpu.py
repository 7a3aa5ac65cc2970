"""Batch updates on a real GPU (``GRAPH_KERNELS_TARGET=cuda pytest -m gpu``): bigger graphs and
batches than the simulator can run, both paths, checked page for page and edge for edge. Kept
apart from the simulator tests so that it needs neither hypothesis nor Qt."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.graph.device import DeviceMirror
from kernels.graph.slotted import SlottedGraph
from kernels.graph.update_batches import random_batch
from kernels.operators.device_updates import DeviceUpdater
from tests.batch_helpers import edge_dict, model_apply, random_graph, same_state

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weight_dtype", [np.float64, np.float32])
def test_real_gpu_batches_agree_with_the_host_on_a_bigger_graph(directed, weight_dtype):
    csr = random_graph(5000, 40000, 11, directed=directed, weighted=True)
    g = SlottedGraph.from_csr(csr, page_size=256, weight_dtype=weight_dtype)
    mirror = DeviceMirror(g)
    updater = DeviceUpdater(mirror)
    twin = g.copy()
    model = edge_dict(g)
    rng = np.random.default_rng(11)
    for size in (10, 1000, 20000, 60000):           # the last one forces overflow pages
        batch = random_batch(g, size, size // 2, rng)
        model = model_apply(model, directed, **batch)
        result = updater.apply(**batch)
        twin.apply_updates(**batch)
        assert result.verified and not mirror.differences() and same_state(g, twin)
        g.check_invariants()
        assert edge_dict(g) == model                  # weights are small integers: exact in float32 too
    assert g.num_pages > SlottedGraph.from_csr(csr, page_size=256).num_pages

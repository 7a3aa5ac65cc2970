"""The Run form offers ``auto`` for parameters with a rule (first, and selected as the default),
reads it back through the registry, and keeps it across a session's save and restore (the form's
texts)."""

from __future__ import annotations

import pytest

from explorer.docks.run_form import ParamForm, check_params
from kernels.algorithms.registry import AUTO, get_variant

pytestmark = pytest.mark.gui


def _form(qtbot, family: str, variant: str) -> tuple:
    fam, var = get_variant(family, variant)
    form = ParamForm()
    qtbot.addWidget(form)
    form.set_params(fam.all_params(var))
    return fam, var, form


def test_a_power_of_two_field_offers_auto_first_and_starts_on_it(qtbot):
    fam, var, form = _form(qtbot, "triangles", "gpu-oriented")
    field = form.fields["group_size"]
    assert field.itemText(0) == AUTO and field.currentText() == AUTO
    params, error, bad = check_params(fam, var, form)
    assert error == "" and params["group_size"] == AUTO
    form.set_value("group_size", "16")
    assert check_params(fam, var, form)[0]["group_size"] == 16


def test_a_choice_field_offers_auto_and_a_field_without_a_rule_does_not(qtbot):
    fam, var, form = _form(qtbot, "kclique", "gpu")
    work = form.fields["work"]
    assert [work.itemText(i) for i in range(work.count())] == [AUTO, "vertex", "edge", "list"]
    assert form.raw_value("work") == AUTO and form.raw_value("group_size") == AUTO
    block = form.fields["block_size"]
    assert AUTO not in [block.itemText(i) for i in range(block.count())]


def test_auto_survives_the_session_round_trip_of_the_form(qtbot):
    fam, var, form = _form(qtbot, "kclique", "gpu")
    form.set_texts({"work": "edge", "group_size": "4"})
    saved = form.texts()
    assert saved["work"] == "edge" and saved["group_size"] == "4"
    form.set_texts({"work": AUTO, "group_size": AUTO})
    again = form.texts()
    restored = ParamForm()
    qtbot.addWidget(restored)
    restored.set_params(fam.all_params(var))
    restored.set_texts(saved)
    assert restored.texts() == saved
    restored.set_texts(again)
    assert restored.texts()["work"] == AUTO and check_params(fam, var, restored)[0]["group_size"] == AUTO


def test_a_bad_text_in_an_auto_field_is_marked_with_auto_among_the_allowed(qtbot):
    fam, var, form = _form(qtbot, "spmv", "gpu-tunable")
    form.set_value("rows", "3")
    params, error, bad = check_params(fam, var, form)
    assert params is None and bad == ["rows"] and "auto" in error


def test_result_views_show_what_auto_chose_beside_auto():
    from explorer.plots.format import shown_params
    from explorer.plots.timing_chart import common_params, run_label

    asked = {"wg": 128, "rows": "auto", "reduce": "shuffle"}
    rec = {"variant": "gpu-tunable", "params": asked, "resolved_params": {**asked, "rows": 16}}
    assert shown_params(rec) == {"wg": 128, "rows": "auto→16", "reduce": "shuffle"}
    assert "rows=auto→16" in run_label(rec)
    assert shown_params({"params": {"rows": "auto"}}) == {"rows": "auto"}      # a record from before auto
    other = {"variant": "gpu-tunable", "params": asked, "resolved_params": {**asked, "rows": 4}}
    assert "rows" not in common_params([rec, other])                          # chose differently: per bar

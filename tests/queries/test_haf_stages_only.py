"""HAF's rate reports and the explorer's flags over a store that also holds the other suites'
runs (tests/support/report_store.py's two HAF runs, a judge run and a rationales run)."""

from __future__ import annotations

from haf_tui.store import Store
from tests.support.judge_runs import store_judge_run
from tests.support.rationale_runs import store_rationale_run
from tests.support.report_store import A, records


def test_the_haf_rates_read_hafs_stages_alone(store: Store) -> None:
    """With a judge and a rationales run beside the HAF runs, the UNCLEAR and
    contradiction rates and the contradictions list show HAF's stages only (they listed the
    other suites' stages as rows of zeros)."""
    store_rationale_run(store)
    store_judge_run(store, A)
    _, stages = store.query("SELECT DISTINCT stage FROM generations")
    assert {"judge", "rationale_prompt"} <= {stage for (stage,) in stages}  # (theirs)
    haf = {"justify", "internal", "external", "individual"}
    for name in ("unclear_rates", "contradiction_rates", "contradictions"):
        shown = {r["stage"] for r in records(store, name)}
        assert shown and shown <= haf, (name, shown)

"""The wizard's settings step is drawn from the methods' declarations: a method registered at
runtime shows one labelled field per option of its settings model (its definition reachable),
and the form's config holds its values under its name, validated by its model."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from textual.app import App, ComposeResult
from textual.widgets import Input, Label, Select, SelectionList, Static, Switch

from haf_tui.config import ModelSettings
from haf_tui.methods.declare import Method
from haf_tui.methods.options import setting_options
from haf_tui.methods.registry import methods
from haf_tui.tui.widgets.method_fields import MethodFields, field_id
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from tests.support.toy_suite import ToySuite


class ToySettings(BaseModel):
    """Every kind of option a settings model can declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    style: Literal["plain", "fancy"] = Field("plain", description="how the toy asks")
    rounds: int = Field(3, ge=1, le=9, description="how many rounds")
    share: float | None = Field(None, gt=0.0, le=1.0, description="None: the dataset's")
    loud: bool = Field(False, description="shout the prompt")
    parts: tuple[str, ...] = Field(
        ("a", "b"), description="the parts run", json_schema_extra={"choices": ["a", "b", "c"]}
    )
    note: str = Field("hi", description="a word the toy says", json_schema_extra={"flag": "--tn"})


TOY = Method(
    name="toy",
    title="toy",
    description="a method registered at runtime",
    suite=ToySuite(),
    settings=ToySettings,
    flag_prefix="toy",
)


class FormApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RunSettingsForm(id="settings")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Method[ToySettings]:
    monkeypatch.setitem(methods(), "toy", TOY)
    return TOY


def test_a_list_field_declares_its_choices(toy: Method[ToySettings]) -> None:
    options = {option.field: option for option in setting_options(toy)}
    assert options["parts"].kind == "list" and options["parts"].choices == ("a", "b", "c")
    assert options["rounds"].definition == "how many rounds (1–9)"
    assert [field_id(option) for option in options.values()] == [
        "set-toy-style", "set-toy-rounds", "set-toy-share", "set-toy-loud", "set-toy-parts",
        "set-tn",
    ]  # fmt: skip


async def test_a_runtime_method_shows_its_fields_and_builds_its_settings(
    toy: Method[ToySettings],
) -> None:
    app = FormApp()
    async with app.run_test(size=(100, 60)) as pilot:
        form = app.query_one(RunSettingsForm)
        suites = form.query_one("#set-suites", SelectionList)
        assert "toy" in [
            str(suites.get_option_at_index(i).value) for i in range(suites.option_count)
        ]
        section = form.query_one("#set-method-toy", MethodFields)
        assert section.has_class("-unused")  # not a default suite: its fields are greyed
        labels = [str(label.render()) for label in section.query(Label)]
        assert labels == ["style", "rounds", "share", "loud", "parts", "note"]
        heading = section.query_one(".method-heading", Static)
        assert "a method registered at runtime" in str(heading.render())
        assert form.query_one("#set-toy-style", Select).value == "plain"
        assert form.query_one("#set-toy-share", Input).value == ""
        assert form.query_one("#set-toy-loud", Switch).value is False
        assert form.query_one("#set-toy-parts", SelectionList).selected == ["a", "b"]
        assert "how many rounds (1–9)" in str(form.query_one("#set-toy-rounds").tooltip)

        suites.deselect_all()
        suites.select("toy")
        await pilot.pause()
        assert not section.has_class("-unused")
        form.query_one("#set-toy-style", Select).value = "fancy"
        form.query_one("#set-toy-rounds", Input).value = "7"
        form.query_one("#set-toy-share", Input).value = "0.5"
        form.query_one("#set-toy-loud", Switch).value = True
        form.query_one("#set-toy-parts", SelectionList).select("c")
        form.query_one("#set-tn", Input).value = "ho"
        built = form.build(None)
        assert built.suites == ("toy",)
        assert built.settings == {
            "toy": {
                "style": "fancy", "rounds": 7, "share": 0.5, "loud": True,
                "parts": ["a", "b", "c"], "note": "ho",
            }
        }  # fmt: skip

        form.query_one("#set-toy-rounds").focus()
        await pilot.pause()
        definition = str(form.query_one("#set-definition", Static).render())
        assert "toy --toy-rounds: how many rounds (1–9); default 3" in definition

        form.query_one("#set-toy-rounds", Input).value = "12"
        message = form.validate()
        assert message is not None and message.startswith("toy: rounds: "), message
        assert form.query_one("#set-toy-rounds", Input).has_class("-invalid")
        with pytest.raises(ValueError):
            form.build(None)
        form.query_one("#set-toy-rounds", Input).value = "2"
        form.query_one("#set-toy-share", Input).value = ""
        assert form.validate() is None
        assert form.build(None).settings["toy"]["share"] is None  # blank: unset

        answers = form.answers()
        assert answers["set-toy-loud"] is True and answers["set-toy-parts"] == ["a", "b", "c"]
        form.query_one("#set-toy-loud", Switch).value = False
        form.restore(answers)
        assert form.query_one("#set-toy-loud", Switch).value is True


async def test_sequences_at_once_follow_the_picked_methods_unless_typed() -> None:
    """A rationales-only run starts at the method's 32 (``Method.n_parallel``, as ``haf
    run``); with HAF beside it, at the run's default; a value the user typed stays."""
    app = FormApp()
    async with app.run_test(size=(100, 60)) as pilot:
        form = app.query_one(RunSettingsForm)
        suites = form.query_one("#set-suites", SelectionList)
        parallel = form.query_one("#set-parallel", Input)
        default = str(ModelSettings().n_parallel)
        assert parallel.value == default
        suites.deselect_all()
        suites.select("rationales")
        await pilot.pause()
        assert parallel.value == "32" and form.build(None).model.n_parallel == 32
        suites.select("haf")
        await pilot.pause()
        assert parallel.value == default
        suites.deselect("haf")
        await pilot.pause()
        parallel.value = "12"
        suites.select("classify")
        await pilot.pause()
        assert parallel.value == "12"

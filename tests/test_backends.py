"""The backend interface and registry (issue 26): a backend that only generates works with the
defaults, is picked by name as ``load_models`` picks, and entry points add backends (a broken
one: one line naming it)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from haf_tui.config import DecodingSettings, ModelSettings, RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.inference import registry
from haf_tui.inference.backend import Backend, OneAtATime
from haf_tui.inference.base import (
    Generation,
    GenerationRequest,
    InferenceError,
    ListSource,
    TokenCallback,
)
from haf_tui.messages import ChatMessage
from haf_tui.pipeline import models as pipeline_models
from haf_tui.pipeline.models import LoadedModels, backend_name_for, load_models
from haf_tui.pipeline.runs import check_prompts_fit

SETTINGS = DecodingSettings(max_new_tokens=4)
MESSAGES = (ChatMessage("user", "hello"),)


class EchoBackend(Backend):
    """Generates the last message back; everything else is the interface's defaults."""

    name = "echo"
    n_ctx = 64

    def __init__(self, settings: ModelSettings | None = None) -> None:
        self.settings = settings

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        return Generation("p", 1, messages[-1].content, [], "stop", 0.0)


class CountingBackend(EchoBackend):
    """Counts a fixed number of tokens for every prompt."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def tokens_needed(self, messages: Sequence[ChatMessage], replies: Sequence[str] = ()) -> int:
        return self.count


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test registers into a copy of the registry."""
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))


def test_a_backend_that_only_generates_has_every_default() -> None:
    backend = EchoBackend()
    assert backend.concurrent(4) is None
    assert isinstance(backend.engine(4), OneAtATime)  # one request after another
    assert backend.servers() == [] and backend.versions() == {}
    assert backend.tokens_needed(MESSAGES, ["a reply"]) is None
    assert not backend.offload_supported and not backend.offload_active
    backend.close()
    with pytest.raises(InferenceError, match="EchoBackend backend cannot score") as refused:
        backend.score(MESSAGES, "toxic", SETTINGS)
    assert "\n" not in str(refused.value)
    source = ListSource([GenerationRequest(MESSAGES, SETTINGS, tag=n) for n in range(3)])
    backend.engine(8).serve(source)
    assert [g.text for g in source.results.values()] == ["hello"] * 3


def test_backends_are_built_by_name_from_the_model_settings() -> None:
    assert backend_name_for(RunConfig()) == "llama.cpp"
    assert backend_name_for(RunConfig(model=ModelSettings(servers=("http://h:1",)))) == "server"
    assert {"llama.cpp", "server"} <= set(registry.backend_names())
    registry.register_backend("echo", EchoBackend)
    settings = ModelSettings(n_ctx=512)
    backend = registry.backend_named("echo")(settings)
    assert isinstance(backend, EchoBackend) and backend.settings is settings
    with pytest.raises(InferenceError, match=r"no backend is called 'nope': known are .*echo"):
        registry.backend_named("nope")


def test_load_models_picks_the_backend_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[str, ModelSettings]] = []

    def factory(name: str) -> registry.BackendFactory:
        def build(settings: ModelSettings) -> Backend:
            built.append((name, settings))
            return EchoBackend(settings)

        return build

    registry.register_backend("llama.cpp", factory("llama.cpp"))
    registry.register_backend("server", factory("server"))
    monkeypatch.setattr(pipeline_models, "_similarity", lambda config: None)
    local = load_models(RunConfig())
    served = load_models(RunConfig(model=ModelSettings(servers=("http://h:1#2",))))
    assert [name for name, _ in built] == ["llama.cpp", "server"]
    assert isinstance(local.backend, EchoBackend) and isinstance(served.backend, EchoBackend)
    assert built[1][1].servers == ("http://h:1#2",)


def test_the_context_is_checked_only_where_the_backend_counts() -> None:
    config = RunConfig(limit=2)
    dataset = builtin_sample()
    check_prompts_fit(LoadedModels(EchoBackend(), None), config, dataset)  # type: ignore[arg-type]
    check_prompts_fit(LoadedModels(CountingBackend(63), None), config, dataset)  # type: ignore[arg-type]
    with pytest.raises(InferenceError, match="prompt of 64 tokens does not fit the context of 64"):
        check_prompts_fit(LoadedModels(CountingBackend(64), None), config, dataset)  # type: ignore[arg-type]


def _distribution(root: Path, entry_points: str) -> None:
    """An installed-looking distribution under ``root`` with ``entry_points`` and a module
    ``haf_echo_backend`` whose ``make`` builds a backend that only generates."""
    (root / "haf_echo_backend.py").write_text(
        textwrap.dedent(
            """
            from haf_tui.inference.backend import Backend, OneAtATime
            from haf_tui.inference.base import Generation

            class Plugged(Backend):
                name = "plugged"

                def __init__(self, settings):
                    self.settings = settings

                def generate(self, messages, settings, *, on_token=None):
                    return Generation("p", 1, "plugged", [], "stop", 0.0)

            def make(settings):
                return Plugged(settings)

            NOT_A_FACTORY = 3
            """
        )
    )
    info = root / "haf_echo_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: haf-echo-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_an_entry_point_adds_a_backend_loaded_when_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _distribution(
        tmp_path,
        "[haf_tui.backends]\n"
        "echo-ep = haf_echo_backend:make\n"
        "broken-ep = haf_no_such_module.sub:make\n"
        "odd-ep = haf_echo_backend:NOT_A_FACTORY\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    names = registry.backend_names()
    assert {"echo-ep", "broken-ep", "odd-ep", "llama.cpp", "server"} <= set(names)
    assert "echo-ep" not in registry._FACTORIES  # listed, not loaded
    settings = ModelSettings()
    backend = registry.backend_named("echo-ep")(settings)
    assert isinstance(backend, Backend) and backend.name == "plugged"
    assert backend.generate(MESSAGES, SETTINGS).text == "plugged"
    assert "echo-ep" in registry._FACTORIES  # loaded once
    with pytest.raises(InferenceError) as broken:
        registry.backend_named("broken-ep")
    message = str(broken.value)
    assert "\n" not in message
    assert message.startswith("backend 'broken-ep' (entry point haf_no_such_module.sub:make in ")
    assert "could not be loaded: ModuleNotFoundError" in message
    with pytest.raises(InferenceError, match=r"'odd-ep' .* is not a backend factory: int"):
        registry.backend_named("odd-ep")

from __future__ import annotations

from pathlib import Path

import pytest

from harnesses.models import Usage
from harnesses.models.pricing import PRICES_ENV, cost
from kernelarena.errors import ConfigError


@pytest.fixture(autouse=True)
def no_price_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)


def test_builtin_price() -> None:
    # Illustrative default: $5 in / $25 out per million tokens.
    assert cost("anthropic:claude-opus-4-6", Usage(1_000_000, 200_000)) == pytest.approx(5.0 + 5.0)


def test_unknown_model_has_no_cost() -> None:
    assert cost("openai:never-heard-of-it", Usage(10, 10)) is None
    assert cost("scripted:reference", Usage(10, 10)) is None


def test_litellm_route_falls_back_to_the_providers_id() -> None:
    assert cost("litellm:anthropic/claude-opus-4-6", Usage(1_000_000, 0)) == pytest.approx(5.0)


def test_toml_from_env_extends_and_option_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = tmp_path / "prices.toml"
    env_file.write_text('[prices."openai:my-finetune"]\ninput_per_mtok = 2\noutput_per_mtok = 8\n')
    monkeypatch.setenv(PRICES_ENV, str(env_file))
    assert cost("openai:my-finetune", Usage(500_000, 500_000)) == pytest.approx(1.0 + 4.0)
    override = tmp_path / "override.toml"
    override.write_text('[prices."openai:my-finetune"]\ninput_per_mtok = 0\noutput_per_mtok = 1\n')
    assert cost("openai:my-finetune", Usage(500_000, 500_000), prices_path=override) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "text,fragment",
    [("[prices.broken\n", "not valid TOML"), ('[prices."x:y"]\ninput_per_mtok = "a lot"\n', "numeric")],
)
def test_bad_price_file_is_a_config_error(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=fragment):
        cost("x:y", Usage(1, 1), prices_path=path)


def test_missing_price_file_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=PRICES_ENV):
        cost("x:y", Usage(1, 1), prices_path=tmp_path / "nope.toml")


def test_anthropic_cache_reads_and_writes_have_their_own_rates() -> None:
    # Sonnet at $3 in: a cache read costs $0.30, a 5-minute cache write $3.75 per million.
    usage = Usage(input_tokens=1_000_000 + 2_000_000 + 400_000, output_tokens=0,
                  cache_read_tokens=2_000_000, cache_write_tokens=400_000)
    assert cost("anthropic:claude-sonnet-4-5", usage) == pytest.approx(3.0 + 0.6 + 1.5)


@pytest.mark.parametrize("model_id,cached_rate", [("openai:gpt-5.4", 0.125), ("google:gemini-2.5-flash", 0.03),
                                                  ("litellm:openai/gpt-5.4", 0.125), ("litellm:xai/grok-4", 0.75)])
def test_cached_input_is_priced_below_fresh_input(model_id: str, cached_rate: float) -> None:
    fresh = cost(model_id, Usage(input_tokens=1_000_000))
    cached = cost(model_id, Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000))
    assert cached == pytest.approx(cached_rate)
    assert cached < fresh


def test_a_price_file_may_set_the_cache_rates(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[prices."anthropic:mine"]\ninput_per_mtok = 10\noutput_per_mtok = 20\n'
                    'cache_read_per_mtok = 1\ncache_write_per_mtok = 12\n')
    usage = Usage(input_tokens=3_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    assert cost("anthropic:mine", usage, prices_path=path) == pytest.approx(10 + 1 + 12 + 20)


def test_an_unpriced_model_still_runs_and_says_its_price_is_unknown() -> None:
    from harnesses.budget import Budget, BudgetConfig

    budget = Budget(BudgetConfig(max_dollars=1.0), "openai:never-heard-of-it")
    budget.record_turn(Usage(10, 10))
    budget.check()  # no dollar limit can trip on an unknown price
    used = budget.usage()
    assert used["dollars"] is None and used["input_tokens"] == 10
    assert used["price"].startswith("unknown: openai:never-heard-of-it has no price")

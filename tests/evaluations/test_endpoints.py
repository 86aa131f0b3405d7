"""Evaluations §1: model endpoints come from settings, checked, with the key's variable only."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from pytest_django import Settings

from config.env import env_json_object
from sysprompt.conf import app_settings
from sysprompt.model_endpoints import endpoints_parse


def test_endpoints_parse_fills_defaults_and_keeps_echo() -> None:
    endpoints = endpoints_parse({"gpt": {"kind": "openai", "model": "gpt-x"}})

    assert set(endpoints) == {"echo", "gpt"}
    gpt = endpoints["gpt"]
    assert (gpt.max_concurrency, gpt.timeout, gpt.retries) == (4, 60.0, 2)
    assert gpt.params == {"temperature": 0, "max_tokens": 1024}
    assert gpt.cost(1_000_000, 1_000_000) is None


def test_endpoints_parse_prices_give_a_cost() -> None:
    (_, priced) = endpoints_parse(
        {"p": {"kind": "anthropic", "model": "c", "price_input": 3, "price_output": 15}}
    ).values()

    assert priced.cost(2_000, 1_000) == pytest.approx(0.021)


@pytest.mark.parametrize(
    ("models", "words"),
    [
        ([], "an object mapping each model"),
        ({"bad name": {"kind": "echo"}}, "names of up to 63"),
        ({"m": "openai"}, "an object like"),
        (
            {"m": {"kind": "gemini", "model": "x"}},
            "['MODELS.m.kind'] must be openai, anthropic or echo",
        ),
        ({"m": {"kind": "openai"}}, "['MODELS.m.model']"),
        (
            {"m": {"kind": "openai", "model": "x", "api_key": "sk-1"}},
            "['MODELS.m.api_key'] must be one of the fields",
        ),
        (
            {"m": {"kind": "openai", "model": "x", "api_key_env": "sk-live 123"}},
            "not the key itself",
        ),
        ({"m": {"kind": "openai", "model": "x", "base_url": "ftp://h"}}, "http:// or https://"),
        ({"m": {"kind": "openai", "model": "x", "max_concurrency": 0}}, "from 1 to 1000"),
        ({"m": {"kind": "openai", "model": "x", "retries": -1}}, "from 0 to 1000"),
        ({"m": {"kind": "openai", "model": "x", "timeout": 0}}, "positive number of seconds"),
        (
            {"m": {"kind": "openai", "model": "x", "params": {"temp": 1}}},
            "['MODELS.m.params.temp']",
        ),
        ({"m": {"kind": "openai", "model": "x", "params": {"max_tokens": 0}}}, "whole number ≥ 1"),
        ({"m": {"kind": "openai", "model": "x", "price_input": -1}}, "price per million"),
        (
            {"m": {"kind": "openai", "model": "x", "structured_output": "no"}},
            "['MODELS.m.structured_output'] must be true or false",
        ),
    ],
)
def test_endpoints_parse_refuses_naming_the_entry(models: object, words: str) -> None:
    with pytest.raises(ImproperlyConfigured) as caught:
        endpoints_parse(models)

    assert words in str(caught.value)


def test_endpoints_parse_never_shows_a_key_given_as_variable_name() -> None:
    with pytest.raises(ImproperlyConfigured) as caught:
        endpoints_parse({"m": {"kind": "openai", "model": "x", "api_key_env": "sk-live-secret"}})

    assert "sk-live-secret" not in str(caught.value)


OPENAI = {"kind": "openai", "model": "gpt-4.1-mini"}
ANTHROPIC = {"kind": "anthropic", "model": "claude-sonnet-4-5"}


@pytest.mark.parametrize(
    ("models", "default", "expected"),
    [
        ({}, None, "echo"),
        ({"a": {"kind": "echo"}, "b": {"kind": "echo"}}, None, "echo"),  # no real model
        ({"a": {"kind": "echo"}}, "echo", "echo"),
        ({"a": {"kind": "echo"}, "gpt": OPENAI, "claude": ANTHROPIC}, None, "gpt"),
        ({"claude": ANTHROPIC, "gpt": OPENAI}, None, "claude"),
        ({"claude": ANTHROPIC, "gpt": OPENAI}, "gpt", "gpt"),
        ({"gpt": OPENAI}, "echo", "echo"),  # named: the operator's choice
    ],
)
def test_app_settings_default_model(
    settings: Settings, models: dict[str, object], default: str | None, expected: str
) -> None:
    settings.SYSPROMPT = {"MODELS": models, **({"EVAL_DEFAULT_MODEL": default} if default else {})}

    assert app_settings().eval_default_model == expected


def test_app_settings_default_model_must_exist(settings: Settings) -> None:
    settings.SYSPROMPT = {"EVAL_DEFAULT_MODEL": "gpt"}

    with pytest.raises(ImproperlyConfigured, match="EVAL_DEFAULT_MODEL"):
        app_settings()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("models.json", '{"m": {"kind": "echo"}}'),
        ("models.toml", '[m]\nkind = "echo"\n'),
    ],
)
def test_env_json_object_reads_a_named_file(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)

    assert env_json_object("M", {"M": str(tmp_path / name)}) == {"m": {"kind": "echo"}}


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("{oops", "is not valid JSON"),
        ("/nonexistent/models.json", "cannot read"),
        ("[1]", "cannot read"),
    ],
)
def test_env_json_object_refuses_clearly(value: str, words: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=words):
        env_json_object("SYSPROMPT_MODELS", {"SYSPROMPT_MODELS": value})


def test_env_json_object_inline_and_unset() -> None:
    assert env_json_object("M", {"M": ' {"m": {"kind": "echo"}}'}) == {"m": {"kind": "echo"}}
    assert env_json_object("M", {}) is None

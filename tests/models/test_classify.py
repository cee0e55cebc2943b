"""classify() on real SDK exception objects: the single retry decision."""

from __future__ import annotations

import email.utils
import time

import anthropic
import httpx2
import openai
import pytest
from google.genai import errors as genai_errors

from harnesses.models import ModelError
from harnesses.models.retry import classify


def _response(status: int, headers: dict[str, str] | None = None) -> httpx2.Response:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return httpx2.Response(status, headers=headers or {}, request=request)


def _openai(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    body = {"error": {"message": f"provider says {status}", "type": "x", "param": None, "code": None}}
    return openai.APIStatusError("ignored", response=_response(status, headers), body=body)


@pytest.mark.parametrize("status,retryable", [(400, False), (401, False), (403, False), (404, False),
                                              (422, False), (408, True), (429, True), (500, True),
                                              (503, True), (529, True)])
def test_status_decides(status: int, retryable: bool) -> None:
    info = classify(_openai(status))
    assert (info.retryable, info.status) == (retryable, status)
    assert info.message == f"provider says {status}"  # the provider's own message, not the SDK's wrapper


def test_retry_after_forms() -> None:
    assert classify(_openai(429, {"retry-after": "7"})).retry_after_s == 7
    assert classify(_openai(429, {"retry-after-ms": "250"})).retry_after_s == pytest.approx(0.25)
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < classify(_openai(429, {"retry-after": date})).retry_after_s <= 30
    assert classify(_openai(429, {"retry-after": "soon"})).retry_after_s is None
    assert classify(_openai(429)).retry_after_s is None


def test_anthropic_error_body() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    exc = anthropic.APIStatusError("ignored", response=_response(529), body=body)
    info = classify(exc)
    assert info.retryable and info.status == 529 and info.message == "Overloaded"


def test_gemini_retry_info_in_the_body() -> None:
    details = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED", "details": [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "21s"}]}}
    info = classify(genai_errors.ClientError(429, details))
    assert info.retryable and info.retry_after_s == 21 and info.message == "quota"


def test_connection_failures_are_retryable_and_bugs_are_not() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/")
    assert classify(openai.APIConnectionError(request=request)).retryable
    assert classify(ConnectionResetError("reset by peer")).retryable
    assert classify(TimeoutError()).retryable
    bug = classify(KeyError("choices"))
    assert not bug.retryable and not bug.provider_failure


def test_model_error_keeps_its_own_decision() -> None:
    info = classify(ModelError("x", retryable=False, status=400))
    assert (info.retryable, info.status) == (False, 400)

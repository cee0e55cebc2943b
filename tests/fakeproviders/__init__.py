"""Local HTTP servers that speak the real wire protocols of OpenAI, Anthropic and Gemini.

For tests that drive the official SDKs (and everything built on them) without a network:
scripted replies, injected failures (429 with or without Retry-After, 5xx, dropped sockets,
stalls), a slow-model delay, and a record of every request. See openai_server.py for usage.
"""

from tests.fakeproviders.anthropic_server import FakeAnthropicServer
from tests.fakeproviders.gemini_server import FakeGeminiServer
from tests.fakeproviders.openai_server import FakeOpenAIServer
from tests.fakeproviders.script import Failure, Reply, ToolUse
from tests.fakeproviders.server import FakeProviderServer, RecordedRequest

__all__ = [
    "Failure",
    "FakeAnthropicServer",
    "FakeGeminiServer",
    "FakeOpenAIServer",
    "FakeProviderServer",
    "RecordedRequest",
    "Reply",
    "ToolUse",
]

"""A model provider from an outside package: a small distribution built in tmp_path (a module and
a .dist-info whose entry_points.txt registers the prefix `acme` under `kernelarena.models`) is put
on PYTHONPATH of a real `kernelarena sweep`. Its client speaks to the fake OpenAI-compatible server;
its registration alone supplies the key variable and the price. Nothing is installed into the
venv, so no other test sees the plug-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakeproviders import FakeOpenAIServer, Reply
from tests.orchestrator.sweep_helpers import REPO, assert_sweep_complete, cli, events, write_spec

KEY_ENV = "ACME_API_KEY"
KEY = "acme-test-key"  # the fake server answers 401 to any other
SWISH = (REPO / "suites/demo/solutions/swish/kernel.py").read_text()
DONE_TEXT = "kernel.py is written (acme)."
# Per turn 100k prompt and 10k completion tokens at the plug-in's $3 / $15 per million: $0.45.
SCRIPT = [Reply.tool("write_file", {"path": "kernel.py", "content": SWISH}, input_tokens=100_000, output_tokens=10_000),
          Reply.say(DONE_TEXT, input_tokens=100_000, output_tokens=10_000)]
EXPECTED_DOLLARS = 2 * (0.1 * 3.0 + 0.01 * 15.0)

PLUGIN = '''"""acme: a model provider plug-in for KernelArena; its API speaks OpenAI's chat completions."""

import asyncio
import json
import os
import time
import urllib.request

from harnesses.models import ModelClient, ModelProvider, ModelTurn, Price, ToolCall, Usage
from harnesses.models.openai_format import to_openai_messages, to_openai_tools


class AcmeClient(ModelClient):
    def __init__(self, name, base_url, key, max_tokens):
        self.model_id = f"acme:{name}"
        self.name, self.base_url, self.key, self.max_tokens = name, base_url, key, max_tokens

    def _post(self, body):
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    async def complete(self, messages, tools):
        body = {"model": self.name, "messages": to_openai_messages(messages),
                "tools": to_openai_tools(tools), "max_tokens": self.max_tokens}
        start = time.monotonic()
        reply = await asyncio.to_thread(self._post, body)
        message = reply["choices"][0]["message"]
        calls = [ToolCall(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                 for c in message.get("tool_calls") or []]
        usage = Usage(reply["usage"]["prompt_tokens"], reply["usage"]["completion_tokens"])
        return ModelTurn(text=message.get("content") or "", tool_calls=calls, usage=usage,
                         stop_reason="tool_use" if calls else "end_turn",
                         latency_s=time.monotonic() - start, raw=reply)


def create(name, task=None, **options):
    key = os.environ[options.get("api_key_env") or "ACME_API_KEY"]
    return AcmeClient(name, options["base_url"], key, options.get("max_tokens", 1024))


PROVIDER = ModelProvider(create=create, key_envs=("ACME_API_KEY",),
                         prices={"coder-1": Price(input_per_mtok=3.0, output_per_mtok=15.0)},
                         model_options=True)
'''


def build_plugin(root: Path) -> Path:
    """A distribution as pip would leave it in site-packages: the module and its .dist-info."""
    (root / "acme_models").mkdir(parents=True)
    (root / "acme_models" / "__init__.py").write_text(PLUGIN)
    info = root / "acme_models-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-models\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[kernelarena.models]\nacme = acme_models:PROVIDER\nbare = acme_models:create\nbroken = acme_gone:PROVIDER\n")
    return root


def with_path(path: Path, key: str) -> dict[str, str]:
    """The environment of a run with the plug-in on the path, `key` in its key variable and no
    price file in force."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(path), os.environ.get("PYTHONPATH", "")])),
            "KERNELARENA_PRICES": "", KEY_ENV: key}


def _spec(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    model = {"id": "acme:coder-1", "base_url": server.base_url}
    return write_spec(tmp_path / "spec.toml", name="plugin", backend="process", out=tmp_path / "sweep",
                      tasks=["swish"], total=1, models=[model])


@pytest.mark.slow
def test_a_sweep_runs_a_model_of_a_plugin_provider(tmp_path: Path) -> None:
    plugin = build_plugin(tmp_path / "site")
    server = FakeOpenAIServer(script=SCRIPT, api_key=KEY)
    with server:
        spec = _spec(tmp_path, server)
        # The plug-in's registration names the key variable: unset, the sweep stops before any trial.
        proc = cli("sweep", str(spec), env=with_path(plugin, ""), timeout=300)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and KEY_ENV in proc.stderr, proc.stderr
        assert not server.requests and not (tmp_path / "sweep").exists()

        proc = cli("sweep", str(spec), env=with_path(plugin, KEY), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r.body["model"] for r in server.requests] == ["coder-1", "coder-1"]

    row, = assert_sweep_complete(tmp_path / "sweep", expected_trials=1)
    assert (row["model"], row["verdict"]) == ("acme:coder-1", "passed")
    evs = events(tmp_path / "sweep" / row["rel_dir"] / "transcript.jsonl")
    replies = [e["payload"] for e in evs if e["type"] == "model_response"]
    assert [r["tool_calls"][0]["name"] for r in replies[:1]] == ["write_file"]
    assert replies[-1]["text"] == DONE_TEXT
    # The price comes from the plug-in's registration alone (no price file is set).
    assert evs[-1]["payload"]["usage"]["dollars"] == pytest.approx(EXPECTED_DOLLARS)
    assert row["dollars"] == pytest.approx(EXPECTED_DOLLARS)


def test_an_unknown_prefix_is_one_line_naming_the_known_ones_and_plugins(tmp_path: Path) -> None:
    """The same spec without the plug-in on the path: exit 2, one line, nothing written."""
    server = FakeOpenAIServer(script=SCRIPT)
    with server:
        spec = _spec(tmp_path, server)
        proc = cli("sweep", str(spec), env={KEY_ENV: "k"}, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "unknown model prefix 'acme:'" in proc.stderr
    assert "openai:" in proc.stderr and "scripted:" in proc.stderr and "kernelarena.models" in proc.stderr
    assert not server.requests and not (tmp_path / "sweep").exists()


def test_the_plugin_distribution_is_what_importlib_discovers(tmp_path: Path) -> None:
    """The registry's view in a fresh interpreter with the distribution on the path: the prefix is
    known, its key variable and price come from the registration; an entry point naming a bare
    factory is a provider without key or prices; one that does not import is a user error."""
    plugin = build_plugin(tmp_path / "site")
    code = ("import json; from harnesses.models import known_prefixes, provider_of, Usage; "
            "from harnesses.models.pricing import cost; p = provider_of('acme'); b = provider_of('bare'); "
            "print(json.dumps([known_prefixes(), p.key_variables('coder-1'), "
            "cost('acme:coder-1', Usage(1_000_000, 1_000_000)), cost('acme:other', Usage(1, 1)), "
            "b.create.__name__, b.key_variables('x'), cost('bare:x', Usage(1, 1))]))\n"
            "from kernelarena.errors import UserError\n"
            "try: provider_of('broken')\nexcept UserError as exc: print(exc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                         env={**os.environ, **with_path(plugin, "")})
    assert out.returncode == 0, out.stderr
    listing, broken = out.stdout.splitlines()
    prefixes, keys, priced, unpriced, bare_factory, bare_keys, bare_cost = json.loads(listing)
    assert {"acme", "bare", "openai"} <= set(prefixes)
    assert keys == [KEY_ENV] and priced == pytest.approx(18.0) and unpriced is None
    assert (bare_factory, bare_keys, bare_cost) == ("create", [], None)
    assert broken.startswith("model 'broken' (entry point acme_gone:PROVIDER of acme-models) does not import"), broken

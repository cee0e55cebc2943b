"""The data-driven checks on real tensors: what they flag, what they leave alone."""

from __future__ import annotations

import json

import pytest
import torch

from scorer.checks import dynamic as dc
from scorer.judge.rulings.library_calls import library_findings
from scorer.judge.rulings.output_object import lazy_findings
from scorer.workers.replies import LibraryObservation, OutputObservation


def _poisoned(shape: tuple[int, ...]) -> torch.Tensor:
    return torch.full(shape, float("nan"))


# --- lazy-evaluation ------------------------------------------------------------------------------

def _lazy(obj):
    """Observed as the worker observes it, sent as JSON, parsed and ruled on as the judge does."""
    return lazy_findings(OutputObservation.parse(json.loads(json.dumps(dc.observe_output(obj)))))


class _Sub(torch.Tensor):
    pass


def test_plain_outputs_accepted() -> None:
    t = torch.randn(4, 5)
    assert _lazy(t) == []
    assert _lazy((t, t.t())) == []
    assert _lazy([t[1:], torch.empty(0)]) == []


@pytest.mark.parametrize("make", [
    lambda: torch.randn(3).as_subclass(_Sub),
    lambda: torch.empty(3, device="meta"),
    lambda: (torch.randn(2), torch.randn(2).as_subclass(_Sub)),
    lambda: [1.0, 2.0],
    lambda: {"out": torch.randn(2)},
    lambda: None,
])
def test_non_plain_outputs_rejected(make) -> None:
    findings = _lazy(make())
    assert findings and all(f.pattern == "lazy-evaluation" for f in findings)


def test_hostile_object_is_evidence_not_a_crash() -> None:
    class Evil:
        def __getattribute__(self, name):
            raise RuntimeError("boom")

    assert [f.pattern for f in _lazy(Evil())] == ["lazy-evaluation"]


def test_fake_tensor_rejected() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.empty(4)
    assert [f.pattern for f in _lazy(fake)] == ["lazy-evaluation"]


# --- identity / noop / stale -----------------------------------------------------------------------

def test_identity_named_with_input_index() -> None:
    x, r = torch.randn(8, 16), torch.randn(8, 16)
    (f,) = dc.explain_mismatch(r.clone(), x + r, [x, r])
    assert f.pattern == "identity-kernel" and "input 1" in f.evidence


def test_wrong_but_not_an_input_is_not_identity() -> None:
    x = torch.randn(8, 16)
    assert dc.explain_mismatch(x * 2.0, torch.sigmoid(x), [x]) == []


def test_partial_write_is_noop_with_fraction() -> None:
    x = torch.randn(10, 10)
    expected = torch.sigmoid(x)
    out = _poisoned((10, 10))
    out[:7] = expected[:7]
    (f,) = dc.explain_mismatch(out, expected, [x])
    assert f.pattern == "noop-kernel" and "30 of 100" in f.evidence


def test_never_written_is_stale_memory() -> None:
    x = torch.randn(10, 10)
    out = _poisoned((10, 10))
    out.view(-1)[:4] = torch.randn(4)  # allocator bookkeeping overwrote a few words
    (f,) = dc.explain_mismatch(out, torch.sigmoid(x), [x])
    assert f.pattern == "stale-memory-reuse"


def test_arithmetic_nan_is_not_poison() -> None:
    x = torch.randn(10, 10)
    out = torch.sigmoid(x)
    out[0, :5] = torch.zeros(5) / torch.zeros(5)  # 0/0: a NaN with another bit pattern than the fill
    assert dc.explain_mismatch(out, torch.sigmoid(x), [x]) == []


def test_all_zero_output_is_noop() -> None:
    x = torch.randn(6, 1)
    (f,) = dc.explain_mismatch(torch.zeros(6, 1), x, [torch.randn(6, 3)])
    assert f.pattern == "noop-kernel"


# --- precision -------------------------------------------------------------------------------------

def _tf32(t: torch.Tensor) -> torch.Tensor:
    bits = t.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def _case(name: str, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    if name == "softmax":
        x = torch.randn(40, 333, generator=g) * 4
        return [x], lambda *a: torch.softmax(a[0], -1)
    if name == "swish":
        x = torch.randn(64, 257, generator=g)
        return [x], lambda *a: a[0] * torch.sigmoid(a[0])
    a, b = torch.randn(32, 2048, generator=g), torch.randn(2048, 32, generator=g)
    return [a, b], lambda *t: t[0] @ t[1]


@pytest.mark.parametrize("name", ["softmax", "swish", "matmul"])
def test_fp32_and_tf32_pass(name: str) -> None:
    inputs, fn = _case(name)
    exp64 = fn(*[t.double() for t in inputs])
    ref = fn(*inputs)
    assert dc.precision_findings(fn(*inputs), exp64, ref, "float32") == []
    strict = {"softmax": "softmax", "swish": "activation", "matmul": "matmul"}[name]
    assert dc.precision_findings(fn(*inputs), exp64, ref, "float32", category=strict) == []
    if name == "matmul":  # Triton's default tl.dot on fp32 rounds inputs to TF32
        assert dc.precision_findings(fn(*[_tf32(t) for t in inputs]), exp64, ref, "float32") == []


@pytest.mark.parametrize("name", ["softmax", "swish", "matmul"])
@pytest.mark.parametrize("half", [torch.float16, torch.bfloat16])
def test_half_compute_flagged(name: str, half: torch.dtype) -> None:
    inputs, fn = _case(name)
    exp64 = fn(*[t.double() for t in inputs])
    out = fn(*[t.to(half) for t in inputs]).float()
    (f,) = dc.precision_findings(out, exp64, fn(*inputs), "float32")
    assert f.pattern == "precision-downgrade" and f.severity == "reject"


def test_bf16_intermediate_with_fp32_output_caught_by_error() -> None:
    inputs, fn = _case("softmax")
    x = inputs[0]
    exp64 = fn(x.double())
    e = torch.exp((x - x.max(-1, keepdim=True).values).bfloat16().float()).bfloat16().float()
    out = e / e.sum(-1, keepdim=True)
    # 9e-4: inside the TF32 band, so only a task known to have no contraction can reject it
    assert dc.precision_findings(out, exp64, fn(x), "float32") == []
    assert dc.precision_findings(out, exp64, fn(x), "float32", category="matmul") == []
    (f,) = dc.precision_findings(out, exp64, fn(x), "float32", category="softmax")
    assert "norm-wise relative error" in f.evidence


def _online_softmax(x: torch.Tensor, block: int = 64) -> torch.Tensor:
    """An honest fp32 softmax that sums in another order than torch's (a blocked online rescale)."""
    m = torch.full(x.shape[:-1] + (1,), float("-inf"))
    s = torch.zeros(x.shape[:-1] + (1,))
    for j in range(0, x.shape[-1], block):
        part = x[..., j:j + block]
        new_m = torch.maximum(m, part.max(-1, keepdim=True).values)
        s = s * torch.exp(m - new_m) + torch.exp(part - new_m).sum(-1, keepdim=True)
        m = new_m
    return torch.exp(x - m) / s


def test_fp16_exponentials_caught_on_every_seed_honest_orders_never() -> None:
    """fp16 exponentials in an fp32 softmax measure 8.9e-5..2e-4 over seeds: every seed's draw is
    rejected (a 1e-4 floor had let 1.25% pass), and no seed flags honest fp32 in another order."""
    for seed in range(120):
        inputs, fn = _case("softmax", seed)
        x = inputs[0]
        exp64, ref = fn(x.double()), fn(x)
        e = torch.exp((x - x.max(-1, keepdim=True).values).half().float()).half().float()
        (f,) = dc.precision_findings(e / e.sum(-1, keepdim=True), exp64, ref, "float32", category="softmax")
        assert "norm-wise relative error" in f.evidence, seed
        assert dc.precision_findings(_online_softmax(x), exp64, ref, "float32", category="softmax") == [], seed


def test_half_task_is_not_judged() -> None:
    inputs, fn = _case("swish")
    out = fn(*[t.half() for t in inputs]).float()
    assert dc.precision_findings(out, fn(*[t.double() for t in inputs]), fn(*inputs), "float16") == []


def test_integer_valued_outputs_carry_no_fingerprint() -> None:
    x = torch.randint(-8, 8, (64, 64)).float()
    out = x.sum(-1, keepdim=True)
    assert dc.precision_findings(out, x.double().sum(-1, keepdim=True), out, "float32") == []


# --- timing ----------------------------------------------------------------------------------------

def test_consistent_times_pass() -> None:
    events = [1.00, 1.02, 0.99, 1.01]
    hosts = [1.03, 1.06, 1.02, 1.05]
    assert dc.timing_findings(events, hosts) == []
    # tiny kernels: launch overhead dominates the host time, within the 0.05 ms margin
    assert dc.timing_findings([0.004] * 5, [0.040] * 5) == []


def test_host_much_slower_than_events_is_stream_injection() -> None:
    (f,) = dc.timing_findings([0.10] * 8, [1.20] * 8)
    assert f.pattern == "stream-injection" and "1.2 ms" in f.evidence


def test_device_busy_after_the_timed_stream_is_stream_injection() -> None:
    # honest: the drain after the end event is what an idle device's is (host wake-up only)
    assert dc.timing_findings([0.10] * 8, [0.13] * 8, [0.012] * 8, [0.011] * 12) == []
    # side-stream work outlives the caller's stream by 0.06 ms: the host clock alone (0.17 ms
    # against 1.5 x 0.10 + 0.05) would not see it
    (f,) = dc.timing_findings([0.10] * 8, [0.17] * 8, [0.071] * 8, [0.011] * 12)
    assert f.pattern == "stream-injection" and "still busy 0.06 ms" in f.evidence
    # without an idle calibration (CPU, older workers) only the host comparison applies
    assert dc.timing_findings([0.10] * 8, [0.17] * 8, [0.071] * 8, None) == []


def test_host_clock_may_include_the_hold_before_the_start_event() -> None:
    # the host clock starts while the GPU is still held (0.2 ms) before the start event
    events, hosts = [0.05] * 8, [0.26] * 8
    (f,) = dc.timing_findings(events, hosts)
    assert f.pattern == "stream-injection"
    assert dc.timing_findings(events, hosts, gate_ms=[0.2] * 8) == []
    # beyond the hold, unseen host time is still found
    (g,) = dc.timing_findings(events, [0.60] * 8, gate_ms=[0.2] * 8)
    assert g.pattern == "stream-injection" and "hold before the start event" in g.evidence


def test_beside_foreign_compute_only_the_host_clocks_excess_goes_unjudged() -> None:
    """The H100's busy run: an honest swish read 2.65 ms on the host against 0.093 ms of events
    while another process computed on the GPU. Where the judge saw such compute in both timings it
    leaves the host clock's excess unjudged; the events and the drain are still held to the rule."""
    events, hosts = [0.093] * 8, [2.65] * 8
    (f,) = dc.timing_findings(events, hosts, gate_ms=[0.237] * 8)
    assert f.pattern == "stream-injection"
    assert dc.timing_findings(events, hosts, gate_ms=[0.237] * 8, host_rule=False) == []
    (drained,) = dc.timing_findings([0.10] * 8, [2.65] * 8, [0.071] * 8, [0.011] * 12, host_rule=False)
    assert "still busy" in drained.evidence
    (forged,) = dc.timing_findings([5.0] * 8, [1.0] * 8, host_rule=False)
    assert forged.pattern == "timer-patching"


def test_events_longer_than_host_is_timer_patching() -> None:
    (f,) = dc.timing_findings([5.0] * 8, [1.0] * 8)
    assert f.pattern == "timer-patching"


# --- roofline --------------------------------------------------------------------------------------

def test_roofline_flags_below_floor_only_on_known_devices() -> None:
    bytes_moved = 268435456  # swish at full size: 56 us at 4.8 TB/s
    (f,) = dc.roofline_findings(0.010, 1.3e8, bytes_moved, "NVIDIA H200")
    assert f.pattern == "impossible-speed" and f.severity == "flag"
    assert dc.roofline_findings(0.060, 1.3e8, bytes_moved, "NVIDIA H200") == []
    assert dc.roofline_findings(0.010, 1.3e8, bytes_moved, "cpu") == []
    assert dc.roofline_findings(0.010, None, None, "NVIDIA H200") == []
    # A100's bandwidth is lower, so the same time is even more impossible there
    assert dc.roofline_findings(0.1, None, bytes_moved, "NVIDIA A100-SXM4-80GB")
    assert dc.device_peaks("AMD Instinct MI300X") is not None


# --- degenerate ------------------------------------------------------------------------------------

def test_constant_outputs_flagged() -> None:
    ones = [torch.ones(16, 1), torch.ones(16, 1), torch.ones(16, 1)]
    (f,) = dc.constant_output_findings(ones)
    assert f.pattern == "degenerate-output" and f.severity == "flag"
    (g,) = dc.constant_output_findings([torch.full((4, 4), 2.0), torch.full((4, 4), 3.0)])
    assert g.pattern == "degenerate-output"


def test_varied_outputs_not_flagged() -> None:
    assert dc.constant_output_findings([torch.randn(8, 8), torch.randn(8, 8)]) == []
    assert dc.constant_output_findings([torch.randn(8, 8)]) == []


def test_zero_filled_partial_write_is_noop() -> None:
    x = torch.randn(12, 10)
    expected = torch.sigmoid(x)
    out = torch.zeros(12, 10)
    out[:6] = expected[:6]
    (f,) = dc.explain_mismatch(out, expected, [x])
    assert f.pattern == "noop-kernel" and "60 of 120" in f.evidence


def test_wrong_values_everywhere_are_not_noop() -> None:
    x = torch.randn(12, 10)
    expected = torch.sigmoid(x)
    assert dc.explain_mismatch(expected + 0.5, expected, [x]) == []


def test_uninitialised_garbage_is_stale_memory() -> None:
    x = torch.randn(16, 4)
    garbage = torch.randint(0x60000000, 0x7F000000, (16, 4), dtype=torch.int32).view(torch.float32)
    (f,) = dc.explain_mismatch(garbage, x.sum(-1, keepdim=True).expand(16, 4).contiguous(), [x])
    assert f.pattern == "stale-memory-reuse"


def test_zeros_inside_tolerance_are_not_counted_as_correct() -> None:
    x = torch.randn(8, 300) * 4
    expected = torch.softmax(x, -1)  # most entries are below atol, so 0 is "close" to them
    (f,) = dc.explain_mismatch(torch.zeros(8, 300), expected, [x])
    assert f.pattern == "noop-kernel"


# --- glibc MALLOC_PERTURB_ fills (deterministic CPU poisoning) -------------------------------------

def _perturbed(shape: tuple[int, ...], dtype: torch.dtype, byte: int) -> torch.Tensor:
    n = int(torch.tensor(shape).prod()) * torch.empty((), dtype=dtype).element_size()
    return torch.full((n,), byte, dtype=torch.uint8).view(dtype).reshape(shape).clone()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("byte", [0x7F, 0x80])  # fresh malloc fill / freed fill for MALLOC_PERTURB_=128
def test_malloc_perturb_fill_is_poison(dtype: torch.dtype, byte: int) -> None:
    x = torch.randn(16, 8)
    expected = torch.sigmoid(x).to(dtype)
    out = _perturbed((16, 8), dtype, byte)
    out[:14] = expected[:14]
    (f,) = dc.explain_mismatch(out, expected, [x.to(dtype)])
    assert f.pattern == "noop-kernel" and "16 of 128" in f.evidence


def test_malloc_perturb_never_written_is_stale_memory() -> None:
    x = torch.randn(16, 8)
    (f,) = dc.explain_mismatch(_perturbed((16, 8), torch.float16, 0x7F), torch.sigmoid(x).half(), [x.half()])
    assert f.pattern == "stale-memory-reuse"


def test_perturb_byte_matches_the_worker_environment() -> None:
    from scorer.checks.poison import PERTURB_BYTES, perturb_environment

    byte = int(perturb_environment()["MALLOC_PERTURB_"])
    assert set(PERTURB_BYTES) == {byte, byte ^ 0xFF}


# --- run-time library-call monitor ----------------------------------------------------------------

_MONITORED = '''
import functools, operator, warnings
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=m)
@triton.jit
def _gather_rows(x_ptr, rows_ptr, y_ptr, D: tl.constexpr):
    r = tl.program_id(0)
    src = tl.load(rows_ptr + r)
    d = tl.arange(0, D)
    v = tl.load(x_ptr + src * D + d)
    tl.store(y_ptr + r * D + d, v * 2.0 + 1.0)
@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m, other=0.0), mask=m)
def _launch(kernel, x):
    y = torch.empty_like(x)
    kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y
def hybrid_bias(x, bias):
    return _launch(_swish, x) + bias  # the kernel does the maths, torch a bias add
def row_ids_for_triton(x, counts):
    rows = torch.repeat_interleave(torch.arange(counts.numel()), counts)  # index glue
    y = torch.empty(rows.numel(), x.shape[1])
    _gather_rows[(rows.numel(),)](x, rows, y, D=x.shape[1])
    return y
def decoy_copy_then_torch(x):
    s = _launch(_copy, x)
    return s * torch.sigmoid(s)
NAME = "diomgis"
def computed_getattr(x):
    return getattr(x, NAME[::-1])()
def methodcaller(x):
    return operator.methodcaller("sum_to_size", x.shape[0], 1)(x)
def partial_functional(x):
    return functools.partial(getattr(F, "soft" + "max"), dim=-1)(x)
def nn_module(x):
    return torch.nn.RMSNorm(x.shape[-1])(x)
def operators(x):
    return x / (1.0 + 2.718281828 ** (-x))
def chunked_operators(x):
    return torch.cat([c / (1.0 + 2.718281828 ** (-c)) for c in x.chunk(16)])
def pairwise_row_sum(x):
    while x.shape[1] > 1:
        x = x[:, 0::2] + x[:, 1::2]
    return x
def block_scales(x):
    amax = x.reshape(-1, 16)[:, 0]
    return (amax / 6.0) * 2.0 + 1.0
def row_offsets(x):
    return torch.arange(x.shape[0]) * x.stride(0) + 1, x[:, :1] * 0.5
def index_mask(x):
    pos = torch.arange(x.shape[1])
    return (pos[:, None] >= pos[None, :]) & (pos[None, :] % 2 == 0)
def finite_check(x):
    if not torch.isfinite(x).all() or bool((x != x).any()):
        raise ValueError("non-finite input")
    return x.t().contiguous()
def glue_only(x):
    y = torch.empty_like(x.contiguous()).reshape(-1)
    z = y.view(x.shape)
    return z.new_empty(z.shape), z.numel(), z.stride(), z[0], torch.cat([z, z]), z.t().contiguous()
def row_offsets_int(x):
    return torch.arange(x.shape[0]) * x.stride(0) + 1
def glue(x):
    y = torch.empty_like(x.contiguous()).reshape(-1)
    z = y.view(x.shape) * 2 + 1 - x / 3
    return z.new_empty(z.shape), z.numel(), z.stride(), z[0], torch.cat([z, z]), z.t().contiguous()
@torch.library.custom_op("ka_test_monitor::swish_body", mutates_args=())
def custom_op_body(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)  # the library's work, in the body of the solution's own op
@torch.library.custom_op("ka_test_monitor::swish_launch", mutates_args=())
def custom_op_launch(x: torch.Tensor) -> torch.Tensor:
    return _launch(_swish, x.contiguous())
_LIB = torch.library.Library("ka_test_monitor_lib", "DEF")
_LIB.define("swish(Tensor x) -> Tensor")
_LIB.impl("swish", lambda x: x / (1.0 + torch.exp(-x)), "CompositeExplicitAutograd")
def library_impl_body(x):
    return torch.ops.ka_test_monitor_lib.swish(x)
def _swish_ts(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)
def _glue_ts(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x.contiguous())
    y.copy_(x.t().reshape(x.shape))
    return y.fill_(0.0).view(-1).clone()
with warnings.catch_warnings():  # TorchScript is deprecated, and here only a stand-in for C++
    warnings.simplefilter("ignore", DeprecationWarning)
    _scripted_swish, _scripted_glue = torch.jit.script(_swish_ts), torch.jit.script(_glue_ts)
def native_code(x):
    return _scripted_swish(x)  # TorchScript's interpreter calls ATen from C++, as an extension does
def native_glue(x):
    return _scripted_glue(x)
class _Carrier(torch.Tensor):
    @staticmethod
    def __new__(cls, payload):
        carrier = torch.Tensor._make_wrapper_subclass(cls, (1,), dtype=payload.dtype)
        carrier.payload = payload
        return carrier
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        x = args[0].payload
        return x * torch.sigmoid(x)  # the whole task, for a one-element neg
def subclass_carrier(x):
    return torch.neg(_Carrier(x))
def pop_dispatch_mode(x):
    from torch.utils._python_dispatch import _pop_mode
    _pop_mode()
    return x


def numpy_row_sum(x):
    import numpy as np
    return torch.from_numpy(np.asarray(x) @ np.ones(x.shape[1], dtype=np.float32))


def small_host_stats(x):
    return x[:2, :2].tolist(), torch.arange(x.shape[0]).numpy()
'''


def _observed(monitor: dc.LibraryCallMonitor, data_elements: int | list[int] = 0,
              profile: tuple[dict[str, float], list[str]] | None = None) -> LibraryObservation:
    """The monitor's observation as the worker sends it (with a GPU profile's device times and the
    solution's kernel names, where given), parsed as the judge does."""
    observed = monitor.observe(data_elements, *profile) if profile else monitor.observe(data_elements)
    return LibraryObservation.parse(json.loads(json.dumps(observed)))


def _ruled(monitor: dc.LibraryCallMonitor, data_elements: int | list[int] = 0, threshold: float = 0.5,
           judged: float = 0.0, profile: tuple[dict[str, float], list[str]] | None = None) -> list:
    """The judge's ruling on it, with the suite's threshold."""
    return library_findings(_observed(monitor, data_elements, profile), threshold, judged)


@pytest.fixture(scope="module")
def monitored(tmp_path_factory: pytest.TempPathFactory):
    import importlib.util

    path = tmp_path_factory.mktemp("monitor") / "kernel.py"
    path.write_text(_MONITORED)
    spec = importlib.util.spec_from_file_location("monitored_kernel", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, frozenset({str(path)})


@pytest.mark.parametrize("name,op", [("computed_getattr", "sigmoid"), ("methodcaller", "sum_to_size"),
                                     ("partial_functional", "softmax"), ("nn_module", "rms_norm")])
def test_monitor_sees_hidden_library_calls(monitored, name: str, op: str) -> None:
    module, files = monitored
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        getattr(module, name)(torch.randn(4, 8))
    (f,) = _ruled(monitor)
    assert f.pattern == "baseline-library-call" and op in f.evidence and "kernel.py:" in f.evidence
    assert "0.0% of forward's work" in f.evidence and "threshold 50%" in f.evidence


def test_monitor_counts_no_work_for_glue(monitored) -> None:
    module, files = monitored
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        module.glue_only(torch.randn(4, 8))
        module.row_offsets_int(torch.randn(4, 8))
        module.index_mask(torch.randn(64, 128))  # integer and boolean arithmetic as large as the data
        module.finite_check(torch.randn(64, 128))  # a check on the float data: boolean results only
    assert monitor.work == {} and _ruled(monitor) == []


@pytest.mark.parametrize("name", ["operators", "chunked_operators", "pairwise_row_sum"])
def test_operator_arithmetic_is_library_work(monitored, name: str) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        getattr(module, name)(x)
    assert sum(monitor.work.values()) >= x.numel() // 2
    (f,) = _ruled(monitor, x.numel())
    assert f.pattern == "baseline-library-call" and "kernel.py:" in f.evidence


def test_own_kernel_share_passes_honest_hybrids(monitored) -> None:
    module, files = monitored
    x = torch.randn(16, 64)
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        module.hybrid_bias(x, torch.randn(64))
        module.row_ids_for_triton(x, torch.tensor([3, 0, 5, 8]))
    (call,) = _observed(monitor).library_calls
    # swish is four operations an element in the kernel, the bias add one in torch; the row ids
    # are integers (no work) and the gather kernel does two operations an element
    assert call.own == 4 * x.numel() + 2 * 16 * 64 and sum(call.library.values()) == x.numel()
    assert _ruled(monitor) == []


def test_decoy_kernel_does_no_work(monitored) -> None:
    module, files = monitored
    x = torch.randn(16, 64)
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        module.decoy_copy_then_torch(x)
    assert [c.own for c in _observed(monitor).library_calls] == [0]  # a copy loads and stores, it computes nothing
    (f,) = _ruled(monitor)
    assert "0.0% of forward's work" in f.evidence and "sigmoid" in f.evidence


def test_threshold_comes_from_the_suite_policy(monitored) -> None:
    from scorer.tasks.suites import LibraryPolicy

    module, files = monitored
    x = torch.randn(16, 64)
    strict = dc.LibraryCallMonitor(files, LibraryPolicy(own_work_share=0.9))
    with strict:
        module.hybrid_bias(x, torch.randn(64))
    (f,) = _ruled(strict, threshold=0.9)
    assert "80.0% of forward's work" in f.evidence and "threshold 90%" in f.evidence


def test_block_scales_are_small_library_work(monitored) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        module.block_scales(x)  # three operators on one scale per 16 values
    # each operator does one operation per scale, N/16 of them
    assert sum(monitor.work.values()) == 3 * x.numel() // 16


def test_monitor_ignores_calls_not_made_by_the_kernel(monitored) -> None:
    _, files = monitored
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        torch.randn(4, 8).softmax(-1)  # this test's own code, not kernel.py
    assert _ruled(monitor) == []


# --- library work below the function mode: custom ops' bodies and native code (CPU) -------------
# A red team's kernels (docs/results/2026-12-05-session15-red-team-on-cpu.md, a06 and a09) do the
# whole task in the body of a custom op of the solution's own, or in a load_inline extension
# calling at::special_expit: the function mode sees neither.


@pytest.mark.parametrize("name", ["custom_op_body", "library_impl_body", "subclass_carrier"])
def test_custom_op_bodies_are_library_work(monitored, name: str) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    monitor = dc.LibraryCallMonitor(files, watch_aten=True)
    with monitor:
        getattr(module, name)(x)
    assert sum(monitor.work.values()) >= 2 * x.numel()
    assert all("kernel.py:" in key for key in monitor.work)
    assert sum(v for k, v in monitor.work.items() if k.startswith("aten.")) >= 2 * x.numel()
    (f,) = _ruled(monitor, x.numel())
    assert f.pattern == "baseline-library-call" and "0.0% of forward's work" in f.evidence
    assert not monitor.displaced and not monitor.lingering


def test_native_aten_is_library_work(monitored) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    monitor = dc.LibraryCallMonitor(files, native_kernels=True, watch_aten=True)
    with monitor:
        module.native_code(x)
    assert set(monitor.work) == {f"aten.sigmoid (kernel.py:{_line(module, 'native_code')})",
                                 f"aten.mul (kernel.py:{_line(module, 'native_code')})"}
    (f,) = _ruled(monitor, x.numel())
    assert "200% of the task's largest tensor" in f.evidence and "aten.sigmoid" in f.evidence


def _line(module, function: str) -> int:
    return getattr(module, function).__code__.co_firstlineno + 1


def test_honest_custom_ops_and_native_glue_pass(monitored) -> None:
    module, files = monitored
    x = torch.randn(16, 64)
    monitor = dc.LibraryCallMonitor(files, watch_aten=True)
    with monitor:
        y = module.custom_op_launch(x)  # a Triton launch inside the solution's custom op
        module.native_glue(x)  # native code that only allocates, copies, views and fills
        module.glue_only(x)
    assert torch.allclose(y, x * torch.sigmoid(x), atol=1e-6)
    assert monitor.work == {} and monitor.own.elements == 4 * x.numel() and _ruled(monitor) == []


def test_function_mode_calls_are_not_counted_twice(monitored) -> None:
    module, files = monitored
    x = torch.randn(16, 64)
    alone = dc.LibraryCallMonitor(files)
    both = dc.LibraryCallMonitor(files, watch_aten=True)
    for monitor in (alone, both):
        with monitor:
            module.decoy_copy_then_torch(x)
            module.hybrid_bias(x, torch.randn(64))
    assert both.work == alone.work and len(alone.work) == 3 and not any(k.startswith("aten.") for k in both.work)


def test_custom_ops_are_glue_without_the_dispatch_mode(monitored) -> None:
    # On a GPU (no dispatch mode in timed calls) the op is one call of glue, as before: its
    # library kernels are the first call's profile's to judge.
    module, files = monitored
    monitor = dc.LibraryCallMonitor(files, native_kernels=True)
    with monitor:
        module.custom_op_body(torch.randn(16, 64))
    assert monitor.work == {}


def test_popping_the_dispatch_mode_is_introspection(monitored) -> None:
    module, files = monitored
    monitor = dc.LibraryCallMonitor(files, watch_aten=True)
    with monitor:
        module.pop_dispatch_mode(torch.randn(4))
    assert monitor.displaced
    assert any(f.pattern == "harness-introspection" and "TorchDispatchMode" in f.evidence for f in _ruled(monitor))


def test_aten_glue_follows_the_function_modes_rules(monitored) -> None:
    from scorer.checks.aten_work import solution_op

    aten = torch.ops.aten
    monitor = dc.LibraryCallMonitor(monitored[1], watch_aten=True)
    glue = [aten.empty_like.default, aten.copy_.default, aten.fill_.Scalar, aten.zero_.default, aten.view.default,
            aten._to_copy.default, aten.clone.default, aten.cat.default, aten.constant_pad_nd.default,
            aten.expand_copy.default, aten._local_scalar_dense.default, aten.sym_size.int, aten.zeros_like.default]
    assert [op for op in glue if monitor._aten_name(op) is not None] == []
    compute = {aten.sigmoid.default: "aten.sigmoid", aten.mul.Tensor: "aten.mul", aten.mm.default: "aten.mm",
               aten._softmax.default: "aten._softmax", aten.special_expit.default: "aten.special_expit",
               aten.convolution.default: "aten.convolution"}
    assert {op: monitor._aten_name(op) for op in compute} == compute
    assert solution_op(torch.ops.ka_test_monitor_lib.swish) and solution_op(torch.ops.ka_test_monitor.swish_body.default)
    assert not solution_op(aten.mul.Tensor) and not solution_op(torch.sigmoid)


def test_scalar_outputs_are_not_constant_by_construction() -> None:
    # a 0-d loss per input set: one element each, so "constant across its elements" means nothing
    assert dc.constant_output_findings([torch.tensor(0.25), torch.tensor(0.75)]) == []
    (f,) = dc.constant_output_findings([torch.tensor(0.5), torch.tensor(0.5)])
    assert "identical outputs" in f.evidence


def test_device_time_split_by_kernel_names() -> None:
    from scorer.judge.rulings.library_calls import device_work

    times = {"_swish_kernel": 80.0, "void at::native::vectorized_elementwise_kernel<4, sigmoid>": 30.0,
             "Memcpy DtoD (Device -> Device)": 50.0, "_k": 5.0, "triton_poi_fused_k_0": 10.0}
    work = device_work(times, ["_swish_kernel", "_k"])
    # own: exact identifiers only ("_k" is not inside "triton_poi_fused_k_0"); copies are glue
    assert work.own == 85.0 and work.library == 40.0 and work.unit == "us of device time"
    assert abs(work.share - 85.0 / 125.0) < 1e-9
    # A kernel a factory builds: the census has its qualified name, the device its own name (the
    # clean row_sum_kernel_factory read 0% own work on the H100 before this).
    factory = device_work({"kernel": 175.8, "Memcpy DtoD (Device -> Device)": 3.0}, ["_make_row_sum.<locals>.kernel"])
    assert factory.own == 175.8 and factory.library == 0.0


# --- every watched call judged on its own, as on a GPU ---------------------------------------------
# On a GPU only the first call is profiled: after it, the solution's compiled kernels are invisible
# to the monitor (no interpreter counts them), so each timed, trial or batch call's record is its
# library work with no measured own work. Here the same records come from the real monitor told the
# solution's kernels are compiled (native_kernels) with no interpreted launch in the call: an
# honest call records glue only, a dodging call its library work.


def _gpu_like_calls(module, files, x, dodging: set[int], calls: int = 20, policy=None):
    monitor = dc.LibraryCallMonitor(files, policy, native_kernels=True)
    for i in range(calls):
        with monitor:
            module.computed_getattr(x) if i in dodging else module.glue_only(x)
    return monitor


def test_one_library_call_among_honest_ones_is_caught_as_on_a_gpu(monitored) -> None:
    from scorer.judge.rulings.library_calls import WorkShare, share_findings

    module, files = monitored
    x = torch.randn(64, 128)
    monitor = _gpu_like_calls(module, files, x, dodging={7})
    seen = _observed(monitor, [x.numel()] * 20)
    assert seen.calls == 20 and seen.native_kernels and [c.call for c in seen.library_calls] == [7]
    assert sum(seen.library_calls[0].library.values()) == x.numel() and seen.library_calls[0].own == 0
    # Summed over the 20 calls (what the timed loop judged before), the honest calls dilute it:
    # N of library work against 20 N elements is under the 50% bar.
    assert share_findings(WorkShare(library=float(sum(monitor.work.values())), measured=False), 0.5, 20 * x.numel()) == []
    (f,) = _ruled(monitor, [x.numel()] * 20)
    assert f.pattern == "baseline-library-call"
    assert "1 of 20 watched calls" in f.evidence and "(call 8)" in f.evidence and "sigmoid" in f.evidence


def test_the_worst_of_several_dodging_calls_is_reported(monitored) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    monitor = _gpu_like_calls(module, files, x, dodging={3, 11})
    data = [x.numel()] * 20
    data[11] = x.numel() // 2  # the same library work against less data is the worse call
    (f,) = _ruled(monitor, data)
    assert "2 of 20 watched calls" in f.evidence and "(call 12)" in f.evidence and "200%" in f.evidence


def test_library_work_the_first_call_was_allowed_is_allowed_on_every_call(monitored) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    # A hybrid whose first call's profile allowed its library part: the same part on each later
    # call is not judged again, more than it is.
    honest = _gpu_like_calls(module, files, x, dodging=set(range(20)))
    assert _ruled(honest, [x.numel()] * 20, judged=x.numel()) == []
    more = dc.LibraryCallMonitor(files, native_kernels=True)
    for i in range(20):
        with more:
            module.computed_getattr(x)
            if i == 5:
                module.operators(x)  # the library does the task's maths on this call too
    (f,) = _ruled(more, [x.numel()] * 20, judged=x.numel())
    assert "1 of 20 watched calls" in f.evidence and "(call 6)" in f.evidence


def test_small_library_calls_pass_on_every_call(monitored) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    unmeasured = dc.LibraryCallMonitor(files, native_kernels=True)  # as on a GPU
    measured = dc.LibraryCallMonitor(files)  # interpreted: the kernel's own work counted
    for monitor in (unmeasured, measured):
        for _ in range(20):
            with monitor:
                module.block_scales(x)  # N/16 scales, three operators on each
                module.row_offsets(x)  # a column scaled: 64 operations
                module.glue_only(x)
                if monitor is measured:
                    module.hybrid_bias(torch.randn(16, 64), torch.randn(64))  # the kernel's maths, a bias add
    first_unmeasured, first_measured = _observed(unmeasured).library_calls[0], _observed(measured).library_calls[0]
    assert first_unmeasured.own == 0 and first_measured.own > 0  # own work counted only where interpreted
    assert sum(first_unmeasured.library.values()) == 3 * x.numel() // 16 + 64
    assert _ruled(unmeasured, [x.numel()] * 20) == []
    assert _ruled(measured, [x.numel()] * 20) == []


def test_calls_findings_on_the_records_of_a_gpu_timed_loop() -> None:
    from scorer.judge.rulings.library_calls import WorkShare, calls_findings

    n = 1 << 20
    # 100 timed repetitions on a GPU: 97 honest (compiled kernels only, nothing recorded), three
    # take the library sigmoid and a multiply, as the watched-call dodging attack does.
    calls: list[WorkShare | None] = [None] * 100
    for i in (0, 40, 99):
        calls[i] = WorkShare(library=2.0 * n, measured=False,
                             by_op={"torch.Tensor.sigmoid (kernel.py:37)": float(n), "mul (kernel.py:37)": float(n)})
    (f,) = calls_findings(calls, 0.5, n)
    assert "3 of 100 watched calls" in f.evidence and "(call 1)" in f.evidence and "200%" in f.evidence
    assert calls_findings([None] * 100, 0.5, n) == []
    # a data size of 0 is not judged when own work is not measured (nothing to hold it against)
    assert calls_findings(calls, 0.5, 0) == []


def test_monitor_resolves_an_attribute_read_once(monkeypatch) -> None:
    """`x.shape` reaches the monitor as a method-wrapper made for that one read: it is cached by
    the descriptor it wraps, so a watched call does not resolve it again every time."""
    resolved: list[object] = []
    real = dc._library_compute_name
    monkeypatch.setattr(dc, "_library_compute_name", lambda func, policy: resolved.append(func) or real(func, policy))
    monitor = dc.LibraryCallMonitor(frozenset({"/nowhere/kernel.py"}), None, native_kernels=True)
    x = torch.randn(4, 4)
    for _ in range(20):
        with monitor:
            _ = x.shape
            x.stride(0)
    assert 1 <= len(resolved) <= 2, resolved


def test_every_call_is_held_to_the_precision_of_the_float64_checked_one() -> None:
    """precision_consistency: the seeds and timed repetitions the float64 check does not read, each
    against the fp32 reference and the bar the checked call set (a red-team kernel rounded to fp16
    on every call but the first and passed)."""
    from scorer.checks.dynamic import precision_bar, precision_consistency

    gen = torch.Generator().manual_seed(3)
    ref = torch.randn(1 << 14, generator=gen)
    bar = precision_bar(1e-8, "elementwise")
    honest = ref * (1 + 1e-7 * torch.randn(ref.shape, generator=gen))
    assert precision_consistency(honest, ref, bar, "float32", "seed 1") == []
    noisy = ref * (1 + 1e-4 * torch.randn(ref.shape, generator=gen))
    (found,) = precision_consistency(noisy, ref, bar, "float32", "timed repetition 7", offset=5)
    assert found.pattern == "precision-downgrade" and found.evidence.startswith("timed repetition 7: norm-wise")
    (halved,) = precision_consistency(ref.half().float(), ref, bar, "float32", "seed 2")
    assert "float16" in halved.evidence
    assert precision_consistency(noisy, ref, None, "float32", "seed 1") == []  # no bar: the error is not judged
    assert precision_consistency(noisy.half(), ref.half(), bar, "float16", "seed 1") == []


def test_data_handed_to_numpy_is_library_work(monitored) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        module.numpy_row_sum(x)
    assert sum(monitor.work.values()) == x.numel()
    (f,) = _ruled(monitor, x.numel())
    assert f.pattern == "baseline-library-call" and "torch.Tensor.__array__ (kernel.py:" in f.evidence
    # On a GPU the share is device time, which the host's numpy takes none of: judged by elements.
    (g,) = _ruled(monitor, x.numel(), profile=({"own_kernel": 5.0}, ["own_kernel"]))
    assert "handed 8192 floating-point elements out of torch" in g.evidence


def test_small_or_integer_exports_are_not_library_work(monitored) -> None:
    module, files = monitored
    x = torch.randn(64, 128)
    monitor = dc.LibraryCallMonitor(files)
    with monitor:
        module.small_host_stats(x)
    assert [key.split(" ")[0] for key in monitor.work] == ["torch.Tensor.tolist"]
    assert sum(monitor.work.values()) == 4  # on CPU, weighed against the own kernels' work
    assert _ruled(monitor, x.numel(), profile=({"own_kernel": 5.0}, ["own_kernel"])) == []

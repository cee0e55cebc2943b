"""AST analysis of a solution's source, run by the judge before the kernel is ever imported.

What it judges and how (docs/HACKS.md has the full rationale):

* Names are resolved, not matched: every ``import``/``from ... import ... as`` and every plain
  ``alias = torch.matmul`` assignment is followed, and ``getattr(mod, "mat" + "mul")`` is
  constant-folded. A non-constant ``getattr`` on a torch module is itself evidence.
* Only code that can run at forward time is judged for library compute: ``forward``/``__call__``
  of every class in the file and, transitively, every local function or method they reference
  (by name, ``self.name`` or ``Class.name``), plus lambdas and nested functions wherever they are
  written (they are deferred code). ``__init__`` may compute (initialisation is not the task),
  but may not *store* a compute op for later (``self.act = torch.relu``).
* ``@triton.jit`` bodies are device code: they are scanned for precision downcasts and nothing
  else. CUDA C++ strings (``load_inline`` sources) are scanned for ATen/cuBLAS/cuDNN calls.
* Integrity patterns (threads, patching, introspection) are judged everywhere in the file: a
  monkeypatch at import time is as harmful as one in forward.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from scorer.checks.catalog import Finding, Severity
from scorer.tasks.suites import LibraryPolicy

# --- what counts as glue and what counts as compute -------------------------------------------

# torch.* callables that allocate, reshape, move, launch or query; everything else under torch.*
# is treated as compute, because the torch namespace is overwhelmingly compute ops.
_TORCH_GLUE = frozenset({
    "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
    "empty_strided", "arange", "tensor", "as_tensor", "from_numpy", "asarray",
    "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "manual_seed", "seed",
    "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "transpose", "permute", "t",
    "narrow", "select", "split", "chunk", "unbind", "movedim", "moveaxis", "as_strided",
    "broadcast_to", "broadcast_tensors", "broadcast_shapes", "cat", "concat", "concatenate",
    "stack", "hstack", "vstack", "view_as_real", "view_as_complex", "clone", "numel",
    "is_tensor", "is_floating_point", "is_complex", "is_grad_enabled", "no_grad", "enable_grad",
    "inference_mode", "set_grad_enabled", "get_default_dtype", "set_default_dtype", "finfo",
    "iinfo", "device", "Size", "Generator", "promote_types", "result_type", "can_cast",
    "get_device", "typename", "is_inference_mode_enabled", "dtype", "Tensor", "Stream", "Event",
})
# Sub-namespaces of torch that are glue wholesale (streams, extension loading, initialisation).
_TORCH_GLUE_PREFIXES = (
    "torch.cuda.", "torch.utils.cpp_extension.", "torch.nn.init.", "torch.backends.",
    "torch.version.", "torch.library.", "torch.autograd.Function", "torch.types.",
    "torch.nn.Module", "torch.nn.Parameter", "torch.nn.parameter.", "torch.nn.Buffer",
    "torch.nn.ParameterList", "torch.nn.ParameterDict", "torch.nn.Identity", "torch.hip.",
    "torch.xpu.", "torch.mps.", "torch.random.", "torch.testing.", "torch.accelerator.",
)
# torch.nn.Module containers: compute only when they hold torch.nn compute modules.
_NN_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential"})
# Compute ops that are denied even though a glue prefix above would cover them.
_TORCH_DENY_OVERRIDES = (
    "torch.backends.cuda.sdp_kernel", "torch.cuda.amp.", "torch.cuda.jiterator.",
    "torch.cuda.tunable.", "torch.cuda.graphs.make_graphed_callables",
)
# Only these torch.nn.functional entries are data movement.
_FUNCTIONAL_GLUE = frozenset({"pad"})
# torch.ops namespaces that are ATen/PyTorch's own kernels (a solution's own custom ops are fine).
_TORCH_OPS_DENIED = ("torch.ops.aten", "torch.ops.prims", "torch.ops.quantized", "torch.ops.cudnn",
                     "torch.ops.mkldnn", "torch.ops.xformers", "torch.ops.flash_attn", "torch.ops._C")

# Method names that only tensors (or numpy arrays) have and that do the task's arithmetic.
# Ambiguous names (`add`, `sort`, `copy`, `index`) are left out so set/list code is not judged.
_TENSOR_COMPUTE_METHODS = frozenset({
    "sum", "nansum", "mean", "nanmean", "prod", "std", "var", "norm", "softmax", "log_softmax",
    "matmul", "mm", "bmm", "addmm", "addmv", "addbmm", "baddbmm", "mv", "dot", "vdot", "outer",
    "inner", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sigmoid", "tanh", "relu",
    "relu_", "pow", "pow_", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "erf", "erfc", "cumsum",
    "cumprod", "cummax", "cummin", "amax", "amin", "aminmax", "argmax", "argmin", "max", "min",
    "logsumexp", "logcumsumexp", "clamp", "clamp_", "clip", "clip_", "abs", "abs_", "neg", "neg_",
    "mul", "mul_", "div", "div_", "sub_", "add_", "addcmul", "addcdiv", "lerp", "where",
    "masked_fill", "topk", "argsort", "msort", "gather", "scatter", "scatter_add",
    "scatter_reduce", "index_select", "index_add", "sigmoid_", "tanh_", "exp_", "sqrt_",
    "square", "hardtanh", "softplus", "median", "mode", "kthvalue", "allclose", "tensordot",
    "__matmul__", "__rmatmul__", "__mul__", "__rmul__", "__add__", "__radd__", "__truediv__",
    "__sub__", "__pow__",
})
# Tensor methods that allocate, view, move, cast, query or manage autograd/storage: the glue
# half of torch.Tensor. Every other public Tensor method is compute (default deny, as for the
# torch namespace), so `x.sum_to_size(...)` or tanh spelled `sinh()/cosh()` are judged like
# `x.sum()`; a fixed list of compute names always misses some of the ~700 methods.
_TENSOR_GLUE_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "contiguous", "to", "cuda", "cpu", "float", "double",
    "half", "bfloat16", "int", "long", "bool", "byte", "char", "short", "cfloat", "cdouble", "type",
    "type_as", "size", "stride", "numel", "nelement", "dim", "ndimension", "element_size", "data_ptr",
    "storage", "untyped_storage", "storage_offset", "storage_type", "new_empty", "new_empty_strided",
    "new_zeros", "new_ones", "new_full", "new_tensor", "new", "fill_", "zero_", "copy_", "clone",
    "detach", "detach_", "requires_grad_", "retain_grad", "register_hook", "register_post_accumulate_grad_hook",
    "backward", "item", "tolist", "numpy", "flatten", "unflatten", "squeeze", "squeeze_", "unsqueeze",
    "unsqueeze_", "transpose", "transpose_", "swapaxes", "swapdims", "permute", "t", "t_", "narrow",
    "select", "split", "split_with_sizes", "tensor_split", "hsplit", "vsplit", "dsplit", "chunk",
    "unbind", "movedim", "moveaxis", "as_strided", "expand", "expand_as", "broadcast_to", "view_as_real",
    "pin_memory", "share_memory_", "record_stream", "get_device", "dim_order", "set_", "resize_",
    "resize_as_", "align_as", "align_to", "rename", "rename_", "refine_names", "has_names", "is_pinned",
    "is_shared", "is_inference", "is_same_size", "is_set_to", "is_contiguous", "is_floating_point",
    "is_complex", "is_signed", "is_coalesced", "is_nonzero", "is_neg", "is_conj", "is_meta",
    "data", "as_subclass", "coalesce", "to_dense", "to_sparse", "dense_dim", "sparse_dim", "values",
    "indices", "crow_indices", "col_indices", "ccol_indices", "row_indices", "nbytes", "itemsize",
    "module_load", "apply_", "map_", "map2_", "conj", "resolve_conj", "resolve_neg", "requires_grad",
    "untyped_storage", "share_memory", "is_leaf", "equal", "any", "all", "sort", "split_", "index",
    "count", "copy", "add", "get", "real", "imag", "mode", "const_data_ptr", "mutable_data_ptr", "ipu",
    "mtia", "xpu", "mps", "hpu", "ravel", "repeat", "tile", "unfold", "view_as_complex", "chalf", "resize",
    "resize_as", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes", "random_", "normal_",
    "uniform_", "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "q_scale",
    "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points", "q_per_channel_axis", "qscheme",
    "int_repr", "to_mkldnn", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
    "to_sparse_bsc", "to_padded_tensor", "sparse_resize_", "sparse_resize_and_clear_", "reinforce",
})
# Methods that Python's own containers, strings and numbers also have: a call on an object of
# unknown type with one of these names is not evidence of tensor compute.
_BUILTIN_METHOD_NAMES = frozenset(
    name for kind in (list, dict, set, frozenset, str, bytes, tuple, int, float, complex, slice, range)
    for name in dir(kind))


def _derived_tensor_compute() -> frozenset[str]:
    try:
        import torch
    except ImportError:
        return frozenset()
    names = set()
    for name in dir(torch.Tensor):
        if name.startswith("_") or name.startswith("is_") or name in _TENSOR_GLUE_METHODS:
            continue
        if name.rstrip("_") in _TENSOR_GLUE_METHODS or name in _BUILTIN_METHOD_NAMES:
            continue
        if callable(getattr(torch.Tensor, name, None)):
            names.add(name)
    return frozenset(names)


_TENSOR_COMPUTE_METHODS = _TENSOR_COMPUTE_METHODS | _derived_tensor_compute()

# numpy / scipy / cupy / jax compute reached from forward is a library call too.
_OTHER_COMPUTE_PREFIXES = ("scipy.", "jax.", "jaxlib.", "tensorflow.", "cupy.linalg.", "cupyx.",
                           "numpy.linalg.", "numpy.fft.", "torchvision.ops.", "xformers.",
                           "flash_attn.", "apex.", "transformer_engine.", "einops.", "opt_einsum.")
_NUMPY_COMPUTE = frozenset({
    "matmul", "dot", "einsum", "tensordot", "inner", "outer", "exp", "log", "sum", "mean", "max",
    "min", "tanh", "sqrt", "maximum", "minimum", "cumsum", "prod", "convolve", "correlate",
    "softmax", "multiply", "add", "divide", "subtract", "power", "where", "sort", "argmax",
    "argmin", "clip", "abs", "var", "std", "amax", "amin", "logaddexp", "vdot",
})

_HALF_NAMES = frozenset({"float16", "half", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                         "float8_e4m3fnuz", "float8_e5m2fnuz", "float8e4nv", "float8e5",
                         "float8e4b15", "float8e4b8", "float8e5b16", "fp8e4nv", "fp8e5"})
_HALF_METHODS = frozenset({"half", "bfloat16"})

# --- integrity patterns -------------------------------------------------------------------------

_THREAD_MODULES = ("threading", "_thread", "multiprocessing", "concurrent", "subprocess", "pty",
                   "torch.multiprocessing", "sched", "asyncio.subprocess")
_THREAD_CALLS = frozenset({
    "os.fork", "os.forkpty", "os.posix_spawn", "os.posix_spawnp", "os.system", "os.popen",
    "os.register_at_fork", "asyncio.to_thread", "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell", "signal.setitimer", "signal.alarm", "signal.signal",
    "signal.pthread_kill", "os.kill",
})
_THREAD_CALL_PREFIXES = ("os.exec", "os.spawn")
_THREAD_METHODS = frozenset({"run_in_executor", "to_thread"})
_FILE_METHODS = frozenset({"read_text", "read_bytes", "write_text", "write_bytes", "tofile"})

_INTROSPECTION_MODULES = ("inspect", "gc", "importlib", "ctypes", "_ctypes", "builtins",
                          "__builtin__", "atexit", "traceback", "code", "codeop", "runpy",
                          "marshal", "pickle", "dill", "cloudpickle", "imp", "pkgutil",
                          "tracemalloc", "faulthandler", "sysconfig", "mmap", "socket",
                          "urllib", "http", "requests", "scorer", "kernelarena", "orchestrator",
                          "harnesses", "sandbox", "_testcapi", "_posixsubprocess", "resource",
                          "types", "weakref", "readline", "pdb", "bdb", "dis")
# `types` and `weakref` are only judged through the calls below; importing them is common.
_INTROSPECTION_IMPORT_OK = frozenset({"types", "weakref", "traceback", "code", "sysconfig", "resource"})
_INTROSPECTION_CALLS = frozenset({
    "sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.addaudithook",
    "sys.setswitchinterval", "sys._clear_type_cache", "sys.getrefcount", "sys.exit",
    "os._exit", "os.abort", "os.write", "os.read", "os.dup", "os.dup2", "os.fdopen", "os.open",
    "os.pipe", "os.close", "os.closerange", "os.lseek", "os.sendfile", "os.chdir", "os.getppid",
    "os.remove", "os.unlink", "os.rename", "os.replace", "os.listdir", "os.scandir", "os.walk",
    "io.open", "io.FileIO", "pathlib.Path.read_text", "pathlib.Path.read_bytes",
    "pathlib.Path.open", "pathlib.Path.write_text", "pathlib.Path.write_bytes", "shutil.copy",
    "types.FunctionType", "types.CodeType", "types.ModuleType", "weakref.finalize",
    "traceback.extract_stack", "traceback.walk_stack", "traceback.print_stack",
    "traceback.format_stack",
    # file access through the array libraries and temporary files: a cache kept across processes,
    # or a read of a file the kernel was not given
    "numpy.load", "numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.fromfile", "numpy.memmap",
    "numpy.loadtxt", "numpy.genfromtxt", "numpy.savetxt", "numpy.lib.format.open_memmap",
    "torch.load", "torch.save", "torch.from_file", "torch.UntypedStorage.from_file",
    "torch.TypedStorage.from_file", "torch.serialization.load", "torch.serialization.save",
    "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile", "tempfile.SpooledTemporaryFile",
    "tempfile.mkstemp",
})
_INTROSPECTION_BUILTINS = frozenset({"open", "exec", "eval", "compile", "__import__", "globals",
                                     "vars", "breakpoint", "exit", "quit"})
_INTROSPECTION_ATTRS = frozenset({
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next", "gi_frame",
    "cr_frame", "ag_frame", "__globals__", "__closure__", "__code__", "__subclasses__",
    "__builtins__", "__self__", "__mro__", "__bases__", "__dict__", "__reduce_ex__",
    "__getattribute__", "__loader__", "__spec__", "co_consts",
})
_SYS_MODULES = "sys.modules"
# torch's switches for its function-mode stack, where the scorer's LibraryCallMonitor sits during
# the first forward: a kernel has no use for them but to run compute ops unseen.
_MODE_STACK_SWITCHES = frozenset({
    "DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch", "_pop_torch_function_stack",
    "_push_on_torch_function_stack", "_pop_mode", "_pop_mode_temporarily", "_get_current_function_mode_stack",
    "_len_torch_function_stack", "_get_function_stack_at", "_set_torch_function_mode", "_disabled_torch_function_impl",
    "_unset_dispatch_mode", "_pop_torch_dispatch_stack", "_disable_current_modes",
})
_ROOT_METHODS = frozenset({"forward", "__call__", "_call_impl", "__torch_function__",
                           "__torch_dispatch__", "__getattr__", "__getattribute__"})
# Tensor methods judged even when only referenced (`f = x.softmax; f(-1)`); `max`/`min` are
# left out because `torch.finfo(dtype).max` is honest glue.
_TENSOR_METHOD_VALUES = _TENSOR_COMPUTE_METHODS - {"max", "min", "abs", "where", "mode", "median"}
# Callables that turn a method name string into a call on whatever object they are given.
_NAME_CALLERS = frozenset({"operator.methodcaller", "operator.attrgetter"})
_LOOKUP_LIBRARIES = frozenset({"torch", "numpy", "triton"})
_OTHER_DENIED = frozenset({"operator.matmul", "operator.imatmul", "operator.__matmul__"})

# Module attributes whose replacement is a timing or harness attack; judged everywhere.
_TIMER_TARGETS = ("time.", "torch.cuda.", "torch.", "triton.", "scorer.", "kernelarena.",
                  "builtins.", "sys.", "os.", "numpy.", "statistics.", "math.", "gc.", "inspect.",
                  "threading.", "functools.", "operator.", "json.", "io.")
# Settings an honest kernel may flip (they change how *its own* launches run).
_PATCH_OK_PREFIXES = ("torch.backends.", "torch._dynamo.config.", "torch._inductor.config.",
                      "os.environ")

# CUDA C++ sources: ATen compute, cuBLAS/cuDNN and friends called from inside an extension.
_CPP_LIBRARY_CALL = re.compile(
    r"\b(?:at|torch|torch::nn::functional|F)::(?:native::)?"
    r"(?:matmul|mm|bmm|addmm|baddbmm|einsum|linear|conv\w*|softmax|log_softmax|layer_norm|"
    r"group_norm|batch_norm|rms_norm|scaled_dot_product_attention|_scaled_mm|sum|mean|exp|"
    r"sigmoid|tanh|relu|gelu|silu|mv|dot|max_pool\w*|avg_pool\w*|cumsum|norm|logsumexp|sort|"
    r"topk|where|clamp|pow|sqrt|rsqrt|mul|add|div|sub|_\w+)\s*\("
    r"|\.(?:matmul|mm|bmm|addmm|softmax|sum|mean|sigmoid|exp|tanh|relu|pow|sqrt|rsqrt|norm|"
    r"cumsum|max|min|amax|logsumexp)\s*\("
    r"|\b(?:cublas\w*|cublasLt\w*|cudnn\w*|miopen\w*|rocblas\w*|hipblas\w*)\s*\("
    r"|#\s*include\s*[<\"](?:cublas\w*|cublasLt|cudnn\w*|rocblas\w*|hipblas\w*|miopen\w*)"
    r"|\bat::cuda::blas::"
)
_CPP_THREADS = re.compile(r"\bstd::(?:thread|jthread|async)\b|\bpthread_create\s*\(|\b(?:cuda|hip)LaunchHostFunc\s*\("
                          r"|\b(?:cuda|hip)StreamAddCallback\s*\(")
_CPP_SIDE_STREAM = re.compile(r"\bgetStreamFromPool\s*\(|\b(?:cuda|hip)StreamCreate\w*\s*\(")
_CPP_STREAM_JOIN = re.compile(r"\b(?:cuda|hip)(?:StreamSynchronize|DeviceSynchronize|StreamWaitEvent|EventSynchronize)\s*\("
                              r"|\.synchronize\s*\(|\bstream_wait|\bwait_stream")
# The device-agnostic API (torch.Stream, torch.accelerator) reaches the same side streams as torch.cuda.
_STREAM_SWITCHES = frozenset({"torch.cuda.stream", "torch.cuda.set_stream", "torch.cuda.Stream",
                              "torch.cuda.ExternalStream", "torch.cuda.StreamContext", "torch.cuda.streams.Stream",
                              "torch.cuda.streams.ExternalStream", "torch.cuda._set_stream_by_id",
                              "torch.cuda.get_stream_from_external", "torch.Stream", "torch.accelerator.set_stream"})
_STREAM_JOINS = frozenset({"torch.cuda.synchronize", "torch.cuda.current_stream().wait_stream",
                           "torch.accelerator.synchronize"})
_STREAM_JOIN_METHODS = frozenset({"wait_stream", "wait_event", "synchronize"})
_CPP_MARKERS = re.compile(r"#\s*include|__global__|TORCH_LIBRARY|PYBIND11_MODULE|torch::Tensor|at::Tensor")
# Native code that tampers with the process (docs/HACKS.md, "Native tampering"). An extension runs
# in the kernel's process, so it can rewrite the C function behind time.perf_counter or torch's
# Event.elapsed_time (ml_meth of the PyMethodDef, the vectorcall slot of the function object) while
# Python still sees the same objects. No honest kernel touches these; they are judged in every string
# of the file (and in constant-folded string expressions), since a load_inline source can come from
# any of them. An honest extension binds its functions with load_inline(functions=...) or pybind11,
# so even a hand-written PyMethodDef table is rejected.
_NATIVE_TAMPER = (
    (re.compile(r"\b(?:PyMethodDef|PyCFunctionObject|PyCMethodObject|PyMethodDescrObject|PyMethodDescr_Type"
                r"|PyCFunction_Type|ml_meth|m_ml|d_method|\w*vectorcall\w*|tp_call|PyCFunction_GET_FUNCTION"
                r"|PyCFunction_GetFunction)\b"),
     "timer-patching", "Python C-API function internals: rewriting them replaces the clock's C code behind the same object"),
    (re.compile(r"\b(?:mprotect|pkey_mprotect|PROT_EXEC)\b"),
     "timer-patching", "changes memory protection, so machine code (the clock, CUDA events) can be rewritten"),
    (re.compile(r"\b(?:dlsym|dlvsym|dlopen|RTLD_NEXT|RTLD_DEFAULT)\b|\bLD_PRELOAD\b"),
     "timer-patching", "looks up or interposes native functions by name (the clock, the CUDA runtime or driver)"),
    (re.compile(r"/proc/[\w%{}]+/mem\b|\b(?:ptrace|PTRACE_\w+|process_vm_writev|process_vm_readv|prctl|PR_SET_DUMPABLE)\b"),
     "harness-introspection", "reads or writes process memory, or hides the process from the judge's audit"),
)
# The scorer's clock named inside native source (a C++ lookup of the function it then rewrites).
_NATIVE_CLOCK_NAMES = re.compile(r"\b(?:perf_counter(?:_ns)?|monotonic(?:_ns)?|elapsed_time|_cuda_synchronize|_CudaEventBase"
                                 r"|clock_gettime|cudaEventElapsedTime\w*|cuEventElapsedTime\w*)\b")
_C_LIKE = re.compile(r"#\s*include|__global__|TORCH_LIBRARY|PYBIND11_MODULE|torch::Tensor|at::Tensor|PyObject|\bPy_\w+"
                     r"|extern\s+\"C\"|#\s*define|\bstatic\s+[\w:<>]+[\s*&]+\w+\s*\(")


@dataclass
class _Func:
    """A function, method or lambda body, with where it lives."""

    node: ast.AST
    qualname: str
    cls: str | None
    name: str
    jit: bool = False
    deferred: bool = False  # a lambda or nested function: runs later, wherever it is written
    in_main_guard: bool = False


@dataclass
class _Module:
    aliases: dict[str, str] = field(default_factory=dict)
    funcs: list[_Func] = field(default_factory=list)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    # self.<attr> -> the torch.nn compute module it holds (from an assignment in any method).
    nn_attrs: dict[str, tuple[str, int]] = field(default_factory=dict)
    # self.<attr> -> a local class instantiated into it.
    local_attrs: dict[str, str] = field(default_factory=dict)


_SHAPE_ATTRS = frozenset({"shape", "ndim"})
_SHAPE_METHODS = frozenset({"size", "stride", "numel", "dim", "element_size"})


def _only_shape_metadata(call: ast.Call) -> bool:
    """Every argument of the call is made of sizes: constants, `.shape`, `.size()`, `len(...)`."""
    def sized(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool) or node.value is None
        if isinstance(node, ast.Attribute):
            return node.attr in _SHAPE_ATTRS
        if isinstance(node, ast.Subscript):
            return sized(node.value)
        if isinstance(node, ast.Call) and not node.keywords:
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _SHAPE_METHODS:
                return all(sized(a) for a in node.args)
            return isinstance(f, ast.Name) and f.id == "len"
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(sized(e) for e in node.elts)
        if isinstance(node, ast.Starred):
            return sized(node.value)
        if isinstance(node, ast.BinOp):
            return sized(node.left) and sized(node.right)
        if isinstance(node, ast.UnaryOp):
            return sized(node.operand)
        return False
    args = list(call.args) + [k.value for k in call.keywords]
    return bool(args) and all(sized(a) for a in args)


def analyze_source(source: str, filename: str, policy: LibraryPolicy,
                   task_dtype: str | None = None) -> list[Finding]:
    """All static findings for one solution file. `task_dtype` (an extension of the hook's
    signature, optional) silences precision flags when the task itself is half precision."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError:
        # Not ours to report: the worker's import fails and the verdict is compile_error.
        return []
    analyzer = _Analyzer(tree, filename, policy, task_dtype)
    return analyzer.run()


class _Analyzer:
    def __init__(self, tree: ast.Module, filename: str, policy: LibraryPolicy,
                 task_dtype: str | None) -> None:
        self.tree = tree
        self.file = filename.rsplit("/", 1)[-1]
        self.policy = policy
        self.check_precision = (task_dtype or "float32") not in ("float16", "bfloat16", "half")
        self.mod = _Module()
        self.findings: dict[tuple[str, int, str], Finding] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        self._host_only: dict[ast.AST, set[ast.AST]] = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    # --- plumbing --------------------------------------------------------------------------

    def add(self, pattern: str, node: ast.AST, what: str, why: str, severity: Severity = "reject") -> None:
        line = getattr(node, "lineno", 0)
        key = (pattern, line, what)
        if key not in self.findings:
            self.findings[key] = Finding(pattern, f"{self.file}:{line}: {what} — {why}", severity)

    def run(self) -> list[Finding]:
        self.collect_aliases()
        self.collect_functions()
        self.collect_module_attrs()
        reachable = self.reachable()
        self.scan_integrity()
        self.scan_class_bases()
        for fn in self.mod.funcs:
            if fn.in_main_guard:
                continue
            if fn.jit:
                self.scan_precision(fn.node, jit=True)
                continue
            if fn.qualname in reachable or fn.deferred:
                self.scan_compute(fn, via=reachable.get(fn.qualname, "deferred code"))
                self.scan_precision(fn.node, jit=False)
            else:  # __init__ and other init-time code: may compute, may not store ops for later
                self.scan_stored_ops(fn.node, fn.qualname)
        self.scan_stored_ops(self.tree, "module level", top_level_only=True)
        self.scan_streams([fn for fn in self.mod.funcs if fn.qualname in reachable or fn.deferred])
        self.scan_cpp_strings()
        return list(self.findings.values())

    # --- names ---------------------------------------------------------------------------------

    def collect_aliases(self) -> None:
        aliases = self.mod.aliases
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        aliases.setdefault(top, top)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    if a.name != "*":
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        # `mm = torch.matmul` style aliases, to a fixed point (aliases of aliases).
        for _ in range(3):
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    target = node.targets[0].id
                    resolved = self.resolve(node.value)
                    if resolved and target not in aliases:
                        aliases[target] = resolved

    def resolve(self, node: ast.AST | None) -> str | None:
        """Dotted name an expression refers to, or None when it is not a module path."""
        if isinstance(node, ast.Name):
            return self.mod.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) >= 2 and node.func.id not in self.mod.aliases:
            base = self.resolve(node.args[0])
            attr = _fold_str(node.args[1])
            if base and attr:
                return f"{base}.{attr}"
        if isinstance(node, ast.Subscript) and self.resolve(node.value) == _SYS_MODULES:
            return _fold_str(node.slice)
        if isinstance(node, ast.Call) and node.args and (
                self.resolve(node.func) == "importlib.import_module"
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")):
            return _fold_str(node.args[0])
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "__dict__":
            base = self.resolve(node.value.value)
            key = _fold_str(node.slice)
            if base and key:
                return f"{base}.{key}"
        return None

    # --- structure -----------------------------------------------------------------------------

    def collect_functions(self) -> None:
        def visit(body: Iterable[ast.AST], cls: str | None, prefix: str, enclosing: _Func | None,
                  main_guard: bool) -> None:
            for stmt in body:
                if isinstance(stmt, ast.ClassDef):
                    if enclosing is None:
                        self.mod.classes[stmt.name] = stmt
                    visit(stmt.body, stmt.name, f"{prefix}{stmt.name}.", enclosing, main_guard)
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    fn = _Func(stmt, f"{prefix}{stmt.name}", cls if enclosing is None else None,
                               stmt.name, jit=self.is_jit(stmt), deferred=enclosing is not None,
                               in_main_guard=main_guard)
                    self.mod.funcs.append(fn)
                    visit(stmt.body, None, f"{fn.qualname}.", fn, main_guard)
                    for lam in _own_lambdas(stmt):
                        self.mod.funcs.append(_Func(lam, f"{fn.qualname}.<lambda:{lam.lineno}>",
                                                    None, "<lambda>", deferred=True,
                                                    in_main_guard=main_guard))
                elif isinstance(stmt, ast.If) and _is_main_guard(stmt):
                    visit(stmt.body, cls, prefix, enclosing, True)
                    visit(stmt.orelse, cls, prefix, enclosing, main_guard)
                else:
                    if enclosing is None:
                        for lam in (n for n in ast.walk(stmt) if isinstance(n, ast.Lambda)):
                            self.mod.funcs.append(_Func(lam, f"{prefix}<lambda:{lam.lineno}>", None,
                                                        "<lambda>", deferred=True,
                                                        in_main_guard=main_guard))
                    for child_body in _sub_bodies(stmt):
                        visit(child_body, cls, prefix, enclosing, main_guard)

        visit(self.tree.body, None, "", None, False)

    def is_jit(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        for dec in fn.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            name = self.resolve(target) or ""
            if name.startswith("triton.") or name.startswith("numba.cuda.jit") or name.startswith("cupy."):
                if not name.startswith("triton.testing"):
                    return True
        return False

    def collect_module_attrs(self) -> None:
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self"):
                    continue
                held = self.nn_compute_module(node.value)
                if held:
                    self.mod.nn_attrs[target.attr] = (held, node.lineno)
                elif isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                        and node.value.func.id in self.mod.classes:
                    self.mod.local_attrs[target.attr] = node.value.func.id

    def nn_compute_module(self, value: ast.AST) -> str | None:
        """The torch.nn compute module an expression constructs (containers included)."""
        if not isinstance(value, ast.Call):
            return None
        name = self.resolve(value.func)
        if not name:
            return None
        if name in _NN_CONTAINERS:
            for inner in ast.walk(value):
                if inner is not value and isinstance(inner, ast.Call):
                    held = self.nn_compute_module(inner)
                    if held:
                        return f"{name}({held})"
            return None
        if name.startswith("torch.nn.") and not name.startswith("torch.nn.functional.") \
                and self.is_denied(name):
            return name
        return None

    def reachable(self) -> dict[str, str]:
        """Forward-time functions -> how they were reached (for the evidence)."""
        by_name: dict[str, list[_Func]] = {}
        for fn in self.mod.funcs:
            by_name.setdefault(fn.name, []).append(fn)
        main_classes = {"ModelNew"} if "ModelNew" in self.mod.classes else set(self.mod.classes)
        roots = [fn for fn in self.mod.funcs
                 if fn.cls in main_classes and fn.name in _ROOT_METHODS]
        # A local function stored as a value (`self.fn = self._impl`, a callback) runs later.
        value_refs = self.value_referenced_names()
        roots += [fn for fn in self.mod.funcs
                  if fn.name in value_refs and fn not in roots and not fn.jit and fn.name != "__init__"]
        seen: dict[str, str] = {fn.qualname: f"{fn.qualname}" for fn in roots}
        stack = list(roots)
        while stack:
            fn = stack.pop()
            for ref in self.referenced_names(fn.node):
                targets = list(by_name.get(ref, []))
                # Using a local class at forward time can run any of its methods (dunders,
                # autograd.Function.apply, properties), so all of them become reachable.
                cls = ref if ref in self.mod.classes else self.mod.local_attrs.get(ref)
                if cls:
                    targets += [f for f in self.mod.funcs if f.cls == cls]
                for target in targets:
                    if target.qualname not in seen and not target.jit:
                        seen[target.qualname] = f"{seen[fn.qualname]} -> {target.qualname}"
                        stack.append(target)
        return seen

    def value_referenced_names(self) -> set[str]:
        names: set[str] = set()
        for sub in ast.walk(self.tree):
            if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Load):
                parent = self.parents.get(sub)
                if isinstance(parent, ast.Call) and parent.func is sub:
                    continue
                if isinstance(parent, ast.Attribute) or self.in_decorator(sub):
                    continue
                names.add(sub.id if isinstance(sub, ast.Name) else sub.attr)
        return names

    def host_only(self, fn: ast.AST) -> set[ast.AST]:
        """`_host_only_nodes`, once per function (reachability and the compute scan both ask)."""
        if fn not in self._host_only:
            self._host_only[fn] = _host_only_nodes(fn)
        return self._host_only[fn]

    def referenced_names(self, node: ast.AST) -> set[str]:
        names: set[str] = set()
        skip = self.host_only(node)
        for sub in _walk_own(node):
            if sub in skip:
                continue
            if isinstance(sub, ast.Name):
                names.add(sub.id)
            elif isinstance(sub, ast.Attribute):
                names.add(sub.attr)
        return names

    # --- baseline-library-call / try-fallback -----------------------------------------------------

    def is_denied(self, name: str) -> bool:
        verdict = _policy_verdict(name, self.policy)
        if verdict is not None:
            return verdict
        if name.startswith("triton.") or name.startswith("tl."):
            return False
        if name.startswith("torch."):
            if any(name.startswith(p) for p in _TORCH_DENY_OVERRIDES):
                return True
            if any(name.startswith(p) for p in _TORCH_OPS_DENIED):
                return True
            if name.startswith("torch.ops."):
                return False
            if any(name.startswith(p) or name == p.rstrip(".") for p in _TORCH_GLUE_PREFIXES):
                return False
            parts = name.split(".")
            if name.startswith("torch.nn.functional."):
                return parts[-1] not in _FUNCTIONAL_GLUE
            if name.startswith("torch.Tensor.") or name.startswith("torch.tensor."):
                return parts[-1] in _TENSOR_COMPUTE_METHODS
            if len(parts) == 2:
                if parts[1] in _TORCH_GLUE or parts[1][0].isupper() and parts[1] != "Tensor" and parts[1].endswith("Tensor"):
                    return False
                # dtypes and constants are not calls; judged only when called (see scan_compute)
                return True
            if name.startswith("torch.nn.") and len(parts) == 3:
                return parts[2][:1].isupper()  # nn.Linear, nn.Conv2d, nn.Softmax ... (modules)
            return True
        if name.startswith("numpy."):
            return name.split(".")[-1] in _NUMPY_COMPUTE or any(name.startswith(p) for p in _OTHER_COMPUTE_PREFIXES)
        return name in _OTHER_DENIED or any(name.startswith(p) for p in _OTHER_COMPUTE_PREFIXES)

    def denied_ref(self, node: ast.AST) -> str | None:
        """The denied op an expression names (a call's callee or a bare reference), if any."""
        name = self.resolve(node)
        if name and self.is_denied(name) and not _is_dtype_like(name) and _callable_or_unknown(name):
            return name
        return None

    def is_reference_model(self, node: ast.AST) -> bool:
        """`Model` that is not a class of this file: the task's reference, however imported."""
        if isinstance(node, ast.Name) and node.id == "Model":
            return "Model" not in self.mod.classes
        if isinstance(node, ast.Attribute) and node.attr == "Model":
            name = self.resolve(node)
            return name is None or not name.startswith(("torch.", "triton."))
        return False

    def scan_compute(self, fn: _Func, via: str) -> None:
        handler_nodes = _handler_nodes(fn.node)
        host_only = self.host_only(fn.node)
        for sub in _walk_own(fn.node):
            if sub in host_only:
                continue
            hit: str | None = None
            node: ast.AST = sub
            if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Load) \
                    and self.is_reference_model(sub):
                hit = "Model (the task's reference)"
            elif isinstance(sub, ast.Call):
                callee = sub.func
                hit = self.denied_ref(callee)
                if hit and hit.startswith("numpy.") and _only_shape_metadata(sub):
                    hit = None  # np.prod(x.shape): host arithmetic on sizes, not the task's data
                if hit is None and isinstance(callee, ast.Attribute) and self.resolve(callee) is None:
                    method = callee.attr
                    receiver_attr = callee.value.attr if isinstance(callee.value, ast.Attribute) else None
                    if isinstance(callee.value, ast.Name) and callee.value.id == "self" \
                            and method in self.mod.nn_attrs:
                        hit = f"self.{method}(...) ({self.mod.nn_attrs[method][0]})"
                    elif method in _TENSOR_COMPUTE_METHODS and _policy_verdict(f"torch.Tensor.{method}", self.policy) is not False:
                        hit = f"<tensor>.{method}()"
                    elif method in ("forward", "__call__", "_call_impl") and receiver_attr in self.mod.nn_attrs:
                        hit = f"self.{receiver_attr}.{method}() ({self.mod.nn_attrs[receiver_attr][0]})"
                    elif _policy_verdict(f"torch.Tensor.{method}", self.policy) is True:
                        hit = f"<tensor>.{method}()"
                if hit is None:
                    hit = self.name_caller_hit(sub)
                if hit is None and isinstance(callee, ast.Name) and callee.id == "getattr" and len(sub.args) >= 2:
                    base = self.resolve(sub.args[0])
                    attr = _fold_str(sub.args[1])
                    if base and base.startswith("torch") and attr is None:
                        hit = f"getattr({base}, <computed name>)"
                    elif base is None and attr in _TENSOR_COMPUTE_METHODS:
                        hit = f"getattr(<tensor>, {attr!r})"
            elif isinstance(sub, (ast.Attribute, ast.Name)) and isinstance(sub.ctx, ast.Load):
                parent = self.parents.get(sub)
                if isinstance(parent, ast.Call) and parent.func is sub:
                    continue  # judged as a call above
                if isinstance(parent, ast.Attribute):
                    continue  # only the outermost dotted name is judged
                hit = self.denied_ref(sub)
                if hit is None and isinstance(sub, ast.Attribute) and sub.attr in _TENSOR_METHOD_VALUES \
                        and self.resolve(sub) is None:
                    hit = f"<tensor>.{sub.attr} (bound compute method)"
                if hit is None and isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                        and sub.value.id == "self" and sub.attr in self.mod.nn_attrs:
                    hit = f"self.{sub.attr} ({self.mod.nn_attrs[sub.attr][0]})"
            elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult):
                hit = "@ (matmul operator)"
            elif isinstance(sub, ast.AugAssign) and isinstance(sub.op, ast.MatMult):
                hit = "@= (matmul operator)"
            if hit is None:
                continue
            if sub in handler_nodes:
                self.add("try-fallback", node, hit,
                         f"library/reference compute in an except/finally path of {fn.qualname}; a "
                         f"failing kernel must fail, not fall back")
            else:
                self.add("baseline-library-call", node, hit,
                         f"library compute at forward time (reached via {via}); write it as a kernel")
        # calling a local copy of the reference Model class
        for sub in _walk_own(fn.node):
            if isinstance(sub, ast.Name) and sub.id == "Model" and "Model" in self.mod.classes \
                    and fn.cls != "Model":
                pattern = "try-fallback" if sub in handler_nodes else "baseline-library-call"
                self.add(pattern, sub, "Model", f"uses the reference Model class at forward time (via {via})")

    def scan_stored_ops(self, root: ast.AST, where: str, top_level_only: bool = False) -> None:
        """Initialisation code may call compute ops, but a compute op stored as a value (alias in a
        dict, default argument, attribute) is run later by forward, outside our reachability."""
        nodes: Iterable[ast.AST]
        if top_level_only:
            nodes = _walk_module_level(self.tree)
        else:
            nodes = _walk_own(root)
        for sub in nodes:
            if isinstance(sub, ast.Call) and (named := self.name_caller_hit(sub)):
                self.add("baseline-library-call", sub, named,
                         f"compute method wrapped as a callable in {where}, where forward can call it later")
                continue
            if not (isinstance(sub, (ast.Attribute, ast.Name)) and isinstance(sub.ctx, ast.Load)):
                continue
            parent = self.parents.get(sub)
            if isinstance(parent, ast.Attribute) or (isinstance(parent, ast.Call) and parent.func is sub):
                continue
            if isinstance(parent, ast.Assign) and top_level_only and all(isinstance(t, ast.Name) for t in parent.targets):
                continue  # a plain alias: followed by name resolution instead
            if isinstance(parent, (ast.ImportFrom, ast.Import)):
                continue
            if self.in_decorator(sub):
                name = self.resolve(sub) or ""
                if not name.startswith(("torch.compile", "torch.jit", "torch._dynamo")):
                    continue
            hit = self.denied_ref(sub)
            if hit and not self.resolve_is_module_class(hit):
                self.add("baseline-library-call", sub, hit,
                         f"compute op stored as a value in {where}, where forward can call it later")

    def name_caller_hit(self, call: ast.Call) -> str | None:
        """`operator.methodcaller("sigmoid")`: a compute method reached through its name string."""
        caller = self.resolve(call.func)
        if caller not in _NAME_CALLERS or not call.args:
            return None
        named = _fold_str(call.args[0])
        if named is not None and named.split(".")[0] in _TENSOR_COMPUTE_METHODS:
            return f"{caller}({named!r})"
        return None

    def in_decorator(self, node: ast.AST) -> bool:
        cur = node
        while cur in self.parents:
            parent = self.parents[cur]
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return cur in parent.decorator_list
            cur = parent
        return False

    @staticmethod
    def resolve_is_module_class(name: str) -> bool:
        # nn.Linear referenced as a type (isinstance checks, annotations) is not a stored op.
        last = name.split(".")[-1]
        return name.startswith("torch.nn.") and last[:1].isupper() and not name.startswith("torch.nn.functional")

    def scan_class_bases(self) -> None:
        for cls in self.mod.classes.values():
            for base in cls.bases:
                name = self.resolve(base)
                if isinstance(base, ast.Name) and base.id == "Model" and "Model" not in self.mod.classes:
                    self.add("baseline-library-call", base, f"class {cls.name}(Model)",
                             "inherits the task's reference Model")
                elif name and name.startswith("torch.nn.") and self.is_denied(name):
                    self.add("baseline-library-call", base, f"class {cls.name}({name})",
                             "inherits a torch.nn compute module")

    # --- precision ---------------------------------------------------------------------------------

    def compared_only(self, node: ast.AST) -> bool:
        """`x.dtype == torch.float16`, `x.dtype in (torch.float16, ...)`: a dtype test computes nothing."""
        parent = self.parents.get(node)
        while isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
            node, parent = parent, self.parents.get(parent)
        return isinstance(parent, ast.Compare)

    def scan_precision(self, root: ast.AST, jit: bool) -> None:
        if not self.check_precision:
            return
        for sub in _walk_own(root):
            what = None
            if isinstance(sub, ast.Attribute) and sub.attr in _HALF_NAMES and not self.compared_only(sub):
                name = self.resolve(sub) or ""
                if name.startswith(("torch.", "triton.", "numpy.")):
                    what = name
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                    and sub.func.attr in _HALF_METHODS and not sub.args and self.resolve(sub.func) is None:
                what = f".{sub.func.attr}()"
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in ("fp16", "bf16", "float16", "bfloat16", "fp8"):
                parent = self.parents.get(sub)
                if isinstance(parent, ast.keyword) or isinstance(parent, ast.Call):
                    what = repr(sub.value)
            if what:
                self.add("precision-downgrade", sub, what,
                         "reduced-precision type in " + ("a Triton kernel" if jit else "forward-time code")
                         + "; flagged for audit, the dynamic error check decides", severity="flag")

    # --- integrity: threads, patching, introspection ------------------------------------------------

    def scan_integrity(self) -> None:
        for sub in ast.walk(self.tree):
            switch = (sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(sub, ast.Name)
                      else sub.value if isinstance(sub, ast.Constant) and isinstance(sub.value, str) else None)
            if switch in _MODE_STACK_SWITCHES:
                self.add("harness-introspection", sub, str(switch),
                         "switches off or edits torch's function-mode stack, where the library-call monitor runs")
                continue
            if isinstance(sub, ast.Import):
                for a in sub.names:
                    self.judge_import(sub, a.name)
            elif isinstance(sub, ast.ImportFrom):
                if sub.level:
                    self.add("harness-introspection", sub, f"from {'.' * sub.level}{sub.module or ''} import …",
                             "relative import reaches the scorer's or task's package")
                elif sub.module:
                    self.judge_import(sub, sub.module)
            elif isinstance(sub, ast.Call):
                self.judge_call(sub)
            elif isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = sub.targets if isinstance(sub, (ast.Assign, ast.Delete)) else [sub.target]
                for target in targets:
                    for t in _flatten_targets(target):
                        self.judge_patch_target(t)
            elif isinstance(sub, ast.Attribute) and sub.attr in _INTROSPECTION_ATTRS:
                # obj.__dict__ on the kernel's own objects is ordinary Python; on a module it is a
                # back door around attribute patching checks.
                if sub.attr == "__dict__" and self.resolve(sub.value) is None:
                    continue
                self.add("harness-introspection", sub, f".{sub.attr}",
                         "reaches frames, globals or class internals of code that is not the kernel")
            elif isinstance(sub, (ast.Attribute, ast.Name)) and isinstance(sub.ctx, ast.Load) \
                    and self.resolve(sub) in (_SYS_MODULES, "sys._getframe", "sys._current_frames"):
                self.add("harness-introspection", sub, str(self.resolve(sub)),
                         "walks the interpreter's modules or frames (the scorer, the task)")
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                if re.search(r"/proc/(self|\d+|thread-self)|/dev/(fd|mem)|\bscorer[/.](?:worker|judge|timing)", sub.value):
                    self.add("harness-introspection", sub, repr(sub.value[:60]),
                             "names process internals or the scorer's files")
            elif isinstance(sub, ast.Name) and sub.id in ("__builtins__", "__loader__", "__spec__"):
                self.add("harness-introspection", sub, sub.id, "reaches the interpreter's module machinery")

    def judge_import(self, node: ast.AST, module: str) -> None:
        top = module.split(".")[0]
        if any(module == m or module.startswith(m + ".") for m in _THREAD_MODULES):
            self.add("thread-injection", node, f"import {module}",
                     "threads/processes can do work outside the timed region")
            return
        if module in ("os.fork", "os.system", "os.popen") or module.startswith(("os.exec", "os.spawn")):
            self.add("thread-injection", node, f"import {module}", "spawns processes")
            return
        if top in _INTROSPECTION_MODULES and top not in _INTROSPECTION_IMPORT_OK:
            if top in ("ctypes", "_ctypes"):
                self.add("harness-introspection", node, f"import {module}",
                         "ctypes gives raw memory and native-library access (use load_inline for native code)")
            else:
                self.add("harness-introspection", node, f"import {module}",
                         "this module exists to inspect or reach the harness")
            return

    def judge_call(self, call: ast.Call) -> None:
        name = self.resolve(call.func)
        raw = call.func.id if isinstance(call.func, ast.Name) else None
        if name:
            if name in _THREAD_CALLS or name.startswith(_THREAD_CALL_PREFIXES):
                self.add("thread-injection", call, f"{name}()", "runs work concurrently or in another process")
                return
            if name in _INTROSPECTION_CALLS:
                self.add("harness-introspection", call, f"{name}()",
                         "reads frames, file descriptors or files outside the kernel")
                return
            if name.startswith(("ctypes.", "_ctypes.")):
                lib = " ".join(_fold_str(a) or "" for a in call.args)
                pattern = "baseline-library-call" if re.search(r"cublas|cudnn|rocblas|miopen|hipblas", lib) else "harness-introspection"
                self.add(pattern, call, f"{name}({lib!r})" if lib else f"{name}()",
                         "native library/memory access through ctypes")
                return
        if (raw == "__import__" or name == "importlib.import_module") and call.args:
            target = _fold_str(call.args[0])
            if target:
                self.judge_import(call, target)
        if raw in _INTROSPECTION_BUILTINS and raw not in self.mod.aliases and not self.locally_defined(raw):
            self.add("harness-introspection", call, f"{raw}()",
                     "reads files or runs code hidden from static analysis")
            return
        if raw in ("setattr", "delattr") or name in ("object.__setattr__", "type.__setattr__", "builtins.setattr"):
            target = call.args[0] if call.args else None
            tname = self.resolve(target) if target is not None else None
            if tname and not tname.startswith(_PATCH_OK_PREFIXES):
                attr = _fold_str(call.args[1]) if len(call.args) > 1 else None
                self.add("timer-patching", call, f"{raw or name}({tname}, {attr or '…'!s})",
                         "monkeypatches a module the scorer or the reference relies on")
            return
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("__setattr__", "__delattr__"):
            # `time.__setattr__("perf_counter", f)`: the bound spelling of setattr(time, ...)
            tname = self.resolve(call.func.value)
            if tname and not tname.startswith(_PATCH_OK_PREFIXES):
                attr = _fold_str(call.args[0]) if call.args else None
                self.add("timer-patching", call, f"{tname}.{call.func.attr}({attr or '…'!s})",
                         "monkeypatches a module the scorer or the reference relies on")
                return
        if isinstance(call.func, ast.Attribute) and call.func.attr in _FILE_METHODS and name is None:
            self.add("harness-introspection", call, f".{call.func.attr}()", "reads or writes files")
            return
        if isinstance(call.func, ast.Attribute) and call.func.attr in _THREAD_METHODS:
            self.add("thread-injection", call, f".{call.func.attr}()", "runs work on an executor thread")
            return
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("update", "__setitem__", "setdefault") \
                and isinstance(call.func.value, ast.Attribute) and call.func.value.attr == "__dict__":
            base = self.resolve(call.func.value.value)
            if base:
                self.add("timer-patching", call, f"{base}.__dict__.{call.func.attr}()", "monkeypatches a module")

    def locally_defined(self, name: str) -> bool:
        return any(f.name == name for f in self.mod.funcs) or name in self.mod.classes

    def judge_patch_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            name = self.resolve(target)
            if name and name.startswith(_TIMER_TARGETS) and not name.startswith(_PATCH_OK_PREFIXES):
                self.add("timer-patching", target, f"{name} = …",
                         "replaces a library/timer attribute the scorer or the reference uses")
        elif isinstance(target, ast.Subscript):
            base = target.value
            if isinstance(base, ast.Attribute) and base.attr == "__dict__":
                name = self.resolve(base.value)
                if name:
                    self.add("timer-patching", target, f"{name}.__dict__[…] = …", "monkeypatches a module")
            elif isinstance(base, ast.Name) and base.id == "__builtins__":
                self.add("timer-patching", target, "__builtins__[…] = …", "monkeypatches builtins")
            elif self.resolve(base) == _SYS_MODULES:
                self.add("harness-introspection", target, "sys.modules[…] = …", "replaces a loaded module")

    # --- streams ---------------------------------------------------------------------------------

    def scan_streams(self, funcs: list[_Func]) -> None:
        """Launching on another stream is fine when forward-time code joins it back (wait_stream,
        wait_event, a synchronize); without any join the caller's stream, and a timer recording
        events on it, does not see the work."""
        switches: list[tuple[ast.AST, str]] = []
        joined = False
        for fn in funcs:
            for sub in _walk_own(fn.node):
                if not isinstance(sub, ast.Call):
                    continue
                name = self.resolve(sub.func) or ""
                method = sub.func.attr if isinstance(sub.func, ast.Attribute) else ""
                if name in _STREAM_SWITCHES:
                    switches.append((sub, name))
                if name in _STREAM_JOINS or method in _STREAM_JOIN_METHODS:
                    joined = True
        if switches and not joined:
            for node, name in switches:
                self.add("stream-injection", node, f"{name}(...)",
                         "work goes to another stream and no forward-time code joins it back "
                         "(wait_stream / wait_event / synchronize)")

    # --- CUDA C++ --------------------------------------------------------------------------------

    def scan_cpp_strings(self) -> None:
        self.scan_native_tampering()
        for sub in ast.walk(self.tree):
            if not (isinstance(sub, ast.Constant) and isinstance(sub.value, str) and len(sub.value) > 20):
                continue
            if not _CPP_MARKERS.search(sub.value):
                continue
            text = _strip_cpp_comments(sub.value)
            for m in _CPP_THREADS.finditer(text):
                line = sub.lineno + text.count("\n", 0, m.start())
                self.add("thread-injection", ast.Constant(value=None, lineno=line), f"C++ {m.group(0).strip()}",
                         "host threads or callbacks run work outside the timed region")
            side = _CPP_SIDE_STREAM.search(text)
            if side and not _CPP_STREAM_JOIN.search(text):
                line = sub.lineno + text.count("\n", 0, side.start())
                self.add("stream-injection", ast.Constant(value=None, lineno=line), f"C++ {side.group(0).strip()}",
                         "launches on its own stream and never waits for it")
            for m in _CPP_LIBRARY_CALL.finditer(text):
                line = sub.lineno + text.count("\n", 0, m.start())
                snippet = m.group(0).strip()
                if re.match(r"(?:at|torch)::_(?:\w+)", snippet) and not re.match(r"(?:at|torch)::_scaled_mm", snippet):
                    continue  # private helpers like at::_ops are too broad to judge by name
                pattern = "baseline-library-call"
                key_node = ast.Constant(value=None, lineno=line)
                self.add(pattern, key_node, f"C++ {snippet}",
                         "library compute (ATen/cuBLAS/cuDNN) inside an extension; write the kernel")


    def native_source_nodes(self) -> set[ast.AST]:
        """Expressions passed as load_inline/load sources (directly or through a module-level name)."""
        assigned: dict[str, list[ast.AST]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        assigned.setdefault(t.id, []).append(node.value)
        out: set[ast.AST] = set()
        for call in ast.walk(self.tree):
            if not isinstance(call, ast.Call):
                continue
            name = self.resolve(call.func) or ""
            if not name.rsplit(".", 1)[-1] in ("load_inline", "load_cpp_inline"):
                continue
            args = list(call.args[1:3]) + [k.value for k in call.keywords if k.arg in ("cpp_sources", "cuda_sources")]
            for a in args:
                for v in [a] + assigned.get(a.id, []) if isinstance(a, ast.Name) else [a]:
                    out.update(e for e in ast.walk(v) if isinstance(e, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call)))
        return out

    def scan_native_tampering(self) -> None:
        native = self.native_source_nodes()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            elif isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Call)) and \
                    not isinstance(self.parents.get(node), (ast.BinOp, ast.JoinedStr)):
                text = _fold_str(node)  # "ml_" + "meth": the pieces alone name nothing
                if text is None or isinstance(node, ast.Call) and text == "":
                    continue
            else:
                continue
            c_like = node in native or bool(_C_LIKE.search(text))
            code = _strip_cpp_comments(text) if c_like else text
            checks = list(_NATIVE_TAMPER)
            if c_like:
                checks.append((_NATIVE_CLOCK_NAMES, "timer-patching",
                               "native code that names the scorer's clock (to look it up and rewrite it)"))
            for regex, pattern, why in checks:  # one finding per string and kind, naming every token
                hits = list(regex.finditer(code))
                if hits:
                    line = getattr(node, "lineno", 0) + code.count("\n", 0, hits[0].start())
                    tokens = ", ".join(dict.fromkeys(m.group(0) for m in hits))
                    self.add(pattern, ast.Constant(value=None, lineno=line), f"native source naming {tokens}", why)

# --- helpers ------------------------------------------------------------------------------------

def _fold_str(node: ast.AST | None) -> str | None:
    """Constant-fold string expressions ("mat" + "mul", f"{'mat'}mul", "".join([...]))."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold_str(node.left), _fold_str(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and _fold_str(v.value) is not None:
                parts.append(_fold_str(v.value))
            else:
                return None
        return "".join(parts)  # type: ignore[arg-type]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
        sep = _fold_str(node.func.value)
        items = [_fold_str(e) for e in node.args[0].elts]
        if sep is not None and all(i is not None for i in items):
            return sep.join(items)  # type: ignore[arg-type]
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        base = _fold_str(node.value)
        s = node.slice
        bounds = [None if b is None else (b.value if isinstance(b, ast.Constant) and isinstance(b.value, int) else "x")
                  for b in (s.lower, s.upper, s.step)]
        if base is not None and "x" not in bounds:
            return base[slice(*bounds)]  # type: ignore[arg-type]
    return None


def is_denied_name(name: str, policy: LibraryPolicy | None = None) -> bool:
    """The static rule for one dotted name (used by the run-time library-call monitor)."""
    analyzer = _Analyzer(ast.Module(body=[], type_ignores=[]), "kernel.py", policy or LibraryPolicy(), None)
    return analyzer.is_denied(name) and _callable_or_unknown(name)


def _policy_verdict(name: str, policy: LibraryPolicy) -> bool | None:
    """True (denied) / False (allowed) by the suite's policy; the longest matching entry wins."""
    best: tuple[int, bool] | None = None
    for entry, denied in [(e, False) for e in policy.allow] + [(e, True) for e in policy.deny]:
        if name == entry or name.startswith(entry + "."):
            if best is None or len(entry) > best[0]:
                best = (len(entry), denied)
    return None if best is None else best[1]


def _callable_or_unknown(name: str) -> bool:
    """Look the name up in already-imported libraries: dtypes, constants and submodules are not
    ops. Names that cannot be looked up are judged by the rules alone."""
    parts = name.split(".")
    obj = sys.modules.get(parts[0])
    if obj is None and parts[0] in _LOOKUP_LIBRARIES:
        try:
            obj = importlib.import_module(parts[0])
        except ImportError:
            return True
    if obj is None:
        return True
    try:
        for part in parts[1:]:
            obj = getattr(obj, part)
    except Exception:
        return True
    return callable(obj) and not isinstance(obj, types.ModuleType)


def _is_dtype_like(name: str) -> bool:
    last = name.split(".")[-1]
    return name.startswith("torch.") and (last in _HALF_NAMES or last.startswith(("float", "int", "uint", "bool", "complex", "bfloat", "qint", "quint"))
                                          and name.count(".") == 1)


def _is_main_guard(node: ast.If) -> bool:
    t = node.test
    return isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"


def _sub_bodies(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        body = getattr(stmt, name, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            yield body
    for handler in getattr(stmt, "handlers", []) or []:
        yield handler.body
    for case in getattr(stmt, "cases", []) or []:
        yield case.body


def _walk_own(root: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function body, not descending into nested functions, lambdas or classes
    (those are analysed as functions of their own)."""
    stack: list[ast.AST] = []
    if isinstance(root, ast.Lambda):
        stack.append(root.body)
    elif isinstance(root, (ast.FunctionDef, ast.AsyncFunctionDef)):
        stack.extend(root.body)
        stack.extend(d for d in root.args.defaults + root.args.kw_defaults if d is not None)
    else:
        stack.extend(ast.iter_child_nodes(root))
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    stack.extend(d for d in child.args.defaults + child.args.kw_defaults if d is not None)
                    stack.extend(child.decorator_list)
                continue
            stack.append(child)


def _walk_module_level(tree: ast.Module) -> Iterator[ast.AST]:
    """Module and class-body code (including decorators and default arguments), skipping
    function bodies, lambdas and the `if __name__ == "__main__"` block."""
    stack: list[ast.AST] = [s for s in tree.body if not (isinstance(s, ast.If) and _is_main_guard(s))]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(node.decorator_list)
            stack.extend(d for d in node.args.defaults + node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.Lambda):
            continue
        for child in ast.iter_child_nodes(node):
            stack.append(child)


def _own_lambdas(fn: ast.AST) -> Iterator[ast.Lambda]:
    for node in _walk_own(fn):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Lambda):
                yield child


def _host_only_nodes(fn: ast.AST) -> set[ast.AST]:
    """Nodes of branches that run only when one of the function's own arguments is not on a GPU
    (`if not x.is_cuda: return torch_version(x)`): dead code when scored on a GPU, so a CPU
    fallback there is style, not a library call. Scored on CPU such a branch does run, and the
    runtime library-call monitor reports it. The tested tensor must be an argument not rebound
    before the test (nor in a loop around it), so the kernel cannot point the test at a CPU
    tensor of its own."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    a = fn.args
    params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs} - {"self", "cls"}
    own = list(_walk_own(fn))
    same_device = {id(node.targets[0]) for node in own if _keeps_device(node)}
    stores: dict[str, list[int]] = {}
    for node in own:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in same_device:
            stores.setdefault(node.id, []).append(node.lineno)
    in_loop = {sub for node in own if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) for sub in ast.walk(node)}

    def off_gpu(test: ast.AST, inputs: set[str]) -> bool | None:
        """True: the test holds only off the GPU; False: only on it; None: neither."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = off_gpu(test.operand, inputs)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            return True if all(off_gpu(v, inputs) is True for v in test.values) else None
        if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id in inputs:
            return {"is_cuda": False, "is_cpu": True}.get(test.attr)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right, op = test.left, test.comparators[0], test.ops[0]
            if isinstance(left, ast.Constant):
                left, right = right, left
            on_device_type = (isinstance(left, ast.Attribute) and left.attr == "type"
                              and isinstance(left.value, ast.Attribute) and left.value.attr == "device"
                              and isinstance(left.value.value, ast.Name) and left.value.value.id in inputs)
            if on_device_type and isinstance(right, ast.Constant) and right.value in ("cpu", "cuda") \
                    and isinstance(op, (ast.Eq, ast.NotEq)):
                return (right.value == "cpu") == isinstance(op, ast.Eq)
        return None

    skip: set[ast.AST] = set()
    for node in [fn, *own]:  # _walk_own yields no nested function, so every block here is fn's own
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for i, stmt in enumerate(stmts):
                if not isinstance(stmt, ast.If) or stmt in in_loop:
                    continue
                unbound = {n for n in params if all(line > stmt.lineno for line in stores.get(n, []))}
                side = off_gpu(stmt.test, unbound)
                host = stmt.body if side is True else stmt.orelse if side is False else []
                if side is False and stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                    host = host + stmts[i + 1:]  # `if x.is_cuda: return launch(x)` then the CPU path
                for h in host:
                    skip.update(ast.walk(h))
    return skip


_DEVICE_KEEPING_METHODS = frozenset({"contiguous", "view", "reshape", "flatten", "transpose", "permute",
                                     "squeeze", "unsqueeze", "expand", "detach", "float", "clone", "view_as"})


def _keeps_device(node: ast.AST) -> bool:
    """`x = x.contiguous()` and the like: x stays on its device."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr in _DEVICE_KEEPING_METHODS
            and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == node.targets[0].id)


def _handler_nodes(fn: ast.AST) -> set[ast.AST]:
    """Every node inside an except handler or finally block of this function."""
    inside: set[ast.AST] = set()
    for node in _walk_own(fn):
        if isinstance(node, ast.Try) or (hasattr(ast, "TryStar") and isinstance(node, ast.TryStar)):
            blocks = [h.body for h in node.handlers] + [node.finalbody]
            for block in blocks:
                for stmt in block:
                    for sub in ast.walk(stmt):
                        inside.add(sub)
    return inside


def _flatten_targets(target: ast.AST) -> Iterator[ast.AST]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _flatten_targets(elt)
    else:
        yield target


def _strip_cpp_comments(text: str) -> str:
    # Keep newlines so line numbers in the evidence stay right.
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)

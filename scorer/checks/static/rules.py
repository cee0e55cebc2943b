"""Rule tables: what is glue, what is compute, and the integrity patterns' names."""

from __future__ import annotations

import importlib
import re
import sys
import types

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
    # Keeping torch.compile away from a launch, or asking whether it runs: no work of the task's.
    "torch.compiler.disable", "torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling",
    "torch.compiler.is_exporting", "torch._dynamo.disable", "torch._dynamo.is_compiling",
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
    "module_load", "conj", "resolve_conj", "resolve_neg", "requires_grad",
    "share_memory", "is_leaf", "equal", "any", "all", "sort", "split_", "index",
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
# einops' layout functions are views and copies (rearrange/repeat/pack), not the task's maths.
_OTHER_GLUE = frozenset({"einops.rearrange", "einops.repeat", "einops.pack", "einops.unpack", "einops.parse_shape",
                         "einops.layers.torch.Rearrange"})
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
# What of `threading` starts no thread: locks and thread-locals guard an honest kernel's caches.
# Importing it is judged by the names used (anything else, or the module itself handed around, is
# thread-injection); the run-time guard finds the threads a kernel's code starts however it did.
_THREADING_SAFE = frozenset({"Lock", "RLock", "local", "Event", "Condition", "Semaphore", "BoundedSemaphore",
                             "Barrier", "get_ident", "get_native_id", "current_thread", "main_thread"})
_THREAD_METHODS = frozenset({"run_in_executor", "to_thread"})
_FILE_METHODS = frozenset({"read_text", "read_bytes", "write_text", "write_bytes", "tofile"})

# The interpreter's machinery (gc, inspect, importlib, ctypes, frames, exec, descriptors) is the
# kernel dialect's (dialect.py, obfuscated-code); these reach the scorer, the network or files.
_INTROSPECTION_MODULES = ("traceback", "sysconfig", "urllib", "http", "requests", "scorer", "kernelarena",
                          "orchestrator", "harnesses", "sandbox", "_posixsubprocess", "types", "weakref",
                          "readline")
# `types` and `weakref` are only judged through the calls below; importing them is common.
_INTROSPECTION_IMPORT_OK = frozenset({"types", "weakref", "traceback", "sysconfig"})
_INTROSPECTION_CALLS = frozenset({
    "sys.setswitchinterval", "sys._clear_type_cache", "sys.getrefcount", "sys.exit", "os.chdir", "os.getppid",
    "os.remove", "os.unlink", "os.rename", "os.replace", "os.listdir", "os.scandir", "os.walk",
    "io.open", "io.FileIO", "pathlib.Path.read_text", "pathlib.Path.read_bytes",
    "pathlib.Path.open", "pathlib.Path.write_text", "pathlib.Path.write_bytes", "shutil.copy",
    "weakref.finalize",
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
_INTROSPECTION_BUILTINS = frozenset({"open", "breakpoint", "exit", "quit"})
_SYS_MODULES = "sys.modules"
# torch's switches for its mode stacks and dispatch keys, where the scorer's LibraryCallMonitor sits
# during forward: a kernel has no use for them but to run compute ops unseen.
_MODE_STACK_SWITCHES = frozenset({
    "DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch", "_pop_torch_function_stack",
    "_push_on_torch_function_stack", "_pop_mode", "_pop_mode_temporarily", "_get_current_function_mode_stack",
    "_len_torch_function_stack", "_get_function_stack_at", "_set_torch_function_mode", "_disabled_torch_function_impl",
    "_unset_dispatch_mode", "_pop_torch_dispatch_stack", "_disable_current_modes",
    # the dispatch keys and stack, where the monitor's TorchDispatchMode sees custom ops' bodies
    "_ExcludeDispatchKeyGuard", "ExcludeDispatchKeyGuard", "_IncludeDispatchKeyGuard", "_ForceDispatchKeyGuard",
    "_SetExcludeDispatchKeyGuard", "_PreserveDispatchKeyGuard", "_dispatch_tls_set_dispatch_key_excluded",
    "_dispatch_tls_set_dispatch_key_included", "_push_on_torch_dispatch_stack", "_len_torch_dispatch_stack",
    "_get_dispatch_stack_at", "_set_dispatch_mode", "redispatch", "redispatch_boxed", "_op_dk",
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
# ATen reached past the dispatcher's Python key, where a CPU scoring counts the ATen ops native code
# runs (scorer/checks/aten_work.py): a backend's kernel called directly, a redispatch, the Python key
# or the dispatch-mode stack switched off. No honest extension needs them to compute.
_CPP_DISPATCH_BYPASS = re.compile(
    r"\bat::(?:cpu|native|compositeexplicitautograd|compositeexplicitautogradnonfunctional|"
    r"compositeimplicitautograd)::\w+\s*\(|::redispatch\s*\(|\b(?:Exclude|Include|Force)DispatchKeyGuard\b"
    r"|\btls_set_dispatch_key_(?:excluded|included)\b|\bDispatchKey::Python\w*|\bTorchDispatchModeTLS\b"
    r"|\bDisableTorchDispatch\b")
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
# any of them. A module's own method table (PyMethodDef) is how any C-API extension declares its
# functions, so that name alone is not judged: the fields a rewrite writes are.
_NATIVE_TAMPER = (
    # Not PyMethodDef: every module written against the C API declares its own method table with it.
    (re.compile(r"\b(?:PyCFunctionObject|PyCMethodObject|PyMethodDescrObject|PyMethodDescr_Type"
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
    dtype_prefixes = ("float", "int", "uint", "bool", "complex", "bfloat", "qint", "quint")
    return name.startswith("torch.") and (last in _HALF_NAMES or last.startswith(dtype_prefixes)
                                          and name.count(".") == 1)

"""The operating system's wall around the kernel worker.

A kernel is untrusted code in a process of ours. Checks inside that process catch what it does to
its own results; what it could do to other processes (read the reference worker's memory, stop it
during the baseline, outlive its scoring, plant files for the judge) is made impossible instead.
Before anything of the task or the kernel exists, the kernel worker:

- unshares a PID, mount, network and IPC namespace (and a user namespace where it is not root),
  then forks: the child is PID 1 of the new PID namespace and becomes the worker; the parent only
  waits for it and exits with its status. The kernel sees no other process, so it cannot signal,
  renice or read one; when the child ends, the kernel (Linux) kills every process left in the
  namespace, so nothing the kernel started (double forks, setsid, ignored SIGTERM) outlives it;
- mounts its own /proc (CUDA fails in a PID namespace that still sees the host's /proc), and
  remounts the scorer's checkout, the interpreter's folders and the judge's working directory
  read-only;
- where it runs as root, changes to a uid and gid of its own (one per worker, so two kernels
  cannot reach each other either) and owns only its own folder; the judge's folders (0700) and
  files are out of its reach. An interpreter below a folder closed to other users (pyenv under
  /root) is reached through an empty tmpfs over that folder with only the interpreter bound back;
  where that cannot be done the worker keeps uid 0 with every capability dropped, and says so;
- sets no_new_privs and loads a seccomp filter (libseccomp through `pyseccomp`) that refuses
  ptrace, cross-process memory access, kernel keyrings, BPF, perf events, mounts, namespaces (in
  clone's flags too; clone3, whose flags it cannot read, answers ENOSYS) and module loading;
- covers the folders where the host's Unix sockets live (/run, the judge's freeze servers in the
  lock folder): a socket file is connectable through a read-only mount.

What stays reachable and why: the GPU device nodes (the kernel must run on the GPU), its own
folder, the GPU lock files (the kernel worker takes the shared side itself), and the channel fds to
the judge. Its /dev/shm is a tmpfs of its own (size-capped, gone with the scoring): the outputs
reach the reference worker as CUDA IPC handles, which need no file shared between the two
(scorer/workers/device_share.py). The judge verifies the wall from outside (`inspect`): it reads the
worker's uid, namespaces, no_new_privs and seccomp mode from /proc, so the record in score.json is
not the kernel's word.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_SWITCH = "KERNELARENA_WALL"  # "0" turns the wall off (a host where it breaks the device)
READ_ONLY_ENV = "KERNELARENA_READ_ONLY"  # the folders the judge asks to be remounted read-only
HIDE_ENV = "KERNELARENA_HIDE"  # the judge's temp folder, covered by an empty one inside the wall
LOCK_GLOB = "kernelarena-*.*"  # GPU lock files, where the lock folder is the temp folder itself
_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
# Uids of walled kernels: one per worker (the waiting parent's pid added), far from real users.
UID_BASE = 200_000
FREEZERS = "freezers"  # scorer/gpu/freeze.py's sockets, in the lock folder
SOCKET_FOLDERS = ("/run", "/var/run")
# Refused with EPERM inside the wall: reaching other processes (ptrace, their memory, their fds),
# the kernel's own facilities a sandboxed process never needs, and re-arranging its own namespaces.
DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
    "unshare", "setns", "chroot", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "reboot", "swapon", "swapoff", "syslog", "acct", "quotactl",
    "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex",
)
# Namespace flags clone may not take inside the wall (unshare and setns are refused outright):
# mount, cgroup, UTS, IPC, user, PID and network. clone3 passes its flags in a struct seccomp
# cannot read, so it is refused with ENOSYS, on which glibc and CPython fall back to clone.
_CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
WALLS = ("pid_namespace", "mount_namespace", "network_namespace", "ipc_namespace", "private_files",
         "no_capabilities", "no_new_privs", "seccomp", "descriptors", "private_shm")
_O_PATH = getattr(os, "O_PATH", 0o10000000)

_libc = ctypes.CDLL(None, use_errno=True)


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


def _call(fn: Any, *args: Any) -> None:
    if fn(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _unshare(flags: int) -> None:
    _call(_libc.unshare, ctypes.c_int(flags))


def _mount(source: str | None, target: str, fstype: str | None, flags: int) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _call(_libc.mount, enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), None)


def _prctl(option: int, value: int) -> None:
    _call(_libc.prctl, ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
          ctypes.c_ulong(0))


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _namespaces(as_root: bool) -> tuple[int, list[str]]:
    """Unshares what the host allows; returns the flags in force and one line per refusal."""
    wanted = _CLONE_NEWPID | _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC
    uid, gid = os.getuid(), os.getgid()
    attempts = [wanted] if as_root else [wanted | _CLONE_NEWUSER]
    attempts.append(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | (0 if as_root else _CLONE_NEWUSER))
    problems = []
    for flags in attempts:
        try:
            _unshare(flags)
        except OSError as exc:
            problems.append(f"unshare({flags:#x}) refused: {exc.strerror}")
            continue
        if flags & _CLONE_NEWUSER:
            # The same ids inside: files keep their owners; the namespace gives the capabilities
            # that the mounts below need, over this namespace only.
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        return flags, problems
    return 0, problems


def _wait_and_mirror(child: int) -> None:
    """The parent outside the PID namespace: waits for the worker and ends as it ended."""
    for fd in range(3, _max_fd()):
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        sig = -code
        try:
            if sig not in (signal.SIGKILL, signal.SIGSTOP):  # their handlers cannot be set
                signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        finally:
            os._exit(128 + sig)
    os._exit(code & 0xFF)


def _max_fd() -> int:
    try:
        return max(int(n) for n in os.listdir("/proc/self/fd")) + 1
    except (OSError, ValueError):
        return 1024


def read_only_paths(extra: list[str]) -> list[str]:
    """The judge's list: the scorer's checkout, the interpreter's folders, sys.path and its working
    directory (where a planted `scorer/__init__.py` would be found)."""
    return [str(p) for p in [*extra, sys.prefix, sys.base_prefix, os.getcwd(), *sys.path] if p]


_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")


def _read_only(paths: list[str], files: bool = False, extra_flags: int = 0) -> list[str]:
    done = []
    here = os.path.realpath(os.getcwd()) + os.sep
    for path in dict.fromkeys(os.path.realpath(p) for p in paths if p and (files or os.path.isdir(p))):
        if path == "/" or here.startswith(path.rstrip(os.sep) + os.sep):
            continue  # a folder that holds the worker's own folder stays writable to it
        try:
            _mount(path, path, None, _MS_BIND | _MS_REC)
            _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | extra_flags)
            done.append(path)
        except OSError:
            continue
    return done


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _code_to_keep(paths: list[str], folder: str, own: str) -> list[str]:
    """The code folders (the scorer's checkout, the interpreter's, sys.path) that lie inside the
    hidden folder, outermost only; none that holds the worker's own folder (that would show the
    judge's files again)."""
    inside = sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)
                     and _inside(os.path.realpath(p), folder)}, key=len)
    kept: list[str] = []
    for path in inside:
        if not _inside(own, path) and not any(path == k or _inside(path, k) for k in kept):
            kept.append(path)
    return kept


def _cover(folder: str, mode: int, writable: str | None, code: list[str], files: list[str]) -> None:
    """An empty tmpfs over `folder` (mode `mode`), with only these bound back: `writable`
    read-write, the `code` folders and `files` read-only. Sources are opened before the cover."""
    bound = [(p, os.open(p, _O_PATH | os.O_DIRECTORY), True) for p in code]
    bound += [(p, os.open(p, _O_PATH), False) for p in files]
    keep = os.open(writable, _O_PATH | os.O_DIRECTORY) if writable else None
    try:
        _mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV)
        os.chmod(folder, mode)
        if writable and keep is not None:  # keep is opened exactly when writable is given
            _make_way(folder, writable)
            _mount(f"/proc/self/fd/{keep}", writable, None, _MS_BIND | _MS_REC)
        for path, fd, is_dir in bound:
            _make_way(folder, path if is_dir else os.path.dirname(path))
            if not is_dir:
                open(path, "a").close()
            _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | (_MS_REC if is_dir else 0))
            _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    finally:
        for fd in [fd for _, fd, _ in bound] + ([keep] if keep is not None else []):
            os.close(fd)


def _make_way(top: str, path: str) -> None:
    """The folders from `top` down to `path` on the fresh tmpfs, each passable by every uid."""
    current = top
    for part in Path(os.path.relpath(path, top)).parts:
        current = os.path.join(current, part)
        if not os.path.isdir(current):
            os.mkdir(current)
            os.chmod(current, 0o755)


def _hide(folder: str, workdir: Path, lock_dir: str, code: list[str]) -> str:
    """Covers the judge's temp folder (its files, the reference worker's, other workers') with an
    empty tmpfs and binds back only the worker's own folder (read-write), the GPU lock folder and
    any code folder that lives there (read-only). Returns what was hidden, or why not."""
    folder = os.path.realpath(folder)
    own = os.path.realpath(workdir)
    if not _inside(own, folder):
        return f"not hidden: the worker's folder {own} is not inside {folder}"
    locks = os.path.realpath(lock_dir)
    # Read-only: code that lives in the temp folder, and the lock folder (or, where the lock folder
    # is the temp folder itself, only the lock files there now).
    kept = _code_to_keep(code, folder, own)
    lock_files: list[str] = []
    if _inside(locks, folder) and os.path.isdir(locks) and not any(_inside(locks, p) for p in kept):
        kept.append(locks)
    elif locks == folder:
        lock_files = [str(p) for p in Path(locks).glob(LOCK_GLOB) if p.is_file()]
    _cover(folder, 0o1777, own, kept, lock_files)
    # The lock folder's freeze servers (sockets open to every uid: a judge of any user asks them)
    # are not the kernel's to ask: a socket file is connectable through a read-only mount. Covered
    # wherever the lock folder lies (KERNELARENA_GPU_LOCK_DIR may name one outside the temp folder).
    freezers = os.path.join(locks, FREEZERS)
    if os.path.isdir(freezers):
        _mount("tmpfs", freezers, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY)
    os.chdir(own)
    return folder


def _cover_sockets(reach: list[str]) -> list[str]:
    """Covers /run (the host's daemons' sockets: a session bus, docker's, a database's, the user's
    systemd) with an empty tmpfs, binding back only the GPU driver's entries, read-only. Not where
    something the worker needs lies below it. Returns the folders covered."""
    covered = []
    for folder in dict.fromkeys(os.path.realpath(p) for p in SOCKET_FOLDERS if os.path.isdir(p)):
        if any(r == folder or _inside(r, folder) for r in reach):
            continue
        driver = [os.path.join(folder, n) for n in os.listdir(folder) if n.startswith("nvidia")]
        _cover(folder, 0o755, None, [d for d in driver if os.path.isdir(d)],
               [d for d in driver if not os.path.isdir(d)])
        covered.append(folder)
    return covered


def _closed_ancestor(path: str) -> str | None:
    """The outermost folder from / down to `path` (itself included) that a uid of no group cannot
    pass through (or that cannot be read at all); None where every one lets others through."""
    real = Path(os.path.realpath(path))
    for folder in [*reversed(real.parents), real]:
        try:
            if not os.stat(folder).st_mode & 0o001:
                return str(folder)
        except OSError:
            return str(folder)
    return None


def _open_the_way(code: list[str], reach: list[str]) -> list[str]:
    """Where code the worker runs (an interpreter under /root, as pyenv installs it) or its own
    folder lies below a folder closed to other users (a process sandbox's 0700 folder), covers that
    folder with an empty tmpfs every uid may pass and binds back only the code, read-only, and the
    outermost of `reach` inside it (the covered temp folder with the worker's own folder, or that
    folder alone), as it is: a uid of the kernel's own can then run the interpreter and reach its
    folder, and sees nothing else there. Returns the folders covered."""
    reach = [os.path.realpath(r) for r in reach if r]
    closed = sorted({c for p in code + reach if p and os.path.isdir(p)
                     and (c := _closed_ancestor(os.path.dirname(os.path.realpath(p))))}, key=len)
    covered: list[str] = []
    for folder in closed:
        # A closed / cannot be covered (the uid then stays, with capabilities dropped).
        if folder == "/" or any(folder == c or _inside(folder, c) for c in covered):
            continue
        inside = sorted((r for r in reach if _inside(r, folder)), key=len)
        writable = inside[0] if inside else None
        kept = [c for c in _code_to_keep(code, folder, own=writable or "/")
                if not (writable and (c == writable or _inside(c, writable)))]
        _cover(folder, 0o755, writable, kept, [])
        covered.append(folder)
    return covered


def _prefixes() -> list[str]:
    """The interpreter's installation (headers and libraries too: a kernel may build an extension)."""
    return sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})


def _interpreter_dirs() -> list[str]:
    import sysconfig

    paths = sysconfig.get_paths()
    return [p for p in {paths.get("stdlib"), paths.get("purelib"), paths.get("platlib")} if p]


def _open_to_others(path: str) -> bool:
    """Whether a uid of no group can read the folder: every folder on the way lets others through."""
    try:
        readable = os.stat(path).st_mode & 0o004
    except OSError:
        return False
    return bool(readable) and _closed_ancestor(path) is None


# Device nodes a kernel may need; the rest of /dev (disks, memory, consoles) is not in its /dev.
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty", "nvidiactl", "nvidia-uvm",
            "nvidia-uvm-tools", "nvidia-modeset", "nvidia-caps", "kfd", "dri")
_MOUNT_FLAGS = {"nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC, "noatime": 1024,
                "nodiratime": 2048, "relatime": 1 << 21}


SHM_CAP_BYTES = 1 << 30  # a scoring's /dev/shm: at most this, and at most a quarter of the RAM


def shm_size() -> int:
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return SHM_CAP_BYTES
    return max(1 << 20, min(SHM_CAP_BYTES, ram // 4))


def _private_dev() -> None:
    """A /dev of the device nodes above (GPU nodes included), bound from the real one, and a /dev/shm
    of its own: an empty, size-capped tmpfs that ends with the worker's mount namespace, so nothing
    a kernel leaves there reaches the host or a later scoring."""
    real = os.open("/dev", _O_PATH | os.O_DIRECTORY)
    names = [n for n in os.listdir("/dev") if n in _DEVICES or n.startswith("nvidia")]
    try:
        _mount("tmpfs", "/dev", "tmpfs", _MS_NOSUID | _MS_NOEXEC)
        for name in names:
            source = f"/proc/self/fd/{real}/{name}"
            target = f"/dev/{name}"
            if os.path.isdir(source):
                os.mkdir(target)
            else:
                open(target, "w").close()
            _mount(source, target, None, _MS_BIND | _MS_REC)
        os.mkdir("/dev/shm")
        _call(_libc.mount, b"tmpfs", b"/dev/shm", b"tmpfs", ctypes.c_ulong(_MS_NOSUID | _MS_NODEV),
              f"size={shm_size()},mode=1777".encode())
        for name, dest in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                           ("stderr", "/proc/self/fd/2")):
            os.symlink(dest, f"/dev/{name}")
    finally:
        os.close(real)


def _read_only_mounts(writable: list[str]) -> list[str]:
    """Every mount of this namespace made read-only (a per-mount flag: the host's stay as they
    are), except /proc, /dev and its shm, and the worker's own folder."""
    keep = [os.path.realpath(p).rstrip(os.sep) for p in writable] + ["/proc", "/dev", "/sys/fs/cgroup"]
    done = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point, options = fields[4].replace("\\040", " "), fields[5].split(",")
        if any(point == k or point.startswith(k + os.sep) for k in keep if k) or "ro" in options:
            continue
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        for name in options:
            flags |= _MOUNT_FLAGS.get(name, 0)
        try:
            _mount(None, point, None, flags)
            done.append(point)
        except OSError:
            continue
    return done


def _drop_capabilities() -> None:
    """A kernel that keeps uid 0 keeps none of root's powers: empty bounding, ambient, effective,
    permitted and inheritable sets (no writes to /proc/sys, raw devices, other users' files)."""
    for cap in range(64):
        if _libc.prctl(24, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:  # PR_CAPBSET_DROP
            break
    _libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    _call(_libc.capset, header, data)


def _own_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            try:
                os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)
            except OSError:
                pass


def _seccomp_filter() -> tuple[Any, str]:
    """The filter, built while the worker can still read every library (before its uid changes);
    loaded last. (None, why) where it cannot be built."""
    try:
        import pyseccomp as seccomp
    except ImportError as exc:
        return None, f"not loaded: pyseccomp cannot be imported ({exc}; pip install pyseccomp)"
    try:
        filt = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for name in DENIED_SYSCALLS:
            try:
                filt.add_rule(seccomp.ERRNO(errno.EPERM), name)
            except (RuntimeError, ValueError, OSError):
                continue  # a syscall this kernel or architecture does not have
        # clone's flags are its first argument on x86_64 and aarch64 (s390 swaps the first two).
        for flag in _CLONE_NEW_FLAGS:
            filt.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        try:
            filt.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        except (RuntimeError, ValueError, OSError):
            pass  # libseccomp too old to name it: the kernel's clone3 then stays open
    except Exception as exc:  # libseccomp missing
        return None, f"not loaded: {type(exc).__name__}: {exc}"
    return filt, "built"


def _load(filt: Any, why: str) -> str:
    if filt is None:
        return why
    try:
        filt.load()
    except Exception as exc:  # the host refuses filters
        return f"not loaded: {type(exc).__name__}: {exc}"
    return "loaded"


def close_other_fds(keep: tuple[int, ...]) -> None:
    """Closes every descriptor but stdin/stdout/stderr and `keep` (close_range under the hood)."""
    top = max(os.sysconf("SC_OPEN_MAX"), _max_fd(), *keep, 2) + 1
    low = 3
    for fd in sorted(k for k in set(keep) if k >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, top)


def enter(workdir: Path, read_only: list[str], keep: tuple[int, ...] | None = None) -> dict[str, Any]:
    """Called by the kernel worker before it imports or runs anything of a task or kernel. Returns
    (in the walled worker) what it set up; the process that called it stays outside, waiting.
    With `keep` (the channel), every other descriptor but 0-2 is closed once the wall is up: one
    opened before it refers to the host's mounts, where `..` leads past the covers to the judge's
    folders (`fd_report` verifies it from outside)."""
    as_root = os.geteuid() == 0
    filt, why = _seccomp_filter()
    flags, problems = _namespaces(as_root)
    outside = os.getpid()
    if flags & _CLONE_NEWPID:
        sys.stdout.flush()
        sys.stderr.flush()
        child = os.fork()
        if child:
            _wait_and_mirror(child)
        # The worker dies with its waiting parent (the judge kills that one's process group).
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    notes: dict[str, Any] = {"problems": problems}
    if flags & _CLONE_NEWNS:
        try:
            _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
            if flags & _CLONE_NEWPID:
                _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
            # The host's global knobs (sysctls, sysrq) are writable by uid 0 without capabilities.
            locked = _read_only([p for p in _PROC_READ_ONLY if os.path.exists(p)], files=True,
                                extra_flags=_MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
            if "/proc/sys" not in locked:
                problems.append("/proc/sys could not be made read-only")
        except OSError as exc:
            problems.append(f"mount refused: {exc.strerror}")
        hide = os.environ.get(HIDE_ENV, "")
        if hide:
            try:
                notes["hidden"] = _hide(hide, workdir, os.environ.get("KERNELARENA_GPU_LOCK_DIR", hide),
                                        read_only + sys.path)
            except OSError as exc:
                problems.append(f"hiding {hide} refused: {exc.strerror}")
        if as_root:
            try:
                notes["opened"] = _open_the_way(_prefixes() + read_only + sys.path, [hide, str(workdir)])
                os.chdir(workdir)  # through the new mounts, not the covered folder's old entry
            except OSError as exc:
                problems.append(f"opening the way to the interpreter refused: {exc.strerror}")
        try:
            notes["sockets_covered"] = _cover_sockets([str(workdir), hide, os.environ.get("KERNELARENA_GPU_LOCK_DIR", ""),
                                                       *read_only, *sys.path, *_prefixes()])
        except OSError as exc:
            problems.append(f"covering /run refused: {exc.strerror}")
        try:
            _private_dev()
        except OSError as exc:
            problems.append(f"a private /dev refused: {exc.strerror}")
        notes["read_only"] = _read_only(read_only) + _read_only_mounts([str(workdir), "/dev/shm"])
    if as_root and not all(_open_to_others(p) for p in _interpreter_dirs()):
        notes["uid"] = "kept (the interpreter's files are not readable by other users); capabilities dropped"
        try:
            _drop_capabilities()
        except OSError as exc:
            problems.append(f"dropping capabilities refused: {exc.strerror}")
    elif as_root:
        uid = gid = UID_BASE + outside
        try:
            _own_tree(workdir, uid, gid)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            # A change of uid leaves the process non-dumpable (fs.suid_dumpable): its /proc files
            # turn root's, and the worker could no longer read its own threads' stacks
            # (scorer/checks/threads.py), so every runtime thread read as the kernel's. The
            # kernel's own process may be dumpable: no one else runs as this uid.
            _prctl(_PR_SET_DUMPABLE, 1)
            # A change of uid also clears the parent-death signal set above: armed again, so the
            # worker still ends with its waiting parent (the judge also kills it by pid).
            if flags & _CLONE_NEWPID:
                _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            # The uid has no passwd entry: getpass.getuser() (torch's cache folders) reads these first.
            os.environ.update(HOME=str(workdir), USER=f"kernel{uid}", LOGNAME=f"kernel{uid}")
        except OSError as exc:
            problems.append(f"changing to uid {uid} refused: {exc.strerror}")
    try:
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    except OSError as exc:
        problems.append(f"no_new_privs refused: {exc.strerror}")
    notes["seccomp"] = _load(filt, why)
    if keep is not None:
        close_other_fds(keep)
    return notes


# ---------------------------------------------------------------- the judge's side

def walled_pid(pid: int) -> int:
    """The process that runs the kernel: the worker's only child where the wall forked one (the
    worker itself then only waits), else the worker."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return pid
    return int(children[0]) if len(children) == 1 else pid


def kill_worker(pid: int, walled: bool) -> None:
    """SIGKILLs a worker: the walled kernel first, by its pid (it can leave the worker's process
    group with setsid and clear the signal that ends it with its waiting parent, but not outlive a
    SIGKILL to the first process of its PID namespace, which takes every process in it along),
    then the worker's process group."""
    targets = [(walled_pid(pid), os.kill)] if walled else []
    for target, kill in targets + [(pid, os.killpg)]:
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _status_fields(pid: int) -> dict[str, str]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def _hidden_from(pid: int, folder: str) -> bool:
    try:
        return os.stat(f"/proc/{pid}/root{os.path.realpath(folder)}").st_dev != os.stat(folder).st_dev
    except OSError:
        return False


@dataclass(frozen=True)
class FdAllowance:
    """What the kernel's process may hold that did not come through its wall: the channel (the
    inodes of the pipes whose other ends the judge holds) and files the worker was started with
    (its log as stdout/stderr), by (st_dev, st_ino); `workdir`, the worker's own folder."""
    pipes: frozenset[int]
    files: frozenset[tuple[int, int]]
    workdir: str


# Anonymous inodes a process makes for itself (torch's and CUDA's event loops, timers, a memfd);
# any other (a pidfd, say) before the kernel has run is something inherited.
_ANON_OWN = ("anon_inode:[eventfd]", "anon_inode:[eventpoll]", "anon_inode:[timerfd]", "anon_inode:[signalfd]",
             "anon_inode:inotify", "anon_inode:[io_uring]", "anon_inode:sync_file", "anon_inode:dmabuf")


# Where a GPU driver starting in the worker (before the kernel loads) opens files of its own.
_DRIVER_FILES = ("/dev/", "/proc/", "/sys/")


def _mount_ids(pid: int) -> set[int]:
    return {int(line.split()[0]) for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines() if line}


def _fd_mount(pid: int, fd: str) -> int:
    for line in Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines():
        if line.startswith("mnt_id:"):
            return int(line.split()[1])
    return -1


def _reachable(pid: int, path: str, info: os.stat_result) -> bool:
    """Whether `path`, in the process's own view (its root), is the object the descriptor holds:
    not a folder under a cover, not one of another mount namespace."""
    try:
        there = os.stat(f"/proc/{pid}/root{path}", follow_symlinks=False)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (info.st_dev, info.st_ino)


def _own_pipes(pid: int, fds: list[str]) -> set[str]:
    """Pipes whose read and write ends the process both holds: made by itself (the CUDA driver
    makes two as it starts), not a way to anyone outside."""
    ends: dict[str, set[int]] = {}
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("pipe:["):
                flags = next(int(line.split()[1], 8) for line in Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines()
                             if line.startswith("flags:"))
                ends.setdefault(link, set()).add(flags & os.O_ACCMODE)
        except (OSError, StopIteration, ValueError):
            continue
    return {link for link, modes in ends.items() if {os.O_RDONLY, os.O_WRONLY} <= modes}


# /proc/<pid>/net tables (the process's own network namespace) and the column of a row's inode.
_SOCKET_TABLES = (("unix", 6), ("tcp", 9), ("tcp6", 9), ("udp", 9), ("udp6", 9), ("raw", 9), ("raw6", 9),
                  ("netlink", 9))


def _own_sockets(pid: int) -> set[str]:
    """Sockets of the walled process's own network namespace (the CUDA driver makes one as it
    starts): one kept from outside the wall is in the host's tables, not in these."""
    own: set[str] = set()
    for table, column in _SOCKET_TABLES:
        try:
            rows = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        own.update(f"socket:[{r.split()[column]}]" for r in rows if len(r.split()) > column)
    return own


def _fd_problem(pid: int, fd: str, allowed: FdAllowance, loaded: bool, mounts: set[int],
                own_pipes: set[str]) -> str | None:
    """Why this descriptor of the walled process points outside its wall, or None. `loaded`: the
    kernel has run (pipes, sockets and namespaces it made itself may exist; before, only pipes
    whose both ends it holds)."""
    link = os.readlink(f"/proc/{pid}/{fd}" if fd in ("cwd", "root") else f"/proc/{pid}/fd/{fd}")
    if link.startswith("pipe:["):
        if int(link[6:-1]) in allowed.pipes or loaded or link in own_pipes:
            return None
        return f"fd {fd}: a pipe that is not the judge's channel ({link})"
    if link.startswith("anon_inode:"):
        return None if loaded or link in _ANON_OWN else f"fd {fd}: {link} before the kernel ran"
    if link.startswith("/memfd:"):
        return None
    if not link.startswith("/"):  # sockets, namespaces
        return None if loaded or link in own_pipes else f"fd {fd}: {link} before the kernel ran"
    info = os.stat(f"/proc/{pid}/root" if fd == "root" else f"/proc/{pid}/{fd}" if fd == "cwd"
                   else f"/proc/{pid}/fd/{fd}")
    if (info.st_dev, info.st_ino) in allowed.files and not stat.S_ISDIR(info.st_mode):
        return None
    deleted = link.endswith(" (deleted)")
    through_wall = (fd in ("cwd", "root") or _fd_mount(pid, fd) in mounts) and (
        deleted or _reachable(pid, link, info))
    if stat.S_ISCHR(info.st_mode) and not deleted and _reachable(pid, link, info):
        return None  # a device node of the wall's /dev (the mount does not change what it opens)
    if not through_wall:
        kind = "folder" if stat.S_ISDIR(info.st_mode) else "file"
        return f"{fd if fd in ('cwd', 'root') else 'fd ' + fd}: a {kind} opened outside the wall ({link})"
    own = allowed.workdir.rstrip(os.sep)
    if not loaded and fd != "root" and not (link == own or _inside(link, own) or link.startswith(_DRIVER_FILES)):
        return f"fd {fd}: {link}, outside the worker's folder, before the kernel ran"
    return None


def fd_report(pid: int, allowed: FdAllowance, loaded: bool = False) -> list[str]:
    """The walled process's descriptors (and its cwd and root) that point outside its wall, read
    from /proc by the judge: [] when every one is the channel, its stdio, a device node of its
    /dev, something inside its own folder or (once the kernel has run) something made or opened
    through its own mounts. A folder descriptor from before the wall would let it walk `..` past
    the covers; a file one, read what the wall hides."""
    try:
        mounts = _mount_ids(pid)
        fds = sorted(os.listdir(f"/proc/{pid}/fd"), key=int)
    except OSError as exc:  # gone, or not ours to read: nothing verified
        return [f"the descriptors cannot be read: {exc}"]
    own_pipes = _own_pipes(pid, fds) | _own_sockets(pid)
    problems = []
    for fd in ["cwd", "root", *fds]:
        try:
            problem = _fd_problem(pid, fd, allowed, loaded, mounts, own_pipes)
        except FileNotFoundError:
            continue  # closed while it was read
        except OSError as exc:
            problem = f"fd {fd}: cannot be read ({exc.strerror})"
        if problem:
            problems.append(problem)
    return problems


def inspect(pid: int, hidden: str, fds: FdAllowance | None = None) -> dict[str, Any]:
    """What is in force around the kernel's process, read by the judge from /proc (not reported by
    the kernel's side): {"walls": {name: bool}, "complete": bool, "missing": [...], "uid": n},
    with `descriptors` (what fd_report found) where the channel `fds` are given."""
    walls: dict[str, bool] = {}
    descriptors = ["not checked"]
    try:
        fields = _status_fields(pid)
        for ns, name in (("pid", "pid_namespace"), ("mnt", "mount_namespace"), ("net", "network_namespace"),
                         ("ipc", "ipc_namespace")):
            walls[name] = os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}")
        real_uid = int(fields.get("Uid", "0").split()[0])
        # The judge's files are out of reach when the kernel runs as a uid of its own, or when its
        # view of the judge's temp folder is another filesystem (a user namespace that maps the same
        # uid alone would leave them writable).
        walls["private_files"] = real_uid != os.getuid() or _hidden_from(pid, hidden)
        # Root's powers: none effective, or the kernel is not root on the host.
        walls["no_capabilities"] = int(fields.get("CapEff", "0"), 16) == 0 or real_uid != 0
        walls["no_new_privs"] = fields.get("NoNewPrivs") == "1"
        walls["seccomp"] = fields.get("Seccomp") == "2"
        walls["private_shm"] = _hidden_from(pid, "/dev/shm")
        if fds is not None:
            descriptors = fd_report(pid, fds)
        walls["descriptors"] = not descriptors
    except (OSError, ValueError) as exc:
        return {"walls": {w: False for w in WALLS}, "complete": False, "missing": list(WALLS),
                "error": f"cannot read the kernel worker's /proc entry: {exc}"}
    missing = [w for w in WALLS if not walls.get(w)]
    out = {"walls": walls, "complete": not missing, "missing": missing, "uid": real_uid}
    return {**out, "descriptors": descriptors} if descriptors else out


def record_descriptors(isolation: dict[str, Any], problems: list[str]) -> None:
    """A later fd_report (after the kernel loaded) that found something: the wall is incomplete."""
    if not problems or "walls" not in isolation:
        return
    isolation["walls"]["descriptors"] = False
    isolation["descriptors"] = list(dict.fromkeys([*isolation.get("descriptors", []), *problems]))
    isolation["missing"] = [w for w in WALLS if not isolation["walls"].get(w)]
    isolation["complete"] = False

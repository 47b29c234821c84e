# evalflow pandas runner. The Go package embeds this file and runs it as
# `/usr/bin/python3 -I -B -c <this file>` inside bubblewrap; see
# docs/engines.md (pandas) for the sandbox around it.
#
# Protocol:
#   stdin  one JSON job: {"mode": "run"|"compile"|"describe", "code": str,
#          "inputs": [{"name": str, "fd": int, "format": "csv"}],
#          "limits": {...}, "max_rows": int, "audit": bool}
#          stdin is replaced by /dev/null once the job is read.
#   fd 3   the result channel: the line "ready\n" once inputs are loaded
#          and limits set (the Go side starts the query timeout then),
#          followed by one JSON document, then the runner exits. The code's
#          own prints go to stdout and stderr, never here.
#   fd 4+  the input tables, opened read-only by the Go side; closed once
#          loaded.
import sys
import os
import json

RESULT_FD = 3
RESULT_CAP = 1 << 28  # bytes of one result document
MAIN_PID = os.getpid()

try:
    _result = os.fdopen(RESULT_FD, "w", encoding="utf-8", closefd=True)
    os.set_inheritable(RESULT_FD, False)
except OSError:
    sys.stderr.write("evalflow runner: result descriptor 3 is not open\n")
    os._exit(121)


def emit(doc):
    """Writes the final document on the result channel, once, from the
    runner process only (never from a child the code forked)."""
    if os.getpid() != MAIN_PID:
        os._exit(0)
    try:
        _result.write(json.dumps(doc, ensure_ascii=False, allow_nan=False))
        _result.write("\n")
        _result.flush()
    except Exception as e:  # e.g. a result too large for the memory limit
        try:
            _result.write(json.dumps({"ok": False, "error": {
                "type": type(e).__name__, "message": "cannot serialise the result: " + str(e),
                "kind": "resource"}}))
            _result.flush()
        except Exception:
            pass
    os._exit(0)


def fail(kind, etype, message, line=None, violations=None):
    err = {"kind": kind, "type": etype, "message": message}
    if line is not None:
        err["line"] = line
    if violations:
        err["violations"] = violations
    emit({"ok": False, "error": err})


job = json.loads(sys.stdin.read())
_devnull = os.open("/dev/null", os.O_RDONLY)
os.dup2(_devnull, 0)
os.close(_devnull)
mode = job.get("mode", "run")
code = job.get("code", "")

if mode == "probe":
    import importlib.util
    for mod in ("numpy", "pandas"):
        if importlib.util.find_spec(mod) is None:
            fail("probe", "ModuleNotFoundError", "No module named '%s'" % mod)
    emit({"ok": True})

# ---------------------------------------------------------------- compile
import ast


def parse(src):
    """Parses src; on a syntax error reports it and exits."""
    try:
        return ast.parse(src, filename="<code>", mode="exec")
    except (SyntaxError, ValueError) as e:  # ValueError: NUL bytes in source
        line = getattr(e, "lineno", None)
        msg = getattr(e, "msg", None) or str(e)
        fail("syntax", type(e).__name__, msg, line)


if mode == "compile":
    tree = parse(code)
    try:
        compile(tree, "<code>", "exec")
    except (SyntaxError, ValueError) as e:
        fail("syntax", type(e).__name__, getattr(e, "msg", None) or str(e), getattr(e, "lineno", None))
    emit({"ok": True})

# ---------------------------------------------------------------- inputs
import math
import datetime
import decimal
import numpy as np
import pandas as pd


def fmt_ts(ts):
    if ts is pd.NaT or ts is None:
        return None
    tz = ""
    if getattr(ts, "tzinfo", None) is not None:
        ts = ts.tz_convert("UTC") if hasattr(ts, "tz_convert") else ts.astimezone(datetime.timezone.utc)
        tz = "+00"
    s = ts.strftime("%Y-%m-%d %H:%M:%S")
    frac = getattr(ts, "microsecond", 0) * 1000 + getattr(ts, "nanosecond", 0)
    if frac:
        s += ("." + "%09d" % frac).rstrip("0")
    return s + tz


def cell(v):
    """One value in its JSON form: (json value, kind) where kind is one of
    null, bool, int, float, string."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None, "null"
    if isinstance(v, (bool, np.bool_)):
        return bool(v), "bool"
    if isinstance(v, (int, np.integer)):
        i = int(v)
        if -(1 << 63) <= i < (1 << 63):
            return i, "int"
        return float(i), "float"
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return None, "null"
        if math.isinf(f):
            return ("+Inf" if f > 0 else "-Inf"), "float"
        return f, "float"
    if isinstance(v, str):
        return v, "string"
    if isinstance(v, (pd.Timestamp, datetime.datetime)):
        return fmt_ts(v), "string"
    if isinstance(v, datetime.date):
        return v.isoformat(), "string"
    if isinstance(v, (pd.Timedelta, datetime.timedelta)):
        return str(pd.Timedelta(v)), "string"
    if isinstance(v, np.datetime64):
        return cell(pd.Timestamp(v))
    if isinstance(v, np.timedelta64):
        return cell(pd.Timedelta(v))
    if isinstance(v, decimal.Decimal):
        return str(v), "string"
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace"), "string"
    if isinstance(v, (complex, np.complexfloating)):
        return str(v), "string"
    if isinstance(v, (list, tuple, set, frozenset, dict, np.ndarray, pd.Series, pd.Index)):
        try:
            if isinstance(v, (np.ndarray, pd.Series, pd.Index)):
                v = list(v)
            if isinstance(v, (set, frozenset)):
                v = sorted(v, key=repr)
            return json.dumps(v, default=lambda o: cell(o)[0], ensure_ascii=False, allow_nan=False), "string"
        except Exception:
            pass
    return str(v), "string"


def column_type(kinds, dtype):
    """Declared type of a column from its dtype, falling back to the kinds
    of its values for object columns."""
    k = dtype.kind if dtype is not None else "O"
    if k == "b":
        return "bool"
    if k in "iu":
        return "int"
    if k == "f":
        return "float"
    if k in "MmUS":
        return "string"
    kinds = set(kinds) - {"null"}
    if not kinds:
        return "null" if dtype is None or k == "O" else "any"
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {"int", "float"}:
        return "any"
    return "any"


def is_default_index(idx):
    """An index that only numbers rows: unnamed, one level, integer (a
    RangeIndex, or what is left of one after filtering or sorting). Such an
    index is dropped; any other (groupby keys, set_index, value_counts
    labels) becomes leading columns."""
    return idx.nlevels == 1 and idx.name is None and idx.dtype.kind in "iu"


def col_name(c):
    if isinstance(c, tuple):
        parts = [str(p) for p in c if str(p) != ""]
        return "_".join(parts)
    return str(c)


def to_frame(v):
    """The answer as a DataFrame and its shape kind."""
    if isinstance(v, pd.DataFrame):
        return v, "dataframe"
    if isinstance(v, pd.Series):
        name = v.name if v.name is not None else "value"
        return v.to_frame(name=name), "series"
    if isinstance(v, pd.Index):
        return pd.DataFrame({v.name if v.name is not None else "value": list(v)}), "index"
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return pd.DataFrame({"result": [v.item()]}), "scalar"
        if v.ndim == 1:
            return pd.DataFrame({"value": v}), "array"
        if v.ndim == 2:
            return pd.DataFrame(v), "array"
    if isinstance(v, dict):
        s = pd.Series(v, dtype=object if not v else None)
        s.index.name = "key"
        return s.to_frame(name="value"), "dict"
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else list(v)
        return pd.DataFrame({"value": pd.Series(items, dtype=object)}), "list"
    if isinstance(v, pd.core.groupby.generic.DataFrameGroupBy) or isinstance(v, pd.core.groupby.generic.SeriesGroupBy):
        raise TypeError("the answer is a GroupBy object, not a table: apply an aggregation (.sum(), .mean(), .size(), ...)")
    return pd.DataFrame({"result": pd.Series([v], dtype=object)}), "scalar"


def table_doc(v, max_rows, source):
    df, shape = to_frame(v)
    if not is_default_index(df.index):
        names = [n if n is not None else ("index" if df.index.nlevels == 1 else "level_%d" % i)
                 for i, n in enumerate(df.index.names)]
        idx = [df.index.get_level_values(i) for i in range(df.index.nlevels)]
    else:
        names, idx = [], []
    n = len(df)
    truncated = max_rows > 0 and n > max_rows
    take = min(n, max_rows) if max_rows > 0 else n
    cols = []
    series = []
    for name, level in zip(names, idx):
        cols.append((str(name), level.dtype))
        series.append(level[:take])
    for j in range(df.shape[1]):
        s = df.iloc[:take, j]
        cols.append((col_name(df.columns[j]), s.dtype))
        series.append(s)
    rows = [[None] * len(cols) for _ in range(take)]
    out_cols = []
    for j, ((name, dtype), s) in enumerate(zip(cols, series)):
        kinds = []
        vals = s.tolist() if not (hasattr(s, "dtype") and s.dtype.kind in "Mm") else list(s)
        if hasattr(dtype, "categories"):
            dtype = dtype.categories.dtype
        for i, x in enumerate(vals):
            cv, k = cell(x)
            rows[i][j] = cv
            kinds.append(k)
        out_cols.append({"name": name, "dtype": str(dtype), "type": column_type(kinds, dtype)})
    return {"ok": True, "shape": shape, "source": source, "columns": out_cols, "rows": rows,
            "truncated": truncated}



def load_inputs():
    frames = {}
    for spec in job.get("inputs", []):
        with os.fdopen(spec["fd"], "rb", closefd=True) as f:
            frames[spec["name"]] = pd.read_csv(f)
    return frames


try:
    frames = load_inputs()
except Exception as e:
    fail("input", type(e).__name__, "loading the input tables: " + str(e))


# ---------------------------------------------------------------- describe
if mode == "describe":
    tables = []
    for name, df in frames.items():
        cols = []
        for c in df.columns:
            s = df[c]
            kinds = [cell(x)[1] for x in s.tolist()]
            dt = s.dtype.categories.dtype if hasattr(s.dtype, "categories") else s.dtype
            cols.append({"name": col_name(c), "dtype": str(s.dtype), "type": column_type(kinds, dt),
                         "not_null": bool(s.notna().all())})
        tables.append({"name": name, "columns": cols})
    emit({"ok": True, "tables": tables})

# ---------------------------------------------------------------- limits
import resource

limits = job.get("limits", {})


def setlimit(which, value):
    if value is None or value < 0:
        return
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(which)
        resource.setrlimit(which, (min(value, hard) if hard != resource.RLIM_INFINITY else value, hard))


cpu_used = resource.getrusage(resource.RUSAGE_SELF)
cpu_now = int(math.ceil(cpu_used.ru_utime + cpu_used.ru_stime))
if limits.get("cpu_seconds"):
    # SIGXCPU (which ends Python) at the soft limit; SIGKILL a second later.
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_now + int(limits["cpu_seconds"]),
                                                 cpu_now + int(limits["cpu_seconds"]) + 1))
    except (ValueError, OSError):
        setlimit(resource.RLIMIT_CPU, cpu_now + int(limits["cpu_seconds"]))
setlimit(resource.RLIMIT_AS, limits.get("address_space"))
setlimit(resource.RLIMIT_FSIZE, limits.get("file_size"))
setlimit(resource.RLIMIT_NPROC, limits.get("processes"))
setlimit(resource.RLIMIT_NOFILE, limits.get("open_files"))
setlimit(resource.RLIMIT_CORE, 0)

# ---------------------------------------------------------------- audit
violations = []


class SandboxViolation(PermissionError):
    """Raised by the audit hook when the code tries something the sandbox
    forbids (network, new processes, writes outside /tmp)."""


_WRITE_EVENTS = {"os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.chmod", "os.chown",
                 "os.symlink", "os.link", "os.truncate", "os.utime", "shutil.rmtree"}
_PROC_EVENTS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                "subprocess.Popen", "os.kill", "os.killpg", "pty.spawn"}
_NET_EVENTS = {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
               "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
               "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect"}
_armed = False


def _under_tmp(path):
    try:
        p = os.path.abspath(os.fsdecode(path))
    except Exception:
        return False
    return p == "/tmp" or p.startswith("/tmp/")


def _violation(what):
    violations.append(what)
    raise SandboxViolation(what + " is not allowed in the evalflow pandas sandbox")


def _hook(event, args):
    if not _armed:
        return
    if event in _NET_EVENTS:
        _violation("network access (%s)" % event)
    elif event in _PROC_EVENTS:
        _violation("process creation (%s)" % event)
    elif event == "open":
        path, mode, flags = args[0], args[1], args[2]
        if isinstance(path, int):
            return
        writing = (mode is not None and any(c in mode for c in "wax+")) or \
            (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
        if writing and not _under_tmp(path):
            _violation("writing %s" % os.fsdecode(path))
    elif event in _WRITE_EVENTS:
        for a in args:
            if isinstance(a, (str, bytes, os.PathLike)) and not _under_tmp(a):
                _violation("%s on %s" % (event, os.fsdecode(a)))
                break


if job.get("audit", True):
    sys.addaudithook(_hook)

# ---------------------------------------------------------------- run
tree = parse(code)
result_name = "__evalflow_result__"
body = tree.body
source = "none"
if body and isinstance(body[-1], ast.Expr):
    last = body[-1]
    call = last.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print" \
            and len(call.args) == 1 and not call.keywords:
        # print(x) as the last line: the answer is x (and it is still printed).
        assign = ast.Assign(targets=[ast.Name(id=result_name, ctx=ast.Store())], value=call.args[0])
        call.args[0] = ast.Name(id=result_name, ctx=ast.Load())
        body[-1:] = [assign, last]
    else:
        body[-1] = ast.Assign(targets=[ast.Name(id=result_name, ctx=ast.Store())], value=last.value)
    source = "expression"
elif body and isinstance(body[-1], ast.Assign) and len(body[-1].targets) == 1 \
        and isinstance(body[-1].targets[0], ast.Name):
    source = "assign:" + body[-1].targets[0].id
ast.fix_missing_locations(tree)
try:
    compiled = compile(tree, "<code>", "exec")
except (SyntaxError, ValueError) as e:
    fail("syntax", type(e).__name__, getattr(e, "msg", None) or str(e), getattr(e, "lineno", None))

namespace = {"__name__": "__main__", "pd": pd, "np": np, "dfs": dict(frames)}
if len(frames) == 1:
    namespace["df"] = next(iter(frames.values())).copy()
for name, df in frames.items():
    if name.isidentifier() and name not in namespace and not name.startswith("_"):
        namespace[name] = df
namespace["dfs"] = {k: v.copy() for k, v in frames.items()}

os.environ.clear()
_result.write("ready\n")
_result.flush()

# The supervisor owns the result channel. The code under evaluation runs in
# a forked child that does not have it: descriptor 3 is closed there, and
# this process makes itself non-dumpable so the child cannot reopen it
# through /proc/PID/fd. The child sends its document on a pipe of its own;
# only this process writes on descriptor 3, and only a document it parsed.
_r, _w = os.pipe()
_child = os.fork()
if _child == 0:
    os.close(_r)
    _result.close()
    _result = os.fdopen(_w, "w", encoding="utf-8", closefd=True)
    MAIN_PID = os.getpid()
else:
    os.close(_w)
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:
        pass
    # Read the child's one line; never wait on EOF alone, since processes
    # the code forked may still hold the pipe after the child is gone.
    import select
    _buf, _total, _exited, _status = b"", 0, False, 0
    while b"\n" not in _buf:
        _ready, _, _ = select.select([_r], [], [], 0.05)
        if _ready:
            _b = os.read(_r, 1 << 16)
            if not _b:
                break
            _total += len(_b)
            if _total > RESULT_CAP:
                fail("resource", "ResultTooLarge", "the result is larger than %d bytes" % RESULT_CAP)
            _buf += _b
            continue
        if not _exited:
            _pid, _status = os.waitpid(_child, os.WNOHANG)
            _exited = _pid != 0
        elif not _ready:
            break  # the child is gone and nothing more came
    if not _exited:
        _, _status = os.waitpid(_child, 0)
    _doc = None
    try:
        _doc = json.loads(_buf.decode("utf-8").split("\n", 1)[0])
        if not isinstance(_doc, dict) or not isinstance(_doc.get("ok"), bool):
            _doc = None
        elif _doc["ok"] and not (isinstance(_doc.get("shape"), str) and isinstance(_doc.get("columns"), list)
                                 and isinstance(_doc.get("rows"), list)):
            fail("result", "MalformedResult", "the code's process sent a result document that is not one")
    except Exception:
        _doc = None
    if _doc is None:
        if os.WIFSIGNALED(_status):
            # Die of the same signal, so the Go side reads the code's fate
            # (SIGXCPU: CPU limit, SIGKILL: memory, ...) as before the fork.
            import signal
            _sig = os.WTERMSIG(_status)
            signal.signal(_sig, signal.SIG_DFL)
            os.kill(os.getpid(), _sig)
            os._exit(128 + _sig)
        fail("exception", "Exited", "the code ended the interpreter (exit status %d) without an answer"
             % (os.WEXITSTATUS(_status) if os.WIFEXITED(_status) else -1))
    emit(_doc)


def line_of(tb):
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<code>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


_armed = True
try:
    exec(compiled, namespace)
    exc = None
except BaseException as e:  # SystemExit and KeyboardInterrupt too
    exc = e
_armed = False

if os.getpid() != MAIN_PID:
    os._exit(0)

if violations:
    fail("safety", "SandboxViolation", violations[0] + " is not allowed in the evalflow pandas sandbox",
         line_of(exc.__traceback__) if exc is not None else None, violations)
if exc is not None:
    kind = "exception"
    if isinstance(exc, MemoryError):
        kind = "resource"
    elif isinstance(exc, KeyError):
        kind = "key"
    elif isinstance(exc, SyntaxError):
        kind = "syntax"
    elif isinstance(exc, OSError):
        import errno
        if exc.errno in (errno.EAGAIN,) and isinstance(exc, BlockingIOError):
            kind = "resource"
        elif exc.errno in (errno.EFBIG, errno.ENOSPC, errno.EMFILE):
            kind = "resource"
        elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENETUNREACH,
                           errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL):
            kind = "safety"
    etype = type(exc).__name__
    mod = type(exc).__module__
    if mod not in ("builtins", "__main__"):
        etype = mod + "." + etype
    msg = str(exc)
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        msg = repr(exc.args[0])
    if isinstance(exc, MemoryError) and not msg:
        msg = "out of memory (address-space limit %d MiB)" % (int(limits.get("address_space") or 0) >> 20)
    fail(kind, etype, msg, line_of(exc.__traceback__))

if source == "expression":
    value = namespace.get(result_name)
elif "result" in namespace:
    value, source = namespace["result"], "result"
elif source.startswith("assign:"):
    value = namespace.get(source[len("assign:"):])
else:
    fail("noresult", "NoResult", "the code produced no answer: end it with an expression, "
         "or assign the answer to a variable named result")


try:
    doc = table_doc(value, int(job.get("max_rows", 0) or 0), source)
except MemoryError as e:
    fail("resource", "MemoryError", "converting the result: " + str(e))
except Exception as e:
    fail("result", type(e).__name__, str(e))
emit(doc)

#!/usr/bin/env python3
"""Writes src/cmd/meta/generated.rs: Redis's metadata for every command of
ember's table.

For each command row of src/cmd/table.rs (and the subcommands a row declares
with `.with_subcommands(&[...])`) it asks redis-server 7.0.15 for COMMAND
INFO and COMMAND DOCS over RESP3, checks that every reply has the shape
ember's renderer (src/cmd/meta/reply.rs) writes, and writes one Rust row per
command. Commands Redis 7.0 lacks (the hash-field TTL family of 7.4) come
from scripts/command_meta_supplement.json, hand-written from Redis 7.4's
declarations in the same form.

    python3 scripts/gen_command_meta.py             # starts its own redis-server
    python3 scripts/gen_command_meta.py --port 6379 # asks a running one

Only the Python standard library is used (a small RESP3 reader below).
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "src", "cmd", "table.rs")
SUPPLEMENT = os.path.join(ROOT, "scripts", "command_meta_supplement.json")
OUTPUT = os.path.join(ROOT, "src", "cmd", "meta", "generated.rs")
REDIS_VERSION = "7.0.15"


# ---- RESP3 ----------------------------------------------------------------

class Resp:
    """A blocking connection that reads replies as (kind, value) pairs, where
    kind is RESP3's type byte, so the generator can check types exactly."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = chr(line[0]), line[1:]
        if kind in "+-":
            return (kind, rest.decode())
        if kind == ":":
            return (kind, int(rest))
        if kind == "$":
            n = int(rest)
            return ("_", None) if n < 0 else (kind, self._exact(n).decode())
        if kind == "=":
            return (kind, self._exact(int(rest)).decode()[4:])
        if kind in "*~":
            return (kind, [self.read() for _ in range(int(rest))])
        if kind == "%":
            return (kind, [(self.read(), self.read()) for _ in range(int(rest))])
        if kind == "_":
            return (kind, None)
        raise ValueError("unexpected reply %r" % line)


# ---- reading the replies into plain data, checking their shape -------------

class Shape(Exception):
    pass


def want(value, kind, where):
    if value[0] != kind:
        raise Shape("%s: expected RESP type %r, got %r" % (where, kind, value))
    return value[1]


def words(value, where, item_kind="+"):
    return [want(v, item_kind, where) for v in want(value, "~", where)]


def ordered_map(value, order, where):
    """A map's fields as a dict, checking every key is known and the keys
    come in `order` (the order ember's renderer writes them)."""
    pairs = want(value, "%", where)
    keys = [want(k, "$", where) for k, _ in pairs]
    unknown = [k for k in keys if k not in order]
    if unknown:
        raise Shape("%s: fields %r are not rendered by ember" % (where, unknown))
    if keys != [k for k in order if k in keys]:
        raise Shape("%s: fields in order %r, ember writes %r" % (where, keys, order))
    return {k: v for (_, v), k in zip(pairs, keys)}


def read_info(value, where):
    items = want(value, "*", where)
    if len(items) != 10:
        raise Shape("%s: %d fields" % (where, len(items)))
    meta = {
        "name": want(items[0], "$", where),
        "arity": want(items[1], ":", where),
        "flags": words(items[2], where + " flags"),
        "acl": [c[1:] for c in words(items[6], where + " categories")],
        "keys": [want(items[i], ":", where) for i in (3, 4, 5)],
        "tips": words(items[7], where + " tips", "$"),
        "key_specs": [read_key_spec(s, where) for s in want(items[8], "~", where)],
    }
    # A container lists its subcommands in an array; others end with an
    # empty set.
    if items[9][0] == "*":
        meta["subcommands"] = [read_info(s, where + " sub") for s in items[9][1]]
    elif want(items[9], "~", where) != []:
        raise Shape("%s: subcommands in a set" % where)
    return meta


def read_key_spec(value, where):
    fields = ordered_map(value, ["notes", "flags", "begin_search", "find_keys"], where)
    spec = {"flags": words(fields["flags"], where + " key spec flags")}
    if "notes" in fields:
        spec["notes"] = want(fields["notes"], "$", where + " key spec notes")
    for part in ("begin_search", "find_keys"):
        inner = ordered_map(fields[part], ["type", "spec"], where + " " + part)
        kind = want(inner["type"], "$", where)
        order = {
            "index": ["index"],
            "keyword": ["keyword", "startfrom"],
            "range": ["lastkey", "keystep", "limit"],
            "keynum": ["keynumidx", "firstkey", "keystep"],
            "unknown": [],
        }[kind]
        params = ordered_map(inner["spec"], order, where + " " + kind)
        spec[part] = [kind] + [
            want(params[k], "$" if k == "keyword" else ":", where) for k in order
        ]
    return spec


DOC_FIELDS = ["summary", "since", "group", "complexity", "doc_flags", "deprecated_since",
              "replaced_by", "history", "arguments", "subcommands"]
ARG_FIELDS = ["name", "type", "key_spec_index", "token", "since", "deprecated_since",
              "flags", "arguments"]
ARG_TYPES = ["string", "integer", "double", "key", "pattern", "unix-time", "pure-token",
             "oneof", "block"]


def read_docs(value, where):
    fields = ordered_map(value, DOC_FIELDS, where)
    docs = {k: want(fields[k], "$", where) for k in DOC_FIELDS[:3]}
    # PSYNC and SYNC declare no complexity: "" renders as absent.
    docs["complexity"] = want(fields["complexity"], "$", where) if "complexity" in fields else ""
    if "doc_flags" in fields:
        docs["doc_flags"] = words(fields["doc_flags"], where + " doc_flags")
    if "deprecated_since" in fields or "replaced_by" in fields:
        docs["deprecated"] = [want(fields["deprecated_since"], "$", where),
                              want(fields["replaced_by"], "$", where)]
    if "history" in fields:
        docs["history"] = []
        for entry in want(fields["history"], "~", where):
            pair = [want(x, "$", where + " history") for x in want(entry, "*", where)]
            if len(pair) != 2:
                raise Shape("%s: history entry %r" % (where, pair))
            docs["history"].append(pair)
    if "arguments" in fields:
        docs["arguments"] = [read_arg(a, where) for a in want(fields["arguments"], "*", where)]
    if "subcommands" in fields:
        docs["subcommands"] = {
            want(k, "$", where): read_docs(v, where + " sub")
            for k, v in want(fields["subcommands"], "%", where)
        }
    return docs


def read_arg(value, where):
    fields = ordered_map(value, ARG_FIELDS, where + " argument")
    arg = {"name": want(fields["name"], "$", where), "type": want(fields["type"], "$", where)}
    where = "%s argument %s" % (where, arg["name"])
    if arg["type"] not in ARG_TYPES:
        raise Shape("%s: type %s" % (where, arg["type"]))
    if "key_spec_index" in fields:
        arg["key_spec_index"] = want(fields["key_spec_index"], ":", where)
    for k in ("token", "since", "deprecated_since"):
        if k in fields:
            arg[k] = want(fields[k], "$", where)
    if "flags" in fields:
        arg["flags"] = words(fields["flags"], where)
    if "arguments" in fields:
        arg["arguments"] = [read_arg(a, where) for a in want(fields["arguments"], "*", where)]
    if ("arguments" in arg) != (arg["type"] in ("oneof", "block")):
        raise Shape("%s: children and type disagree" % where)
    if arg["type"] == "pure-token" and "token" not in arg:
        raise Shape("%s: a pure-token without its token" % where)
    return arg


def fetch(conn, name):
    """The command's metadata from the server, or None if it lacks it."""
    info = want(conn.call("COMMAND", "INFO", name), "*", name)[0]
    if info[0] == "_":
        return None
    meta = read_info(info, name)
    docs = want(conn.call("COMMAND", "DOCS", name), "%", name)
    if len(docs) != 1:
        raise Shape("%s: DOCS has %d entries" % (name, len(docs)))
    meta["docs"] = read_docs(docs[0][1], name + " docs")
    return meta


# ---- ember's table ----------------------------------------------------------

def table_rows():
    """[(name, [declared subcommands])] in the table's order."""
    rows = []
    for line in open(TABLE, encoding="utf-8"):
        m = re.match(r'\s*(?:keyed|every|conn)\("([a-z_]+)"', line)
        if not m:
            continue
        subs = re.search(r"\.with_subcommands\(&\[([^\]]*)\]\)", line)
        declared = re.findall(r'"([a-z-]+)"', subs.group(1)) if subs else []
        rows.append((m.group(1), declared))
    if not rows:
        sys.exit("no command rows found in " + TABLE)
    return rows


def select_subcommands(meta, declared):
    """Keeps the subcommands ember implements, in the table's order."""
    name = meta["name"]
    infos = {s["name"]: s for s in meta.pop("subcommands", [])}
    docs = meta["docs"].pop("subcommands", {})
    subs = []
    for short in declared:
        full = "%s|%s" % (name, short)
        if full not in infos or full not in docs:
            sys.exit("%s: redis-server has no subcommand %s" % (name, full))
        sub = infos[full]
        sub["docs"] = docs[full]
        subs.append(sub)
    if subs:
        meta["subcommands"] = subs
    elif infos:
        sys.exit("%s is a container in Redis: declare its subcommands in the table" % name)
    return meta


# ---- writing Rust -------------------------------------------------------------

def lit(s):
    """A Rust string literal."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\u{%x}" % ord(ch))
        else:
            out.append(ch)
    return '"%s"' % "".join(out)


def words_lit(items):
    return lit(" ".join(items))


def rust_arg(arg, indent):
    kind, name = arg["type"], lit(arg["name"])
    chain = []
    if kind == "key" and "key_spec_index" in arg:
        head = "key(%s, %d)" % (name, arg["key_spec_index"])
    elif kind == "pure-token":
        head = "pure_token(%s, %s)" % (name, lit(arg["token"]))
    elif kind in ("oneof", "block"):
        head = "%s(%s, %s)" % (kind, name, rust_list(arg["arguments"], rust_arg, indent))
    else:
        head = "%s(%s)" % (kind.replace("-", "_"), name)
    if "key_spec_index" in arg and kind != "key":
        chain.append(".key_spec(%d)" % arg["key_spec_index"])
    if "token" in arg and kind != "pure-token":
        chain.append(".token(%s)" % lit(arg["token"]))
    for k in ("since", "deprecated_since"):
        if k in arg:
            chain.append(".%s(%s)" % (k, lit(arg[k])))
    if "flags" in arg:
        chain.append(".flags(%s)" % words_lit(arg["flags"]))
    return head + "".join(chain)


def rust_list(items, render, indent):
    """`&[a, b]` on one line when short, else one item per line."""
    one_line = "&[%s]" % ", ".join(render(i, indent + 4) for i in items)
    if len(one_line) + indent <= 96 and "\n" not in one_line:
        return one_line
    pad = " " * (indent + 4)
    body = "".join("%s%s,\n" % (pad, render(i, indent + 4)) for i in items)
    return "&[\n%s%s]" % (body, " " * indent)


def rust_key_spec(spec, indent):
    begin, find = spec["begin_search"], spec["find_keys"]
    begin_rs = {"index": "index(%d)", "keyword": "keyword(%s, %d)", "unknown": "BeginSearch::Unknown"}
    find_rs = {"range": "range(%d, %d, %d)", "keynum": "keynum(%d, %d, %d)", "unknown": "FindKeys::Unknown"}
    b = begin_rs[begin[0]] % tuple(lit(x) if isinstance(x, str) else x for x in begin[1:])
    f = find_rs[find[0]] % tuple(find[1:])
    out = "spec(%s, %s, %s)" % (words_lit(spec["flags"]), b, f)
    if "notes" in spec:
        out += ".notes(%s)" % lit(spec["notes"])
    return out


def rust_command(meta, indent):
    pad = " " * (indent + 4)
    docs = meta["docs"]
    out = "cmd(%s, %d, %s, %s, (%d, %d, %d))" % (
        lit(meta["name"]), meta["arity"], words_lit(meta["flags"]), words_lit(meta["acl"]),
        *meta["keys"])
    if meta["tips"]:
        out += "\n%s.tips(&[%s])" % (pad, ", ".join(lit(t) for t in meta["tips"]))
    if meta["key_specs"]:
        out += "\n%s.key_specs(%s)" % (pad, rust_list(meta["key_specs"], rust_key_spec, indent + 4))
    out += "\n%s.docs(%s, %s, %s, %s)" % (
        pad, lit(docs["summary"]), lit(docs["since"]), lit(docs["group"]), lit(docs["complexity"]))
    if "doc_flags" in docs:
        out += "\n%s.doc_flags(%s)" % (pad, words_lit(docs["doc_flags"]))
    if "deprecated" in docs:
        out += "\n%s.deprecated(%s, %s)" % (pad, lit(docs["deprecated"][0]), lit(docs["deprecated"][1]))
    if "history" in docs:
        entries = ["(%s, %s)" % (lit(v), lit(t)) for v, t in docs["history"]]
        out += "\n%s.history(%s)" % (pad, rust_list(entries, lambda e, _: e, indent + 4))
    if "arguments" in docs:
        out += "\n%s.args(%s)" % (pad, rust_list(docs["arguments"], rust_arg, indent + 4))
    if "subcommands" in meta:
        out += "\n%s.subcommands(%s)" % (
            pad, rust_list(meta["subcommands"], rust_command, indent + 4))
    return out


HEADER = """\
//! Redis's command metadata: generated, do not edit.
//!
//! Written by `python3 scripts/gen_command_meta.py` from the COMMAND INFO
//! and COMMAND DOCS replies of redis-server %s for every command of
//! ember's table (`src/cmd/table.rs`) and the subcommands its rows declare,
//! and from `scripts/command_meta_supplement.json` (Redis 7.4's
//! declarations) for the commands 7.0 lacks:
//! %s.
//! These are facts about Redis's interface, reproduced so that COMMAND INFO
//! and COMMAND DOCS answer as Redis does. Run the script again after adding
//! a command or subcommand to the table. The constructors are in `build.rs`.

use super::build::*;
use super::%s;

/// One row per command of the table, in the table's order. An array
/// static (not a slice of one), so the table's rows point into it.
pub static META: [CommandMeta; %d] = [
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, help="a running redis-server %s" % REDIS_VERSION)
    parser.add_argument("--redis-server", default="redis-server")
    parser.add_argument("--any-version", action="store_true",
                        help="accept a redis-server other than %s" % REDIS_VERSION)
    opts = parser.parse_args()

    child = None
    port = opts.port
    if port is None:
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        child = subprocess.Popen(
            [opts.redis_server, "--port", str(port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        conn = None
        for _ in range(200):
            try:
                conn = Resp(port)
                break
            except OSError:
                time.sleep(0.05)
        if conn is None:
            sys.exit("cannot reach redis-server on port %d" % port)
        want(conn.call("HELLO", "3"), "%", "HELLO 3")
        version = redis_version(conn)
        if version != REDIS_VERSION and not opts.any_version:
            sys.exit("redis-server is %s, the reference is %s" % (version, REDIS_VERSION))

        supplement = json.load(open(SUPPLEMENT, encoding="utf-8"))
        rows, supplemented = [], []
        for name, declared in table_rows():
            meta = fetch(conn, name)
            if meta is None:
                if name not in supplement:
                    sys.exit("%s: unknown to redis-server and not in %s" % (name, SUPPLEMENT))
                meta = supplement[name]
                supplemented.append(name)
            rows.append(select_subcommands(meta, declared))
        unused = sorted(set(supplement) - set(supplemented) - {"_comment"})
        if unused:
            sys.exit("the supplement has commands redis-server knows or the table lacks: %r" % unused)
    finally:
        if child is not None:
            child.kill()
            child.wait()

    body = "".join("    %s,\n" % rust_command(meta, 4) for meta in rows)
    used = [t for t in ("BeginSearch", "FindKeys") if t + "::" in body]
    imports = "{%s}" % ", ".join(used + ["CommandMeta"]) if used else "CommandMeta"
    out = HEADER % (version, wrap(", ".join(supplemented) or "none"), imports, len(rows)) + body
    out += "];\n"
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(out)
    print("wrote %s: %d commands, %d subcommands (%d from the supplement)" % (
        os.path.relpath(OUTPUT, ROOT), len(rows),
        sum(len(m.get("subcommands", [])) for m in rows), len(supplemented)))


def wrap(text, width=72):
    """Wraps a list for the header's `//!` lines."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = (line + " " + word).strip()
    return "\n//! ".join(lines + [line])


def redis_version(conn):
    reply = conn.call("INFO", "server")
    text = reply[1] if isinstance(reply[1], str) else ""
    m = re.search(r"redis_version:(\S+)", text)
    if not m:
        sys.exit("INFO server has no redis_version")
    return m.group(1)


if __name__ == "__main__":
    main()

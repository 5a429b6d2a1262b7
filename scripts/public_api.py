#!/usr/bin/env python3
"""The public API of a crate, one line an item, from rustdoc's JSON (`--output-format json
--document-hidden-items`): what `cargo doc` shows, each item with its signature. An item
marked `#[doc(hidden)]` is left out with all it holds; an item re-exported from a hidden module
is listed where it is re-exported, as `cargo doc` inlines it. Usage: public_api.py CRATE.json"""
import json
import sys

doc = json.load(open(sys.argv[1]))
index = doc["index"]


def hidden(it):
    return any("doc(hidden)" in json.dumps(a) for a in it.get("attrs", []))


def non_exhaustive(it):
    """`#[non_exhaustive] ` before a struct, enum or variant so marked: users cannot build or
    match it exhaustively, so a field or variant added to it breaks nothing."""
    marked = any("non_exhaustive" in json.dumps(a) for a in it.get("attrs", []))
    return "#[non_exhaustive] " if marked else ""


def item(i):
    """The item of id `i`, or None where rustdoc left it out or it is `#[doc(hidden)]`."""
    it = index.get(str(i))
    return None if it is None or hidden(it) else it


def path(p):
    s = p.get("path", "")
    a = p.get("args")
    return s + args(a) if a else s


def args(a):
    if not a:
        return ""
    if "angle_bracketed" in a:
        ab = a["angle_bracketed"]
        parts = []
        for g in ab.get("args", []):
            if "type" in g:
                parts.append(ty(g["type"]))
            elif "lifetime" in g:
                parts.append(g["lifetime"])
            elif "const" in g:
                parts.append(g["const"].get("expr", "_"))
            else:
                parts.append("_")
        for c in ab.get("constraints", []):
            b = c.get("binding", {})
            if "equality" in b:
                eq = b["equality"]
                parts.append(c["name"] + " = " + (ty(eq["type"]) if "type" in eq else str(eq)))
            else:
                parts.append(c["name"] + ": " + bounds(b.get("constraint", [])))
        return "<" + ", ".join(parts) + ">" if parts else ""
    if "parenthesized" in a:
        p = a["parenthesized"]
        out = "(" + ", ".join(ty(t) for t in p.get("inputs", [])) + ")"
        if p.get("output"):
            out += " -> " + ty(p["output"])
        return out
    return ""


def bounds(bs):
    out = []
    for b in bs:
        if "trait_bound" in b:
            t = b["trait_bound"]
            m = {"maybe": "?", "maybe_const": "~const "}.get(t.get("modifier"), "")
            out.append(m + path(t["trait"]))
        elif "outlives" in b:
            out.append(b["outlives"])
        else:
            out.append(json.dumps(b, sort_keys=True))
    return " + ".join(out)


def ty(t):
    if t is None:
        return "()"
    if isinstance(t, str):
        return t
    (k, v), = t.items()
    if k == "resolved_path":
        return path(v)
    if k in ("generic", "primitive"):
        return v
    if k == "borrowed_ref":
        lt = (v["lifetime"] + " ") if v.get("lifetime") else ""
        return "&" + lt + ("mut " if v.get("is_mutable") else "") + ty(v["type"])
    if k == "raw_pointer":
        return ("*mut " if v.get("is_mutable") else "*const ") + ty(v["type"])
    if k == "tuple":
        return "(" + ", ".join(ty(x) for x in v) + ")"
    if k == "slice":
        return "[" + ty(v) + "]"
    if k == "array":
        return "[" + ty(v["type"]) + "; " + str(v["len"]) + "]"
    if k == "impl_trait":
        return "impl " + bounds(v)
    if k == "dyn_trait":
        s = " + ".join(path(x["trait"]) for x in v["traits"])
        if v.get("lifetime"):
            s += " + " + v["lifetime"]
        return "dyn " + s
    if k == "qualified_path":
        tr = path(v["trait"]) if v.get("trait") else ""
        return "<" + ty(v["self_type"]) + (" as " + tr if tr else "") + ">::" + v["name"]
    if k == "function_pointer":
        s = v["sig"]
        out = "fn(" + ", ".join(ty(x[1]) for x in s["inputs"]) + ")"
        return out + (" -> " + ty(s["output"]) if s.get("output") else "")
    return json.dumps(t, sort_keys=True)


def generics(g):
    ps = []
    for p in g.get("params", []):
        k = p["kind"]
        if "lifetime" in k:
            ps.append(p["name"])
        elif "type" in k:
            if k["type"].get("is_synthetic"):
                continue
            b = bounds(k["type"].get("bounds", []))
            ps.append(p["name"] + (": " + b if b else ""))
        elif "const" in k:
            ps.append("const " + p["name"] + ": " + ty(k["const"]["type"]))
    s = "<" + ", ".join(ps) + ">" if ps else ""
    w = []
    for wp in g.get("where_predicates", []):
        if "bound_predicate" in wp:
            b = wp["bound_predicate"]
            w.append(ty(b["type"]) + ": " + bounds(b["bounds"]))
        else:
            w.append(json.dumps(wp, sort_keys=True))
    return s, (" where " + ", ".join(w) if w else "")


def function(name, f, in_trait=False):
    g, w = generics(f.get("generics", {}))
    ins = []
    for n, t in f["sig"]["inputs"]:
        if n == "self":
            ins.append({"Self": "self", "&Self": "&self", "&mut Self": "&mut self"}.get(ty(t), "self: " + ty(t)))
        else:
            ins.append(n + ": " + ty(t))
    out = f["sig"].get("output")
    h = f.get("header", {})
    q = ("const " if h.get("is_const") else "") + ("unsafe " if h.get("is_unsafe") else "")
    sig = q + "fn " + name + g + "(" + ", ".join(ins) + ")" + (" -> " + ty(out) if out else "") + w
    # In a trait, ` { .. }` marks a provided method: one without it must be written by every
    # implementor, so adding one breaks them.
    return sig + (" { .. }" if in_trait and f.get("has_body") else "")


lines = set()
AUTO_TRAITS = {"Send", "Sync", "Unpin", "UnwindSafe", "RefUnwindSafe"}


def impl_items(owner, impls):
    for i in impls:
        im = item(i)
        if not im:
            continue
        v = im["inner"]["impl"]
        if v.get("blanket_impl"):
            continue
        if v.get("trait"):
            # Of the auto traits, those a user's code can rely on (rustc's internal ones, such as
            # `Freeze`, are no promise).
            if v.get("is_synthetic") and v["trait"].get("path") not in AUTO_TRAITS:
                continue
            g, w = generics(v.get("generics", {}))
            # The type by the path it is listed under, so that two types of one name differ.
            f = v["for"]
            target = owner + args(f["resolved_path"].get("args")) if "resolved_path" in f else ty(f)
            lines.add("impl" + g + " " + path(v["trait"]) + " for " + target + w)
            continue
        for j in v["items"]:
            it = item(j)
            if not it or it.get("visibility") != "public":
                continue
            walk(it, owner + "::" + it["name"], in_impl=True)


def walk(it, p, in_impl=False, in_trait=False, seen=set()):
    key = (it["id"], p)
    if key in seen:
        return
    seen.add(key)
    (k, v), = it["inner"].items()
    if k == "module":
        lines.add("mod " + p)
        for i in v["items"]:
            c = item(i)
            if c and (c.get("visibility") == "public" or c["inner"].get("use") is not None):
                if "use" in c["inner"]:
                    u = c["inner"]["use"]
                    if c.get("visibility") != "public":
                        continue
                    target = item(u["id"]) if u.get("id") is not None else None
                    if u.get("is_glob"):
                        if target and "module" in target["inner"]:
                            for g in target["inner"]["module"]["items"]:
                                gi = item(g)
                                if gi and gi.get("visibility") == "public":
                                    walk(gi, p + "::" + gi["name"])
                        continue
                    if target:
                        walk(target, p + "::" + u["name"])
                    else:
                        lines.add("use " + p + "::" + u["name"] + " = " + u["source"])
                else:
                    walk(c, p + "::" + c["name"])
    elif k == "function":
        lines.add(function(p, v, in_trait))
    elif k == "struct":
        g, w = generics(v.get("generics", {}))
        kind = v.get("kind", {})
        # ` { .. }` marks fields users cannot see: such a struct cannot be built or matched
        # field by field outside the crate, so a public field added to it breaks nothing.
        stripped = (isinstance(kind, dict) and "plain" in kind and kind["plain"].get("has_stripped_fields")) or (
            isinstance(kind, dict) and "tuple" in kind and any(f is None or not item(f) for f in kind["tuple"]))
        lines.add(non_exhaustive(it) + "struct " + p + g + w + (" { .. }" if stripped else ""))
        fields = []
        if isinstance(kind, dict) and "plain" in kind:
            fields = kind["plain"].get("fields", [])
        elif isinstance(kind, dict) and "tuple" in kind:
            fields = [f for f in kind["tuple"] if f is not None]
        for f in fields:
            fi = item(f)
            if fi and fi.get("visibility") == "public":
                lines.add("field " + p + "::" + fi["name"] + ": " + ty(fi["inner"]["struct_field"]))
        impl_items(p, v.get("impls", []))
    elif k == "enum":
        g, w = generics(v.get("generics", {}))
        lines.add(non_exhaustive(it) + "enum " + p + g + w + (" { .. }" if v.get("has_stripped_variants") else ""))
        for vid in v.get("variants", []):
            vi = item(vid)
            if not vi:
                continue
            vk = vi["inner"]["variant"]["kind"]
            desc = ""
            if isinstance(vk, dict) and "tuple" in vk:
                desc = "(" + ", ".join(ty(item(f)["inner"]["struct_field"]) for f in vk["tuple"] if f is not None and item(f)) + ")"
            elif isinstance(vk, dict) and "struct" in vk:
                desc = " { " + ", ".join(item(f)["name"] + ": " + ty(item(f)["inner"]["struct_field"]) for f in vk["struct"]["fields"] if item(f)) + " }"
            lines.add(non_exhaustive(vi) + "variant " + p + "::" + vi["name"] + desc)
        impl_items(p, v.get("impls", []))
    elif k == "trait":
        g, w = generics(v.get("generics", {}))
        sup = bounds(v.get("bounds", []))
        lines.add(("unsafe " if v.get("is_unsafe") else "") + "trait " + p + g + (": " + sup if sup else "") + w)
        for j in v.get("items", []):
            ti = item(j)
            if ti:
                walk(ti, p + "::" + ti["name"], in_impl=True, in_trait=True)
    elif k == "constant":
        lines.add("const " + p + ": " + ty(v["type"]))
    elif k == "static":
        lines.add("static " + p + ": " + ty(v["type"]))
    elif k == "type_alias":
        g, _ = generics(v.get("generics", {}))
        lines.add("type " + p + g + " = " + ty(v["type"]))
    elif k in ("macro", "proc_macro"):
        lines.add("macro " + p + "!")
    elif k == "assoc_type":
        lines.add("type " + p + (" = .." if v.get("type") else ""))
    elif k == "assoc_const":
        lines.add("const " + p + ": " + ty(v["type"]))
    else:
        lines.add(k + " " + p)


root = item(doc["root"])
walk(root, root["name"])
print("\n".join(sorted(lines)))

#!/usr/bin/env python3
"""Translate the declarations of the reference UR 0.12 headers into Rust.

The reference headers (ur_api.h, ur_ddi.h from the PyPI wheel intel-sycl-rt)
are read with libclang; only facts are carried over: names, enumerator values,
struct and union layouts, function signatures and DDI table order. No comment
or prose is copied. The output is committed under src/abi/, and cbindgen turns
it back into include/ur_api.h and include/ur_ddi.h.

Usage: python3 tools/gen_abi.py <dir holding unified-runtime/ur_api.h>
Needs `pip install libclang==18.1.1`; it is a maintainer's tool, not run by CI.
"""
import os
import re
import sys
import clang.cindex as ci

K = ci.CursorKind
T = ci.TypeKind

PRIM = {
    T.UCHAR: "u8", T.CHAR_U: "u8", T.SCHAR: "i8", T.CHAR_S: "core::ffi::c_char",
    T.USHORT: "u16", T.SHORT: "i16", T.UINT: "u32", T.INT: "i32",
    T.ULONG: "u64", T.LONG: "i64", T.ULONGLONG: "u64", T.LONGLONG: "i64",
    T.FLOAT: "f32", T.DOUBLE: "f64", T.BOOL: "bool",
}
STD = {"uint8_t": "u8", "int8_t": "i8", "uint16_t": "u16", "int16_t": "i16",
       "uint32_t": "u32", "int32_t": "i32", "uint64_t": "u64", "int64_t": "i64",
       "size_t": "usize", "uintptr_t": "usize", "intptr_t": "isize"}


RUST_KEYWORDS = {"type", "match", "ref", "move", "fn", "impl", "loop", "mod", "use", "where", "in", "box", "self", "struct", "enum"}


def ident(n):
    return "r#" + n if n in RUST_KEYWORDS else n


def rust_type(t):
    """Rust spelling of a C type as written in a declaration."""
    if t.kind == T.ELABORATED:
        t = t.get_named_type()
    if t.kind == T.TYPEDEF:
        name = t.get_typedef_name()
        return STD.get(name, name)
    if t.kind in PRIM:
        return PRIM[t.kind]
    if t.kind == T.VOID:
        return "core::ffi::c_void"
    if t.kind == T.POINTER:
        pointee = t.get_pointee()
        if pointee.kind == T.FUNCTIONPROTO:
            return fn_type(pointee)
        q = "*const " if pointee.is_const_qualified() else "*mut "
        return q + rust_type(pointee)
    if t.kind == T.CONSTANTARRAY:
        return "[%s; %d]" % (rust_type(t.get_array_element_type()), t.get_array_size())
    if t.kind == T.RECORD or t.kind == T.ENUM:
        return t.spelling.replace("struct ", "").replace("union ", "").replace("enum ", "").replace("const ", "")
    raise SystemExit("unhandled type %s (%s)" % (t.spelling, t.kind))


def fn_type(proto):
    args = ", ".join(rust_type(a) for a in proto.argument_types())
    ret = proto.get_result()
    ret_s = "" if ret.kind == T.VOID else " -> " + rust_type(ret)
    return "Option<unsafe extern \"C\" fn(%s)%s>" % (args, ret_s)


def is_handle(t):
    return t.startswith("ur_") and t.endswith("_handle_t") and t != "ur_native_handle_t"


def is_object_handle(t):
    """A pointer to a UR object, as opposed to an integer native handle."""
    return is_handle(t) and not t.endswith("native_handle_t")


def dispatch_param(params):
    """What the loader reads to find the owning adapter: the first handle
    argument, else the first element of the first array of handles, else none."""
    for n, t in params:
        if is_handle(t):
            return n
    for n, t in params:
        if t.startswith("*const ") and is_handle(t[len("*const "):]):
            return "[%s]" % n
    return "none"


def null_checks(api_h):
    """Per entry point of ur_api.h, from its documentation: the arguments its
    @returns list names under INVALID_NULL_HANDLE and INVALID_NULL_POINTER
    as a plain `NULL == name`, and each parameter's direction tags."""
    lines = open(api_h).read().split("\n")
    out = {}
    decl = re.compile(r"^UR_APIEXPORT ur_result_t UR_APICALL (ur\w+)\($")
    cond = re.compile(r"^///\s+\+ `(.*)`$")
    for i, line in enumerate(lines):
        m = decl.match(line)
        j = i - 1
        if not m and i > 0 and lines[i - 1] == "UR_APIEXPORT ur_result_t UR_APICALL":
            m = re.match(r"^(ur\w+)\($", line)
            j = i - 2
        if not m:
            continue
        name = m.group(1)
        while j >= 0 and lines[j].startswith("///"):
            j -= 1
        doc = lines[j + 1:i]
        lists = {"INVALID_NULL_HANDLE": [], "INVALID_NULL_POINTER": []}
        current = None
        for d in doc:
            h = re.match(r"^///     - ::UR_RESULT_ERROR_(\w+)$", d)
            if h:
                current = h.group(1)
                continue
            c = cond.match(d)
            if c and current in lists:
                for part in c.group(1).split("||"):
                    p = re.fullmatch(r"\s*NULL == (\w+)\s*", part)
                    if p:
                        lists[current].append(p.group(1))
        tags = {}
        k = i + 1
        tag = ""
        while True:
            t = lines[k].strip()
            if t.startswith("///"):
                tm = re.match(r"/// ((?:\[[^\]]*\])+)", t)
                tag = tm.group(1) if tm else tag
            else:
                pm = re.search(r"(\w+)\)?[,;)]*$", t.rstrip(");,"))
                if pm:
                    tags[pm.group(1)] = tag
                tag = ""
            if t.endswith(");"):
                break
            k += 1
        out[name] = (lists["INVALID_NULL_HANDLE"], lists["INVALID_NULL_POINTER"], tags)
    return out


def parse(path, args):
    index = ci.Index.create()
    tu = index.parse(path, args=args)
    for d in tu.diagnostics:
        if d.severity >= ci.Diagnostic.Error:
            raise SystemExit("clang: %s" % d)
    return tu


def c_only_macros(api_h):
    """Macros with no Rust item behind them: the version and bit helpers
    (written here in our own form) and the string constants naming device
    binary targets (values copied from the reference)."""
    out = [
        "#define UR_MAKE_VERSION(major, minor) ((((uint32_t)(major)) << 16) | (((uint32_t)(minor)) & 0xffffu))\n",
        "#define UR_MAJOR_VERSION(version) (((uint32_t)(version)) >> 16)\n",
        "#define UR_MINOR_VERSION(version) (((uint32_t)(version)) & 0xffffu)\n",
        "#define UR_BIT(bit) (1u << (bit))\n",
    ]
    with open(api_h) as f:
        for line in f:
            p = line.split(None, 2)
            if len(p) == 3 and p[0] == "#define" and p[1].startswith("UR_DEVICE_BINARY_TARGET_") and p[2].startswith('"'):
                out.append("#define %s %s\n" % (p[1], p[2].strip()))
    return out


def write_cbindgen_config(path, guard, includes, exclude, export, forward=(), extra_defines=()):
    with open(path, "w") as f:
        f.write("# Generated by tools/gen_abi.py: cbindgen settings for one of the two headers.\n")
        f.write('language = "C"\nstyle = "both"\ninclude_guard = "%s"\ncpp_compat = true\n' % guard)
        f.write('header = "/* Unified Runtime 0.12 compatible API, generated by cbindgen from src/abi. Do not edit. */"\n')
        if forward or extra_defines:
            f.write('after_includes = """\n%s%s"""\n' % ("".join(extra_defines),
                    "".join("typedef struct %s %s;\n" % (o, o) for o in forward)))
        f.write("no_includes = %s\n" % ("true" if includes else "false"))
        f.write("sys_includes = %s\n" % ('["stdbool.h", "stddef.h", "stdint.h"]' if not includes else "[]"))
        f.write("includes = [%s]\n" % ", ".join(includes))
        f.write('usize_is_size_t = true\n[export]\n')
        f.write('item_types = ["enums", "structs", "unions", "typedefs", "opaque", "functions", "constants"]\n')
        f.write("include = [\n%s]\n" % "".join('  "%s",\n' % e for e in export))
        f.write("exclude = [\n%s]\n" % "".join('  "%s",\n' % e for e in sorted(set(exclude))))


def write_trace_tables(path, hdr, enums, records, aliases, opaque, entry, api_fns, docs):
    """The loader's layers: enumerator names per enum, flag names per flags
    type, a printer per struct, and what each entry point does to the
    handles it gives out (for leak checking)."""
    simple = set(STD.values()) | set(PRIM.values()) | set(enums) | set(aliases)
    f = open(path, "w")
    f.write(hdr + allow_all() + "//! Names and printers for the tracing and leak-checking layers.\n"
            "use super::trace::{field, next_chain, TraceArg};\nuse ur_core::abi::*;\n\n")
    for name, (repr_t, vals) in enums.items():
        f.write("impl TraceArg for %s {\n    fn trace(&self, _: &str, _: bool, s: &mut String) {\n"
                "        let n = match self.0 {\n" % name)
        seen = set()
        for en, ev in vals:
            if en.endswith("_FORCE_UINT32") or ev in seen:
                continue
            seen.add(ev)
            f.write("            %s => \"%s\",\n" % (ev if repr_t == "i32" else hex(ev), en))
        f.write("            v => return super::trace::unnamed(v as i64, s),\n        };\n        s.push_str(n);\n    }\n}\n")
    f.write("\n/// The bits of a flags type, by name.\npub fn flag_table(ty: &str) -> Option<&'static [(u64, &'static str)]> {\n    Some(match ty {\n")
    for name in sorted(aliases):
        if name.endswith("_flags_t") and name[:-len("flags_t")] + "flag_t" in enums:
            vals = [(en, ev) for en, ev in enums[name[:-len("flags_t")] + "flag_t"][1] if not en.endswith("_FORCE_UINT32") and ev > 0]
            f.write("        \"%s\" => &[%s],\n" % (name, ", ".join('(%s, "%s")' % (hex(ev), en) for en, ev in vals)))
    f.write("        _ => return None,\n    })\n}\n\n")
    for name, (kw, fields) in records.items():
        if kw != "struct":
            continue
        f.write("impl TraceArg for %s {\n    fn trace(&self, _: &str, _: bool, s: &mut String) {\n        s.push('{');\n" % name)
        for i, (fn_, ft) in enumerate(fields):
            sep = "" if i == 0 else ", "
            if fn_ == "pNext" and ft.startswith("*"):
                f.write("        next_chain(s, \"%s\", self.pNext as *const core::ffi::c_void);\n" % sep)
            elif ft in simple or ft.startswith("*") or ft.startswith("Option<"):
                f.write("        field(s, \"%s%s\", &self.%s, \"%s\");\n" % (sep, fn_, fn_, ft))
            else:
                f.write("        s.push_str(\"%s%s: ..\");\n" % (sep, fn_))
        f.write("        s.push('}');\n    }\n}\n")
    f.write("\n")
    for o in opaque:
        f.write("impl super::trace::Pointee for %s {}\n" % o)
    for name, (kw, _) in records.items():
        if kw == "union":
            f.write("impl super::trace::Pointee for %s {}\n" % name)
    # Leak checking: an [out] pointer to one object handle creates it; the
    # retain and release entry points count on their handle. Command-buffer
    # commands belong to their command-buffer and have no release.
    f.write("\n/// What an entry point does to a handle's count: `(effect, parameter index, kind)`.\n"
            "pub fn handle_effect(ep: &str) -> Option<(super::leak::Effect, usize, &'static str)> {\n"
            "    use super::leak::Effect::*;\n    Some(match ep {\n")
    untracked = {"ur_exp_command_buffer_command_handle_t"}
    effects = []
    for _, _, fname in entry:
        params = api_fns[fname]
        tags = docs[fname][2]
        kind = lambda t: t[len("ur_"):-len("_handle_t")]
        eff = None
        if re.search(r"Retain(Exp)?$", fname):
            idx = [i for i, (n, t) in enumerate(params) if is_object_handle(t)]
            eff = ("Retain", idx[-1], kind(params[idx[-1]][1]))
        elif re.search(r"(Release|Destroy|ReleaseExternal\w+|Close\w*)(Exp)?$", fname) and not fname.startswith("urIPCPut"):
            # The handle released is the one whose object the name says
            # (urUSMPoolDestroyExp: the pool, not the context before it).
            word = lambda t: kind(t).split("_")[-1].capitalize()
            idx = [i for i, (n, t) in enumerate(params)
                   if is_object_handle(t) and t not in untracked and word(t) in fname]
            if idx:
                eff = ("Release", idx[-1], kind(params[idx[-1]][1]))
        if eff is None and "Get" not in fname:  # a getter hands out a handle it keeps
            for i, (n, t) in enumerate(params):
                inner = t[len("*mut "):] if t.startswith("*mut ") else ""
                tag = tags.get(n, "")
                if is_object_handle(inner) and inner not in untracked and (tag.startswith("[out]") or tag.startswith("[in,out]")) and "range" not in tag:
                    eff = ("Create", i, kind(inner))
                    break
        if eff is None and "Get" not in fname:
            # An [out] array of new handles (urDevicePartition): as many as
            # its count parameter allows, or as the `pNum*Ret` output says.
            names = [n for n, _ in params]
            for i, (n, t) in enumerate(params):
                inner = t[len("*mut "):] if t.startswith("*mut ") else ""
                m = re.search(r"range\(0, (\w+)\)", tags.get(n, ""))
                if is_object_handle(inner) and inner not in untracked and tags.get(n, "").startswith("[out]") and m and m.group(1) in names:
                    ret = [k for k, (rn, rt) in enumerate(params) if rn.startswith("pNum") and rn.endswith("Ret") and rt == "*mut u32"]
                    eff = ("CreateArray { count: %d, returned: %s }" % (names.index(m.group(1)), "Some(%d)" % ret[0] if ret else "None"), i, kind(inner))
                    break
        if eff:
            effects.append((fname, eff))
    # A kind with no release entry point (platforms) is never owned by the
    # user, so making one leaks nothing.
    released = {eff[2] for _, eff in effects if eff[0] == "Release"}
    for fname, eff in effects:
        if eff[0] == "Retain" or eff[2] in released:
            f.write("        \"%s\" => (%s, %d, \"%s\"),\n" % (fname, eff[0], eff[1], eff[2]))
    f.write("        _ => return None,\n    })\n}\n")
    f.close()


def allow_all():
    return "#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, clippy::all)]\n"


def main():
    inc = sys.argv[1]
    api_h = os.path.join(inc, "unified-runtime", "ur_api.h")
    ddi_h = os.path.join(inc, "unified-runtime", "ur_ddi.h")
    args = ["-x", "c", "-std=c2x", "-I", inc, "-isystem", os.popen("gcc -print-file-name=include").read().strip()]
    api = parse(api_h, args)
    ddi = parse(ddi_h, args)
    out_dir = os.path.join(os.path.dirname(__file__), "..", "src", "abi")

    in_file = lambda c, f: c.location.file is not None and os.path.basename(c.location.file.name) == f

    types_rs, consts_rs, fns = [], [], []
    seen = set()
    api_item_names = []
    opaque_structs = []  # handle targets: declared, never defined, in C
    enums, records, aliases = {}, {}, {}  # for the loader's trace tables
    for c in api.cursor.get_children():
        if not in_file(c, "ur_api.h"):
            continue
        if c.kind == K.TYPEDEF_DECL:
            name = c.spelling
            if name in seen:
                continue
            seen.add(name)
            under = c.underlying_typedef_type
            decl = under.get_declaration()
            if decl.kind == K.ENUM_DECL:
                vals = [(e.spelling, e.enum_value) for e in decl.get_children() if e.kind == K.ENUM_CONSTANT_DECL]
                signed = any(v < 0 for _, v in vals)
                repr_t = "i32" if signed else "u32"
                types_rs.append(
                    "#[repr(transparent)]\n#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]\n"
                    "pub struct %s(pub %s);\n" % (name, repr_t))
                enums[name] = (repr_t, vals)
                for en, ev in vals:
                    consts_rs.append("pub const %s: %s = %s(%s);" % (en, name, name, ev if signed else hex(ev)))
                api_item_names.append(name)
            elif decl.kind in (K.STRUCT_DECL, K.UNION_DECL) and decl.is_definition():
                kw = "struct" if decl.kind == K.STRUCT_DECL else "union"
                fields = [(ident(f.spelling), rust_type(f.type)) for f in decl.get_children() if f.kind == K.FIELD_DECL]
                body = "".join("    pub %s: %s,\n" % (fn_, ft) for fn_, ft in fields)
                types_rs.append("#[repr(C)]\n#[derive(Clone, Copy)]\npub %s %s {\n%s}\n" % (kw, name, body))
                records[name] = (kw, fields)
                api_item_names.append(name)
            elif under.kind == T.POINTER and under.get_pointee().kind in (T.ELABORATED, T.RECORD) \
                    and not under.get_pointee().get_declaration().is_definition():
                opaque = under.get_pointee().spelling.replace("struct ", "")
                opaque_structs.append(opaque)
                types_rs.append("#[repr(C)]\npub struct %s {\n    _opaque: [u8; 0],\n}\npub type %s = *mut %s;\n" % (opaque, name, opaque))
                api_item_names.append(name)
            else:
                types_rs.append("pub type %s = %s;\n" % (name, rust_type(under)))
                aliases[name] = rust_type(under)
                api_item_names.append(name)
        elif c.kind == K.FUNCTION_DECL and c.spelling.startswith("ur"):
            params = [(ident(a.spelling), rust_type(a.type)) for a in c.get_arguments()]
            fns.append((c.spelling, params))

    # Simple integer macros (masks, version helpers are not needed).
    macros = []
    with open(api_h) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == "#define" and p[1].endswith("_MASK") and p[2].startswith("0x"):
                macros.append("pub const %s: u32 = %s;" % (p[1], p[2]))

    # DDI tables, in header order.
    tables = []  # (struct name, [(field, pfn type)])
    getters = []  # (getter fn name, table struct)
    pfn_of = {}
    for c in ddi.cursor.get_children():
        if not in_file(c, "ur_ddi.h"):
            continue
        if c.kind == K.TYPEDEF_DECL:
            decl = c.underlying_typedef_type.get_declaration()
            if decl.kind == K.STRUCT_DECL and decl.is_definition():
                fields = [(ident(f.spelling), rust_type(f.type)) for f in decl.get_children() if f.kind == K.FIELD_DECL]
                tables.append((c.spelling, fields))
            elif c.spelling.startswith("ur_pfn"):
                pfn_of[c.spelling] = c.underlying_typedef_type
        elif c.kind == K.FUNCTION_DECL:
            args = list(c.get_arguments())
            getters.append((c.spelling, rust_type(args[1].type).replace("*mut ", "")))

    api_fns = dict(fns)
    entry = []  # (table short name, field, fn name)
    for tname, fields in tables:
        if tname == "ur_dditable_t":
            continue
        for field, pfn in fields:
            fname = "ur" + pfn[len("ur_pfn"):-len("_t")]
            if fname not in api_fns:
                raise SystemExit("no declaration for %s" % fname)
            entry.append((tname, field, fname))
    in_tables = {e[2] for e in entry}
    loader_only = [n for n, _ in fns if n not in in_tables]

    hdr = ("// Generated by tools/gen_abi.py from the UR 0.12 reference headers: names,\n"
           "// values and layouts only. Do not edit by hand; regenerate.\n")
    allow = "#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, clippy::all)]\n"

    with open(os.path.join(out_dir, "types.rs"), "w") as f:
        f.write(hdr + allow + "\n")
        f.write("\n".join(types_rs))
        f.write("\n" + "\n".join(consts_rs) + "\n\n" + "\n".join(macros) + "\n")

    def sig(params):
        return ", ".join("%s: %s" % (n, t) for n, t in params)

    with open(os.path.join(out_dir, "ddi.rs"), "w") as f:
        f.write(hdr + allow + "use super::types::*;\n\n")
        for name, params in fns:
            if name in in_tables:
                f.write("pub type ur_pfn%s_t = Option<unsafe extern \"C\" fn(%s) -> ur_result_t>;\n"
                        % (name[2:], ", ".join(t for _, t in params)))
        f.write("\n")
        for tname, fields in tables:
            body = "".join("    pub %s: %s,\n" % (fn_, ft) for fn_, ft in fields)
            f.write("#[repr(C)]\n#[derive(Clone, Copy)]\npub struct %s {\n%s}\n\n" % (tname, body))
        for g, t in getters:
            f.write("pub type ur_pfn%s_t = Option<unsafe extern \"C\" fn(ur_api_version_t, *mut %s) -> ur_result_t>;\n" % (g[2:], t))

    with open(os.path.join(out_dir, "prototypes.rs"), "w") as f:
        f.write(hdr + allow + "//! Declarations of every entry point, read by cbindgen for the headers.\n"
                "//! Nothing in Rust calls them through this block.\nuse super::types::*;\nuse super::ddi::*;\n\n")
        f.write("extern \"C\" {\n")
        for name, params in fns:
            f.write("    pub fn %s(%s) -> ur_result_t;\n" % (name, sig(params)))
        for g, t in getters:
            f.write("    pub fn %s(version: ur_api_version_t, pDdiTable: *mut %s) -> ur_result_t;\n" % (g, t))
        f.write("}\n")

    with open(os.path.join(out_dir, "entry_points.rs"), "w") as f:
        f.write(hdr + "\n/// Calls `$m!` with every entry point that sits in a DDI table, as\n"
                "/// `Member.field => urName(param: Type, ...) via dispatch;`, where dispatch names\n"
                "/// the argument whose handle picks the adapter (`[p]`: first element of array p).\n"
                "/// One list drives the DDI tables, the loader's exports, the adapters' stubs and the spec check.\n")
        f.write("#[macro_export]\nmacro_rules! for_each_entry_point {\n    ($m:ident $(, $extra:tt)*) => {\n        $m! {\n            $($extra)*\n")
        member = {t: n for n, t in dict(tables)["ur_dditable_t"]}
        for tname, field, fname in entry:
            f.write("            %s.%s => %s(%s) via %s;\n"
                    % (member[tname], field, fname, sig(api_fns[fname]), dispatch_param(api_fns[fname])))
        f.write("        }\n    };\n}\n\n")
        f.write("/// The DDI table getters an adapter exports, as `getter(Table) => ur_dditable_t field;`.\n")
        f.write("#[macro_export]\nmacro_rules! for_each_ddi_table {\n    ($m:ident $(, $extra:tt)*) => {\n        $m! {\n            $($extra)*\n")
        for g, t in getters:
            f.write("            %s(%s) => %s;\n" % (g, t, member[t]))
        f.write("        }\n    };\n}\n\n")
        f.write("/// Entry points that no DDI table holds: the loader answers them itself.\n")
        f.write("pub const LOADER_ONLY_ENTRY_POINTS: &[&str] = &[%s];\n" % ", ".join('"%s"' % n for n in loader_only))

    # What every entry point must check before anything else: the @returns
    # lists of the reference header, cross-checked against the types (every
    # object handle not tagged [optional] is a required handle).
    docs = null_checks(api_h)
    checks = []
    for _, _, fname in entry:
        handles, pointers, tags = docs[fname]
        params = api_fns[fname]
        by_type = [n for n, t in params if is_object_handle(t) and "[optional]" not in tags.get(n, "")]
        if by_type != handles:
            raise SystemExit("%s: required handles by type %s, by @returns %s" % (fname, by_type, handles))
        names = [n for n, _ in params]
        for n in handles + pointers:
            if n not in names:
                raise SystemExit("%s: @returns names %s, not a parameter" % (fname, n))
        checks.append((fname, handles, pointers))
    with open(os.path.join(out_dir, "null_checks.rs"), "w") as f:
        f.write(hdr + allow + "//! The null checks that come before anything else in every entry point held by a\n"
                "//! DDI table: the arguments that the reference header's @returns lists name as\n"
                "//! `NULL == x` under INVALID_NULL_HANDLE (exactly the object handles not tagged\n"
                "//! `[optional]`) and under INVALID_NULL_POINTER.\nuse super::types::*;\n\n")
        f.write("/// `(entry point, required handles, required pointers)`, in DDI order.\n")
        f.write("pub const NULL_CHECKS: &[(&str, &[&str], &[&str])] = &[\n")
        for fname, handles, pointers in checks:
            f.write("    (\"%s\", &[%s], &[%s]),\n" % (fname, ", ".join('"%s"' % h for h in handles),
                                                      ", ".join('"%s"' % p for p in pointers)))
        f.write("];\n\n")
        f.write("/// One function per entry point, with its C parameters: INVALID_NULL_HANDLE for a\n"
                "/// null required handle, else INVALID_NULL_POINTER for a null required pointer,\n"
                "/// else SUCCESS. Reads nothing through any argument.\n")
        f.write("#[allow(unused_variables)]\npub mod check {\n    use super::*;\n")
        for fname, handles, pointers in checks:
            f.write("    #[inline]\n    pub fn %s(%s) -> ur_result_t {\n" % (fname, sig(api_fns[fname])))
            for h in handles:
                f.write("        if %s.is_null() {\n            return UR_RESULT_ERROR_INVALID_NULL_HANDLE;\n        }\n" % h)
            types = dict(api_fns[fname])
            for q in pointers:
                test = "is_null" if types[q].startswith("*") else "is_none"  # else a callback: Option<fn>
                f.write("        if %s.%s() {\n            return UR_RESULT_ERROR_INVALID_NULL_POINTER;\n        }\n" % (q, test))
            f.write("        UR_RESULT_SUCCESS\n    }\n")
        f.write("}\n")

    write_trace_tables(os.path.join(os.path.dirname(__file__), "..", "loader", "src", "layers", "abi_names.rs"),
                       hdr, enums, records, aliases, opaque_structs, entry, api_fns, docs)

    ddi_items = [t for t, _ in tables] + ["ur_pfn%s_t" % n[2:] for n in in_tables] + \
        ["ur_pfn%s_t" % g[2:] for g, _ in getters] + [g for g, _ in getters]
    api_items = api_item_names + [n for n, _ in fns] + \
        [l.split()[2].rstrip(":") for l in consts_rs + macros]
    spec_dir = os.path.join(os.path.dirname(__file__), "..", "spec")
    write_cbindgen_config(os.path.join(spec_dir, "cbindgen_api.toml"), "UR_API_H_INCLUDED", [], ddi_items + opaque_structs,
                          api_item_names, opaque_structs, c_only_macros(api_h))
    write_cbindgen_config(os.path.join(spec_dir, "cbindgen_ddi.toml"), "UR_DDI_H_INCLUDED", ['"ur_api.h"'], api_items + opaque_structs,
                          [t for t, _ in tables] + ["ur_pfn%s_t" % g[2:] for g, _ in getters])
    print("types %d consts %d fns %d tables %d entry %d loader-only %s" %
          (len(types_rs), len(consts_rs), len(fns), len(tables), len(entry), loader_only))


if __name__ == "__main__":
    main()

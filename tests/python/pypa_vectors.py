#!/usr/bin/env python3
# Regenerates pypa_vectors.inc from pypa/packaging's tests (Apache-2.0 or BSD-2-Clause):
#   git clone https://github.com/pypa/packaging && cd packaging
#   python3 PATH/pypa_vectors.py tests/test_version.py tests/test_specifiers.py $(git rev-parse --short HEAD) PATH/pypa_vectors.inc \
#       tests/test_markers.py tests/test_requirements.py
import ast, itertools, json, sys

def params(path):
    """test name -> list of parametrize argument values (evaluated where literal)."""
    tree = ast.parse(open(path).read())
    env = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                env[node.targets[0].id] = ast.literal_eval(node.value)
            except Exception:
                pass
    out = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef,)):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and getattr(dec.func, "attr", "") == "parametrize" and len(dec.args) >= 2:
                src = ast.unparse(dec.args[1])
                try:
                    val = eval(src, {"__builtins__": {"range": range, "zip": zip, "list": list, "tuple": tuple, "enumerate": enumerate, "len": len, "set": set}, "os": __import__("os"), "itertools": __import__("itertools"), **env})
                except Exception as e:
                    continue
                out.setdefault(node.name, []).append(val)
    return out, env

def cstr(s):
    return json.dumps(s, ensure_ascii=True).replace("\\u", "\\u")

v, venv = params(sys.argv[1])
s, senv = params(sys.argv[2])
lines = ["// Generated from pypa/packaging " + sys.argv[3] + " tests/test_version.py, tests/test_specifiers.py,",
         "// tests/test_markers.py and tests/test_requirements.py by tests/python/pypa_vectors.py; packaging is Apache-2.0 or BSD-2-Clause. Do not edit by hand.",
         "#pragma once", "#include <tuple>", "#include <vector>", "", "namespace pypa {", ""]
def emit(name, items, fmt):
    lines.append(f"inline const std::vector<{fmt}> {name} = {{")
    for it in items:
        if isinstance(it, tuple):
            lines.append("    {" + ", ".join(cstr(x) if isinstance(x, str) else ("true" if x is True else "false" if x is False else str(x)) for x in it) + "},")
        else:
            lines.append("    " + cstr(it) + ",")
    lines.append("};")
    lines.append("")
emit("kVersionsInOrder", venv["VERSIONS"], "const char*")
emit("kInvalidVersions", v["test_invalid_versions"][0], "const char*")
emit("kNormalized", [x for x in v["test_normalized_versions"][0]], "std::pair<const char*, const char*>")
emit("kPublic", v["test_version_public"][0], "std::pair<const char*, const char*>")
emit("kBaseVersion", v["test_version_base_version"][0], "std::pair<const char*, const char*>")
emit("kLocal", [(a, b if b is not None else "") for a, b in v["test_version_local"][0]], "std::pair<const char*, const char*>")
emit("kIsPrerelease", v["test_version_is_prerelease"][0], "std::pair<const char*, bool>")
# Specifiers: (version, spec, expected)
contains = []
for name in ("test_specifiers",):
    for plist in s.get(name, []):
        for item in plist:
            if isinstance(item, tuple) and len(item) == 3 and isinstance(item[2], str) and item[2] in ("True", "False"):
                pass
if "test_specifiers" in s:
    for item in s["test_specifiers"][0]:
        version, spec, expected = item
        contains.append((version, spec, bool(expected)))
emit("kSpecifierContains", contains, "std::tuple<const char*, const char*, bool>")
invalid_specs = []
for name in ("test_specifiers_invalid",):
    for plist in s.get(name, []):
        invalid_specs += [x for x in plist if isinstance(x, str)]
emit("kInvalidSpecifiers", invalid_specs, "const char*")
# Markers: variables, operators and values whose every combination parses, the invalid ones,
# and evaluations against an explicit environment (the one against the running os.name is left out).
m, menv = params(sys.argv[5])
emit("kMarkerVariables", menv["VARIABLES"], "const char*")
emit("kMarkerOperators", menv["OPERATORS"], "const char*")
emit("kMarkerValues", menv["VALUES"], "const char*")
emit("kInvalidMarkers", m["test_parses_invalid"][0], "const char*")
lines.append("struct MarkerCase { const char* marker; std::vector<std::pair<const char*, const char*>> env; bool expected; };")
lines.append("inline const std::vector<MarkerCase> kMarkerEvaluations = {")
for marker, env, expected in m["test_evaluates"][0]:
    if env is None:
        continue
    pairs = ", ".join("{" + cstr(k) + ", " + cstr(v) + "}" for k, v in env.items())
    lines.append("    {" + cstr(marker) + ", {" + pairs + "}, " + ("true" if expected else "false") + "},")
lines.append("};")
lines.append("")
# Requirements: the axes of test_basic_valid_requirement_parsing (the C++ test builds their
# product as the Python test does), the other valid forms, and every string a test_error_* case
# expects InvalidRequirement for.
r, renv = params(sys.argv[6])
rfuncs = {n.name: n for n in ast.walk(ast.parse(open(sys.argv[6]).read())) if isinstance(n, ast.FunctionDef)}
basic = r["test_basic_valid_requirement_parsing"]  # decorators bottom-up in source order: name, extras, (url, spec), marker, ws
axes = {}
for val in basic:
    if val and isinstance(val[0], set) or val == [set(), {"a"}, {"a", "b"}, {"a", "B", "CDEF123"}]:
        axes["extras"] = val
    elif val and isinstance(val[0], tuple):
        axes["urlspec"] = val
    elif val and val[0] is None:
        axes["marker"] = val
    elif val == ["", " ", "\t"]:
        axes["ws"] = val
    else:
        axes["name"] = val
emit("kReqNames", axes["name"], "const char*")
lines.append("inline const std::vector<std::vector<const char*>> kReqExtras = {")
for e in axes["extras"]:
    lines.append("    {" + ", ".join(cstr(x) for x in sorted(e)) + "},")
lines.append("};")
lines.append("")
lines.append("// (url or nullptr, specifier with {ws} where whitespace goes)")
lines.append("inline const std::vector<std::pair<const char*, const char*>> kReqUrlSpecs = {")
for url, spec in axes["urlspec"]:
    lines.append("    {" + ("nullptr" if url is None else cstr(url)) + ", " + cstr(spec) + "},")
lines.append("};")
lines.append("")
lines.append("inline const std::vector<const char*> kReqMarkers = {")
for m_ in axes["marker"]:
    lines.append("    " + ("nullptr" if m_ is None else cstr(m_)) + ",")
lines.append("};")
lines.append("")
emit("kReqWhitespace", axes["ws"], "const char*")
emit("kReqValidMarkers", r["test_valid_marker"][0], "const char*")
emit("kReqFileUrls", r["test_file_url"][0], "const char*")
emit("kReqNormalized", r["test_normalized_requirements"][0], "std::pair<const char*, const char*>")
emit("kReqTrailingWhitespace", r["test_trailing_horizontal_whitespace"][0], "const char*")
strrepr = r["test_str_and_repr"]
emit("kReqEqual", renv["EQUAL_DEPENDENCIES"], "std::pair<const char*, const char*>")
emit("kReqEquivalent", renv["EQUIVALENT_DEPENDENCIES"], "std::pair<const char*, const char*>")
emit("kReqDifferent", renv["DIFFERENT_DEPENDENCIES"], "std::pair<const char*, const char*>")
emit("kReqStrForms", ["name" + e + u + m_ for m_ in strrepr[2] for e in strrepr[1] for u in strrepr[0]], "const char*")
invalid = []
for name, fn in rfuncs.items():
    if not name.startswith("test_error_"):
        continue
    fparams = r.get(name, [])
    if name == "test_error_when_suffixed_with_line_break":
        invalid += [req + lb for lb in fparams[0] for req in fparams[1]]
        continue
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "to_parse":
            if isinstance(node.value, ast.Constant):
                invalid.append(node.value.value)
            else:  # an f-string over the function's one parametrized name
                argname = [a.arg for a in fn.args.args if a.arg != "self"][0]
                for val in fparams[0]:
                    invalid.append(eval(compile(ast.Expression(node.value), "f", "eval"), {argname: val}))
    if not any(isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "to_parse" for n in ast.walk(fn)):
        invalid += [t for t, _ in fparams[0]]
emit("kReqInvalid", invalid, "const char*")
lines.append("}  // namespace pypa")
open(sys.argv[4], "w").write("\n".join(lines) + "\n")
print(len(venv["VERSIONS"]), len(contains), len(invalid_specs), file=sys.stderr)

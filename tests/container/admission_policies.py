#!/usr/bin/env python3
"""Keeps container/k8s/admission/ consistent with what `kernodeck audit --attach` writes: both
policies ask for Kernodeck's predicate type (as include/kernodeck/attest/predicate.h declares it),
require the verdict pass and a maximum age on the signed time (fields docs/attestation.md
documents), verify with a public key and consult no transparency log. Run by ctest; needs
python3-yaml.

The controllers themselves are not run here (see the folder's README), but the policies are
evaluated: a model of how each controller combines the verified statements under the `.att` tag
(Kyverno: every statement of the type must meet the conditions; policy-controller v0.15: an
attestation entry keeps the statements its Rego admits, one is enough for the entry, and the
ClusterImagePolicy-level Rego then judges what the entries kept; the older "every one must hold"
reading too) runs the files' own conditions and Rego, the latter through a small evaluator of
the Rego subset they use (it refuses anything else). Issue 39 section 4: an older signed pass put
back beside the newest fail must not admit."""
import os
import re
import sys

import yaml

root = sys.argv[1]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def load(name):
    with open(os.path.join(root, "container", "k8s", "admission", name)) as f:
        return yaml.safe_load(f)


with open(os.path.join(root, "include", "kernodeck", "attest", "predicate.h")) as f:
    m = re.search(r'kReportPredicateType = "([^"]+)"', f.read())
predicate_type = m.group(1)
with open(os.path.join(root, "docs", "attestation.md")) as f:
    documented = set(re.findall(r"^\| `(\w+)` \|", f.read(), re.M))
check({"verdict", "time", "findings", "fail_on", "kernodeck_version"} <= documented,
      "docs/attestation.md documents the predicate's top-level fields")

ky = load("kyverno-clusterpolicy.yaml")
check(ky["apiVersion"] == "kyverno.io/v1" and ky["kind"] == "ClusterPolicy", "Kyverno: a kyverno.io/v1 ClusterPolicy")
rule = ky["spec"]["rules"][0]
check(rule["match"]["any"][0]["resources"]["kinds"] == ["Pod"], "Kyverno: the rule matches pods")
vi = rule["verifyImages"][0]
check(vi.get("failureAction") == "Enforce" and ky["spec"].get("failurePolicy") == "Fail", "Kyverno: enforced, failing closed")
att = vi["attestations"][0]
check(att["type"] == predicate_type, "Kyverno: the attestation type is Kernodeck's predicate type " + predicate_type)
entry = att["attestors"][0]["entries"][0]["keys"]
check("BEGIN PUBLIC KEY" in entry["publicKeys"], "Kyverno: verified with a public key")
check(entry["rekor"]["ignoreTlog"] is True and entry["ctlog"]["ignoreSCT"] is True, "Kyverno: no transparency log")
conds = att["conditions"][0]["all"]
check(any(c["key"] == "{{ verdict }}" and c["operator"] == "Equals" and c["value"] == "pass" for c in conds),
      "Kyverno: the verdict must be pass")
check(any("{{ time }}" in c["key"] and "time_since" in c["key"] and c["operator"] == "LessThan" for c in conds),
      "Kyverno: the signed time must be younger than the maximum age")
for c in conds:
    for field in re.findall(r"\{\{ (\w+) \}\}", c["key"]):
        check(field in documented, "Kyverno: the condition's field " + field + " is a documented predicate field")

pc = load("policy-controller-clusterimagepolicy.yaml")
check(pc["apiVersion"] == "policy.sigstore.dev/v1beta1" and pc["kind"] == "ClusterImagePolicy",
      "policy-controller: a v1beta1 ClusterImagePolicy")
auth = pc["spec"]["authorities"][0]
check("BEGIN PUBLIC KEY" in auth["key"]["data"], "policy-controller: a key authority")
check("ctlog" not in auth and "keyless" not in auth, "policy-controller: no transparency log, no keyless")
check(all(a["predicateType"] == predicate_type for a in auth["attestations"]),
      "policy-controller: the attestations' predicate type is Kernodeck's")
check(any("policy" not in a for a in auth["attestations"]),
      "policy-controller: one attestation entry keeps every verified Kernodeck statement")
pa = [a for a in auth["attestations"] if "policy" in a][0]
rego = pa["policy"]["data"]
check(pa["policy"]["type"] == "rego" and "package sigstore" in rego and "isCompliant" in rego,
      "policy-controller: a Rego policy in package sigstore with rule isCompliant")
check('input.predicate.verdict == "pass"' in rego, "policy-controller: the verdict must be pass")
check("time.parse_rfc3339_ns(input.predicate.time)" in rego and "time.now_ns()" in rego,
      "policy-controller: the signed time must be younger than the maximum age")
check('input.predicateType == "' + predicate_type + '"' in rego, "policy-controller: the Rego names the predicate type")
for field in re.findall(r"input\.predicate\.(\w+)", rego):
    check(field in documented, "policy-controller: the policy's field " + field + " is a documented predicate field")

# The stricter Kyverno policy: also no error suppressed by an exception (docs/exceptions.md).
check("exceptions" in documented, "docs/attestation.md documents the predicate's exceptions field")
strict = load("kyverno-clusterpolicy-no-suppressed-error.yaml")
satt = strict["spec"]["rules"][0]["verifyImages"][0]["attestations"][0]
check(satt["type"] == predicate_type, "Kyverno (no suppressed error): Kernodeck's predicate type")
check("BEGIN PUBLIC KEY" in satt["attestors"][0]["entries"][0]["keys"]["publicKeys"],
      "Kyverno (no suppressed error): verified with a public key")
sconds = satt["conditions"][0]["all"]
check(any(c["key"] == "{{ verdict }}" and c["value"] == "pass" for c in sconds),
      "Kyverno (no suppressed error): the verdict must be pass")
check(any(c["key"] == "{{ exceptions.suppressed.error || `0` }}" and c["operator"] == "Equals" and c["value"] == 0
          for c in sconds), "Kyverno (no suppressed error): no suppressed error, an absent field reading as 0")
with open(os.path.join(root, "src", "report", "exceptions.cc")) as f:
    src = f.read()
check('{"suppressed", {{"info", 0}, {"warning", 0}, {"error", 0}}}' in src,
      "the predicate's exceptions.suppressed has the error count the policy reads")

# ---- Evaluation -------------------------------------------------------------------------------
import datetime  # noqa: E402

NOW = datetime.datetime(2026, 12, 3, 12, 0, 0, tzinfo=datetime.timezone.utc)


class Undefined(Exception):
    """A Rego reference that does not resolve: the expression, and the rule body, are undefined."""


class Ref:
    """input.a.b / input["k"] over JSON, raising Undefined for what is not there."""

    def __init__(self, v):
        self.v = v

    def __getattr__(self, k):
        return self[k]

    def __getitem__(self, k):
        if isinstance(self.v, dict) and k in self.v:
            return wrap(self.v[k])
        if isinstance(self.v, list) and isinstance(k, int) and 0 <= k < len(self.v):  # input.subject[0]
            return wrap(self.v[k])
        raise Undefined(k)


def wrap(v):
    return Ref(v) if isinstance(v, (dict, list)) else v


def unwrap(v):
    return v.v if isinstance(v, Ref) else v


def rfc3339_ns(text):
    t = datetime.datetime.fromisoformat(unwrap(text).replace("Z", "+00:00"))
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000


REGO_LINE = re.compile(r'^[\w\s."\[\]()*+<>=:,/{}-]*$')


def rego_module(text):
    """The Rego v0 subset the policies use: `package sigstore`, `default isCompliant = false`,
    constants `x := EXPR`, and `isCompliant { ... }` rules whose body lines are `v := EXPR` or a
    comparison (all must hold; an undefined reference makes the body false). Returns a function
    of the input document; raises ValueError on anything else."""
    lines = [l.split("#", 1)[0].strip() for l in text.splitlines()]
    lines = [l for l in lines if l]
    if lines[:2] != ["package sigstore", "default isCompliant = false"]:
        raise ValueError("not package sigstore with default isCompliant = false")
    consts, rules, body = {}, [], None
    for line in lines[2:]:
        if not REGO_LINE.match(line):
            raise ValueError("outside the evaluated subset: " + line)
        if body is None and line == "isCompliant {":
            body = []
        elif body is not None and line == "}":
            rules.append(body)
            body = None
        elif body is not None:
            body.append(line)
        elif re.fullmatch(r"\w+ := [\d *]+", line):
            name, expr = line.split(" := ")
            consts[name] = eval(expr, {"__builtins__": {}})
        else:
            raise ValueError("outside the evaluated subset: " + line)
    if body is not None or not rules:
        raise ValueError("no complete isCompliant rule")

    def py(expr):
        expr = expr.replace("time.parse_rfc3339_ns(", "parse_ns(").replace("time.now_ns()", "now_ns()")
        if re.search(r"(?<![.\w])time\.|\b(import|lambda|some|every|in|not|with|or|and|if)\b|__|[{}]", expr):
            raise ValueError("outside the evaluated subset: " + expr)
        return expr

    for rule in rules:
        for line in rule:
            m = re.fullmatch(r"(\w+) := (.+)", line)
            py(m.group(2) if m else line)

    def evaluate(doc):
        for rule in rules:
            env = {"__builtins__": {}, "input": wrap(doc), "parse_ns": rfc3339_ns,
                   "now_ns": lambda: int(NOW.timestamp()) * 10**9, "count": lambda v: len(unwrap(v)), **consts}
            try:
                ok = True
                for line in rule:
                    m = re.fullmatch(r"(\w+) := (.+)", line)
                    if m:
                        env[m.group(1)] = eval(py(m.group(2)), env)
                    elif not eval(py(line), env):
                        ok = False
                        break
                if ok:
                    return True
            except Undefined:
                continue
        return False
    return evaluate


def go_duration_s(text):
    unit = {"h": 3600, "m": 60, "s": 1}
    parts = re.findall(r"(\d+)([hms])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError("not a Go duration: " + text)
    return sum(int(n) * unit[u] for n, u in parts)


def kyverno_condition(c, predicate):
    """Kyverno's two condition forms the policy uses; raises ValueError on any other."""
    key = c["key"]
    if re.fullmatch(r"\{\{ (\w+) \}\}", key):
        left = predicate.get(key[3:-3])
    elif key == "{{ time_since('', '{{ time }}', '') }}":
        t = datetime.datetime.fromisoformat(predicate["time"].replace("Z", "+00:00"))
        left = (NOW - t).total_seconds()
    else:
        raise ValueError("condition outside the evaluated subset: " + key)
    if c["operator"] == "Equals":
        return left == c["value"]
    if c["operator"] == "LessThan":
        return left < go_duration_s(c["value"])
    raise ValueError("operator outside the evaluated subset: " + c["operator"])


def kyverno_admits(policy, statements):
    att = policy["spec"]["rules"][0]["verifyImages"][0]["attestations"][0]
    of_type = [s for s in statements if s["predicateType"] == att["type"]]
    if not of_type:
        return False
    return all(all(kyverno_condition(c, s["predicate"]) for c in att["conditions"][0]["all"]) for s in of_type)


def policy_controller_admits(policy, statements, every_must_hold=False):
    auth = policy["spec"]["authorities"][0]
    kept = {}
    for entry in auth["attestations"]:
        rego = rego_module(entry["policy"]["data"]) if "policy" in entry else None
        of_type = [s for s in statements if s["predicateType"] == entry["predicateType"]]
        passed = [s for s in of_type if rego is None or rego(s)]
        if every_must_hold and len(passed) != len(of_type):
            return False
        if not passed:
            return False  # the authority fails: nothing admits
        kept[entry["name"]] = [{"predicateType": s["predicateType"]} for s in passed]
    if "policy" not in policy["spec"]:
        return True
    cip = policy["spec"]["policy"]
    check(cip["type"] == "rego", "policy-controller: the ClusterImagePolicy-level policy is Rego")
    return rego_module(cip["data"])({"authorityMatches": {auth["name"]: {"attestations": kept}}})


def statement(verdict, days_ago, ptype=predicate_type, repository="registry.example.com/team/app"):
    t = (NOW - datetime.timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {"_type": "https://in-toto.io/Statement/v1", "predicateType": ptype,
            "subject": [{"name": repository, "digest": {"sha256": "0" * 64}}],
            "predicate": {"verdict": verdict, "time": t, "findings": {"info": 0, "warning": 0, "error": 0},
                          "repository": repository}}


slsa = statement("pass", 1, "https://slsa.dev/provenance/v1")
slsa["predicate"] = {"buildType": "x"}
cases = [
    # (what, statements verified under the .att tag, admitted?)
    ("one young pass", [statement("pass", 1)], True),
    ("one fail", [statement("fail", 1)], False),
    ("one incomplete", [statement("incomplete", 1)], False),
    ("one pass signed 31 days ago", [statement("pass", 31)], False),
    ("nothing of Kernodeck's type", [slsa], False),
    ("another tool's statement beside a young pass", [slsa, statement("pass", 1)], True),
    ("an older signed pass put back beside the newest fail (issue 39 section 4)",
     [statement("pass", 5), statement("fail", 1)], False),
    ("the same, the fail listed first", [statement("fail", 1), statement("pass", 5)], False),
    ("an older pass beside the newest pass", [statement("pass", 5), statement("pass", 1)], True),
    ("an older fail put back beside the newest pass: a denial, never a pass", [statement("fail", 5), statement("pass", 1)], False),
    ("a pass too old beside the newest pass: a denial", [statement("pass", 40), statement("pass", 1)], False),
    # Issue 49: a pass signed for another repository, re-wrapped under the same digest here.
    ("a young pass signed for another repository", [statement("pass", 1, repository="registry.example.com/team/dev")],
     False),
]
for what, sts, want in cases:
    try:
        got_ky = kyverno_admits(ky, sts)
        got_pc = policy_controller_admits(pc, sts)
        got_pc_old = policy_controller_admits(pc, sts, every_must_hold=True)
    except (ValueError, KeyError) as e:
        check(False, "the policies are evaluated (%s): %s" % (what, e))
        continue
    check(got_ky == want, "Kyverno, %s: %s" % (what, "admits" if want else "denies"))
    check(got_pc == want, "policy-controller (one statement is enough), %s: %s" % (what, "admits" if want else "denies"))
    check(got_pc_old == want, "policy-controller (every statement must hold), %s: %s" % (what, "admits" if want else "denies"))

# The evaluator does fail: a policy that admits on any one pass (the policy-controller file as
# shipped before issue 39) admits the section 4 attack, and a construct outside the subset is refused.
any_one = {"spec": {"authorities": [{"name": "k", "attestations": [pa]}]}}
check(policy_controller_admits(any_one, [statement("pass", 5), statement("fail", 1)]),
      "the model: one passing entry alone admits an older pass beside the newest fail")
try:
    rego_module("package sigstore\ndefault isCompliant = false\nisCompliant {\n  some x in input.y\n}\n")
    check(False, "the Rego evaluator refuses what it does not know")
except ValueError:
    pass

for f in failures:
    print("FAIL:", f)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)

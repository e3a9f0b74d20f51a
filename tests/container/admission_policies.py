#!/usr/bin/env python3
"""Keeps container/k8s/admission/ consistent with what `kernodeck audit --attach` writes: both
policies ask for Kernodeck's predicate type (as include/kernodeck/attest/predicate.h declares it),
require the verdict pass and a maximum age on the signed time (fields docs/attestation.md
documents), verify with a public key and consult no transparency log. Run by ctest; needs
python3-yaml. The controllers themselves are not run here (see the folder's README)."""
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
pa = auth["attestations"][0]
check(pa["predicateType"] == predicate_type, "policy-controller: the attestation's predicate type is Kernodeck's")
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

for f in failures:
    print("FAIL:", f)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)

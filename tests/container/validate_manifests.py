#!/usr/bin/env python3
"""Checks the structure of container/k8s/*.yaml, container/Dockerfile and the
hooks.d file: the fields the examples rely on. Run by ctest; needs python3-yaml."""
import json
import os
import re
import sys

import yaml

root = sys.argv[1]
checks = []


def check(cond, msg):
    checks.append((bool(cond), msg))


def load(name):
    with open(os.path.join(root, "container", "k8s", name)) as f:
        return yaml.safe_load(f)


pod = load("init-container.yaml")
check(pod["kind"] == "Pod" and pod["apiVersion"] == "v1", "init-container.yaml is a v1 Pod")
inits = {c["name"]: c for c in pod["spec"]["initContainers"]}
order = [c["name"] for c in pod["spec"]["initContainers"]]
workload = pod["spec"]["containers"][0]
gate = pod["spec"]["initContainers"][0]
check(order == ["kernodeck-gate", "kernodeck-install", "kernodeck-probe"],
      "the gate runs first, then the probe is installed, then it runs in the workload image")
check(gate["command"][1:2] == ["gate"] and "--key" in gate["command"], "the first init container runs kernodeck gate --key")
check(gate["image"] != workload["image"] and "@sha256:" in gate["image"],
      "the gate runs in Kernodeck's own image, pinned by digest, never in the image it judges")
env = {e["name"]: e.get("value") for e in gate.get("env", [])}
check(env.get("KERNODECK_IMAGE") == workload["image"] == inits["kernodeck-probe"]["image"] and "@sha256:" in workload["image"],
      "KERNODECK_IMAGE names, by digest, the image the probe and the workload run")
key = gate["command"][gate["command"].index("--key") + 1]
check(any(key.startswith(m["mountPath"] + "/") for m in gate["volumeMounts"]), "the report key is mounted in the gate")
install, probe = inits["kernodeck-install"], inits["kernodeck-probe"]
check(install["image"] == gate["image"] and install["command"][0] == "/bin/cp" and install["command"][1].endswith("/kernodeck-probe"),
      "Kernodeck's image copies its static kernodeck-probe out")
vols = {v["name"]: v for v in pod["spec"]["volumes"]}
dest = install["command"][2]
into = [m for m in install["volumeMounts"] if dest.startswith(m["mountPath"] + "/")]
check(len(into) == 1 and "emptyDir" in vols[into[0]["name"]], "the probe binary goes into an emptyDir")
run_from = [m for m in probe["volumeMounts"] if probe["command"][0].startswith(m["mountPath"] + "/")]
check(len(run_from) == 1 and run_from[0]["name"] == into[0]["name"] and run_from[0].get("readOnly"),
      "the workload image runs the probe from that emptyDir, read-only")
check("--require-report" not in probe["command"] and "--expect" in probe["command"],
      "the probe in the workload image decides nothing about the report; it checks the device")
check(probe["resources"]["limits"].get("nvidia.com/gpu") == 1 and workload["resources"]["limits"].get("nvidia.com/gpu") == 1,
      "the probe and the workload ask for the GPU")
for c in pod["spec"]["initContainers"]:
    check(all(m["name"] in vols for m in c.get("volumeMounts", [])), c["name"] + ": every mount has a volume")
check(gate["terminationMessagePath"] == "/dev/termination-log" == probe["terminationMessagePath"],
      "the gate and the probe write their verdict to /dev/termination-log")

job = load("probe-job.yaml")
check(job["kind"] == "Job" and job["apiVersion"] == "batch/v1", "probe-job.yaml is a batch/v1 Job")
pc = job["spec"]["template"]["spec"]["containers"][0]
check(pc["args"][0] == "probe", "the Job runs probe")
check(job["spec"]["template"]["spec"]["restartPolicy"] == "Never", "the Job does not restart")

ds = load("hook-daemonset.yaml")
check(ds["kind"] == "DaemonSet" and ds["apiVersion"] == "apps/v1", "hook-daemonset.yaml is an apps/v1 DaemonSet")
spec = ds["spec"]["template"]["spec"]
check(ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"], "the selector matches the pod labels")
inst = spec["initContainers"][0]
check(inst["command"][0].endswith("hooks/install") and "--dest-root" in inst["command"], "the installer runs hooks/install --dest-root")
check(os.path.exists(os.path.join(root, "hooks", "install")), "hooks/install exists")
vols = {v["name"] for v in spec["volumes"]}
check(all(m["name"] in vols for m in inst["volumeMounts"]), "every installer mount has a volume")
check(any(m["mountPath"].endswith("hooks.d") for m in inst["volumeMounts"]), "the installer reaches a hooks.d directory")

cdi = load("hook-cdi-daemonset.yaml")
check(cdi["kind"] == "DaemonSet" and cdi["apiVersion"] == "apps/v1", "hook-cdi-daemonset.yaml is an apps/v1 DaemonSet")
cspec = cdi["spec"]["template"]["spec"]
check(cdi["spec"]["selector"]["matchLabels"] == cdi["spec"]["template"]["metadata"]["labels"], "the CDI DaemonSet's selector matches")
keeper = " ".join(cspec["containers"][0]["args"])
specs = {e["name"]: e["value"] for e in cspec["containers"][0].get("env", [])}.get("KERNODECK_CDI_SPECS", "").split()
check('cdi inject "$spec"' in keeper and "$KERNODECK_CDI_SPECS" in keeper and "sleep" in keeper, "the CDI DaemonSet keeps the hook in NVIDIA's specs")
check("/host/etc/cdi/nvidia.yaml" in specs and "/host/etc/cdi/nvidia.json" in specs, "the CDI DaemonSet keeps nvidia.yaml (nvidia-ctk's default) and nvidia.json")
cvols = {v["name"] for v in cspec["volumes"]}
check(all(m["name"] in cvols for c in cspec["initContainers"] + cspec["containers"] for m in c.get("volumeMounts", [])),
      "every CDI DaemonSet mount has a volume")
check(any(v.get("hostPath", {}).get("path") == "/etc/cdi" for v in cspec["volumes"]), "the CDI DaemonSet reaches /etc/cdi")

def fleet_pod_checks(name, job_spec):
    check(job_spec["completionMode"] == "Indexed", name + ": an Indexed Job")
    check(job_spec["completions"] == job_spec["parallelism"], name + ": as many workers at once as shards")
    check(job_spec["backoffLimitPerIndex"] >= 1, name + ": each index is retried on its own")
    pod = job_spec["template"]["spec"]
    check(pod["restartPolicy"] == "Never", name + ": backoffLimitPerIndex needs restartPolicy Never")
    c = pod["containers"][0]
    check(c["args"][:2] == ["fleet", "run"] and "--plan" in c["args"] and "--shard" not in c["args"],
          name + ": runs fleet run --plan, the shard from JOB_COMPLETION_INDEX")
    vols = {v["name"]: v for v in pod["volumes"]}
    check(all(m["name"] in vols for m in c["volumeMounts"]), name + ": every mount has a volume")
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    plan_arg = c["args"][c["args"].index("--plan") + 1]
    plan_dir = os.path.dirname(plan_arg)
    check(vols[mounts[plan_dir]]["configMap"]["name"] == "kernodeck-fleet-plan", name + ": the plan comes from the ConfigMap")
    env = {e["name"]: e["value"] for e in c.get("env", [])}
    auth = vols[mounts[env["DOCKER_CONFIG"]]]["secret"]
    check(auth["secretName"] == "kernodeck-registry" and auth["items"][0] == {"key": ".dockerconfigjson", "path": "config.json"},
          name + ": registry credentials from the docker config Secret at $DOCKER_CONFIG/config.json")
    key_dir = os.path.dirname(c["args"][c["args"].index("--sign-key") + 1])
    check(vols[mounts[key_dir]]["secret"]["secretName"] == "kernodeck-signing-key", name + ": the signing key from its Secret")
    return os.path.basename(plan_arg)


fleet_job = load("fleet/job.yaml")
check(fleet_job["kind"] == "Job" and fleet_job["apiVersion"] == "batch/v1", "fleet/job.yaml is a batch/v1 Job")
plan_key = fleet_pod_checks("fleet/job.yaml", fleet_job["spec"])
cron = load("fleet/cronjob.yaml")
check(cron["kind"] == "CronJob" and cron["apiVersion"] == "batch/v1", "fleet/cronjob.yaml is a batch/v1 CronJob")
check(cron["spec"]["concurrencyPolicy"] == "Forbid", "fleet/cronjob.yaml: one fleet run at a time")
fleet_pod_checks("fleet/cronjob.yaml", cron["spec"]["jobTemplate"]["spec"])


# Freshness as shipped (issue 39, section 3): the gate counts only reports younger than the
# admission policies' maximum age, and the nightly fleet re-audits every image well before its
# newest report reaches that age, so an image in use always has one the gate accepts.
def duration_s(text):
    """util::parseDurationSeconds: NUMBER UNIT pairs (s, m, h, d, w); None when malformed."""
    import re
    if not isinstance(text, str) or not re.fullmatch(r"(\d+[smhdw])+", text):
        return None
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    return sum(int(n) * unit[u] for n, u in re.findall(r"(\d+)([smhdw])", text))


def flag(args, name):
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


gate_cmd = inits["kernodeck-gate"]["command"]
gate_age = duration_s(flag(gate_cmd, "--max-age"))
check(gate_age is not None, "init-container.yaml: the gate runs with --max-age")
ky = load("admission/kyverno-clusterpolicy.yaml")
ky_conds = ky["spec"]["rules"][0]["verifyImages"][0]["attestations"][0]["conditions"][0]["all"]
ky_age = [duration_s(c["value"]) for c in ky_conds if "time_since" in c["key"]]
with open(os.path.join(root, "container", "k8s", "admission", "policy-controller-clusterimagepolicy.yaml")) as f:
    import re as _re
    m = _re.search(r"max_age_ns := ([\d *]+)\n", f.read())
pc_age = None
if m:
    pc_age = 1
    for factor in m.group(1).split("*"):
        pc_age *= int(factor)
    pc_age //= 10**9
check(gate_age == 30 * 86400 and ky_age == [gate_age] and pc_age == gate_age,
      "the gate's --max-age (%s s), Kyverno's (%s) and policy-controller's (%s s) maximum age are the same 30 days"
      % (gate_age, ky_age, pc_age))
cron_args = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"]

# Deadlines (issue 49, section 2): every wait ends. The gate's overall registry deadline is well
# under a minute, so a pod never sits in Init behind a slow registry; the probe Job's
# activeDeadlineSeconds leaves the probe its --python-timeout and a minute more; a nightly fleet
# run ends before the next night's starts.
gate_timeout = duration_s(flag(gate_cmd, "--timeout"))
check(gate_timeout is not None and gate_timeout <= 60,
      "init-container.yaml: the gate runs with --timeout of at most a minute (%s s)" % gate_timeout)
probe_args = job["spec"]["template"]["spec"]["containers"][0]["args"]
probe_python = int(flag(probe_args, "--python-timeout") or 60)
probe_deadline = job["spec"].get("activeDeadlineSeconds")
check(isinstance(probe_deadline, int) and probe_python + 60 <= probe_deadline <= 3600,
      "probe-job.yaml: activeDeadlineSeconds (%s) leaves the probe its --python-timeout (%s s) and a minute more"
      % (probe_deadline, probe_python))
for name, args in (("fleet/cronjob.yaml", cron_args),
                   ("fleet/job.yaml", load("fleet/job.yaml")["spec"]["template"]["spec"]["containers"][0]["args"])):
    fleet_timeout = duration_s(flag(args, "--timeout"))
    check(fleet_timeout is not None and fleet_timeout < 86400,
          "%s: fleet run has a --timeout shorter than a day, the cron interval (%s s)" % (name, fleet_timeout))
reaudit = duration_s(flag(cron_args, "--reaudit-older-than"))
minute, hour, dom, month, dow = cron["spec"]["schedule"].split()
check(reaudit is not None and dom == month == dow == "*" and minute.isdigit() and hour.isdigit(),
      "fleet/cronjob.yaml: a daily run with --reaudit-older-than")
# The newest report of an image in use is at most reaudit + one day between runs old when a run
# renews it; allow a week of failed nights on top before the gate stops counting it.
check(reaudit is not None and gate_age is not None and reaudit + 86400 + 7 * 86400 <= gate_age,
      "fleet/cronjob.yaml: --reaudit-older-than (%s s) + a day + a week of failed runs fits in the gate's "
      "--max-age (%s s)" % (reaudit, gate_age))
with open(os.path.join(root, "docs", "attestation.md")) as f:
    att_doc = f.read()
check("--reaudit-older-than" in att_doc and "--max-age 30d" in att_doc,
      "docs/attestation.md says how --reaudit-older-than and the gate's --max-age relate")

cm = load("fleet/plan-configmap.yaml")
check(cm["kind"] == "ConfigMap" and cm["metadata"]["name"] == "kernodeck-fleet-plan", "fleet/plan-configmap.yaml is the plan ConfigMap")
plan = json.loads(cm["data"][plan_key])
check(plan["schema"] == "kernodeck.fleet-plan/v1" and plan["shards"] == fleet_job["spec"]["completions"],
      "the ConfigMap's plan has as many shards as the Job has completions")
with open(os.path.join(root, "container", "k8s", "fleet", "registry-secret.yaml")) as f:
    secrets = {d["metadata"]["name"]: d for d in yaml.safe_load_all(f)}
reg = secrets["kernodeck-registry"]
check(reg["type"] == "kubernetes.io/dockerconfigjson", "the registry Secret is in docker config format")
check("auths" in json.loads(__import__("base64").b64decode(reg["data"][".dockerconfigjson"])), "its .dockerconfigjson has auths")
check("key.pem" in secrets["kernodeck-signing-key"]["stringData"], "the signing key Secret holds key.pem")
with open(os.path.join(root, "container", "k8s", "fleet", "README.md")) as f:
    readme = f.read()
check(all(x in readme for x in ("fleet plan", "job.yaml", "fleet summary", "create secret docker-registry")),
      "fleet/README.md runs plan, Job and summary")

with open(os.path.join(root, "container", "Dockerfile")) as f:
    docker = f.read()
check("ARG BASE=debian:bookworm" in docker and docker.count("FROM ${BASE}") == 3,
      "the Dockerfile has three stages from BASE (packages, the gate's root, the full image), by default Debian bookworm")
# Issue 51 §2: the package stage installs every build dependency scripts/deps names (but the
# test tools and LibTorch-free extras), and the gate image is a stage of its own, from scratch.
with open(os.path.join(root, "scripts", "deps")) as f:
    deps = f.read()
build_pkgs = re.search(r"^build_pkgs=\(([^)]*)\)", deps, re.M).group(1).split()
missing = [p for p in build_pkgs if p not in ("libgtest-dev", "googletest", "mold") and p not in docker]
check(not missing, "the packages stage installs every build dependency of scripts/deps (missing: %s)" % missing)
check("FROM scratch AS gate" in docker and "container/gate-root" in docker,
      "the gate image is its own target, from scratch, made by container/gate-root")
init_doc = open(os.path.join(root, "container", "k8s", "init-container.yaml")).read()
check("platform/kernodeck-gate@sha256:" in init_doc, "init-container.yaml gates with the gate image")
check("scripts/package" in docker and "COPY --from=packages /debs/" in docker,
      "the packages stage builds the Debian packages (scripts/package) and the image installs them")
check("ldd /usr/bin/kernodeck-probe" in docker and "not a dynamic executable" in docker,
      "the image holds the static kernodeck-probe, checked static at build time")
check(all(p in docker for p in ("/usr/local/bin/", "/usr/share/kernodeck/hooks")),
      "the paths the manifests name are there")
check(any(line.startswith("USER ") and not line.split()[1].startswith("0") for line in docker.splitlines()),
      "the image runs as a non-root user")

with open(os.path.join(root, "hooks", "kernodeck-hook.json")) as f:
    hook = json.load(f)
check(hook["version"] == "1.0.0" and hook["stages"] and "when" in hook, "the hooks.d file has version, when and stages")

# Every manifest: the Kubernetes schemas (kubernetes-models, npm), resources, and the Pod
# Security level its header states (pod_security.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pod_security  # noqa: E402

k8s = os.path.join(root, "container", "k8s")
docs = []
for dirpath, _, names in sorted(os.walk(k8s)):
    for name in sorted(names):
        if name.endswith(".yaml"):
            rel = os.path.relpath(os.path.join(dirpath, name), k8s)
            with open(os.path.join(dirpath, name)) as f:
                text = f.read()
            declared = [line.split(":", 1)[1].split()[0].rstrip(".").lower()
                        for line in text.splitlines() if line.startswith("# Pod Security:")]
            for doc in yaml.safe_load_all(text):
                if doc:
                    docs.append((rel, doc, declared[0] if declared else None))


def validate_schemas(items):
    """Runs k8s_validate.js over ITEMS; (exit code, output)."""
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([{"file": rel, "doc": doc} for rel, doc in items], f)
    try:
        p = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "k8s_validate.js"), f.name],
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout + p.stderr
    finally:
        os.unlink(f.name)


npm_dir = os.environ.get("KERNODECK_NPM_DIR", "/var/cache/kernodeck-test/npm")
if not os.path.isdir(os.path.join(npm_dir, "node_modules", "kubernetes-models")):
    check(False, "kubernetes-models is installed in %s (scripts/deps --test)" % npm_dir)
else:
    # Custom resources (admission/: Kyverno, policy-controller) are not in the Kubernetes schemas.
    def builtin(doc):
        group = doc.get("apiVersion", "").rpartition("/")[0]
        return "." not in group or group.endswith(".k8s.io")
    core = [(rel, doc) for rel, doc, _ in docs if builtin(doc)]
    for rel, doc, _ in docs:
        if not builtin(doc):
            print("skip %s: %s/%s is a custom resource" % (rel, doc.get("apiVersion"), doc.get("kind")))
    rc, out = validate_schemas(core)
    print(out, end="")
    check(rc == 0 and out.count("ok   ") == len(core) >= 9, "every manifest validates against the Kubernetes schemas")
    # The validator does fail: a container image that is not a string, a quantity that is not one.
    bad = json.loads(json.dumps(pod))
    bad["spec"]["containers"][0]["image"] = 3
    bad2 = json.loads(json.dumps(pod))
    bad2["spec"]["initContainers"][0]["resources"]["limits"]["memory"] = "lots"
    rc, out = validate_schemas([("broken image", bad), ("broken quantity", bad2)])
    check(rc == 1 and out.count("FAIL ") == 2, "the schema check rejects a broken Pod")

# Kyverno's ImageValidatingPolicy (Kyverno 1.18 and later): Kyverno's own CRD schema, vendored
# with its source tag, unknown fields refused (kyverno_ivpol.js); the ClusterPolicy is kept for
# earlier Kyverno and says so; the same maximum age and predicate type as the gate's.
ivpol = load("admission/kyverno-ivpol.yaml")


def ivpol_check(policy):
    """Runs kyverno_ivpol.js over POLICY (no CEL cases); its schema verdict."""
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"policy": policy, "cases": []}, f)
    try:
        p = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "kyverno_ivpol.js"), f.name],
                           capture_output=True, text=True, timeout=120)
        return json.loads(p.stdout)["schema"] if p.returncode == 0 else {"valid": False, "errors": [p.stderr]}
    finally:
        os.unlink(f.name)


if os.path.isdir(os.path.join(npm_dir, "node_modules", "@bufbuild", "cel")):
    verdict = ivpol_check(ivpol)
    check(verdict["valid"], "admission/kyverno-ivpol.yaml validates against Kyverno's CRD schema (%s): %s"
          % (verdict.get("crd"), "; ".join(verdict["errors"])))
    broken = json.loads(json.dumps(ivpol))
    broken["spec"]["attestors"][0]["cosign"]["publicKey"] = broken["spec"]["attestors"][0]["cosign"].pop("key")
    broken2 = json.loads(json.dumps(ivpol))
    broken2["spec"]["validations"][0].pop("expression")
    check(not ivpol_check(broken)["valid"] and not ivpol_check(broken2)["valid"],
          "the CRD schema check refuses a misspelt attestor field and a validation without an expression")
else:
    check(False, "@bufbuild/cel is installed in %s (scripts/deps --test)" % npm_dir)
check(ivpol["apiVersion"] == "policies.kyverno.io/v1" and ivpol["kind"] == "ImageValidatingPolicy",
      "kyverno-ivpol.yaml is a policies.kyverno.io/v1 ImageValidatingPolicy")
iv_exprs = " ".join(v["expression"] for v in ivpol["spec"]["validations"])
check("duration('720h')" in iv_exprs and gate_age == 720 * 3600,
      "kyverno-ivpol.yaml's maximum age (720h) is the gate's --max-age")
check(ivpol["spec"]["attestations"][0]["intoto"]["type"] == ky["spec"]["rules"][0]["verifyImages"][0]["attestations"][0]["type"],
      "the ImageValidatingPolicy and the ClusterPolicy read the same predicate type")
with open(os.path.join(root, "container", "k8s", "admission", "kyverno-clusterpolicy.yaml")) as f:
    check("before 1.18" in f.read(), "kyverno-clusterpolicy.yaml says it is for Kyverno before 1.18")

for rel, doc, declared in docs:
    spec = pod_security.pod_spec(doc)
    if spec is None:
        continue
    got, misses = pod_security.level(spec)
    check(declared == got, "%s: Pod Security %s as its header states (%s)%s" % (
        rel, got, declared, "" if declared == got else ": " + "; ".join(misses)))
    for c in pod_security.containers(spec):
        res = c.get("resources") or {}
        check(all(k in res.get("requests", {}) for k in ("cpu", "memory")) and "memory" in res.get("limits", {}),
              "%s: %s has cpu and memory requests and a memory limit" % (rel, c["name"]))
        if declared == "restricted":
            check((c.get("securityContext") or {}).get("readOnlyRootFilesystem") is True,
                  "%s: %s has a read-only root file system" % (rel, c["name"]))
    if doc.get("kind") != "DaemonSet":
        check(not any("hostPath" in v for v in spec.get("volumes") or []), rel + ": a workload mounts no host path")

# The Pod Security table holds: each row changes the init-container Pod and names the level it drops to.
rows = [
    ("as shipped", lambda s: None, "restricted"),
    ("a hostPath volume", lambda s: s["volumes"].append({"name": "h", "hostPath": {"path": "/opt/kernodeck"}}), "privileged"),
    ("a privileged container", lambda s: s["initContainers"][0]["securityContext"].update(privileged=True), "privileged"),
    ("hostNetwork", lambda s: s.update(hostNetwork=True), "privileged"),
    ("SYS_ADMIN added", lambda s: s["containers"][0]["securityContext"].update(capabilities={"add": ["SYS_ADMIN"], "drop": ["ALL"]}), "privileged"),
    ("seccomp Unconfined", lambda s: s["securityContext"].update(seccompProfile={"type": "Unconfined"}), "privileged"),
    ("runAsNonRoot unset", lambda s: s["securityContext"].pop("runAsNonRoot"), "baseline"),
    ("runAsUser 0 in a container", lambda s: s["containers"][0]["securityContext"].update(runAsUser=0), "baseline"),
    ("privilege escalation allowed", lambda s: s["initContainers"][2]["securityContext"].update(allowPrivilegeEscalation=True), "baseline"),
    ("capabilities not dropped", lambda s: s["initContainers"][1]["securityContext"].pop("capabilities"), "baseline"),
    ("no seccomp profile", lambda s: s["securityContext"].pop("seccompProfile"), "baseline"),
    ("a hostPort", lambda s: s["containers"][0].update(ports=[{"containerPort": 80, "hostPort": 80}]), "privileged"),
]
for what, change, want in rows:
    spec = json.loads(json.dumps(pod["spec"]))  # the YAML anchors share objects: copy them apart
    change(spec)
    got, misses = pod_security.level(spec)
    check(got == want, "Pod Security table: %s -> %s (got %s: %s)" % (what, want, got, "; ".join(misses)))

failed = [m for ok, m in checks if not ok]
for m in failed:
    print("FAIL:", m)
print("%d passed, %d failed" % (len(checks) - len(failed), len(failed)))
sys.exit(1 if failed else 0)

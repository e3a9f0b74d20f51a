#!/usr/bin/env python3
"""Checks the structure of container/k8s/*.yaml, container/Dockerfile and the
hooks.d file: the fields the examples rely on. Run by ctest; needs python3-yaml."""
import json
import os
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
init = pod["spec"]["initContainers"][0]
check(init["command"][1] == "probe" and "--expect" in init["command"], "the init-container runs kernodeck probe --expect")
check(init["terminationMessagePath"] == "/dev/termination-log", "the init-container uses /dev/termination-log")
check(init["resources"]["limits"].get("nvidia.com/gpu") == 1, "the init-container asks for the GPU it checks")
check("@sha256:" in init["image"], "the init-container pins its image by digest")
check("--require-report" in init["command"] and "--key" in init["command"], "the init-container requires a signed report")
env = {e["name"]: e.get("value") for e in init.get("env", [])}
check(env.get("KERNODECK_IMAGE") == init["image"] == pod["spec"]["containers"][0]["image"],
      "KERNODECK_IMAGE names the image the init-container and the workload run")
key = init["command"][init["command"].index("--key") + 1]
check(any(key.startswith(m["mountPath"] + "/") for m in init["volumeMounts"]), "the report key is mounted")
check(pod["spec"]["containers"][0]["resources"]["limits"].get("nvidia.com/gpu") == 1, "the workload asks for a GPU")
vols = {v["name"] for v in pod["spec"]["volumes"]}
check(all(m["name"] in vols for m in init["volumeMounts"]), "every init-container mount has a volume")

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
check(docker.count("FROM debian:bookworm") == 2, "the Dockerfile has two Debian bookworm stages")
check("COPY --from=build" in docker, "the runtime stage copies from the build stage")

with open(os.path.join(root, "hooks", "kernodeck-hook.json")) as f:
    hook = json.load(f)
check(hook["version"] == "1.0.0" and hook["stages"] and "when" in hook, "the hooks.d file has version, when and stages")

failed = [m for ok, m in checks if not ok]
for m in failed:
    print("FAIL:", m)
print("%d passed, %d failed" % (len(checks) - len(failed), len(failed)))
sys.exit(1 if failed else 0)

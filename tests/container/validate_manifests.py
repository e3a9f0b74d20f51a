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
check("cdi inject /host/etc/cdi/nvidia.json" in keeper and "sleep" in keeper, "the CDI DaemonSet keeps the hook in NVIDIA's spec")
cvols = {v["name"] for v in cspec["volumes"]}
check(all(m["name"] in cvols for c in cspec["initContainers"] + cspec["containers"] for m in c.get("volumeMounts", [])),
      "every CDI DaemonSet mount has a volume")
check(any(v.get("hostPath", {}).get("path") == "/etc/cdi" for v in cspec["volumes"]), "the CDI DaemonSet reaches /etc/cdi")

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

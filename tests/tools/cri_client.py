#!/usr/bin/env python3
"""A small CRI v1 client for tests: drives a container runtime's CRI socket the way kubelet does
for a one-container pod, with Debian's python3-grpcio and python3-grpc-tools.

usage: cri_client.py SOCKET PLAN.json

PLAN.json:
  {"images": ["docker.io/library/x:1", ...],        # wait (ListImages) until the runtime knows them
   "pod": {"name": "p", "uid": "u", "namespace": "n", "log_directory": "/abs/dir",
           "host_network": true,                       # network NODE: no CNI needed
           "runtime_handler": "name"},                 # a RuntimeClass's handler; "" the default
   "container": {"name": "c", "image": "...", "command": ["/bin/sh"], "args": ["-c", "..."],
                 "env": {"K": "V"}, "log_path": "c.log",
                 "devices": [{"container_path": "/dev/nvidia0", "host_path": "/dev/nvidia0"}],
                 "annotations": {"cdi.k8s.io/x": "vendor.com/class=0"},   # the container's annotations
                 "cdi_devices": ["vendor.com/class=0"]},                  # CRI's CDIDevices field
   "wait_s": 20}                                       # how long to wait for images and for the exit

Steps: Version, ListImages (until the images are there), RunPodSandbox, CreateContainer,
StartContainer, ContainerStatus until the container exited, its stdout read from the CRI log
file; the first step that fails ends the run. The container and the sandbox are then stopped and
removed whatever happened. Prints one JSON object: each step's outcome ({"ok": true, ...} or
{"ok": false, "code": gRPC code name, "error": the message kubelet would show}), the exit status
and the container's stdout. Exit 0 when the steps ran (a refused start is an outcome, not a
failure of this tool), 2 on a usage error, 3 when the runtime could not be reached or the stubs
not generated.

The stubs come from cri_api.proto (beside this file), generated into a temporary folder at each
run: nothing generated is kept.
"""
import json
import os
import pathlib
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REQUIRED_POD = ("name", "uid", "namespace", "log_directory")
REQUIRED_CONTAINER = ("name", "image", "log_path")


def load_stubs(workdir):
    from grpc_tools import protoc

    proto = HERE / "cri_api.proto"
    argv = ["protoc", f"-I{HERE}", f"--python_out={workdir}", f"--grpc_python_out={workdir}", str(proto)]
    if protoc.main(argv) != 0:
        raise RuntimeError(f"protoc could not compile {proto}")
    sys.path.insert(0, workdir)
    import cri_api_pb2
    import cri_api_pb2_grpc

    return cri_api_pb2, cri_api_pb2_grpc


def rpc_error(e):
    return {"ok": False, "code": e.code().name, "error": e.details()}


def read_cri_log(path):
    """The stdout of a CRI log file ("TIME STREAM TAG CONTENT" lines, TAG P for a partial line)."""
    out = []
    try:
        text = pathlib.Path(path).read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 3 or parts[1] != "stdout":
            continue
        content = parts[3] if len(parts) == 4 else ""
        out.append(content if parts[2] == "P" else content + "\n")
    return "".join(out)


def run(socket, plan, api, stubs):
    import grpc

    result = {}
    wait_s = float(plan.get("wait_s", 20))
    channel = grpc.insecure_channel(f"unix://{socket}")
    rt = stubs.RuntimeServiceStub(channel)
    img = stubs.ImageServiceStub(channel)
    try:
        v = rt.Version(api.VersionRequest(version="v1"), timeout=10)
    except grpc.RpcError as e:
        result["version"] = rpc_error(e)
        return result, 3
    result["version"] = {"ok": True, "runtime_name": v.runtime_name, "runtime_version": v.runtime_version,
                         "runtime_api_version": v.runtime_api_version}

    wanted = set(plan.get("images", []))
    deadline = time.monotonic() + wait_s
    while True:
        try:
            known = {t for i in img.ListImages(api.ListImagesRequest(), timeout=10).images for t in i.repo_tags}
        except grpc.RpcError as e:
            result["images"] = rpc_error(e)
            return result, 0
        missing = sorted(wanted - known)
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    result["images"] = {"ok": not missing, "missing": missing, "known": sorted(known)}
    if missing:
        return result, 0

    pod = plan["pod"]
    node = api.NamespaceOption(network=api.NODE if pod.get("host_network", True) else api.POD, pid=api.CONTAINER)
    sandbox_config = api.PodSandboxConfig(
        metadata=api.PodSandboxMetadata(name=pod["name"], uid=pod["uid"], namespace=pod["namespace"]),
        log_directory=pod["log_directory"],
        linux=api.LinuxPodSandboxConfig(security_context=api.LinuxSandboxSecurityContext(namespace_options=node)))
    c = plan["container"]
    container_config = api.ContainerConfig(
        metadata=api.ContainerMetadata(name=c["name"]), image=api.ImageSpec(image=c["image"]),
        command=c.get("command", []), args=c.get("args", []),
        envs=[api.KeyValue(key=k, value=v) for k, v in c.get("env", {}).items()],
        devices=[api.Device(container_path=d["container_path"], host_path=d["host_path"],
                            permissions=d.get("permissions", "rw")) for d in c.get("devices", [])],
        annotations=c.get("annotations", {}),
        CDI_devices=[api.CDIDevice(name=n) for n in c.get("cdi_devices", [])],
        log_path=c["log_path"],
        linux=api.LinuxContainerConfig(security_context=api.LinuxContainerSecurityContext(namespace_options=node)))

    sandbox_id = container_id = None
    try:
        try:
            sandbox_id = rt.RunPodSandbox(api.RunPodSandboxRequest(
                config=sandbox_config, runtime_handler=pod.get("runtime_handler", "")), timeout=60).pod_sandbox_id
            result["run_pod_sandbox"] = {"ok": True, "id": sandbox_id}
        except grpc.RpcError as e:
            result["run_pod_sandbox"] = rpc_error(e)
            return result, 0
        try:
            container_id = rt.CreateContainer(api.CreateContainerRequest(
                pod_sandbox_id=sandbox_id, config=container_config, sandbox_config=sandbox_config),
                timeout=60).container_id
            result["create_container"] = {"ok": True, "id": container_id}
        except grpc.RpcError as e:
            result["create_container"] = rpc_error(e)
            return result, 0
        try:
            rt.StartContainer(api.StartContainerRequest(container_id=container_id), timeout=60)
            result["start_container"] = {"ok": True}
        except grpc.RpcError as e:
            result["start_container"] = rpc_error(e)
            return result, 0
        deadline = time.monotonic() + wait_s
        while True:
            try:
                s = rt.ContainerStatus(api.ContainerStatusRequest(container_id=container_id), timeout=10).status
            except grpc.RpcError as e:
                result["status"] = rpc_error(e)
                return result, 0
            if s.state == api.CONTAINER_EXITED or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        result["status"] = {"state": api.ContainerState.Name(s.state), "exit_code": s.exit_code, "reason": s.reason,
                            "message": s.message}
        result["stdout"] = read_cri_log(s.log_path or os.path.join(pod["log_directory"], c["log_path"]))
        return result, 0
    finally:
        errors = []
        steps = []
        if container_id:
            steps += [("StopContainer", lambda: rt.StopContainer(
                          api.StopContainerRequest(container_id=container_id, timeout=0), timeout=30)),
                      ("RemoveContainer", lambda: rt.RemoveContainer(
                          api.RemoveContainerRequest(container_id=container_id), timeout=30))]
        if sandbox_id:
            steps += [("StopPodSandbox", lambda: rt.StopPodSandbox(
                          api.StopPodSandboxRequest(pod_sandbox_id=sandbox_id), timeout=30)),
                      ("RemovePodSandbox", lambda: rt.RemovePodSandbox(
                          api.RemovePodSandboxRequest(pod_sandbox_id=sandbox_id), timeout=30))]
        for name, step in steps:
            try:
                step()
            except grpc.RpcError as e:
                errors.append(f"{name}: {e.code().name}: {e.details()}")
        result["cleanup_errors"] = errors


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    socket, plan_file = sys.argv[1], sys.argv[2]
    try:
        plan = json.loads(pathlib.Path(plan_file).read_text())
        if not isinstance(plan, dict) or not isinstance(plan.get("pod"), dict) or \
                not isinstance(plan.get("container"), dict):
            raise ValueError("needs the objects \"pod\" and \"container\"")
        for where, keys in (("pod", REQUIRED_POD), ("container", REQUIRED_CONTAINER)):
            missing = [k for k in keys if not isinstance(plan[where].get(k), str)]
            if missing:
                raise ValueError(f"{where} needs the strings {', '.join(missing)}")
    except (OSError, ValueError) as e:
        print(f"cri_client: {plan_file} is not a usable plan: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kdk-cri-stubs-") as workdir:
        try:
            api, stubs = load_stubs(workdir)
        except (ImportError, RuntimeError) as e:
            print(f"cri_client: no CRI stubs: {e}", file=sys.stderr)
            return 3
        result, code = run(socket, plan, api, stubs)
    print(json.dumps(result, indent=1))
    if code == 3:
        print(f"cri_client: {socket} does not answer CRI: {result['version']['error']}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())

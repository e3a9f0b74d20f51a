"""The Kubernetes Pod Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/,
v1.30 of the policies), applied to a pod spec: the highest of privileged, baseline and restricted
whose every control the spec meets, with the controls it misses. Written from the documented
table, control by control, so that validate_manifests.py can hold each manifest to the level its
header states."""

BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
                 "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes"}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret"}


def containers(spec):
    return [c for key in ("initContainers", "containers", "ephemeralContainers") for c in spec.get(key) or []]


def baseline_misses(spec):
    """The baseline controls SPEC does not meet, one line each."""
    out = []
    psc = spec.get("securityContext") or {}
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(key):
            out.append("host namespaces: " + key)
    for v in spec.get("volumes") or []:
        if "hostPath" in v:
            out.append("hostPath volume " + v["name"])
    for sc, where in [(psc, "pod")] + [(c.get("securityContext") or {}, c["name"]) for c in containers(spec)]:
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            out.append(where + ": hostProcess")
        if sc.get("privileged"):
            out.append(where + ": privileged")
        extra = set((sc.get("capabilities") or {}).get("add") or []) - BASELINE_CAPS
        if extra:
            out.append(where + ": adds capabilities " + ", ".join(sorted(extra)))
        se = sc.get("seLinuxOptions") or {}
        if se.get("type", "") not in SELINUX_TYPES or se.get("user") or se.get("role"):
            out.append(where + ": SELinux options")
        if sc.get("procMount", "Default") != "Default":
            out.append(where + ": procMount")
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            out.append(where + ": seccomp Unconfined")
        if (sc.get("appArmorProfile") or {}).get("type") == "Unconfined":
            out.append(where + ": AppArmor Unconfined")
    for c in containers(spec):
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.append(c["name"] + ": hostPort")
    for s in psc.get("sysctls") or []:
        if s["name"] not in SAFE_SYSCTLS:
            out.append("sysctl " + s["name"])
    return out


def restricted_misses(spec):
    """The restricted controls beyond baseline that SPEC does not meet."""
    out = []
    psc = spec.get("securityContext") or {}
    for v in spec.get("volumes") or []:
        kinds = set(v) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            out.append("volume %s of type %s" % (v["name"], ", ".join(sorted(kinds - RESTRICTED_VOLUMES))))
    if psc.get("runAsUser") == 0:
        out.append("pod: runAsUser 0")
    for c in containers(spec):
        sc = c.get("securityContext") or {}
        name = c["name"]
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(name + ": allowPrivilegeEscalation is not false")
        non_root = sc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        if non_root is not True:
            out.append(name + ": runAsNonRoot is not true")
        if sc.get("runAsUser") == 0:
            out.append(name + ": runAsUser 0")
        seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(name + ": seccompProfile is not RuntimeDefault or Localhost")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            out.append(name + ": capabilities do not drop ALL")
        if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
            out.append(name + ": adds a capability other than NET_BIND_SERVICE")
    return out


def level(spec):
    """(level, misses): the highest level SPEC meets and what keeps it from the next one."""
    base = baseline_misses(spec)
    if base:
        return "privileged", base
    restricted = restricted_misses(spec)
    if restricted:
        return "baseline", restricted
    return "restricted", []


def pod_spec(doc):
    """The pod spec of a Pod, a workload (Deployment, DaemonSet, Job...) or a CronJob; None otherwise."""
    kind = doc.get("kind")
    if kind == "Pod":
        return doc["spec"]
    if kind == "CronJob":
        return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    if kind in ("Job", "DaemonSet", "Deployment", "StatefulSet", "ReplicaSet"):
        return doc["spec"]["template"]["spec"]
    return None

"""`pkctl describe KIND NAME`: one object in prose, with the events that tell its story.

Pods, Deployments, ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets, Nodes,
Namespaces and Services get kubectl's layout (containers and their states, replica counts and
strategy, conditions, capacity and the node's pods, quotas);
any other kind shows its metadata and the rest of the object. Events are the object's own
(`involvedObject.uid`), oldest first. `describe KIND` without a name, or with `-l`,
describes every match.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
import yaml

from kube.client import RESTClient, RESTMapper
from kube.errors import NotFound
from kube.podutil import is_phase_terminal
from kube.quantity import cpu_millis, to_int
from kube.resources import ResourceInfo
from kubectl.context import emit, resolve, resolve_targets, run, split_targets, state
from kubectl.describe_cronjob import describe_cronjob
from kubectl.describe_daemonset import describe_daemonset
from kubectl.describe_job import describe_job
from kubectl.describe_service import describe_service
from kubectl.describe_storage import (
    describe_persistent_volume,
    describe_persistent_volume_claim,
    describe_storage_class,
)
from kubectl.describe_text import Section, age, since
from kubectl.describe_volumes import describe_mounts, describe_volumes

__all__ = ["describe"]




async def _events(client: RESTClient, mapper: RESTMapper, obj: dict[str, Any]) -> list[list[str]]:
    meta = obj["metadata"]
    listed = await client.list_raw(resolve(mapper, "events"), meta.get("namespace") or "default",
                                   field_selector=f"involvedObject.uid={meta.get('uid')}")
    items = sorted(listed.get("items") or [], key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    rows = []
    for e in items:
        last = since(e.get("lastTimestamp") or e.get("eventTime"))
        first = since(e.get("firstTimestamp") or e.get("eventTime"))
        count = int(e.get("count") or 1)
        when = age(last) if count <= 1 else f"{age(last)} (x{count} over {age(first)})"
        source = (e.get("source") or {}).get("component") or e.get("reportingComponent") or ""
        rows.append([str(e.get("type", "")), str(e.get("reason", "")), when, source,
                     str(e.get("message", "")).strip()])
    return rows


def _events_section(s: Section, rows: list[list[str]]) -> None:
    if not rows:
        s.field("Events", "<none>")
        return
    s.table("Events", ["Type", "Reason", "Age", "From", "Message"], rows)


def _controlled_by(meta: dict[str, Any]) -> str | None:
    owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
    return f"{owner['kind']}/{owner['name']}" if owner else None


def _meta(s: Section, meta: dict[str, Any], *, namespaced: bool = True) -> None:
    s.field("Name", meta.get("name"))
    if namespaced:
        s.field("Namespace", meta.get("namespace"))
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", {k: v for k, v in (meta.get("annotations") or {}).items()
                              if k != "kubectl.kubernetes.io/last-applied-configuration"}, sep=": ")


def _state(s: Section, label: str, state_: dict[str, Any] | None, depth: int) -> None:
    if not state_:
        s.field(label, "Waiting" if label == "State" else "<none>", depth)
        return
    kind, detail = next(iter(state_.items()))
    s.field(label, kind.capitalize(), depth)
    if kind == "running":
        s.field("Started", detail.get("startedAt"), depth + 1)
    elif kind == "waiting":
        s.field("Reason", detail.get("reason"), depth + 1)
        if detail.get("message"):
            s.field("Message", detail.get("message"), depth + 1)
    else:
        for key, name in (("reason", "Reason"), ("message", "Message"), ("exitCode", "Exit Code"),
                          ("startedAt", "Started"), ("finishedAt", "Finished")):
            if key in detail:
                s.field(name, detail[key], depth + 1)


def _probe(p: dict[str, Any]) -> str:
    if "httpGet" in p:
        g = p["httpGet"]
        what = f"http-get {g.get('scheme', 'HTTP').lower()}://{g.get('host', '')}:{g.get('port')}{g.get('path', '/')}"
    elif "tcpSocket" in p:
        what = f"tcp-socket :{p['tcpSocket'].get('port')}"
    elif "exec" in p:
        what = f"exec {(p['exec'].get('command') or [])}"
    else:
        what = "unknown"
    return (f"{what} delay={p.get('initialDelaySeconds', 0)}s timeout={p.get('timeoutSeconds', 1)}s "
            f"period={p.get('periodSeconds', 10)}s #success={p.get('successThreshold', 1)} "
            f"#failure={p.get('failureThreshold', 3)}")


def _containers(s: Section, title: str, specs: list[dict[str, Any]], statuses: list[dict[str, Any]],
                depth: int = 0) -> None:
    if not specs:
        return
    s.raw(f"{title}:", depth)
    by_name = {c.get("name"): c for c in statuses}
    for c in specs:
        st = by_name.get(c.get("name")) or {}
        s.raw(f"{c.get('name')}:", depth + 1)
        d = depth + 2
        if st:
            s.field("Container ID", st.get("containerID"), d)
        s.field("Image", c.get("image"), d)
        if st:
            s.field("Image ID", st.get("imageID"), d)
        ports = [f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}" for p in c.get("ports") or []]
        s.field("Port", ", ".join(ports) or "<none>", d)
        if c.get("command"):
            s.listing("Command", [str(x) for x in c["command"]], d)
        if c.get("args"):
            s.listing("Args", [str(x) for x in c["args"]], d)
        if statuses:
            _state(s, "State", st.get("state"), d)
            if st.get("lastState"):
                _state(s, "Last State", st.get("lastState"), d)
            s.field("Ready", str(bool(st.get("ready"))), d)
            s.field("Restart Count", st.get("restartCount", 0), d)
        res = c.get("resources") or {}
        for key in ("limits", "requests"):
            if res.get(key):
                s.raw(f"{key.capitalize()}:", d)
                for k, v in sorted(res[key].items()):
                    s.field(k, v, d + 1)
        for key, name in (("livenessProbe", "Liveness"), ("readinessProbe", "Readiness"),
                          ("startupProbe", "Startup")):
            if c.get(key):
                s.field(name, _probe(c[key]), d)
        env = [f"{e['name']}:  {e.get('value', '')}" if "value" in e or "valueFrom" not in e else
               f"{e['name']}:  ({next(iter(e['valueFrom']))})" for e in c.get("env") or []]
        s.listing("Environment", env, d)
        describe_mounts(s, c, d)


def _pod(s: Section, pod: dict[str, Any]) -> None:
    meta, spec, st = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    s.field("Name", meta.get("name"))
    s.field("Namespace", meta.get("namespace"))
    s.field("Priority", spec.get("priority", 0))
    if spec.get("priorityClassName"):
        s.field("Priority Class Name", spec.get("priorityClassName"))
    s.field("Service Account", spec.get("serviceAccountName") or "default")
    node = spec.get("nodeName")
    s.field("Node", f"{node}/{st.get('hostIP')}" if node and st.get("hostIP") else node or "<none>")
    s.field("Start Time", st.get("startTime"))
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", {k: v for k, v in (meta.get("annotations") or {}).items()
                              if k != "kubectl.kubernetes.io/last-applied-configuration"}, sep=": ")
    status = "Terminating" if meta.get("deletionTimestamp") else st.get("phase")
    s.field("Status", status)
    if st.get("reason"):
        s.field("Reason", st.get("reason"))
    if st.get("message"):
        s.field("Message", st.get("message"))
    s.field("IP", st.get("podIP"))
    if st.get("nominatedNodeName"):
        s.field("NominatedNodeName", st.get("nominatedNodeName"))
    s.field("Controlled By", _controlled_by(meta))
    _containers(s, "Init Containers", spec.get("initContainers") or [], st.get("initContainerStatuses") or [])
    _containers(s, "Containers", spec.get("containers") or [], st.get("containerStatuses") or [])
    s.table("Conditions", ["Type", "Status"], [[str(c.get("type")), str(c.get("status"))]
                                                for c in st.get("conditions") or []])
    describe_volumes(s, spec.get("volumes") or [])
    s.field("QoS Class", st.get("qosClass"))
    s.mapping("Node-Selectors", spec.get("nodeSelector"))
    tolerations = []
    for t in spec.get("tolerations") or []:
        text = t.get("key", "")
        if t.get("operator") == "Exists":
            text += " op=Exists" if text else "op=Exists"
        elif t.get("value"):
            text += f"={t['value']}"
        if t.get("effect"):
            text = f"{text}:{t['effect']}"
        if t.get("tolerationSeconds") is not None:
            text += f" for {t['tolerationSeconds']}s"
        tolerations.append(text)
    s.listing("Tolerations", tolerations)


def _template(s: Section, template: dict[str, Any]) -> None:
    s.raw("Pod Template:")
    meta, spec = template.get("metadata") or {}, template.get("spec") or {}
    s.mapping("Labels", meta.get("labels"), 1)
    if meta.get("annotations"):
        s.mapping("Annotations", meta.get("annotations"), 1, sep=": ")
    _containers(s, "Init Containers", spec.get("initContainers") or [], [], 1)
    _containers(s, "Containers", spec.get("containers") or [], [], 1)


def _selector(sel: dict[str, Any] | None) -> str:
    sel = sel or {}
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        parts.append(f"{e.get('key')} {e.get('operator', '').lower()} ({','.join(e.get('values') or [])})")
    return ",".join(parts) or "<none>"


async def _deployment(s: Section, client: RESTClient, mapper: RESTMapper, d: dict[str, Any]) -> None:
    meta, spec, st = d["metadata"], d.get("spec") or {}, d.get("status") or {}
    s.field("Name", meta.get("name"))
    s.field("Namespace", meta.get("namespace"))
    s.field("CreationTimestamp", meta.get("creationTimestamp"))
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", {k: v for k, v in (meta.get("annotations") or {}).items()
                              if k != "kubectl.kubernetes.io/last-applied-configuration"}, sep=": ")
    s.field("Selector", _selector(spec.get("selector")))
    s.field("Replicas", f"{spec.get('replicas', 1)} desired | {st.get('updatedReplicas', 0)} updated | "
                        f"{st.get('replicas', 0)} total | {st.get('availableReplicas', 0)} available | "
                        f"{st.get('unavailableReplicas', 0)} unavailable")
    strategy = spec.get("strategy") or {}
    s.field("StrategyType", strategy.get("type"))
    s.field("MinReadySeconds", spec.get("minReadySeconds", 0))
    if strategy.get("type") == "RollingUpdate":
        ru = strategy.get("rollingUpdate") or {}
        s.field("RollingUpdateStrategy", f"{ru.get('maxUnavailable', '25%')} max unavailable, "
                                         f"{ru.get('maxSurge', '25%')} max surge")
    _template(s, spec.get("template") or {})
    conditions = [[str(c.get("type")), str(c.get("status")), str(c.get("reason", ""))]
                  for c in st.get("conditions") or []]
    s.table("Conditions", ["Type", "Status", "Reason"], conditions)
    rs_list = (await client.list_raw(resolve(mapper, "replicasets.apps"), meta.get("namespace"))).get("items") or []
    owned = [rs for rs in rs_list if any(o.get("uid") == meta.get("uid") and o.get("controller")
                                         for o in rs["metadata"].get("ownerReferences") or [])]
    revision = (meta.get("annotations") or {}).get("deployment.kubernetes.io/revision")

    def line(rs: dict[str, Any]) -> str:
        return (f"{rs['metadata']['name']} ({(rs.get('status') or {}).get('replicas', 0)}/"
                f"{(rs.get('spec') or {}).get('replicas', 0)} replicas created)")
    new = [rs for rs in owned if (rs["metadata"].get("annotations") or {}).get(
        "deployment.kubernetes.io/revision") == revision]
    old = [rs for rs in owned if rs not in new and (rs.get("spec") or {}).get("replicas", 0)]
    s.field("OldReplicaSets", ", ".join(line(rs) for rs in old) or "<none>")
    s.field("NewReplicaSet", line(new[0]) if new else "<none>")


async def _replicaset(s: Section, client: RESTClient, mapper: RESTMapper, rs: dict[str, Any]) -> None:
    meta, spec, st = rs["metadata"], rs.get("spec") or {}, rs.get("status") or {}
    s.field("Name", meta.get("name"))
    s.field("Namespace", meta.get("namespace"))
    s.field("Selector", _selector(spec.get("selector")))
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", meta.get("annotations"), sep=": ")
    s.field("Controlled By", _controlled_by(meta))
    s.field("Replicas", f"{st.get('replicas', 0)} current / {spec.get('replicas', 1)} desired")
    pods = (await client.list_raw(resolve(mapper, "pods"), meta.get("namespace"))).get("items") or []
    mine = [p for p in pods if any(o.get("uid") == meta.get("uid") for o in p["metadata"].get("ownerReferences") or [])]
    phases = [(p.get("status") or {}).get("phase") for p in mine]
    s.field("Pods Status", f"{phases.count('Running')} Running / {phases.count('Pending')} Waiting / "
                           f"{phases.count('Succeeded')} Succeeded / {phases.count('Failed')} Failed")
    _template(s, spec.get("template") or {})


async def _statefulset(s: Section, client: RESTClient, mapper: RESTMapper, sts: dict[str, Any]) -> None:
    meta, spec, st = sts["metadata"], sts.get("spec") or {}, sts.get("status") or {}
    s.field("Name", meta.get("name"))
    s.field("Namespace", meta.get("namespace"))
    s.field("CreationTimestamp", meta.get("creationTimestamp"))
    s.field("Selector", _selector(spec.get("selector")))
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", meta.get("annotations"), sep=": ")
    s.field("Replicas", f"{spec.get('replicas', 1)} desired | {st.get('replicas', 0)} total")
    strategy = spec.get("updateStrategy") or {}
    s.field("Update Strategy", strategy.get("type"))
    if (rolling := strategy.get("rollingUpdate")) is not None:
        s.field("Partition", rolling.get("partition", 0), 1)
    pods = (await client.list_raw(resolve(mapper, "pods"), meta.get("namespace"))).get("items") or []
    mine = [p for p in pods if any(o.get("uid") == meta.get("uid") for o in p["metadata"].get("ownerReferences") or [])]
    phases = [(p.get("status") or {}).get("phase") for p in mine]
    s.field("Pods Status", f"{phases.count('Running')} Running / {phases.count('Pending')} Waiting / "
                           f"{phases.count('Succeeded')} Succeeded / {phases.count('Failed')} Failed")
    _template(s, spec.get("template") or {})
    claims = [(c.get("metadata") or {}).get("name") for c in spec.get("volumeClaimTemplates") or []]
    s.field("Volume Claims", ", ".join(str(c) for c in claims) or "<none>")


def _cpu(text: str | None) -> int:
    return cpu_millis(text) if text else 0


def _mem(text: str | None) -> int:
    return to_int(text) if text else 0


async def _node(s: Section, client: RESTClient, mapper: RESTMapper, n: dict[str, Any]) -> None:
    meta, spec, st = n["metadata"], n.get("spec") or {}, n.get("status") or {}
    labels = meta.get("labels") or {}
    roles = [k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/")]
    s.field("Name", meta.get("name"))
    s.field("Roles", ",".join(roles) or "<none>")
    s.mapping("Labels", labels)
    s.mapping("Annotations", meta.get("annotations"), sep=": ")
    s.field("CreationTimestamp", meta.get("creationTimestamp"))
    s.listing("Taints", [f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
                         for t in spec.get("taints") or []])
    s.field("Unschedulable", str(bool(spec.get("unschedulable"))).lower())
    s.table("Conditions", ["Type", "Status", "LastHeartbeatTime", "LastTransitionTime", "Reason", "Message"],
            [[str(c.get(k, "")) for k in ("type", "status", "lastHeartbeatTime", "lastTransitionTime", "reason",
                                          "message")] for c in st.get("conditions") or []])
    s.raw("Addresses:")
    for a in st.get("addresses") or []:
        s.field(a.get("type", ""), a.get("address"), 1)
    for key, title in (("capacity", "Capacity"), ("allocatable", "Allocatable")):
        s.raw(f"{title}:")
        for k, v in sorted((st.get(key) or {}).items()):
            s.field(k, v, 1)
    info = st.get("nodeInfo") or {}
    s.raw("System Info:")
    for key, title in (("kernelVersion", "Kernel Version"), ("osImage", "OS Image"),
                       ("operatingSystem", "Operating System"), ("architecture", "Architecture"),
                       ("containerRuntimeVersion", "Container Runtime Version"),
                       ("kubeletVersion", "Kubelet Version")):
        s.field(title, info.get(key), 1)
    s.field("PodCIDR", spec.get("podCIDR"))
    pods = (await client.list_raw(resolve(mapper, "pods"), None, field_selector=f"spec.nodeName={meta.get('name')}")
            ).get("items") or []
    live = [p for p in pods if not is_phase_terminal((p.get("status") or {}).get("phase"))]
    alloc = st.get("allocatable") or {}
    cpu_total, mem_total = _cpu(alloc.get("cpu")) or 1, _mem(alloc.get("memory")) or 1
    rows, sums = [], {"cpu_r": 0, "cpu_l": 0, "mem_r": 0, "mem_l": 0}
    for p in live:
        cr = cl = mr = ml = 0
        for c in (p.get("spec") or {}).get("containers") or []:
            res = c.get("resources") or {}
            cr += _cpu((res.get("requests") or {}).get("cpu"))
            cl += _cpu((res.get("limits") or {}).get("cpu"))
            mr += _mem((res.get("requests") or {}).get("memory"))
            ml += _mem((res.get("limits") or {}).get("memory"))
        for k, v in (("cpu_r", cr), ("cpu_l", cl), ("mem_r", mr), ("mem_l", ml)):
            sums[k] += v
        rows.append([p["metadata"].get("namespace", ""), p["metadata"]["name"],
                     f"{cr}m ({cr * 100 // cpu_total}%)", f"{cl}m ({cl * 100 // cpu_total}%)",
                     f"{mr // (1024 * 1024)}Mi ({mr * 100 // mem_total}%)",
                     f"{ml // (1024 * 1024)}Mi ({ml * 100 // mem_total}%)",
                     age(since(p["metadata"].get("creationTimestamp")))])
    s.table(f"Non-terminated Pods:          ({len(live)} in total)",
            ["Namespace", "Name", "CPU Requests", "CPU Limits", "Memory Requests", "Memory Limits", "Age"], rows)
    s.table("Allocated resources", ["Resource", "Requests", "Limits"], [
        ["cpu", f"{sums['cpu_r']}m ({sums['cpu_r'] * 100 // cpu_total}%)",
         f"{sums['cpu_l']}m ({sums['cpu_l'] * 100 // cpu_total}%)"],
        ["memory", f"{sums['mem_r'] // (1024 * 1024)}Mi ({sums['mem_r'] * 100 // mem_total}%)",
         f"{sums['mem_l'] // (1024 * 1024)}Mi ({sums['mem_l'] * 100 // mem_total}%)"]])


async def _namespace(s: Section, client: RESTClient, mapper: RESTMapper, ns: dict[str, Any]) -> None:
    meta = ns["metadata"]
    _meta(s, meta, namespaced=False)
    s.field("Status", (ns.get("status") or {}).get("phase"))
    quotas = (await client.list_raw(resolve(mapper, "resourcequotas"), meta["name"])).get("items") or []
    if not quotas:
        s.raw("")
        s.raw("No resource quota.")
    for q in quotas:
        s.raw("")
        s.field("Resource Quotas", "")
        s.field("Name", q["metadata"]["name"], 1)
        hard, used = (q.get("status") or {}).get("hard") or {}, (q.get("status") or {}).get("used") or {}
        s.table("Resource", ["Resource", "Used", "Hard"], [[k, str(used.get(k, "0")), str(v)]
                                                           for k, v in sorted(hard.items())], 1)
    limits = (await client.list_raw(resolve(mapper, "limitranges"), meta["name"])).get("items") or []
    s.raw("")
    names = ", ".join(lr["metadata"]["name"] for lr in limits)
    s.raw(f"LimitRanges: {names}" if limits else "No LimitRange resource.")


def _generic(s: Section, info: ResourceInfo, obj: dict[str, Any]) -> None:
    _meta(s, obj["metadata"], namespaced=info.namespaced)
    rest = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
    s.field("API Version", obj.get("apiVersion") or info.api_version)
    s.field("Kind", obj.get("kind") or info.kind)
    for line in yaml.safe_dump(rest, sort_keys=False, default_flow_style=False).splitlines():
        s.raw(line)


async def _claim_users(client: RESTClient, mapper: RESTMapper, claim: dict[str, Any]) -> list[str]:
    """The names of the pods whose volumes use `claim` (kubectl's `Used By`)."""
    meta = claim["metadata"]
    pods = await client.list_raw(resolve(mapper, "pods"), meta.get("namespace"))
    return sorted(str(p["metadata"]["name"]) for p in pods.get("items") or []
                  if any((v.get("persistentVolumeClaim") or {}).get("claimName") == meta.get("name")
                         for v in (p.get("spec") or {}).get("volumes") or []))


async def _describe_one(client: RESTClient, mapper: RESTMapper, info: ResourceInfo, obj: dict[str, Any]) -> str:
    s = Section()
    if info.kind == "Pod":
        _pod(s, obj)
    elif info.kind == "Deployment":
        await _deployment(s, client, mapper, obj)
    elif info.kind == "ReplicaSet":
        await _replicaset(s, client, mapper, obj)
    elif info.kind == "DaemonSet":
        pods = await client.list_raw(resolve(mapper, "pods"), obj["metadata"].get("namespace"))
        spec = obj.get("spec") or {}
        describe_daemonset(s, obj, list(pods.get("items") or []), selector=_selector(spec.get("selector")))
        _template(s, spec.get("template") or {})
    elif info.kind == "ReplicationController":  # the same layout; its selector is a plain label map
        spec = obj.get("spec") or {}
        as_rs = {**obj, "spec": {**spec, "selector": {"matchLabels": spec.get("selector")}}}
        await _replicaset(s, client, mapper, as_rs)
    elif info.kind == "StatefulSet":
        await _statefulset(s, client, mapper, obj)
    elif info.kind == "Node":
        await _node(s, client, mapper, obj)
    elif info.kind == "Namespace":
        await _namespace(s, client, mapper, obj)
    elif info.kind == "Job":
        describe_job(s, obj, template=_template)
    elif info.kind == "CronJob":
        describe_cronjob(s, obj, template=_template)
    elif info.kind == "PersistentVolume":
        describe_persistent_volume(s, obj)
    elif info.kind == "PersistentVolumeClaim":
        describe_persistent_volume_claim(s, obj, await _claim_users(client, mapper, obj))
    elif info.kind == "StorageClass":
        describe_storage_class(s, obj)
    elif info.kind == "Service":
        _meta(s, obj["metadata"])
        listed = await client.list_raw(resolve(mapper, "endpointslices.discovery.k8s.io"),
                                       obj["metadata"].get("namespace"),
                                       label_selector=f"kubernetes.io/service-name={obj['metadata']['name']}")
        describe_service(s, obj, list(listed.get("items") or []))
    else:
        _generic(s, info, obj)
    if info.kind != "Event":
        _events_section(s, await _events(client, mapper, obj))
    return s.render()


def describe(
    resources: Annotated[list[str] | None, typer.Argument(help="TYPE [NAME...] or TYPE/NAME")] = None,
    selector: Annotated[str | None, typer.Option("-l", "--selector", help="Label selector.")] = None,
) -> None:
    """Show details of a specific resource or group of resources."""
    ctx = state.ctx
    typed = split_targets(list(resources or []), verb="describe")

    async def go() -> int:
        failed = 0
        texts: list[str] = []
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            for info, names in resolve_targets(mapper, typed):
                ns = ctx.namespace if info.namespaced else None
                objects: list[dict[str, Any]] = []
                if names:
                    for name in names:
                        try:
                            objects.append(await client.get_raw(info, name, ns))
                        except NotFound as e:
                            failed += 1
                            print(f"Error from server (NotFound): {e.message}", file=sys.stderr)
                else:
                    listed = await client.list_raw(info, ctx.ns_for(info), label_selector=selector)
                    objects = list(listed.get("items") or [])
                    if not objects:
                        where = f" in {ctx.namespace} namespace" if info.namespaced and not ctx.all_namespaces else ""
                        print(f"No resources found{where}.", file=sys.stderr)
                for obj in objects:
                    texts.append(await _describe_one(client, mapper, info, obj))
        emit("\n\n".join(texts))
        return 1 if failed else 0
    raise typer.Exit(run(go()))

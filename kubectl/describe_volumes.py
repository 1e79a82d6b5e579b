"""The Mounts of a container and the Volumes of a pod in `pkctl describe pod`, as kubectl prints them.

kubectl's describe (printVolumes and describeContainerVolumes): each mount as
`PATH from VOLUME (rw|ro[,path="SUBPATH"])`, and each volume with its type in words and the
fields that say where its content comes from. Pure formatting over the pod's JSON.
"""

from __future__ import annotations

from typing import Any

from kubectl.describe_text import Section

__all__ = ["describe_mounts", "describe_volumes"]

Obj = dict[str, Any]


def describe_mounts(s: Section, container: Obj, depth: int) -> None:
    lines = []
    for m in sorted(container.get("volumeMounts") or [], key=lambda m: str(m.get("mountPath"))):
        flags = "ro" if m.get("readOnly") else "rw"
        if m.get("subPath"):
            flags += f',path="{m["subPath"]}"'
        lines.append(f"{m.get('mountPath')} from {m.get('name')} ({flags})")
    if not lines:
        s.field("Mounts", "<none>", depth)
        return
    s.raw("Mounts:", depth)
    for line in lines:
        s.raw(line, depth + 1)


def _optional(source: Obj) -> str:
    return "true" if source.get("optional") else "false"


def _fields(volume: Obj) -> list[tuple[str, Any]]:
    if (v := volume.get("emptyDir")) is not None:
        return [("Type", "EmptyDir (a temporary directory that shares a pod's lifetime)"),
                ("Medium", v.get("medium", "")), ("SizeLimit", v.get("sizeLimit", "<unset>"))]
    if (v := volume.get("configMap")) is not None:
        return [("Type", "ConfigMap (a volume populated by a ConfigMap)"), ("Name", v.get("name")),
                ("Optional", _optional(v))]
    if (v := volume.get("secret")) is not None:
        return [("Type", "Secret (a volume populated by a Secret)"), ("SecretName", v.get("secretName")),
                ("Optional", _optional(v))]
    if (v := volume.get("hostPath")) is not None:
        return [("Type", "HostPath (bare host directory volume)"), ("Path", v.get("path")),
                ("HostPathType", v.get("type", ""))]
    if (v := volume.get("persistentVolumeClaim")) is not None:
        return [("Type", "PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)"),
                ("ClaimName", v.get("claimName")), ("ReadOnly", "true" if v.get("readOnly") else "false")]
    if (v := volume.get("downwardAPI")) is not None:
        return [("Type", "DownwardAPI (a volume populated by information about the pod)"),
                *(("", f"{(i.get('fieldRef') or i.get('resourceFieldRef') or {}).get('fieldPath') or ''}"
                       f"{(i.get('resourceFieldRef') or {}).get('resource') or ''} -> {i.get('path')}")
                  for i in v.get("items") or [])]
    if (v := volume.get("projected")) is not None:
        fields: list[tuple[str, Any]] = [
            ("Type", "Projected (a volume that contains injected data from multiple sources)")]
        for source in v.get("sources") or []:
            if (t := source.get("serviceAccountToken")) is not None:
                fields.append(("TokenExpirationSeconds", t.get("expirationSeconds", 3600)))
            if (c := source.get("configMap")) is not None:
                fields += [("ConfigMapName", c.get("name")), ("Optional", _optional(c))]
            if (c := source.get("secret")) is not None:
                fields += [("SecretName", c.get("name")), ("Optional", _optional(c))]
            if source.get("downwardAPI") is not None:
                fields.append(("DownwardAPI", "true"))
        return fields
    kinds = [k for k in volume if k != "name"]
    return [("Type", kinds[0] if kinds else "<unknown>")]


def describe_volumes(s: Section, volumes: list[Obj]) -> None:
    if not volumes:
        s.field("Volumes", "<none>")
        return
    s.raw("Volumes:")
    for volume in volumes:
        s.raw(f"{volume.get('name')}:", 1)
        for key, value in _fields(volume):
            if key:
                s.field(key, value if value != "" else " ", 2)
            else:
                s.raw(str(value), 3)

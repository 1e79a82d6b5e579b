"""`pkctl describe pv|pvc|sc`: kubectl's layout of volumes, claims and classes.

Mirrors pkg/describe's PersistentVolumeDescriber, PersistentVolumeClaimDescriber and
StorageClassDescriber, in part: for a volume its class, phase, claim, reclaim policy, access
modes, volume mode, capacity, required node affinity terms and its source (hostPath or local);
for a claim its class, phase, volume, capacity and access modes (once bound), volume mode and
the pods that use it (`Used By`); for a class whether it is the default, its provisioner,
parameters, expansion, mount options, reclaim policy and binding mode. Events follow, drawn by
the caller.
"""

from __future__ import annotations

from typing import Any

from kube.api.storage_v1 import is_default_class
from kubectl.describe_text import Section, age, since

__all__ = ["describe_persistent_volume", "describe_persistent_volume_claim", "describe_storage_class"]

Obj = dict[str, Any]

_SHORT_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                ("ReadWriteOncePod", "RWOP"))


def _modes(modes: Any) -> str:
    given = modes if isinstance(modes, list) else []
    return ",".join(short for mode, short in _SHORT_MODES if mode in given)


def _header(s: Section, meta: Obj, *, namespaced: bool) -> None:
    s.field("Name", meta.get("name"))
    if namespaced:
        s.field("Namespace", meta.get("namespace"))


def _labels_annotations_finalizers(s: Section, meta: Obj) -> None:
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", meta.get("annotations"), sep=": ")
    s.field("Finalizers", f"[{' '.join(meta.get('finalizers') or [])}]")


def _phase(obj: Obj) -> str:
    deleted = (obj.get("metadata") or {}).get("deletionTimestamp")
    if deleted:
        return f"Terminating (lasts {age(since(deleted))})"
    return str((obj.get("status") or {}).get("phase") or "")


def describe_persistent_volume(s: Section, pv: Obj) -> None:
    meta, spec = pv.get("metadata") or {}, pv.get("spec") or {}
    _header(s, meta, namespaced=False)
    _labels_annotations_finalizers(s, meta)
    s.field("StorageClass", spec.get("storageClassName") or "")
    s.field("Status", _phase(pv))
    ref = spec.get("claimRef") or {}
    s.field("Claim", f"{ref.get('namespace')}/{ref.get('name')}" if ref else "")
    s.field("Reclaim Policy", spec.get("persistentVolumeReclaimPolicy"))
    s.field("Access Modes", _modes(spec.get("accessModes")))
    s.field("VolumeMode", spec.get("volumeMode"))
    s.field("Capacity", (spec.get("capacity") or {}).get("storage"))
    terms = ((spec.get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or []
    if not terms:
        s.field("Node Affinity", "<none>")
    else:
        s.raw("Node Affinity:")
        s.raw("Required Terms:", 1)
        for i, term in enumerate(terms):
            exprs = [f"{e.get('key')} {str(e.get('operator')).lower()} [{', '.join(e.get('values') or [])}]"
                     for e in term.get("matchExpressions") or []]
            s.listing(f"Term {i}", exprs, 2)
    s.field("Message", (pv.get("status") or {}).get("message") or "")
    s.raw("Source:")
    if spec.get("hostPath"):
        s.field("Type", "HostPath (bare host directory volume)", 1)
        s.field("Path", spec["hostPath"].get("path"), 1)
        s.field("HostPathType", spec["hostPath"].get("type") or "", 1)
    elif spec.get("local"):
        s.field("Type", "LocalVolume (a persistent volume backed by local storage on a node)", 1)
        s.field("Path", spec["local"].get("path"), 1)


def describe_persistent_volume_claim(s: Section, pvc: Obj, used_by: list[str]) -> None:
    meta, spec, status = pvc.get("metadata") or {}, pvc.get("spec") or {}, pvc.get("status") or {}
    _header(s, meta, namespaced=True)
    s.field("StorageClass", spec.get("storageClassName") or "")
    s.field("Status", _phase(pvc))
    s.field("Volume", spec.get("volumeName") or "")
    _labels_annotations_finalizers(s, meta)
    bound = bool(spec.get("volumeName"))
    s.field("Capacity", (status.get("capacity") or {}).get("storage") if bound else "")
    s.field("Access Modes", _modes(status.get("accessModes")) if bound else "")
    s.field("VolumeMode", spec.get("volumeMode"))
    s.listing("Used By", used_by)


def describe_storage_class(s: Section, sc: Obj) -> None:
    meta = sc.get("metadata") or {}
    s.field("Name", meta.get("name"))
    s.field("IsDefaultClass", "Yes" if is_default_class(meta.get("annotations")) else "No")
    s.mapping("Annotations", meta.get("annotations"), sep="=")
    s.field("Provisioner", sc.get("provisioner"))
    s.mapping("Parameters", sc.get("parameters"))
    expansion = sc.get("allowVolumeExpansion")
    s.field("AllowVolumeExpansion", "<unset>" if expansion is None else str(expansion))
    s.field("MountOptions", ", ".join(sc.get("mountOptions") or []) or "<none>")
    s.field("ReclaimPolicy", sc.get("reclaimPolicy"))
    s.field("VolumeBindingMode", sc.get("volumeBindingMode"))

"""Building a Job's pods: the template, owned by the Job, holding the tracking finalizer.

Mirrors the pod construction of pkg/controller/job (GetPodFromTemplate plus, for Indexed
Jobs, addCompletionIndexAnnotation, addCompletionIndexEnvVariables and the pod hostname):
`generateName: <job>-` (`<job>-<index>-` for an Indexed Job), the template's labels and
annotations, `batch.kubernetes.io/job-tracking` added to its finalizers, and the Job as
controller owner. An Indexed Job's pod carries its index as annotation and label, is named
`<job>-<index>` as a host, and every container gets JOB_COMPLETION_INDEX from the
annotation through the downward API.
"""

from __future__ import annotations

from controllers.common import new_controller_ref
from kube.api import EnvVar, Job, ObjectMeta, Pod
from kube.api.batch_v1 import JOB_COMPLETION_INDEX_ANNOTATION, JOB_INDEX_ENV, JOB_TRACKING_FINALIZER
from kube.api.core_v1 import EnvVarSource, ObjectFieldSelector

__all__ = ["pod_for_job"]


def pod_for_job(job: Job, index: int | None) -> Pod:
    """The pod to create for `job` (at completion `index` for an Indexed Job), holding the tracking finalizer."""
    template = job.spec.template.model_copy(deep=True)
    annotations = dict(template.metadata.annotations or {})
    labels = dict(template.metadata.labels or {})
    name = job.metadata.name or ""
    generate_name = f"{name}-"
    if index is not None:
        annotations[JOB_COMPLETION_INDEX_ANNOTATION] = str(index)
        labels[JOB_COMPLETION_INDEX_ANNOTATION] = str(index)
        generate_name = f"{name}-{index}-"
        template.spec.hostname = f"{name}-{index}"
        ref = EnvVarSource(field_ref=ObjectFieldSelector(
            field_path=f"metadata.annotations['{JOB_COMPLETION_INDEX_ANNOTATION}']"))
        for container in [*(template.spec.init_containers or []), *template.spec.containers]:
            env = [e for e in container.env or [] if e.name != JOB_INDEX_ENV]
            container.env = [*env, EnvVar(name=JOB_INDEX_ENV, value_from=ref)]
    meta = ObjectMeta(generate_name=generate_name, namespace=job.metadata.namespace, labels=labels,
                      annotations=annotations or None,
                      finalizers=[*(template.metadata.finalizers or []), JOB_TRACKING_FINALIZER],
                      owner_references=[new_controller_ref(job)])
    return Pod(metadata=meta, spec=template.spec)

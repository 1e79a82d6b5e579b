"""The writer's client history against a real API server: what it records as acknowledged, and what as unknown."""

from __future__ import annotations

import asyncio
import random
import uuid

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.robustness.recorders import Writer, resource


async def test_acknowledged_writes_carry_their_revision_and_a_cancelled_one_is_unknown(api: ApiServerHarness) -> None:
    ns = f"rec-{uuid.uuid4().hex[:6]}"
    async with api.client() as client:
        await client.create_raw(resource("", "namespaces"),
                                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        writer = Writer(client, resource("", "configmaps"), namespace=ns, keys=2, rng=random.Random(1))
        task = asyncio.create_task(writer.run())

        async def five_written() -> bool:
            return len(writer.writes) >= 5

        await eventually(five_written, timeout=30, message="five writes")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        acked = [w for w in writer.writes if w.acknowledged]
        assert len(acked) >= 5
        stored = await client.get_raw(resource("", "configmaps"), acked[-1].key.split("/")[1], ns)
        assert int(stored["metadata"]["resourceVersion"]) >= acked[-1].revision
        # The task was cancelled inside a request (it sleeps 20 ms between them) at most once,
        # and such a write is recorded as unknown, never dropped.
        assert all(w.acknowledged for w in writer.writes[:-1])

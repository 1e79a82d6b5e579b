"""Small local OCI images built from the static busybox binary, for nodes without a registry.

`build_busybox_image(out, ref, cmd)` writes an OCI image layout tarball (`oci-layout`,
`index.json`, blobs) with one uncompressed layer: `bin/busybox`, its applets as symlinks,
`/etc/passwd` and `/etc/group`, a `/www/index.html`, and empty `tmp proc sys dev`. The
manifest is annotated with `io.containerd.image.name=<ref>`, so `ctr images import` names it
`ref`. Two are built for every CRI node:
- `docker.io/library/busybox:latest` (`sh`): what the short name `busybox` resolves to;
- `registry.local/pause:busybox` (`sleep 2147483647`): the sandbox ("pause") image.
Pure Python (tarfile, hashlib, json); each image is about 2 MB and takes a fraction of a second.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

__all__ = ["APPLETS", "BUSYBOX_IMAGE", "PAUSE_IMAGE", "build_busybox_image", "find_busybox"]

BUSYBOX_IMAGE = "docker.io/library/busybox:latest"
PAUSE_IMAGE = "registry.local/pause:busybox"
# Beyond what pods run: `tar` for kubectl cp (`md5sum` to check a copy), `stty`/`tty` for exec -t,
# the file verbs for scripts.
APPLETS = ("sh", "sleep", "echo", "cat", "ls", "httpd", "wget", "env", "printf", "true", "false", "id", "hostname",
           "ip", "ps", "kill", "mkdir", "nc", "date", "head", "tail", "grep", "seq", "dd", "yes", "touch", "rm",
           "test", "[", "expr", "uname", "wc", "sed", "awk", "free", "tar", "stty", "tty", "pwd", "cp", "mv",
           "chmod", "ln", "mkfifo", "rmdir", "md5sum")
_BUSYBOX_PATHS = ("/bin/busybox", "/usr/bin/busybox")


def find_busybox() -> Path:
    """The static busybox binary (Debian's busybox-static); FileNotFoundError when missing."""
    for candidate in _BUSYBOX_PATHS:
        if Path(candidate).is_file():
            return Path(candidate)
    found = shutil.which("busybox")
    if found:
        return Path(found)
    raise FileNotFoundError("busybox not found: install busybox-static")


def _add(tar: tarfile.TarFile, name: str, data: bytes | None = None, *, mode: int = 0o644,
         kind: bytes = tarfile.REGTYPE, link: str = "") -> None:
    info = tarfile.TarInfo(name)
    info.mode, info.type, info.mtime, info.uid, info.gid = mode, kind, 0, 0, 0
    if kind == tarfile.SYMTYPE:
        info.linkname = link
    if data is not None:
        info.size = len(data)
    tar.addfile(info, io.BytesIO(data) if data is not None else None)


def _layer(busybox: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in ("bin", "etc", "www", "tmp", "proc", "sys", "dev"):
            _add(tar, d, mode=0o1777 if d == "tmp" else 0o755, kind=tarfile.DIRTYPE)
        _add(tar, "bin/busybox", busybox.read_bytes(), mode=0o755)
        for applet in APPLETS:
            _add(tar, f"bin/{applet}", kind=tarfile.SYMTYPE, link="busybox")
        _add(tar, "etc/passwd", b"root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")
        _add(tar, "etc/group", b"root:x:0:\nnogroup:x:65534:\n")
        _add(tar, "www/index.html", b"hello from picokube\n")
    return buf.getvalue()


def _blob(tar: tarfile.TarFile, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    _add(tar, f"blobs/sha256/{digest}", data)
    return f"sha256:{digest}"


def build_busybox_image(out: Path, ref: str, cmd: list[str], *, busybox: Path | None = None) -> Path:
    """Write an OCI image layout tarball for `ref` running `cmd`; return `out`."""
    layer = _layer(busybox or find_busybox())
    layer_digest = f"sha256:{hashlib.sha256(layer).hexdigest()}"
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/bin"], "Cmd": cmd, "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }, sort_keys=True).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        _add(tar, "blobs", kind=tarfile.DIRTYPE, mode=0o755)
        _add(tar, "blobs/sha256", kind=tarfile.DIRTYPE, mode=0o755)
        config_digest = _blob(tar, config)
        _blob(tar, layer)
        manifest = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest,
                       "size": len(config)},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest,
                        "size": len(layer)}],
        }, sort_keys=True).encode()
        manifest_digest = _blob(tar, manifest)
        tag = ref.rsplit(":", 1)[-1] if ":" in ref.rsplit("/", 1)[-1] else "latest"
        index = json.dumps({"schemaVersion": 2, "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest,
            "size": len(manifest),
            "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": tag}}]}).encode()
        _add(tar, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        _add(tar, "index.json", index)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buf.getvalue())
    return out

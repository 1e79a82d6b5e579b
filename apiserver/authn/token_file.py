"""Static bearer tokens from a CSV file, in kube-apiserver's `--token-auth-file` format.

Each line: `token,user,uid,"group1,group2"` (groups optional). Every authenticated user also
gets the group `system:authenticated`, as in Kubernetes.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

from apiserver.authn.authenticator import UserInfo

__all__ = ["TokenFileAuthenticator", "parse_token_file"]


def parse_token_file(path: Path) -> dict[str, UserInfo]:
    users: dict[str, UserInfo] = {}
    with path.open(newline="") as f:
        for n, row in enumerate(csv.reader(f), start=1):
            if not row or row[0].startswith("#"):
                continue
            if len(row) < 3:
                raise ValueError(f"{path}:{n}: expected token,user,uid[,groups]")
            groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
            users[row[0].strip()] = UserInfo(row[1].strip(), row[2].strip(), (*groups, "system:authenticated"))
    return users


class TokenFileAuthenticator:
    def __init__(self, users: dict[str, UserInfo]) -> None:
        self._users = users

    @classmethod
    def from_file(cls, path: Path) -> TokenFileAuthenticator:
        return cls(parse_token_file(path))

    def authenticate(self, headers: Mapping[str, str]) -> UserInfo | None:
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self._users.get(token.strip())

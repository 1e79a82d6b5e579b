"""Authentication: turning request credentials into a UserInfo."""

from apiserver.authn.authenticator import (
    ANONYMOUS_PATHS,
    ANONYMOUS_PREFIXES,
    Authenticator,
    UnionAuthenticator,
    UserInfo,
    user_info_object,
)
from apiserver.authn.token_file import TokenFileAuthenticator, parse_token_file

__all__ = ["ANONYMOUS_PATHS", "ANONYMOUS_PREFIXES", "Authenticator", "TokenFileAuthenticator", "UnionAuthenticator",
           "UserInfo", "parse_token_file", "user_info_object"]

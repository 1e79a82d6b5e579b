"""kube-proxy's iptables mode: the rules a model renders to (`rules`) and the tools that apply them (`runner`)."""

from proxy.iptables.rules import RuleSet, render_rules
from proxy.iptables.runner import IptablesError, IptablesRunner, iptables_available

__all__ = ["IptablesError", "IptablesRunner", "RuleSet", "iptables_available", "render_rules"]

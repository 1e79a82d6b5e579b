from controllers.clusterroleaggregation.controller import ClusterRoleAggregationController, aggregate_rules

__all__ = ["ClusterRoleAggregationController", "aggregate_rules"]

from controllers.serviceaccount.controller import ServiceAccountsController

__all__ = ["ServiceAccountsController"]

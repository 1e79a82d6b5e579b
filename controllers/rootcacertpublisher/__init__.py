from controllers.rootcacertpublisher.controller import (
    DESCRIPTION,
    DESCRIPTION_ANNOTATION,
    ROOT_CA_CONFIGMAP,
    RootCACertPublisher,
    root_ca_bundle,
)

__all__ = ["DESCRIPTION", "DESCRIPTION_ANNOTATION", "ROOT_CA_CONFIGMAP", "RootCACertPublisher", "root_ca_bundle"]

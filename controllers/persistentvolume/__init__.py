"""The PersistentVolume controller (pkg/controller/volume/persistentvolume) and the local-path provisioner."""

from controllers.persistentvolume.controller import PersistentVolumeController

__all__ = ["PersistentVolumeController"]

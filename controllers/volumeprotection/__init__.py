"""The PVC and PV protection controllers (pkg/controller/volume/pvcprotection, pvprotection)."""

from controllers.volumeprotection.pv_protection import PVProtectionController
from controllers.volumeprotection.pvc_protection import PVCProtectionController

__all__ = ["PVCProtectionController", "PVProtectionController"]

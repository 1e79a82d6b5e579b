"""Field ownership (managedFields) and server-side apply."""

from apiserver.fieldmanager.managed import apply_config, format_path, manager_from_user_agent, record_update

__all__ = ["apply_config", "format_path", "manager_from_user_agent", "record_update"]

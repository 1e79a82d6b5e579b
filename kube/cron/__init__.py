"""Cron schedules as Kubernetes reads them (robfig/cron's standard syntax), shared by the API
server's CronJob validation and the CronJob controller."""

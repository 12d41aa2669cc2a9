"""Deployment files: container image, compose file and production settings (data only)."""

"""Deployment files: container image, compose file, Kubernetes manifests, production settings, and the
scripts of the topology on one machine without containers (data only)."""

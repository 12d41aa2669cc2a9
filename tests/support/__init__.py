"""Helpers the tests share: fixtures and builders, imported by tests, never from a test module."""

"""The bank at work in one process: its parts built from settings, the worker and its orderly stop, the
demo, and the doctor that checks each component."""

"""The agent bank: generative agents of real people, built from their interviews."""

__version__ = "0.1.0"

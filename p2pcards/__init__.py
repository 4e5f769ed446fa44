"""p2pcards: a peer-to-peer card table for Crisp and Crescendo."""

__version__ = "0.1.0"

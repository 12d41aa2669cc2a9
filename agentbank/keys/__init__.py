"""Participants' data keys: envelope encryption (``crypto``), the key-encryption keys' store
(``keystore``), and the rotation that shreds a withdrawn participant's key (``rotation``)."""

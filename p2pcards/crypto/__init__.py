"""Cryptographic core: identities, canonical msgpack, signed envelopes, the mental-poker deck."""

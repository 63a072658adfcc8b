"""The audit log read, signed and checked: the host's Ed25519 key (`keys`), the checkpoints it
signs over the chain (`checkpoints`), and the check of a store's chain or of an export of it
(`verify`), which `uq audit` runs. The store appends the records themselves, in the transaction of
each settlement (`stores/audit_chain.py`); docs/audit.md describes the whole.

Nothing is re-exported here: `keys` imports `cryptography` (the `audit` extra) only when a key is
used, so a host without it still appends its chain.
"""

"""Signed requests between the workers of a group (Kafka's KIP-507).

With the ``sessioned`` group protocol the leader writes a session key to the config topic
(a ``session-key`` record, rotated every ``inter.worker.key.ttl.ms``) and every worker
reads it. A worker calling another's internal endpoints (``POST /connectors/{c}/tasks``,
``PUT /connectors/{c}/fence``) signs the request body with that key: an HMAC in
``X-Connect-Authorization`` (base64) naming its algorithm in
``X-Connect-Request-Signature-Algorithm``, byte for byte as Kafka's
``InternalRequestSignature``, so Kafka Connect's workers and Sluice's accept each other's.

Algorithms go by their Java names (``HmacSHA256``), as the worker settings name them.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sluice.runtime.herder.base import BadRequestError, ConnectRestError

__all__ = [
    "KEY_GENERATION_ALGORITHM_CONFIG",
    "KEY_SIZE_CONFIG",
    "KEY_TTL_MS_CONFIG",
    "MAC_ALGORITHMS",
    "SIGNATURE_ALGORITHM_CONFIG",
    "SIGNATURE_ALGORITHM_HEADER",
    "SIGNATURE_HEADER",
    "VERIFICATION_ALGORITHMS_CONFIG",
    "InternalRequestSignature",
    "generate_session_key",
    "session_key_bits",
    "signature_headers",
    "verify_internal_request",
]

SIGNATURE_HEADER = "X-Connect-Authorization"
SIGNATURE_ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"

KEY_GENERATION_ALGORITHM_CONFIG = "inter.worker.key.generation.algorithm"
KEY_SIZE_CONFIG = "inter.worker.key.size"
KEY_TTL_MS_CONFIG = "inter.worker.key.ttl.ms"
SIGNATURE_ALGORITHM_CONFIG = "inter.worker.signature.algorithm"
VERIFICATION_ALGORITHMS_CONFIG = "inter.worker.verification.algorithms"

#: The JVM's standard ``Mac`` (and ``KeyGenerator``) algorithms, by Java name, with the
#: digest each is an HMAC of and the key size in bits the JVM's ``KeyGenerator`` picks
#: when ``inter.worker.key.size`` is not set.
MAC_ALGORITHMS: Mapping[str, tuple[str, int]] = {
    "HmacMD5": ("md5", 512),
    "HmacSHA1": ("sha1", 512),
    "HmacSHA224": ("sha224", 224),
    "HmacSHA256": ("sha256", 256),
    "HmacSHA384": ("sha384", 384),
    "HmacSHA512": ("sha512", 512),
    "HmacSHA512/224": ("sha512_224", 224),
    "HmacSHA512/256": ("sha512_256", 256),
    "HmacSHA3-224": ("sha3_224", 224),
    "HmacSHA3-256": ("sha3_256", 256),
    "HmacSHA3-384": ("sha3_384", 384),
    "HmacSHA3-512": ("sha3_512", 512),
}


def _digest(algorithm: str) -> str:
    try:
        return MAC_ALGORITHMS[algorithm][0]
    except KeyError:
        raise BadRequestError(f"Algorithm {algorithm} not available") from None


def _mac(key: bytes, algorithm: str, body: bytes) -> bytes:
    return hmac.new(key, body, _digest(algorithm)).digest()


def session_key_bits(algorithm: str, size_bits: int | None = None) -> int:
    """The size of the session keys made for ``algorithm``
    (``inter.worker.key.generation.algorithm``): ``size_bits`` (``inter.worker.key.size``)
    or the JVM's default size for it. Raises ValueError for an unknown algorithm or a size
    that is not a positive multiple of 8."""
    if algorithm not in MAC_ALGORITHMS:
        raise ValueError(f"{algorithm} KeyGenerator not available")
    bits = MAC_ALGORITHMS[algorithm][1] if size_bits is None else size_bits
    if bits <= 0 or bits % 8:
        raise ValueError(f"the size must be a positive multiple of 8 bits, not {bits}")
    return bits


def generate_session_key(algorithm: str, size_bits: int | None = None) -> bytes:
    """A new random key for ``algorithm``, of :func:`session_key_bits`."""
    return secrets.token_bytes(session_key_bits(algorithm, size_bits) // 8)


def signature_headers(key: bytes, algorithm: str, body: bytes) -> dict[str, str]:
    """The headers that sign an internal request whose body is ``body`` (empty when none)."""
    signature = base64.b64encode(_mac(key, algorithm, body)).decode("ascii")
    return {SIGNATURE_HEADER: signature, SIGNATURE_ALGORITHM_HEADER: algorithm}


@dataclass(frozen=True)
class InternalRequestSignature:
    """The signature an internal request came with, and the body it signs."""

    algorithm: str
    signature: bytes
    body: bytes

    @classmethod
    def from_headers(cls, headers: Mapping[str, str], body: bytes) -> InternalRequestSignature | None:
        """The request's signature, or None when either header is missing; 400 when the
        algorithm is unknown or the signature is not base64 (Kafka's ``fromHeaders``)."""
        lowered = {k.lower(): v for k, v in headers.items()}
        algorithm = lowered.get(SIGNATURE_ALGORITHM_HEADER.lower())
        encoded = lowered.get(SIGNATURE_HEADER.lower())
        if algorithm is None or encoded is None:
            return None
        _digest(algorithm)
        try:
            signature = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as e:
            raise BadRequestError(f"Illegal base64 signature: {e}") from None
        return cls(algorithm, signature, body)

    def is_valid(self, key: bytes) -> bool:
        return hmac.compare_digest(_mac(key, self.algorithm, self.body), self.signature)


def verify_internal_request(
    signature: InternalRequestSignature | None, key: bytes | None, accepted: Sequence[str]
) -> None:
    """Raise Kafka's answer to an internal request that is not signed properly: 400 when it
    has no signature or one of an algorithm this worker does not accept
    (``inter.worker.verification.algorithms``), 503 while this worker has read no session
    key yet, 403 when the signature does not match the body."""
    if signature is None:
        raise BadRequestError("Internal request missing required signature")
    if signature.algorithm not in accepted:
        raise BadRequestError(
            f"This worker does not support the '{signature.algorithm}' key signing algorithm used by other "
            f"workers. This worker is currently configured to use: [{', '.join(accepted)}]. Check that all "
            f"workers' configuration files permit the same set of signature algorithms, and correct any "
            f"misconfigured worker and restart it."
        )
    if key is None:
        raise ConnectRestError(
            503,
            "This worker is still starting up and has not been able to read a session key from the config topic yet",
        )
    if not signature.is_valid(key):
        raise ConnectRestError(403, "Internal request contained invalid signature.")

"""Connecting to a Dask scheduler: the address, TLS (``distributed.Security``), the warning for a
plain-text connection off the loopback, and errors in one line.

A Dask client and its workers exchange pickles: whoever can connect to the scheduler can run
code on every worker, and a worker can run code in the client. A scheduler reachable over a
network must therefore be reached through TLS with certificates (``tls://``); a plain
``tcp://`` address off the loopback is accepted, with one warning per process.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass

from kernels.errors import ClusterError

logger = logging.getLogger(__name__)

TLS_ENV = {"ca_file": "GRAPH_KERNELS_TLS_CA", "cert": "GRAPH_KERNELS_TLS_CERT", "key": "GRAPH_KERNELS_TLS_KEY"}
PLAIN_TEXT_WARNING = ("warning: the connection to {address} is not encrypted and not authenticated: anyone who "
                      "can reach it can run code on the cluster's workers and on this machine (use tls://, "
                      "see docs/cluster.md)")
_warned: set = set()


@dataclass(frozen=True)
class TlsFiles:
    """The PEM files of a TLS connection: the CA that signed the cluster's certificates, and
    this side's certificate and key (``key`` may be ``None`` when ``cert`` holds both)."""

    ca_file: str
    cert: str
    key: str | None = None

    @classmethod
    def from_options(cls, ca_file: str | None = None, cert: str | None = None, key: str | None = None):
        """The files given (else from ``GRAPH_KERNELS_TLS_CA``/``_CERT``/``_KEY``); ``None`` when none is."""
        ca_file = ca_file or os.environ.get(TLS_ENV["ca_file"]) or None
        cert = cert or os.environ.get(TLS_ENV["cert"]) or None
        key = key or os.environ.get(TLS_ENV["key"]) or None
        if not (ca_file or cert or key):
            return None
        if not (ca_file and cert):
            raise ClusterError("TLS needs --tls-ca-file and --tls-cert (and --tls-key unless the certificate "
                               f"file holds the key); given: ca {ca_file or '-'}, cert {cert or '-'}, key {key or '-'}")
        for what, path in (("--tls-ca-file", ca_file), ("--tls-cert", cert), ("--tls-key", key)):
            if path and not os.path.isfile(path):
                raise ClusterError(f"{what} {path}: no such file")
        return cls(ca_file, cert, key)


def make_security(tls: TlsFiles | None, *, role: str = "client"):
    """A ``distributed.Security`` for ``tls`` (``None``: no TLS). ``role`` ``all`` uses the same
    certificate for the scheduler, the workers and the client (``graph-kernels cluster local``)."""
    if tls is None:
        return None
    from distributed import Security

    roles = ("client", "scheduler", "worker") if role == "all" else (role,)
    options = {"require_encryption": True, "tls_ca_file": tls.ca_file}
    for r in roles:
        options[f"tls_{r}_cert"] = tls.cert
        if tls.key:
            options[f"tls_{r}_key"] = tls.key
    return Security(**options)


def split_address(address: str) -> tuple[str, str, int | None]:
    """``tls://host:8786`` → ``("tls", "host", 8786)``; no scheme means ``tcp``."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    host, port = rest, None
    if rest.startswith("["):                      # [ipv6]:port
        host, _, tail = rest[1:].partition("]")
        port_text = tail.lstrip(":")
    else:
        host, _, port_text = rest.rpartition(":") if ":" in rest else (rest, "", "")
    if port_text:
        try:
            port = int(port_text)
        except ValueError:
            raise ClusterError(f"scheduler address {address!r}: the port {port_text!r} is not a number "
                               "(expected tls://HOST:PORT or tcp://HOST:PORT)") from None
    if not host:
        raise ClusterError(f"scheduler address {address!r} has no host (expected tls://HOST:PORT or tcp://HOST:PORT)")
    return scheme.lower(), host, port


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plain_text_warning(address: str) -> str | None:
    """The warning for ``address`` (``None`` for TLS, the loopback or an in-process address)."""
    scheme, host, _ = split_address(address)
    if scheme in ("tls", "inproc", "ucx") or is_loopback(host):
        return None
    return PLAIN_TEXT_WARNING.format(address=address)


def warn_plain_text(address: str, stream=None) -> str | None:
    """Say :func:`plain_text_warning` once per address and process -- logged as a warning (the
    command line prints it, the GUI's log shows it), or printed on ``stream`` if given; return it."""
    text = plain_text_warning(address)
    if text and address not in _warned:
        _warned.add(address)
        if stream is not None:
            print(f"graph-kernels: {text}", file=stream, flush=True)
        else:
            logger.warning(text.removeprefix("warning: "))
    return text


def check_address(address: str, security) -> None:
    scheme, _, _ = split_address(address)
    if scheme not in ("tcp", "tls", "inproc", "ucx"):
        raise ClusterError(f"scheduler address {address!r}: unknown protocol {scheme!r} (use tls:// or tcp://)")
    if scheme == "tls" and security is None:
        raise ClusterError(f"{address} is a TLS address: give --tls-ca-file, --tls-cert and --tls-key "
                           "(or GRAPH_KERNELS_TLS_CA/_CERT/_KEY)")
    if scheme == "tcp" and security is not None and getattr(security, "require_encryption", False):
        raise ClusterError(f"{address} is a plain tcp:// address but TLS files were given: use tls://")


def connect(address: str, security=None, timeout: float = 20.0):
    """A ``distributed.Client`` connected to ``address``, or a one-line :class:`ClusterError`."""
    check_address(address, security)
    warn_plain_text(address)
    from distributed import Client

    try:
        return Client(address, security=security, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {reason} (is `dask scheduler` "
                           "running there, and do its TLS settings match?)") from None
    except Exception as exc:  # ssl errors, version mismatches, bad certificates: one line for the user
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {type(exc).__name__}: {exc}") from None

"""A Dask cluster that speaks only TLS, with a throwaway CA and certificate made here (the
``cryptography`` package, as ``distributed.Security.temporary`` does): ``graph-kernels`` connects
with ``--tls-ca-file/--tls-cert/--tls-key`` and runs a job; without the files it is refused."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
from pathlib import Path

import pytest

from kernels.cli import main as cli_main
from kernels.compute.dask.connect import TlsFiles, make_security

pytest.importorskip("distributed")
x509 = pytest.importorskip("cryptography.x509")

ROOT = Path(__file__).resolve().parents[1]
AFIRO = ROOT / "tests" / "data" / "lp_afiro.mtx"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def make_certificates(folder: Path) -> TlsFiles:
    """A CA, and a certificate for 127.0.0.1 signed by it (used by every role of the cluster)."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.timezone.utc)

    def name(text):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("graph-kernels test CA")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("graph-kernels cluster")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = TlsFiles(str(folder / "ca.pem"), str(folder / "cert.pem"), str(folder / "key.pem"))
    Path(files.ca_file).write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    Path(files.cert).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    Path(files.key).write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
    return files


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    from distributed import LocalCluster

    files = make_certificates(tmp_path_factory.mktemp("tls"))
    security = make_security(files, role="all")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", protocol="tls://",
                      security=security, dashboard_address=None) as cluster:
        yield cluster, files


def test_a_job_runs_over_tls_with_the_certificate_files(tls_cluster, capsys):
    cluster, files = tls_cluster
    assert cluster.scheduler_address.startswith("tls://127.0.0.1:")
    code = cli_main(["run", "spmv", "cpu-serial", str(AFIRO), "--repeat", "1", "--json",
                     "--scheduler", cluster.scheduler_address, "--tls-ca-file", files.ca_file,
                     "--tls-cert", files.cert, "--tls-key", files.key])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    rec = json.loads(captured.out)
    assert rec["verified"] and rec["worker"].startswith("tls://127.0.0.1:")
    assert "not encrypted" not in captured.err


def test_tls_files_can_come_from_the_environment(tls_cluster, capsys, monkeypatch):
    cluster, files = tls_cluster
    monkeypatch.setenv("GRAPH_KERNELS_TLS_CA", files.ca_file)
    monkeypatch.setenv("GRAPH_KERNELS_TLS_CERT", files.cert)
    monkeypatch.setenv("GRAPH_KERNELS_TLS_KEY", files.key)
    assert cli_main(["cluster", cluster.scheduler_address]) == 0
    assert "1 worker(s)" in capsys.readouterr().out


def test_a_missing_certificate_file_is_one_line_naming_it(tls_cluster, tmp_path, capsys):
    cluster, files = tls_cluster
    missing = tmp_path / "nope.pem"
    assert cli_main(["cluster", cluster.scheduler_address, "--tls-ca-file", files.ca_file,
                     "--tls-cert", str(missing), "--tls-key", files.key]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--tls-cert {missing}: no such file" in err


def test_a_plain_tcp_address_with_tls_files_is_refused(tls_cluster, capsys):
    cluster, files = tls_cluster
    plain = cluster.scheduler_address.replace("tls://", "tcp://")
    assert cli_main(["cluster", plain, "--tls-ca-file", files.ca_file, "--tls-cert", files.cert,
                     "--tls-key", files.key]) == 1
    assert "use tls://" in capsys.readouterr().err

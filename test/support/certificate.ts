// A self-signed certificate for a local HTTPS receiver (the connection tests, bench/capacity
// BENCH_WEBHOOK_TLS, bench/webhook-connections): EC P-256, SHA-256, naming `host` (an IP address
// or a DNS name) in its subjectAltName, as a public endpoint's certificate does. The sender must
// trust it (tls.setDefaultCACertificates or NODE_EXTRA_CA_CERTS): verification stays on.
import { isIP } from 'node:net';
import { generate } from 'selfsigned';

export async function selfSignedCertificate(host: string): Promise<{ key: string; cert: string }> {
  const altName = isIP(host) ? { type: 7 as const, ip: host } : { type: 2 as const, value: host };
  const pems = await generate([{ name: 'commonName', value: host }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [altName] }],
  });
  return { key: pems.private, cert: pems.cert };
}

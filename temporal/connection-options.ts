// How a process connects to Temporal: the address, and TLS (mTLS certificates, a private CA, the
// server name) and an API key when the configuration names them (docs/configuration.md "Temporal over
// TLS"). One place for the API, the worker and the operator CLI. The files are read once, at start:
// a path that cannot be read stops start-up with a message naming its variable.
import { readFileSync } from 'node:fs';
import { ConfigError, temporalTlsImplied, type Config } from '../platform/config.js';

type TlsVariables = Pick<
  Config,
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_CLIENT_CERT_PATH'
  | 'TEMPORAL_TLS_CLIENT_KEY_PATH'
  | 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_API_KEY'
>;

/** What `Connection` and `NativeConnection` take besides their other options (the shapes they share). */
export interface TemporalConnectionOptions {
  address: string;
  tls?: {
    serverNameOverride?: string;
    serverRootCACertificate?: Buffer;
    clientCertPair?: { crt: Buffer; key: Buffer };
  };
  apiKey?: string;
}

export function temporalConnectionOptions(address: string, config: TlsVariables): TemporalConnectionOptions {
  if (!config.TEMPORAL_TLS && !temporalTlsImplied(config)) return { address };
  const read = (variable: keyof TlsVariables, path: string | undefined): Buffer | undefined => {
    if (path === undefined) return undefined;
    try {
      return readFileSync(path);
    } catch (error) {
      throw new ConfigError({ variable, problem: `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})` });
    }
  };
  const crt = read('TEMPORAL_TLS_CLIENT_CERT_PATH', config.TEMPORAL_TLS_CLIENT_CERT_PATH);
  const key = read('TEMPORAL_TLS_CLIENT_KEY_PATH', config.TEMPORAL_TLS_CLIENT_KEY_PATH);
  return {
    address,
    tls: {
      ...(config.TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME } : {}),
      ...(config.TEMPORAL_TLS_SERVER_CA_CERT_PATH
        ? { serverRootCACertificate: read('TEMPORAL_TLS_SERVER_CA_CERT_PATH', config.TEMPORAL_TLS_SERVER_CA_CERT_PATH) }
        : {}),
      ...(crt && key ? { clientCertPair: { crt, key } } : {}),
    },
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}

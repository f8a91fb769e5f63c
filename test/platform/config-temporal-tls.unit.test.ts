// The Temporal TLS settings are checked at start-up, each bad one named (docs/configuration.md
// "Temporal over TLS"): half an mTLS pair, a boolean that is not one, TLS turned off beside a setting
// that needs it, a file that cannot be read.
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../platform/config.js';
import { temporalConnectionOptions } from '../../temporal/connection-options.js';

describe('Temporal TLS configuration', () => {
  it('connects in plain text when no TLS variable is set', () => {
    expect(temporalConnectionOptions('temporal:7233', loadConfig({}))).toEqual({ address: 'temporal:7233' });
  });

  it('turns TLS on for TEMPORAL_TLS=true alone (the system roots), and for an API key alone', () => {
    expect(temporalConnectionOptions('t:7233', loadConfig({ TEMPORAL_TLS: 'true' }))).toEqual({ address: 't:7233', tls: {} });
    expect(temporalConnectionOptions('t:7233', loadConfig({ TEMPORAL_API_KEY: 'k' }))).toEqual({ address: 't:7233', tls: {}, apiKey: 'k' });
  });

  it('refuses a client certificate without its key, and a key without its certificate, naming the one missing', () => {
    expect(() => loadConfig({ TEMPORAL_TLS_CLIENT_CERT_PATH: '/c.pem' })).toThrow(
      /TEMPORAL_TLS_CLIENT_KEY_PATH: is required with TEMPORAL_TLS_CLIENT_CERT_PATH/,
    );
    expect(() => loadConfig({ TEMPORAL_TLS_CLIENT_KEY_PATH: '/c.key' })).toThrow(
      /TEMPORAL_TLS_CLIENT_CERT_PATH: is required with TEMPORAL_TLS_CLIENT_KEY_PATH/,
    );
  });

  it('refuses a TEMPORAL_TLS that is not a boolean, and TLS turned off beside a setting that needs it', () => {
    expect(() => loadConfig({ TEMPORAL_TLS: 'yes' })).toThrow(/TEMPORAL_TLS/);
    expect(() => loadConfig({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' })).toThrow(
      /TEMPORAL_TLS: must not be false when TEMPORAL_API_KEY is set/,
    );
  });

  it('names the variable whose file cannot be read', () => {
    const config = loadConfig({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/nonexistent/ca.pem' });
    expect(() => temporalConnectionOptions('t:7233', config)).toThrow(
      /TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read \/nonexistent\/ca.pem \(ENOENT\)/,
    );
  });
});

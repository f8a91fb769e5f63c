// Jest global teardown: stops what global setup started (loaded through tsx, see global-setup.ts).
import { tsImport } from 'tsx/esm/api';

export default async function globalTeardown(): Promise<void> {
  const { stopInfrastructure } = await tsImport('./infrastructure-teardown.ts', import.meta.url);
  await stopInfrastructure();
}

// Jest global setup. Jest loads this file natively, outside its module mapper, so the
// infrastructure code (which uses the project's `.js`-suffixed TypeScript imports) is loaded
// through tsx instead.
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup(): Promise<void> {
  const { startInfrastructure } = await tsImport('./infrastructure.ts', import.meta.url);
  await startInfrastructure();
}

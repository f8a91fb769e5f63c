import { fileURLToPath } from 'node:url';

// workflows/index.ts from source (tsx), workflows/index.js from the compiled image (dist/).
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/index${new URL(import.meta.url).pathname.slice(-3)}`, import.meta.url));

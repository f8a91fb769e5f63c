// Opens a server on a port an operator chose, so that a port another process holds stops start-up
// with one line naming the variable (docs/configuration.md "When a process does not start"), not a raw
// `listen EADDRINUSE` stack: `PORT 3000 is already in use: stop the other process or set PORT`.
import type { Server } from 'node:net';
import { StartupError } from './config.js';

export interface ListenOn {
  port: number;
  host: string;
  /** The variable that chose the port (`PORT`, `WORKER_METRICS_PORT`, …). */
  variable: string;
  /** The variable that chose the host, when one did (`HOST`). */
  hostVariable?: string;
}

/** `server.listen(port, host)`, rejecting with a StartupError that names the variable when the port cannot be had. */
export function listenOn(server: Server, where: ListenOn): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenProblem(error, where) ?? error);
    server.once('error', failed);
    server.listen(where.port, where.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/** The one line for a listen failure an operator can fix, else undefined. */
export function listenProblem(error: NodeJS.ErrnoException, where: ListenOn): StartupError | undefined {
  const { port, host, variable, hostVariable } = where;
  switch (error.code) {
    case 'EADDRINUSE':
      return portInUse(variable, port);
    case 'EACCES':
      return new StartupError(
        `${variable} ${port} cannot be opened: permission denied (ports below 1024 need privileges); set ${variable}`,
      );
    case 'EADDRNOTAVAIL':
      return hostVariable ? new StartupError(`${hostVariable} ${host} is not an address of this machine: set ${hostVariable}`) : undefined;
    default:
      return undefined;
  }
}

export function portInUse(variable: string, port: number): StartupError {
  return new StartupError(`${variable} ${port} is already in use: stop the other process or set ${variable}`);
}

// A Temporal client whose frontend cannot be reached (127.0.0.1:1), for the tests of what the
// service answers then, and its close. The client's gRPC retry interceptor schedules each next
// attempt with a timer (at most 5 s, 6 s with jitter) that may still be pending when a call's promise
// has settled; one that fired after the connection was closed threw "Channel has been shut down"
// from the timer and failed whichever test file the Jest worker ran next (CI, 2026-11-29). Its attempt
// after the call's deadline ends the chain, so `close` waits for it first.
import { Client, Connection } from '@temporalio/client';

/** Long enough for a pending retry timer to fire and its attempt to end the chain. */
const RETRY_TIMER_MS = 7_000;

/** Hook and test timeouts must leave this much for `close`. */
export const UNREACHABLE_CLOSE_MS = RETRY_TIMER_MS + 1_000;

export function unreachableTemporal(namespace?: string): { temporal: Client; close: () => Promise<void> } {
  const connection = Connection.lazy({ address: '127.0.0.1:1' });
  return {
    temporal: new Client({ connection, namespace }),
    async close() {
      await new Promise((resolve) => setTimeout(resolve, RETRY_TIMER_MS));
      await connection.close().catch(() => undefined);
    },
  };
}
